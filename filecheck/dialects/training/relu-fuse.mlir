// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

// relu-fuse's properties round-trip in both forms: conv2d's `relu` (Y =
// max(conv + B, 0)) and maxpool2d's `relu_mask` (Indices -1 where Y is not
// > 0), also on a tile of a maxpool2d (origin, index_frame).

// CHECK-LABEL: func.func @tensor_form
// CHECK-NEXT:    %y = training.conv2d ins(%x, %w, %b : tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) {pads = array<i64: 1, 1, 1, 1>, relu} -> tensor<2x6x8x8xf32>
// CHECK-NEXT:    %p, %i = training.maxpool2d ins(%y : tensor<2x6x8x8xf32>) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, relu_mask} -> tensor<2x6x4x4xf32>, tensor<2x6x4x4xi64>
// CHECK-NEXT:    func.return
func.func @tensor_form(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %b: tensor<6xf32>) {
  %y = training.conv2d ins(%x, %w, %b : tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) {pads = array<i64: 1, 1, 1, 1>, relu} -> tensor<2x6x8x8xf32>
  %p, %i = training.maxpool2d ins(%y : tensor<2x6x8x8xf32>) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, relu_mask} -> tensor<2x6x4x4xf32>, tensor<2x6x4x4xi64>
  func.return
}

// CHECK-LABEL: func.func @buffer_form
// CHECK-NEXT:    training.conv2d ins(%x, %w : memref<1x4x7x7xf32, "L2">, memref<4x1x3x3xf32, "L2">) outs(%y : memref<1x4x3x4xf32, "L2">) {strides = array<i64: 2, 2>, pads = array<i64: 0, 1, 0, 1>, relu}
// CHECK-NEXT:    training.maxpool2d ins(%t : memref<1x2x4x4xf32, "L1">) outs(%py, %pi : memref<1x2x2x2xf32, "L1">, memref<1x2x2x2xi64, "L1">) origin(%n, %c, %h, %v) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, index_frame = array<i64: 4, 8, 8>, relu_mask}
// CHECK-NEXT:    func.return
func.func @buffer_form(%x: memref<1x4x7x7xf32, "L2">, %w: memref<4x1x3x3xf32, "L2">, %y: memref<1x4x3x4xf32, "L2">,
                       %t: memref<1x2x4x4xf32, "L1">, %py: memref<1x2x2x2xf32, "L1">, %pi: memref<1x2x2x2xi64, "L1">,
                       %n: index, %c: index, %h: index, %v: index) {
  training.conv2d ins(%x, %w : memref<1x4x7x7xf32, "L2">, memref<4x1x3x3xf32, "L2">) outs(%y : memref<1x4x3x4xf32, "L2">) {strides = array<i64: 2, 2>, pads = array<i64: 0, 1, 0, 1>, relu}
  training.maxpool2d ins(%t : memref<1x2x4x4xf32, "L1">) outs(%py, %pi : memref<1x2x2x2xf32, "L1">, memref<1x2x2x2xi64, "L1">) origin(%n, %c, %h, %v) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, index_frame = array<i64: 4, 8, 8>, relu_mask}
  func.return
}
