// RUN: deeploy-opt %s -p kernel-select | filecheck %s

// kernel-select, convolution and pooling (conv_pool_calls;
// runtime_c/include/dm_conv.h, dm_pool.h), fields worked out by hand from
// the operand shapes (NCHW; W is [M, C / groups, kH, kW]) and the window
// attributes (strides, dilations, pads as top, left, bottom, right; the
// kernels take the top and left pads, the output size gives the rest).

// 2x4x8x8 * 6x4x3x3 + bias, pads 1: out 8x8 (8 + 2 - 3 + 1)
// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    kernel.call @dm_conv2d_fp32 dm_conv2d_args_t {X = %x, W = %w, B = %b, Y = %y, batch = 2, in_ch = 4, in_h = 8, in_w = 8, out_ch = 6, k_h = 3, k_w = 3, out_h = 8, out_w = 8, groups = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_top = 1, pad_left = 1} note "training.conv2d" : memref<2x4x8x8xf32, "L2">, memref<6x4x3x3xf32, "L2">, memref<6xf32, "L2">, memref<2x6x8x8xf32, "L2">
func.func @conv(%x: memref<2x4x8x8xf32, "L2">, %w: memref<6x4x3x3xf32, "L2">, %b: memref<6xf32, "L2">, %y: memref<2x6x8x8xf32, "L2">) {
  training.conv2d ins(%x, %w, %b : memref<2x4x8x8xf32, "L2">, memref<6x4x3x3xf32, "L2">, memref<6xf32, "L2">) outs(%y : memref<2x6x8x8xf32, "L2">) {pads = array<i64: 1, 1, 1, 1>}
  func.return
}

// depthwise (groups = X channels / W channels per group = 4 / 1), stride 2, pads (0, 1, 0, 1), no bias (B = null):
// 1x4x7x7 * 4x1x3x3: out_h (7 - 3) / 2 + 1 = 3, out_w (7 + 1 + 1 - 3) / 2 + 1 = 4
// CHECK-LABEL: func.func @depthwise
// CHECK-NEXT:    kernel.call @dm_conv2d_fp32 dm_conv2d_args_t {X = %x, W = %w, B = null, Y = %y, batch = 1, in_ch = 4, in_h = 7, in_w = 7, out_ch = 4, k_h = 3, k_w = 3, out_h = 3, out_w = 4, groups = 4, stride_h = 2, stride_w = 2, dil_h = 1, dil_w = 1, pad_top = 0, pad_left = 1} note "training.conv2d" : memref<1x4x7x7xf32, "L2">, memref<4x1x3x3xf32, "L2">, memref<1x4x3x4xf32, "L2">
func.func @depthwise(%x: memref<1x4x7x7xf32, "L2">, %w: memref<4x1x3x3xf32, "L2">, %y: memref<1x4x3x4xf32, "L2">) {
  training.conv2d ins(%x, %w : memref<1x4x7x7xf32, "L2">, memref<4x1x3x3xf32, "L2">) outs(%y : memref<1x4x3x4xf32, "L2">) {strides = array<i64: 2, 2>, pads = array<i64: 0, 1, 0, 1>}
  func.return
}

// conv2d_grad of all three gradients: two calls on one struct, dX first
// (grad_input), then dW and dB (grad_weight); dY 1x3x3x3, X 1x2x5x5,
// W 3x2x3x3 (out 3x3 = 5 - 3 + 1)
// CHECK-LABEL: func.func @conv_grad
// CHECK-NEXT:    kernel.call @dm_conv2d_grad_input_fp32 dm_conv2d_grad_args_t {dY = %dy, X = %x, W = %w, dX = %dx, dW = %dw, dB = %db, batch = 1, in_ch = 2, in_h = 5, in_w = 5, out_ch = 3, k_h = 3, k_w = 3, out_h = 3, out_w = 3, groups = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_top = 0, pad_left = 0} note "training.conv2d_grad" : memref<1x3x3x3xf32, "L1">, memref<1x2x5x5xf32, "L1">, memref<3x2x3x3xf32, "L1">, memref<1x2x5x5xf32, "L1">, memref<3x2x3x3xf32, "L1">, memref<3xf32, "L1">
// CHECK-NEXT:    kernel.call @dm_conv2d_grad_weight_fp32 dm_conv2d_grad_args_t {dY = %dy, X = %x, W = %w, dX = %dx, dW = %dw, dB = %db, {{.*}}, pad_left = 0} note "training.conv2d_grad (dW, dB)"
func.func @conv_grad(%dy: memref<1x3x3x3xf32, "L1">, %x: memref<1x2x5x5xf32, "L1">, %w: memref<3x2x3x3xf32, "L1">, %dx: memref<1x2x5x5xf32, "L1">, %dw: memref<3x2x3x3xf32, "L1">, %db: memref<3xf32, "L1">) {
  training.conv2d_grad ins(%dy, %x, %w : memref<1x3x3x3xf32, "L1">, memref<1x2x5x5xf32, "L1">, memref<3x2x3x3xf32, "L1">) outs(%dx, %dw, %db : memref<1x2x5x5xf32, "L1">, memref<3x2x3x3xf32, "L1">, memref<3xf32, "L1">)
  func.return
}

// only dW and dB (the first layer), a tile after the first of the batch
// reduction (accumulate outputs 0 and 1 = dW, dB): dX null, no grad_input
// call, acc_dW = acc_dB = 1
// CHECK-LABEL: func.func @conv_grad_acc
// CHECK-NEXT:    kernel.call @dm_conv2d_grad_weight_fp32 dm_conv2d_grad_args_t {dY = %dy, X = %x, W = %w, dX = null, dW = %dw, dB = %db, {{.*}}, pad_left = 0, acc_dW = 1, acc_dB = 1} note "training.conv2d_grad (dW, dB)"
// CHECK-NEXT:    func.return
func.func @conv_grad_acc(%dy: memref<1x3x3x3xf32, "L1">, %x: memref<1x2x5x5xf32, "L1">, %w: memref<3x2x3x3xf32, "L1">, %dw: memref<3x2x3x3xf32, "L1">, %db: memref<3xf32, "L1">) {
  training.conv2d_grad ins(%dy, %x, %w : memref<1x3x3x3xf32, "L1">, memref<1x2x5x5xf32, "L1">, memref<3x2x3x3xf32, "L1">) outs(%dw, %db : memref<3x2x3x3xf32, "L1">, memref<3xf32, "L1">) {outputs = ["dW", "dB"], accumulate = array<i64: 0, 1>}
  func.return
}

// max pooling 3x3, stride 2, pads 1, no Indices: 2x4x8x8 -> 2x4x4x4,
// planes = 2 * 4 = 8; average pooling with count_include_pad (1)
// CHECK-LABEL: func.func @pools
// CHECK-NEXT:    kernel.call @dm_maxpool2d_fp32 dm_pool2d_args_t {X = %x, Y = %y, indices = null, planes = 8, in_h = 8, in_w = 8, out_h = 4, out_w = 4, k_h = 3, k_w = 3, stride_h = 2, stride_w = 2, dil_h = 1, dil_w = 1, pad_top = 1, pad_left = 1, count_include_pad = 0} note "training.maxpool2d" : memref<2x4x8x8xf32, "L2">, memref<2x4x4x4xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_avgpool2d_fp32 dm_pool2d_args_t {X = %x, Y = %y, indices = null, planes = 8, in_h = 8, in_w = 8, out_h = 4, out_w = 4, k_h = 3, k_w = 3, stride_h = 2, stride_w = 2, dil_h = 1, dil_w = 1, pad_top = 1, pad_left = 1, count_include_pad = 1} note "training.avgpool2d"
// CHECK-NEXT:    kernel.call @dm_avgpool2d_grad_fp32 dm_pool2d_grad_args_t {dY = %y, indices = null, dX = %x, planes = 8, in_h = 8, in_w = 8, out_h = 4, out_w = 4, k_h = 3, k_w = 3, stride_h = 2, stride_w = 2, dil_h = 1, dil_w = 1, pad_top = 1, pad_left = 1, count_include_pad = 0} note "training.avgpool2d_grad"
func.func @pools(%x: memref<2x4x8x8xf32, "L2">, %y: memref<2x4x4x4xf32, "L2">) {
  training.maxpool2d ins(%x : memref<2x4x8x8xf32, "L2">) outs(%y : memref<2x4x4x4xf32, "L2">) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
  training.avgpool2d ins(%x : memref<2x4x8x8xf32, "L2">) outs(%y : memref<2x4x4x4xf32, "L2">) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad}
  training.avgpool2d_grad ins(%y : memref<2x4x4x4xf32, "L2">) outs(%x : memref<2x4x8x8xf32, "L2">) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
  func.return
}

// a max pooling tile with Indices: the tile's channels (2), the whole
// input's [C, H, W] = index_frame [4, 8, 8], and its origin (index operands)
// CHECK-LABEL: func.func @maxpool_tile
// CHECK-NEXT:    kernel.call @dm_maxpool2d_fp32 dm_pool2d_args_t {X = %x, Y = %y, indices = %i, planes = 2, in_h = 4, in_w = 4, out_h = 2, out_w = 2, k_h = 2, k_w = 2, stride_h = 2, stride_w = 2, dil_h = 1, dil_w = 1, pad_top = 0, pad_left = 0, count_include_pad = 0, tile_ch = 2, frame_c = 4, frame_h = 8, frame_w = 8, org_n = %n, org_c = %c, org_h = %h, org_w = %w} note "training.maxpool2d" : memref<1x2x4x4xf32, "L1">, memref<1x2x2x2xf32, "L1">, memref<1x2x2x2xi64, "L1">, index, index, index, index
func.func @maxpool_tile(%x: memref<1x2x4x4xf32, "L1">, %y: memref<1x2x2x2xf32, "L1">, %i: memref<1x2x2x2xi64, "L1">, %n: index, %c: index, %h: index, %w: index) {
  training.maxpool2d ins(%x : memref<1x2x4x4xf32, "L1">) outs(%y, %i : memref<1x2x2x2xf32, "L1">, memref<1x2x2x2xi64, "L1">) origin(%n, %c, %h, %w) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, index_frame = array<i64: 4, 8, 8>}
  func.return
}

// max pooling gradient: dY 1x2x2x2 and its Indices -> dX 1x2x4x4 (planes 2)
// CHECK-LABEL: func.func @maxpool_grad
// CHECK-NEXT:    kernel.call @dm_maxpool2d_grad_fp32 dm_pool2d_grad_args_t {dY = %dy, indices = %i, dX = %dx, planes = 2, in_h = 4, in_w = 4, out_h = 2, out_w = 2, k_h = 2, k_w = 2, stride_h = 2, stride_w = 2, dil_h = 1, dil_w = 1, pad_top = 0, pad_left = 0, count_include_pad = 0} note "training.maxpool2d_grad" : memref<1x2x2x2xf32, "L2">, memref<1x2x2x2xi64, "L2">, memref<1x2x4x4xf32, "L2">
func.func @maxpool_grad(%dy: memref<1x2x2x2xf32, "L2">, %i: memref<1x2x2x2xi64, "L2">, %dx: memref<1x2x4x4xf32, "L2">) {
  training.maxpool2d_grad ins(%dy, %i : memref<1x2x2x2xf32, "L2">, memref<1x2x2x2xi64, "L2">) outs(%dx : memref<1x2x4x4xf32, "L2">) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}
  func.return
}

// global average pooling: planes = N * C = 8, size = H * W = 64; its
// gradient from dY 2x4x1x1 to dX 2x4x5x5: planes 8, size 25
// CHECK-LABEL: func.func @global
// CHECK-NEXT:    kernel.call @dm_global_avgpool_fp32 dm_global_avgpool_args_t {X = %x, Y = %g, planes = 8, size = 64} note "training.global_avgpool" : memref<2x4x8x8xf32, "L2">, memref<2x4x1x1xf32, "L1">
// CHECK-NEXT:    kernel.call @dm_global_avgpool_grad_fp32 dm_global_avgpool_grad_args_t {dY = %g, dX = %dx, planes = 8, size = 25} note "training.global_avgpool_grad" : memref<2x4x1x1xf32, "L1">, memref<2x4x5x5xf32, "L1">
func.func @global(%x: memref<2x4x8x8xf32, "L2">, %g: memref<2x4x1x1xf32, "L1">, %dx: memref<2x4x5x5xf32, "L1">) {
  training.global_avgpool ins(%x : memref<2x4x8x8xf32, "L2">) outs(%g : memref<2x4x1x1xf32, "L1">)
  training.global_avgpool_grad ins(%g : memref<2x4x1x1xf32, "L1">) outs(%dx : memref<2x4x5x5xf32, "L1">)
  func.return
}
