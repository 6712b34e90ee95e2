// RUN: deeploy-opt %s -p kernel-select | filecheck %s

// kernel-select of relu-fuse's properties (runtime_c/include/dm_conv.h,
// dm_pool.h): conv2d's `relu` is the field relu = 1 of dm_conv2d_args_t,
// maxpool2d's `relu_mask` the field relu_mask = 1 of dm_pool2d_args_t; the
// other fields as in conv-pool.mlir, worked out by hand from the shapes.

// 1x2x4x4 * 3x2x3x3, pads 1: out 4x4 (4 + 2 - 3 + 1); no bias
// CHECK-LABEL: func.func @conv_relu
// CHECK-NEXT:    kernel.call @dm_conv2d_fp32 dm_conv2d_args_t {X = %x, W = %w, B = null, Y = %y, batch = 1, in_ch = 2, in_h = 4, in_w = 4, out_ch = 3, k_h = 3, k_w = 3, out_h = 4, out_w = 4, groups = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_top = 1, pad_left = 1, relu = 1} note "training.conv2d"
func.func @conv_relu(%x: memref<1x2x4x4xf32, "L2">, %w: memref<3x2x3x3xf32, "L2">, %y: memref<1x3x4x4xf32, "L2">) {
  training.conv2d ins(%x, %w : memref<1x2x4x4xf32, "L2">, memref<3x2x3x3xf32, "L2">) outs(%y : memref<1x3x4x4xf32, "L2">) {pads = array<i64: 1, 1, 1, 1>, relu}
  func.return
}

// 2x4x8x8 pooled 3x3, stride 2, pads 1: planes 2 * 4 = 8, out (8 + 2 - 3) / 2 + 1 = 4
// CHECK-LABEL: func.func @maxpool_relu_mask
// CHECK-NEXT:    kernel.call @dm_maxpool2d_fp32 dm_pool2d_args_t {X = %x, Y = %y, indices = %i, planes = 8, in_h = 8, in_w = 8, out_h = 4, out_w = 4, k_h = 3, k_w = 3, stride_h = 2, stride_w = 2, dil_h = 1, dil_w = 1, pad_top = 1, pad_left = 1, count_include_pad = 0, relu_mask = 1} note "training.maxpool2d"
func.func @maxpool_relu_mask(%x: memref<2x4x8x8xf32, "L2">, %y: memref<2x4x4x4xf32, "L2">, %i: memref<2x4x4x4xi64, "L2">) {
  training.maxpool2d ins(%x : memref<2x4x8x8xf32, "L2">) outs(%y, %i : memref<2x4x4x4xf32, "L2">, memref<2x4x4x4xi64, "L2">) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, relu_mask}
  func.return
}
