// RUN: deeploy-opt %s -p kernel-select | filecheck %s

// kernel-select, the gather_split family (deeploy_mlir/kernels/gather_split.py;
// runtime_c/include/dm_kernels_ext.h), fields worked out by hand from the
// shapes and the axis: every operand is seen as [outer, axis, inner].

// split of 2x6x5 along axis 1 into 2 and 4: outer = 2, total = 6,
// inner = 5; the first part at offset 0 with len 2, the second at offset
// 0 + 2 = 2 with len 4: one dm_split_fp32 call per part
// CHECK-LABEL: func.func @split
// CHECK-NEXT:    kernel.call @dm_split_fp32 dm_concat_args_t {whole = %x, part = %a, outer = 2, total = 6, offset = 0, len = 2, inner = 5} note "training.split" : memref<2x6x5xf32, "L2">, memref<2x2x5xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_split_fp32 dm_concat_args_t {whole = %x, part = %b, outer = 2, total = 6, offset = 2, len = 4, inner = 5} note "training.split" : memref<2x6x5xf32, "L2">, memref<2x4x5xf32, "L2">
func.func @split(%x: memref<2x6x5xf32, "L2">, %a: memref<2x2x5xf32, "L2">, %b: memref<2x4x5xf32, "L2">) {
  training.split ins(%x : memref<2x6x5xf32, "L2">) outs(%a, %b : memref<2x2x5xf32, "L2">, memref<2x4x5xf32, "L2">) {axis = 1 : i64, sizes = array<i64: 2, 4>}
  func.return
}

// concat of 3x1, 3x4 and 3x2 along axis 1 into 3x7: outer = 3, total =
// 1 + 4 + 2 = 7, inner = (empty product) 1; offsets 0, 1, 1 + 4 = 5
// CHECK-LABEL: func.func @concat
// CHECK-NEXT:    kernel.call @dm_concat_fp32 dm_concat_args_t {whole = %y, part = %p, outer = 3, total = 7, offset = 0, len = 1, inner = 1} note "training.concat"
// CHECK-NEXT:    kernel.call @dm_concat_fp32 dm_concat_args_t {whole = %y, part = %q, outer = 3, total = 7, offset = 1, len = 4, inner = 1} note "training.concat"
// CHECK-NEXT:    kernel.call @dm_concat_fp32 dm_concat_args_t {whole = %y, part = %r, outer = 3, total = 7, offset = 5, len = 2, inner = 1} note "training.concat"
func.func @concat(%p: memref<3x1xf32, "L2">, %q: memref<3x4xf32, "L2">, %r: memref<3x2xf32, "L2">, %y: memref<3x7xf32, "L2">) {
  training.concat ins(%p, %q, %r : memref<3x1xf32, "L2">, memref<3x4xf32, "L2">, memref<3x2xf32, "L2">) outs(%y : memref<3x7xf32, "L2">) {axis = 1 : i64}
  func.return
}

// an embedding lookup: weight 10x8 along axis 0 (outer 1, rows 10, inner
// 8), 2x3 token ids: n = 6; its gradient scatters the 2x3x8 dY into the
// 10x8 dX with the same fields; a gather along axis 1 of 4x5x3 with a
// scalar index: outer 4, rows 5, inner 3, n = 1
// CHECK-LABEL: func.func @gather
// CHECK-NEXT:    kernel.call @dm_gather_fp32 dm_gather_args_t {data = %w, indices = %ids, Y = %e, outer = 1, rows = 10, inner = 8, n = 6} note "training.gather" : memref<10x8xf32, "L2">, memref<2x3xi64, "L2">, memref<2x3x8xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_gather_grad_fp32 dm_gather_grad_args_t {dY = %e, indices = %ids, dX = %w, outer = 1, rows = 10, inner = 8, n = 6} note "training.gather_grad" : memref<2x3x8xf32, "L2">, memref<2x3xi64, "L2">, memref<10x8xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_gather_fp32 dm_gather_args_t {data = %x, indices = %i, Y = %g, outer = 4, rows = 5, inner = 3, n = 1} note "training.gather"
func.func @gather(%w: memref<10x8xf32, "L2">, %ids: memref<2x3xi64, "L2">, %e: memref<2x3x8xf32, "L2">, %x: memref<4x5x3xf32, "L2">, %i: memref<i64, "L2">, %g: memref<4x3xf32, "L2">) {
  training.gather ins(%w, %ids : memref<10x8xf32, "L2">, memref<2x3xi64, "L2">) outs(%e : memref<2x3x8xf32, "L2">) {axis = 0 : i64}
  training.gather_grad ins(%e, %ids : memref<2x3x8xf32, "L2">, memref<2x3xi64, "L2">) outs(%w : memref<10x8xf32, "L2">) {axis = 0 : i64}
  training.gather ins(%x, %i : memref<4x5x3xf32, "L2">, memref<i64, "L2">) outs(%g : memref<4x3xf32, "L2">) {axis = 1 : i64}
  func.return
}
