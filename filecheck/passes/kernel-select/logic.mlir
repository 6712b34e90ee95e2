// RUN: deeploy-opt %s -p kernel-select | filecheck %s

// kernel-select, logic family (deeploy_mlir/kernels/logic.py, calls;
// runtime_c/include/dm_kernels_ext.h, kernels/compare.c and
// activation_ext.c). Every field below is worked out by hand from the op's
// shapes, as for dm_binary_fp32: Y's shape padded to 4 dims with 0; each
// operand's element strides over Y's dims, the operand's shape right-aligned
// against Y's (missing leading dims count as 1) and 0 where the operand has
// 1 and Y does not (broadcast). compare kinds -> DM_CMP_<KIND>, logical ->
// DM_LOGIC_<KIND>; not and cast -> dm_cast with DM_CAST_<FROM>_TO_<TO> (i1 is
// U8: one byte) or DM_CAST_U8_NOT; clip -> dm_unary_ext_fp32, DM_UNARY_CLIP.

// 2x3 >= 3: A contiguous (3, 1); B = [3] is [1, 3] against [2, 3]: dim 0
// broadcast (0), dim 1 stride 1.
// CHECK-LABEL: func.func @compare_row
// CHECK-NEXT:    kernel.call @dm_compare_fp32 dm_compare_args_t {A = %a, B = %r, Y = %m, rank = 2, shape = [2, 3, 0, 0], a_strides = [3, 1, 0, 0], b_strides = [0, 1, 0, 0], op = DM_CMP_GREATER_EQUAL} note "training.compare" : memref<2x3xf32, "L1">, memref<3xf32, "L1">, memref<2x3xi1, "L1">
// CHECK-NEXT:    func.return
func.func @compare_row(%a: memref<2x3xf32, "L1">, %r: memref<3xf32, "L1">, %m: memref<2x3xi1, "L1">) {
  training.compare ins(%a, %r : memref<2x3xf32, "L1">, memref<3xf32, "L1">) outs(%m : memref<2x3xi1, "L1">) {kind = "greater_equal"}
  func.return
}

// a scalar (rank 0) against 4x5: the scalar is [1, 1], both dims broadcast
// (0, 0); A contiguous (5, 1).
// CHECK-LABEL: func.func @compare_scalar
// CHECK-NEXT:    kernel.call @dm_compare_fp32 dm_compare_args_t {A = %a, B = %s, Y = %m, rank = 2, shape = [4, 5, 0, 0], a_strides = [5, 1, 0, 0], b_strides = [0, 0, 0, 0], op = DM_CMP_LESS_EQUAL} note "training.compare"
func.func @compare_scalar(%a: memref<4x5xf32, "L2">, %s: memref<f32, "L2">, %m: memref<4x5xi1, "L2">) {
  training.compare ins(%a, %s : memref<4x5xf32, "L2">, memref<f32, "L2">) outs(%m : memref<4x5xi1, "L2">) {kind = "less_equal"}
  func.return
}

// xor of 2x1x4 and 3x1 -> 2x3x4 (bytes): A (4, 4, 1) with dim 1 broadcast
// -> (4, 0, 1); B [3, 1] is [1, 3, 1], contiguous (3, 1, 1), dims 0 and 2
// broadcast -> (0, 1, 0).
// CHECK-LABEL: func.func @logical_both
// CHECK-NEXT:    kernel.call @dm_compare_fp32 dm_compare_args_t {A = %a, B = %b, Y = %y, rank = 3, shape = [2, 3, 4, 0], a_strides = [4, 0, 1, 0], b_strides = [0, 1, 0, 0], op = DM_LOGIC_XOR} note "training.logical"
func.func @logical_both(%a: memref<2x1x4xi1, "L1">, %b: memref<3x1xi1, "L1">, %y: memref<2x3x4xi1, "L1">) {
  training.logical ins(%a, %b : memref<2x1x4xi1, "L1">, memref<3x1xi1, "L1">) outs(%y : memref<2x3x4xi1, "L1">) {kind = "xor"}
  func.return
}

// where(C 2x1, A 2x3, B [1]) -> 2x3: C (1, 1) with dim 1 broadcast -> (1, 0);
// A contiguous (3, 1); B [1] is [1, 1]: (0, 0).
// CHECK-LABEL: func.func @where
// CHECK-NEXT:    kernel.call @dm_where_fp32 dm_where_args_t {C = %c, A = %a, B = %b, Y = %y, rank = 2, shape = [2, 3, 0, 0], c_strides = [1, 0, 0, 0], a_strides = [3, 1, 0, 0], b_strides = [0, 0, 0, 0]} note "training.where"
func.func @where(%c: memref<2x1xi1, "L1">, %a: memref<2x3xf32, "L1">, %b: memref<1xf32, "L1">, %y: memref<2x3xf32, "L1">) {
  training.where ins(%c, %a, %b : memref<2x1xi1, "L1">, memref<2x3xf32, "L1">, memref<1xf32, "L1">) outs(%y : memref<2x3xf32, "L1">)
  func.return
}

// casts and not: size = the element count (2 * 3 = 6, 4), op by the
// element types.
// CHECK-LABEL: func.func @casts
// CHECK-NEXT:    kernel.call @dm_cast dm_cast_args_t {X = %m, Y = %f, size = 6, op = DM_CAST_U8_TO_F32} note "training.cast"
// CHECK-NEXT:    kernel.call @dm_cast dm_cast_args_t {X = %f, Y = %m, size = 6, op = DM_CAST_F32_TO_U8} note "training.cast"
// CHECK-NEXT:    kernel.call @dm_cast dm_cast_args_t {X = %l, Y = %g, size = 4, op = DM_CAST_I64_TO_F32} note "training.cast"
// CHECK-NEXT:    kernel.call @dm_cast dm_cast_args_t {X = %g, Y = %l, size = 4, op = DM_CAST_F32_TO_I64} note "training.cast"
// CHECK-NEXT:    kernel.call @dm_cast dm_cast_args_t {X = %m, Y = %m, size = 6, op = DM_CAST_U8_NOT} note "training.not"
// CHECK-NEXT:    func.return
func.func @casts(%m: memref<2x3xi1, "L2">, %f: memref<2x3xf32, "L2">, %l: memref<4xi64, "L2">, %g: memref<4xf32, "L2">) {
  training.cast ins(%m : memref<2x3xi1, "L2">) outs(%f : memref<2x3xf32, "L2">) {to = f32}
  training.cast ins(%f : memref<2x3xf32, "L2">) outs(%m : memref<2x3xi1, "L2">) {to = i1}
  training.cast ins(%l : memref<4xi64, "L2">) outs(%g : memref<4xf32, "L2">) {to = f32}
  training.cast ins(%g : memref<4xf32, "L2">) outs(%l : memref<4xi64, "L2">) {to = i64}
  training.not ins(%m : memref<2x3xi1, "L2">) outs(%m : memref<2x3xi1, "L2">)
  func.return
}

// clip (ReLU6): size 2 * 8 = 16, lo 0, hi 6; alpha not set (0).
// CHECK-LABEL: func.func @clip
// CHECK-NEXT:    kernel.call @dm_unary_ext_fp32 dm_unary_ext_args_t {X = %x, Y = %x, size = 16, op = DM_UNARY_CLIP, lo = 0.e+00, hi = 6.e+00} note "training.clip"
func.func @clip(%x: memref<2x8xf32, "L1">) {
  training.clip ins(%x : memref<2x8xf32, "L1">) outs(%x : memref<2x8xf32, "L1">) {lo = 0.000000e+00 : f32, hi = 6.000000e+00 : f32}
  func.return
}
