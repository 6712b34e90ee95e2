// RUN: deeploy-opt %s -p kernel-select | filecheck %s

// kernel-select, elementwise family (deeploy_mlir/kernels/elementwise.py,
// calls; runtime_c/include/dm_elementwise.h, dm_gelu.h,
// dm_copy.h). Every field below is worked out by hand from the op's shapes:
//
// binary: Y's shape padded to 4 dims with 0; each operand's element strides
// over Y's dims, the operand's shape right-aligned against Y's (missing
// leading dims count as 1) and 0 where the operand has 1 and Y does not
// (broadcast); `kind` -> DM_BINARY_<KIND>.

// 3x5 - 5: A contiguous (5, 1); B = [5] is [1, 5] against [3, 5]: dim 0
// broadcast (0), dim 1 stride 1.
// CHECK-LABEL: func.func @binary_row
// CHECK-NEXT:    kernel.call @dm_binary_fp32 dm_binary_args_t {A = %a, B = %r, Y = %y, rank = 2, shape = [3, 5, 0, 0], a_strides = [5, 1, 0, 0], b_strides = [0, 1, 0, 0], op = DM_BINARY_SUB} note "training.binary" : memref<3x5xf32, "L2">, memref<5xf32, "L2">, memref<3x5xf32, "L2">
// CHECK-NEXT:    func.return
func.func @binary_row(%a: memref<3x5xf32, "L2">, %r: memref<5xf32, "L2">, %y: memref<3x5xf32, "L2">) {
  training.binary ins(%a, %r : memref<3x5xf32, "L2">, memref<5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {kind = "sub"}
  func.return
}

// 2x1x4 * 3x1 -> 2x3x4: A's contiguous strides are (4, 4, 1), its dim 1
// (1 against 3) broadcast -> (4, 0, 1); B = [3, 1] is [1, 3, 1], contiguous
// (3, 1, 1), dims 0 (1 against 2) and 2 (1 against 4) broadcast -> (0, 1, 0).
// CHECK-LABEL: func.func @binary_both
// CHECK-NEXT:    kernel.call @dm_binary_fp32 dm_binary_args_t {A = %a, B = %b, Y = %y, rank = 3, shape = [2, 3, 4, 0], a_strides = [4, 0, 1, 0], b_strides = [0, 1, 0, 0], op = DM_BINARY_MUL} note "training.binary" : memref<2x1x4xf32, "L1">, memref<3x1xf32, "L1">, memref<2x3x4xf32, "L1">
func.func @binary_both(%a: memref<2x1x4xf32, "L1">, %b: memref<3x1xf32, "L1">, %y: memref<2x3x4xf32, "L1">) {
  training.binary ins(%a, %b : memref<2x1x4xf32, "L1">, memref<3x1xf32, "L1">) outs(%y : memref<2x3x4xf32, "L1">) {kind = "mul"}
  func.return
}

// the other kinds, on rank 1 (4 elements: strides 1)
// CHECK-LABEL: func.func @binary_kinds
// CHECK-NEXT:    kernel.call @dm_binary_fp32 dm_binary_args_t {{{.*}} op = DM_BINARY_ADD}
// CHECK-NEXT:    kernel.call @dm_binary_fp32 dm_binary_args_t {{{.*}} op = DM_BINARY_DIV}
// CHECK-NEXT:    kernel.call @dm_binary_fp32 dm_binary_args_t {A = %a, B = %a, Y = %a, rank = 1, shape = [4, 0, 0, 0], a_strides = [1, 0, 0, 0], b_strides = [1, 0, 0, 0], op = DM_BINARY_POW}
func.func @binary_kinds(%a: memref<4xf32, "L2">) {
  training.binary ins(%a, %a : memref<4xf32, "L2">, memref<4xf32, "L2">) outs(%a : memref<4xf32, "L2">) {kind = "add"}
  training.binary ins(%a, %a : memref<4xf32, "L2">, memref<4xf32, "L2">) outs(%a : memref<4xf32, "L2">) {kind = "div"}
  training.binary ins(%a, %a : memref<4xf32, "L2">, memref<4xf32, "L2">) outs(%a : memref<4xf32, "L2">) {kind = "pow"}
  func.return
}

// relu, gelu (dm_unary_args_t / dm_gelu_args_t: X, Y, size = 3 * 5 = 15,
// 2 * 3 * 4 = 24) and their gradients (dY, X, dX, size)
// CHECK-LABEL: func.func @activations
// CHECK-NEXT:    kernel.call @dm_relu_fp32 dm_unary_args_t {X = %x, Y = %y, size = 15} note "training.relu" : memref<3x5xf32, "L2">, memref<3x5xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_relu_grad_fp32 dm_relu_grad_args_t {dY = %y, X = %x, dX = %x, size = 15} note "training.relu_grad" : memref<3x5xf32, "L2">, memref<3x5xf32, "L2">, memref<3x5xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_gelu_fp32 dm_gelu_args_t {X = %g, Y = %g, size = 24} note "training.gelu" : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_gelu_grad_fp32 dm_gelu_grad_args_t {dY = %h, X = %g, dX = %h, size = 24} note "training.gelu_grad" : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">
func.func @activations(%x: memref<3x5xf32, "L2">, %y: memref<3x5xf32, "L2">, %g: memref<2x3x4xf32, "L2">, %h: memref<2x3x4xf32, "L2">) {
  training.relu ins(%x : memref<3x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">)
  training.relu_grad ins(%y, %x : memref<3x5xf32, "L2">, memref<3x5xf32, "L2">) outs(%x : memref<3x5xf32, "L2">)
  training.gelu ins(%g : memref<2x3x4xf32, "L2">) outs(%g : memref<2x3x4xf32, "L2">)
  training.gelu_grad ins(%h, %g : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">) outs(%h : memref<2x3x4xf32, "L2">)
  func.return
}

// copies and reshapes: dm_copy of the input's bytes (5 * 4 f32 = 80 bytes;
// 3 i64 = 24 bytes)
// CHECK-LABEL: func.func @copies
// CHECK-NEXT:    kernel.call @dm_copy dm_copy_args_t {src = %g, dst = %t, bytes = 80} note "training.reshape" : memref<5x4xf32, "L2">, memref<20xf32, "L1">
// CHECK-NEXT:    kernel.call @dm_copy dm_copy_args_t {src = %i, dst = %j, bytes = 24} note "training.copy" : memref<3xi64, "L2">, memref<3xi64, "L1">
func.func @copies(%g: memref<5x4xf32, "L2">, %t: memref<20xf32, "L1">, %i: memref<3xi64, "L2">, %j: memref<3xi64, "L1">) {
  training.reshape ins(%g : memref<5x4xf32, "L2">) outs(%t : memref<20xf32, "L1">)
  training.copy ins(%i : memref<3xi64, "L2">) outs(%j : memref<3xi64, "L1">)
  func.return
}
