// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier message of training.batch_norm and training.batch_norm_grad
// (dialects/training/batchnorm.py, and the counts and result shapes every
// compute op checks): each case checks the message as the first line of its
// output, the op it is reported on, and the annotation.

// X of rank 1
// CHECK:      {{^}}X must have rank 2 or more ([N, C, spatial..]), got 4{{$}}
// CHECK:      %y, %a, %b, %m, %s = "training.batch_norm"(%x, %c, %c, %c, %c)
// CHECK:      | Operation does not verify: X must have rank 2 or more ([N, C, spatial..]), got 4{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case0(%x: tensor<4xf32>, %c: tensor<3xf32>) {
  %y, %a, %b, %m, %s = training.batch_norm ins(%x, %c, %c, %c, %c : tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  func.return
}

// -----

// scale not of the channels' shape
// CHECK:      {{^}}scale must have shape 3 (X's channels), got 4{{$}}
// CHECK:      %y, %a, %b, %m, %s = "training.batch_norm"(%x, %d, %c, %c, %c)
// CHECK:      | Operation does not verify: scale must have shape 3 (X's channels), got 4{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case1(%x: tensor<4x3xf32>, %c: tensor<3xf32>, %d: tensor<4xf32>) {
  %y, %a, %b, %m, %s = training.batch_norm ins(%x, %d, %c, %c, %c : tensor<4x3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  func.return
}

// -----

// running_var of rank 2
// CHECK:      {{^}}running_var must have shape 3 (X's channels), got 1x3{{$}}
// CHECK:      %y, %a, %b, %m, %s = "training.batch_norm"(%x, %c, %c, %c, %d)
// CHECK:      | Operation does not verify: running_var must have shape 3 (X's channels), got 1x3{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case2(%x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>, %d: tensor<1x3xf32>) {
  %y, %a, %b, %m, %s = training.batch_norm ins(%x, %c, %c, %c, %d : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3xf32>) -> tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  func.return
}

// -----

// epsilon zero
// CHECK:      {{^}}epsilon must be positive and finite, got 0.0{{$}}
// CHECK:      %y, %a, %b, %m, %s = "training.batch_norm"(%x, %c, %c, %c, %c)
// CHECK:      | Operation does not verify: epsilon must be positive and finite, got 0.0{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case3(%x: tensor<4x3xf32>, %c: tensor<3xf32>) {
  %y, %a, %b, %m, %s = training.batch_norm ins(%x, %c, %c, %c, %c : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {epsilon = 0.0 : f32} -> tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  func.return
}

// -----

// momentum above 1
// CHECK:      {{^}}momentum must be in [0, 1], got 1.5{{$}}
// CHECK:      %y, %a, %b, %m, %s = "training.batch_norm"(%x, %c, %c, %c, %c)
// CHECK:      | Operation does not verify: momentum must be in [0, 1], got 1.5{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case4(%x: tensor<4x3xf32>, %c: tensor<3xf32>) {
  %y, %a, %b, %m, %s = training.batch_norm ins(%x, %c, %c, %c, %c : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {momentum = 1.5 : f32} -> tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  func.return
}

// -----

// a result of the wrong shape (saved_inv_std)
// CHECK:      {{^}}output #4 has shape 4 but the inputs give 3{{$}}
// CHECK:      %y, %a, %b, %m, %s = "training.batch_norm"(%x, %c, %c, %c, %c)
// CHECK:      | Operation does not verify: output #4 has shape 4 but the inputs give 3{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case5(%x: tensor<4x3xf32>, %c: tensor<3xf32>) {
  %y, %a, %b, %m, %s = training.batch_norm ins(%x, %c, %c, %c, %c : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>
  func.return
}

// -----

// four results
// CHECK:      {{^}}expects 5 results, got 4{{$}}
// CHECK:      %y, %a, %b, %m = "training.batch_norm"(%x, %c, %c, %c, %c)
// CHECK:      | Operation does not verify: expects 5 results, got 4{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case6(%x: tensor<4x3xf32>, %c: tensor<3xf32>) {
  %y, %a, %b, %m = training.batch_norm ins(%x, %c, %c, %c, %c : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  func.return
}

// -----

// gradient: dY and X differ
// CHECK:      {{^}}dY (3x4) and X (4x3) must have the same shape{{$}}
// CHECK:      %y, %a, %b = "training.batch_norm_grad"(%dy, %x, %c, %c, %c)
// CHECK:      | Operation does not verify: dY (3x4) and X (4x3) must have the same shape{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case7(%x: tensor<4x3xf32>, %dy: tensor<3x4xf32>, %c: tensor<3xf32>) {
  %y, %a, %b = training.batch_norm_grad ins(%dy, %x, %c, %c, %c : tensor<3x4xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  func.return
}

// -----

// gradient: saved_inv_std of the wrong length
// CHECK:      {{^}}saved_inv_std must have shape 3 (X's channels), got 2{{$}}
// CHECK:      %y, %a, %b = "training.batch_norm_grad"(%x, %x, %c, %c, %d)
// CHECK:      | Operation does not verify: saved_inv_std must have shape 3 (X's channels), got 2{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case8(%x: tensor<2x3x2x2xf32>, %c: tensor<3xf32>, %d: tensor<2xf32>) {
  %y, %a, %b = training.batch_norm_grad ins(%x, %x, %c, %c, %d : tensor<2x3x2x2xf32>, tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>) -> tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>
  func.return
}

// -----

// gradient: four inputs
// CHECK:      {{^}}expects 5 inputs, got 4{{$}}
// CHECK:      %y, %a, %b = "training.batch_norm_grad"(%x, %x, %c, %c)
// CHECK:      | Operation does not verify: expects 5 inputs, got 4{{$}}
func.func @case9(%x: tensor<4x3xf32>, %c: tensor<3xf32>) {
  %y, %a, %b = training.batch_norm_grad ins(%x, %x, %c, %c : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  func.return
}
