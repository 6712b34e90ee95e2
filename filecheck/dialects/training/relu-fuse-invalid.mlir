// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The verifier message of relu-fuse's properties: maxpool2d's relu_mask
// marks Indices, so a maxpool2d without the Indices output cannot have it
// (both forms).

// CHECK:      {{^}}relu_mask needs the Indices output (it marks Indices){{$}}
// CHECK:      "training.maxpool2d"(%x)
// CHECK:      | Operation does not verify: relu_mask needs the Indices output (it marks Indices){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @tensor_form(%x: tensor<1x2x4x4xf32>) {
  %y = training.maxpool2d ins(%x : tensor<1x2x4x4xf32>) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, relu_mask} -> tensor<1x2x2x2xf32>
  func.return
}

// -----

// CHECK:      {{^}}relu_mask needs the Indices output (it marks Indices){{$}}
// CHECK:      "training.maxpool2d"(%x, %y)
// CHECK:      | Operation does not verify: relu_mask needs the Indices output (it marks Indices){{$}}
func.func @buffer_form(%x: memref<1x2x4x4xf32>, %y: memref<1x2x2x2xf32>) {
  training.maxpool2d ins(%x : memref<1x2x4x4xf32>) outs(%y : memref<1x2x2x2xf32>) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, relu_mask}
  func.return
}
