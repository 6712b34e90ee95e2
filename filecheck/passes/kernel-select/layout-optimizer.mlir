// RUN: deeploy-opt %s -p kernel-select | filecheck %s

// kernel-select, reductions and transposes (layout_calls;
// runtime_c/include/dm_reduce.h, dm_transpose.h) and the optimizer
// (optimizer_calls; dm_optimizer.h), fields worked out by hand.

// reductions: X's shape padded to 4 dims with 0, reduce_mask = sum of
// 1 << axis: axes [0] -> 1, [2] -> 4, [0, 2] -> 1 + 4 = 5
// CHECK-LABEL: func.func @reduce
// CHECK-NEXT:    kernel.call @dm_reduce_sum_fp32 dm_reduce_args_t {X = %y, Y = %r, rank = 2, shape = [3, 5, 0, 0], reduce_mask = 1} note "training.reduce_sum" : memref<3x5xf32, "L2">, memref<5xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_reduce_mean_fp32 dm_reduce_args_t {X = %a, Y = %m, rank = 3, shape = [2, 3, 4, 0], reduce_mask = 4} note "training.reduce_mean" : memref<2x3x4xf32, "L2">, memref<2x3x1xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_reduce_sum_fp32 dm_reduce_args_t {X = %a, Y = %t, rank = 3, shape = [2, 3, 4, 0], reduce_mask = 5} note "training.reduce_sum" : memref<2x3x4xf32, "L2">, memref<3xf32, "L2">
func.func @reduce(%y: memref<3x5xf32, "L2">, %r: memref<5xf32, "L2">, %a: memref<2x3x4xf32, "L2">, %m: memref<2x3x1xf32, "L2">, %t: memref<3xf32, "L2">) {
  training.reduce_sum ins(%y : memref<3x5xf32, "L2">) outs(%r : memref<5xf32, "L2">) {axes = array<i64: 0>}
  training.reduce_mean ins(%a : memref<2x3x4xf32, "L2">) outs(%m : memref<2x3x1xf32, "L2">) {axes = array<i64: 2>, keepdims}
  training.reduce_sum ins(%a : memref<2x3x4xf32, "L2">) outs(%t : memref<3xf32, "L2">) {axes = array<i64: 0, 2>}
  func.return
}

// transpose: shape and perm padded to 6 with 0; no gradient buffer to
// accumulate onto: no acc_reset (NULL)
// CHECK-LABEL: func.func @transpose
// CHECK-NEXT:    kernel.call @dm_transpose_fp32 dm_transpose_args_t {X = %a, Y = %t, rank = 3, shape = [2, 3, 4, 0, 0, 0], perm = [2, 0, 1, 0, 0, 0]} note "training.transpose" : memref<2x3x4xf32, "L2">, memref<4x2x3xf32, "L1">
func.func @transpose(%a: memref<2x3x4xf32, "L2">, %t: memref<4x2x3xf32, "L1">) {
  training.transpose ins(%a : memref<2x3x4xf32, "L2">) outs(%t : memref<4x2x3xf32, "L1">) {perm = array<i64: 2, 0, 1>}
  func.return
}

// a transpose fused with its accumulation (accumulate-fuse: onto = [0], ins
// X, the buffer %t, the flag %reset): Y is the buffer, acc_reset the flag
// (the kernel adds Y's old value unless reset[0] is set); the buffer input
// has no field of its own (it is Y)
// CHECK-LABEL: func.func @transpose_onto
// CHECK-NEXT:    kernel.call @dm_transpose_fp32 dm_transpose_args_t {X = %a, Y = %t, rank = 2, shape = [2, 3, 0, 0, 0, 0], perm = [1, 0, 0, 0, 0, 0], acc_reset = %reset} note "training.transpose" : memref<2x3xf32, "L2">, memref<3x2xf32, "L1">, memref<1xi1, "L2">
func.func @transpose_onto(%a: memref<2x3xf32, "L2">, %t: memref<3x2xf32, "L1">, %reset: memref<1xi1, "L2">) {
  training.transpose ins(%a, %t, %reset : memref<2x3xf32, "L2">, memref<3x2xf32, "L1">, memref<1xi1, "L2">) outs(%t : memref<3x2xf32, "L1">) {perm = array<i64: 1, 0>, onto = array<i64: 0>}
  func.return
}

// gradient accumulation (buffer, grad, reset flag -> out; size 4) and SGD
// (weight, grad, lr -> out; size 5 * 4 = 20)
// CHECK-LABEL: func.func @optimizer
// CHECK-NEXT:    kernel.call @dm_accumulate_fp32 dm_accumulate_args_t {buffer = %a, grad = %g, reset = %r, out = %a, size = 4} note "training.accumulate" : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<1xi1, "L2">, memref<4xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_sgd_fp32 dm_sgd_args_t {weight = %w, grad = %wg, lr = %lr, out = %w, size = 20} note "training.sgd" : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<1xf32, "L2">, memref<5x4xf32, "L2">
func.func @optimizer(%a: memref<4xf32, "L2">, %g: memref<4xf32, "L2">, %r: memref<1xi1, "L2">, %w: memref<5x4xf32, "L2">, %wg: memref<5x4xf32, "L2">, %lr: memref<1xf32, "L2">) {
  training.accumulate ins(%a, %g, %r : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<1xi1, "L2">) outs(%a : memref<4xf32, "L2">)
  training.sgd ins(%w, %wg, %lr : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<1xf32, "L2">) outs(%w : memref<5x4xf32, "L2">)
  func.return
}
