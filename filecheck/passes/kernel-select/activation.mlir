// RUN: deeploy-opt %s -p kernel-select | filecheck %s

// kernel-select, activation family (deeploy_mlir/kernels/activation.py;
// runtime_c/include/dm_kernels_ext.h, kernels/activation_ext.c). Every field
// below is worked out by hand from the op:
//
// training.unary -> dm_unary_ext_fp32 (dm_unary_ext_args_t): X, Y, size =
// the element count, op = DM_UNARY_<KIND> (kind in upper case), alpha only
// for leaky_relu and quick_gelu (lo and hi, Clip's fields, are not set: 0).
// training.unary_grad -> dm_unary_grad_fp32 (dm_unary_grad_args_t): dY, Z,
// dX, size, op = DM_UGRAD_<KIND>, alpha as above.

// 3x5 = 15 elements; Y its own buffer, then in place (Y = X)
// CHECK-LABEL: func.func @unary
// CHECK-NEXT:    kernel.call @dm_unary_ext_fp32 dm_unary_ext_args_t {X = %x, Y = %y, size = 15, op = DM_UNARY_SIGMOID} note "training.unary" : memref<3x5xf32, "L2">, memref<3x5xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_unary_ext_fp32 dm_unary_ext_args_t {X = %x, Y = %x, size = 15, op = DM_UNARY_LEAKY_RELU, alpha = 1.e-02} note "training.unary" : memref<3x5xf32, "L2">, memref<3x5xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_unary_ext_fp32 dm_unary_ext_args_t {X = %x, Y = %y, size = 15, op = DM_UNARY_QUICK_GELU, alpha = 1.702e+00} note "training.unary" : memref<3x5xf32, "L2">, memref<3x5xf32, "L2">
// CHECK-NEXT:    func.return
func.func @unary(%x: memref<3x5xf32, "L2">, %y: memref<3x5xf32, "L2">) {
  training.unary ins(%x : memref<3x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {kind = "sigmoid"}
  training.unary ins(%x : memref<3x5xf32, "L2">) outs(%x : memref<3x5xf32, "L2">) {kind = "leaky_relu", alpha = 0.01 : f32}
  training.unary ins(%x : memref<3x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {kind = "quick_gelu", alpha = 1.702 : f32}
  func.return
}

// the other kinds on 2x3x4 = 24 elements in L1: the enumerator of each
// CHECK-LABEL: func.func @unary_kinds
// CHECK-NEXT:    kernel.call @dm_unary_ext_fp32 dm_unary_ext_args_t {X = %a, Y = %a, size = 24, op = DM_UNARY_TANH} note "training.unary" : memref<2x3x4xf32, "L1">, memref<2x3x4xf32, "L1">
// CHECK-NEXT:    kernel.call @dm_unary_ext_fp32 dm_unary_ext_args_t {{{.*}} op = DM_UNARY_ABS}
// CHECK-NEXT:    kernel.call @dm_unary_ext_fp32 dm_unary_ext_args_t {{{.*}} op = DM_UNARY_SIGN}
// CHECK-NEXT:    kernel.call @dm_unary_ext_fp32 dm_unary_ext_args_t {{{.*}} op = DM_UNARY_NEG}
// CHECK-NEXT:    kernel.call @dm_unary_ext_fp32 dm_unary_ext_args_t {{{.*}} op = DM_UNARY_LOG}
// CHECK-NEXT:    kernel.call @dm_unary_ext_fp32 dm_unary_ext_args_t {{{.*}} op = DM_UNARY_EXP}
// CHECK-NEXT:    kernel.call @dm_unary_ext_fp32 dm_unary_ext_args_t {{{.*}} op = DM_UNARY_SQRT}
// CHECK-NEXT:    kernel.call @dm_unary_ext_fp32 dm_unary_ext_args_t {{{.*}} op = DM_UNARY_RECIPROCAL}
// CHECK-NEXT:    func.return
func.func @unary_kinds(%a: memref<2x3x4xf32, "L1">) {
  training.unary ins(%a : memref<2x3x4xf32, "L1">) outs(%a : memref<2x3x4xf32, "L1">) {kind = "tanh"}
  training.unary ins(%a : memref<2x3x4xf32, "L1">) outs(%a : memref<2x3x4xf32, "L1">) {kind = "abs"}
  training.unary ins(%a : memref<2x3x4xf32, "L1">) outs(%a : memref<2x3x4xf32, "L1">) {kind = "sign"}
  training.unary ins(%a : memref<2x3x4xf32, "L1">) outs(%a : memref<2x3x4xf32, "L1">) {kind = "neg"}
  training.unary ins(%a : memref<2x3x4xf32, "L1">) outs(%a : memref<2x3x4xf32, "L1">) {kind = "log"}
  training.unary ins(%a : memref<2x3x4xf32, "L1">) outs(%a : memref<2x3x4xf32, "L1">) {kind = "exp"}
  training.unary ins(%a : memref<2x3x4xf32, "L1">) outs(%a : memref<2x3x4xf32, "L1">) {kind = "sqrt"}
  training.unary ins(%a : memref<2x3x4xf32, "L1">) outs(%a : memref<2x3x4xf32, "L1">) {kind = "reciprocal"}
  func.return
}

// gradients, 4x6 = 24 elements: dY first, then Z, then dX (in place over dY
// for sigmoid and quick_gelu)
// CHECK-LABEL: func.func @grads
// CHECK-NEXT:    kernel.call @dm_unary_grad_fp32 dm_unary_grad_args_t {dY = %dy, Z = %z, dX = %dy, size = 24, op = DM_UGRAD_SIGMOID} note "training.unary_grad" : memref<4x6xf32, "L2">, memref<4x6xf32, "L2">, memref<4x6xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_unary_grad_fp32 dm_unary_grad_args_t {dY = %dy, Z = %z, dX = %dx, size = 24, op = DM_UGRAD_TANH} note "training.unary_grad" : memref<4x6xf32, "L2">, memref<4x6xf32, "L2">, memref<4x6xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_unary_grad_fp32 dm_unary_grad_args_t {dY = %dy, Z = %z, dX = %dx, size = 24, op = DM_UGRAD_LEAKY_RELU, alpha = 2.5e-01} note "training.unary_grad" : memref<4x6xf32, "L2">, memref<4x6xf32, "L2">, memref<4x6xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_unary_grad_fp32 dm_unary_grad_args_t {dY = %dy, Z = %z, dX = %dy, size = 24, op = DM_UGRAD_QUICK_GELU, alpha = 1.e+00} note "training.unary_grad" : memref<4x6xf32, "L2">, memref<4x6xf32, "L2">, memref<4x6xf32, "L2">
// CHECK-NEXT:    func.return
func.func @grads(%dy: memref<4x6xf32, "L2">, %z: memref<4x6xf32, "L2">, %dx: memref<4x6xf32, "L2">) {
  training.unary_grad ins(%dy, %z : memref<4x6xf32, "L2">, memref<4x6xf32, "L2">) outs(%dy : memref<4x6xf32, "L2">) {kind = "sigmoid"}
  training.unary_grad ins(%dy, %z : memref<4x6xf32, "L2">, memref<4x6xf32, "L2">) outs(%dx : memref<4x6xf32, "L2">) {kind = "tanh"}
  training.unary_grad ins(%dy, %z : memref<4x6xf32, "L2">, memref<4x6xf32, "L2">) outs(%dx : memref<4x6xf32, "L2">) {kind = "leaky_relu", alpha = 0.25 : f32}
  training.unary_grad ins(%dy, %z : memref<4x6xf32, "L2">, memref<4x6xf32, "L2">) outs(%dy : memref<4x6xf32, "L2">) {kind = "quick_gelu", alpha = 1.0 : f32}
  func.return
}
