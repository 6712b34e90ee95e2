// RUN: deeploy-opt %s -p 'relu-fuse{remarks=true}' | filecheck %s
// RUN: deeploy-opt %s -p 'relu-fuse{mask=false remarks=true}' | filecheck %s --check-prefix=NOMASK
// RUN: deeploy-opt %s -p 'relu-fuse{pool=false}' | filecheck %s --check-prefix=NOPOOL

// The CCT's tokenizer: conv -> relu -> maxpool, and backward
// maxpool_grad(dY, Indices) -> relu_grad(., X = the conv's output).
// - mask: relu_grad reads the relu's output %a instead of %x (a > 0 iff x > 0);
// - pool: relu_grad(maxpool_grad(dY, I), %a) with I = maxpool2d(%a)'s
//   Indices: the maxpool marks the indices whose max is not > 0
//   (relu_mask) and the relu_grad goes (maxpool_grad's result takes its name);
// - conv: %x is then read by the relu alone: the conv applies it (relu), its
//   result takes the relu's name.
// CHECK-LABEL: func.func @tokenizer
// CHECK-NEXT:    %a = training.conv2d ins(%in, %w : {{.*}}) {pads = array<i64: 1, 1, 1, 1>, relu} -> tensor<2x4x8x8xf32>
// CHECK-NEXT:    %p, %i = training.maxpool2d ins(%a : tensor<2x4x8x8xf32>) {{{.*}}, relu_mask} -> tensor<2x4x4x4xf32>, tensor<2x4x4x4xi64>
// CHECK-NEXT:    %dx = training.maxpool2d_grad ins(%dp, %i : tensor<2x4x4x4xf32>, tensor<2x4x4x4xi64>) {{{.*}}} -> tensor<2x4x8x8xf32>
// CHECK-NEXT:    func.return %p, %dx
// Without mask, relu_grad reads %x, which the relu is then not alone in
// reading: nothing folds (pool needs the mask to be the pool's input).
// NOMASK-LABEL: func.func @tokenizer
// NOMASK-NEXT:    %x = training.conv2d ins(%in, %w : {{.*}}) {pads = array<i64: 1, 1, 1, 1>} -> tensor<2x4x8x8xf32>
// NOMASK-NEXT:    %a = training.relu ins(%x : {{.*}}) {relufuse.left = "the conv2d's output is also read by training.relu_grad"}
// NOMASK-NEXT:    %p, %i = training.maxpool2d ins(%a : tensor<2x4x8x8xf32>) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} -> tensor<2x4x4x4xf32>, tensor<2x4x4x4xi64>
// NOMASK:         %dx = training.relu_grad ins(%d, %x : {{.*}})
// Without pool: the mask and the conv fold, the relu_grad stays (reading %a).
// NOPOOL-LABEL: func.func @tokenizer
// NOPOOL-NEXT:    %a = training.conv2d ins(%in, %w : {{.*}}) {pads = array<i64: 1, 1, 1, 1>, relu}
// NOPOOL-NEXT:    %p, %i = training.maxpool2d ins(%a : tensor<2x4x8x8xf32>) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} -> tensor<2x4x4x4xf32>, tensor<2x4x4x4xi64>
// NOPOOL-NEXT:    %d = training.maxpool2d_grad
// NOPOOL-NEXT:    %dx = training.relu_grad ins(%d, %a : {{.*}})
func.func @tokenizer(%in: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %dp: tensor<2x4x4x4xf32>) -> (tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>) {
  %x = training.conv2d ins(%in, %w : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) {pads = array<i64: 1, 1, 1, 1>} -> tensor<2x4x8x8xf32>
  %a = training.relu ins(%x : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p, %i = training.maxpool2d ins(%a : tensor<2x4x8x8xf32>) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} -> tensor<2x4x4x4xf32>, tensor<2x4x4x4xi64>
  %d = training.maxpool2d_grad ins(%dp, %i : tensor<2x4x4x4xf32>, tensor<2x4x4x4xi64>) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} -> tensor<2x4x8x8xf32>
  %dx = training.relu_grad ins(%d, %x : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  func.return %p, %dx : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>
}

// ResNet-like conv -> relu -> conv: the mask reads %a, the relu folds into
// the conv; the relu_grad of a conv2d_grad's dX stays (reading %a).
// CHECK-LABEL: func.func @conv_chain
// CHECK-NEXT:    %a = training.conv2d ins(%in, %w : {{.*}}) {relu} -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %y = training.conv2d ins(%a, %w2 : {{.*}})
// CHECK-NEXT:    %dx = training.relu_grad ins(%dy, %a : {{.*}})
func.func @conv_chain(%in: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %w2: tensor<2x2x1x1xf32>, %dy: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %x = training.conv2d ins(%in, %w : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %a = training.relu ins(%x : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = training.conv2d ins(%a, %w2 : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %dx = training.relu_grad ins(%dy, %x : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %y, %dx : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// Left alone, each for its reason (relufuse.left):
// - the conv's output is returned too;
// CHECK-LABEL: func.func @conv_returned
// CHECK-NEXT:    %x = training.conv2d {{.*}} -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %a = training.relu ins(%x : {{.*}}) {relufuse.left = "the conv2d's output is also read by func.return"}
func.func @conv_returned(%in: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %x = training.conv2d ins(%in, %w : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %a = training.relu ins(%x : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %x, %a : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// - the relu's input is no conv2d's (an argument; a gemm's in an MLP): the
//   mask still moves to the relu's output;
// CHECK-LABEL: func.func @not_a_conv
// CHECK-NEXT:    %a = training.relu ins(%x : {{.*}}) {relufuse.left = "its input is not a conv2d's output"}
// CHECK-NEXT:    %dx = training.relu_grad ins(%dy, %a : {{.*}})
func.func @not_a_conv(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = training.relu ins(%x : tensor<4xf32>) -> tensor<4xf32>
  %dx = training.relu_grad ins(%dy, %x : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a, %dx : tensor<4xf32>, tensor<4xf32>
}

// - the maxpool_grad's result is read by something besides the relu_grad
//   (returned), or the Indices are: the pool keeps its indices, the
//   relu_grads stay.
// CHECK-LABEL: func.func @pool_grad_read_twice
// CHECK:         training.maxpool2d ins(%a : tensor<1x1x4x4xf32>) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} ->
// CHECK:         training.relu_grad ins(%d, %a
// CHECK-LABEL: func.func @indices_returned
// CHECK:         training.maxpool2d ins(%a : tensor<1x1x4x4xf32>) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} ->
// CHECK:         training.relu_grad ins(%d, %a
func.func @pool_grad_read_twice(%a0: tensor<1x1x4x4xf32>, %dp: tensor<1x1x2x2xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %a = training.relu ins(%a0 : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %p, %i = training.maxpool2d ins(%a : tensor<1x1x4x4xf32>) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} -> tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
  %d = training.maxpool2d_grad ins(%dp, %i : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} -> tensor<1x1x4x4xf32>
  %dx = training.relu_grad ins(%d, %a : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return %d, %dx : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}
func.func @indices_returned(%a0: tensor<1x1x4x4xf32>, %dp: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xi64>, tensor<1x1x4x4xf32>) {
  %a = training.relu ins(%a0 : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %p, %i = training.maxpool2d ins(%a : tensor<1x1x4x4xf32>) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} -> tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
  %d = training.maxpool2d_grad ins(%dp, %i : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} -> tensor<1x1x4x4xf32>
  %dx = training.relu_grad ins(%d, %a : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return %i, %dx : tensor<1x1x2x2xi64>, tensor<1x1x4x4xf32>
}
