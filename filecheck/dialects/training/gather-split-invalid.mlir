// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier message of the gather_split ops of the training dialect
// (split, concat, gather, gather_grad): each case checks the message as the
// first line of its output, the op it is reported on, and the annotation.

// split sizes that do not add up to X's dim
// CHECK:      {{^}}sizes [2, 3] must be positive and add up to X's dim 1 (6; X is 3x6){{$}}
// CHECK:      %a, %b = "training.split"(%x)
// CHECK:      | Operation does not verify: sizes [2, 3] must be positive and add up to X's dim 1 (6; X is 3x6){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case0(%x: tensor<3x6xf32>) {
  %a, %b = training.split ins(%x : tensor<3x6xf32>) {axis = 1 : i64, sizes = array<i64: 2, 3>} -> tensor<3x2xf32>, tensor<3x3xf32>
  func.return
}

// -----

// split axis out of range
// CHECK:      {{^}}axis 2 is out of range for rank 2: it must be in [0, 2) (the importer turns negative axes into these){{$}}
// CHECK:      %a, %b = "training.split"(%x)
// CHECK:      | Operation does not verify: axis 2 is out of range for rank 2: it must be in [0, 2) (the importer turns negative axes into these){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case1(%x: tensor<3x6xf32>) {
  %a, %b = training.split ins(%x : tensor<3x6xf32>) {axis = 2 : i64, sizes = array<i64: 2, 4>} -> tensor<3x2xf32>, tensor<3x4xf32>
  func.return
}

// -----

// split with fewer results than sizes
// CHECK:      {{^}}expects 2 results, got 1{{$}}
// CHECK:      %a = "training.split"(%x)
// CHECK:      | Operation does not verify: expects 2 results, got 1{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case2(%x: tensor<3x6xf32>) {
  %a = training.split ins(%x : tensor<3x6xf32>) {axis = 1 : i64, sizes = array<i64: 2, 4>} -> tensor<3x2xf32>
  func.return
}

// -----

// concat of inputs that differ beside the axis
// CHECK:      {{^}}input #1 (2x6) must have input #0's shape (3x6) but for dim 1{{$}}
// CHECK:      %y = "training.concat"(%x, %z)
// CHECK:      | Operation does not verify: input #1 (2x6) must have input #0's shape (3x6) but for dim 1{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case3(%x: tensor<3x6xf32>, %z: tensor<2x6xf32>) {
  %y = training.concat ins(%x, %z : tensor<3x6xf32>, tensor<2x6xf32>) {axis = 1 : i64} -> tensor<3x12xf32>
  func.return
}

// -----

// concat result of the wrong length
// CHECK:      {{^}}output #0 has shape 3x9 but the inputs give 3x8{{$}}
// CHECK:      %y = "training.concat"(%x, %z)
// CHECK:      | Operation does not verify: output #0 has shape 3x9 but the inputs give 3x8{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case4(%x: tensor<3x6xf32>, %z: tensor<3x2xf32>) {
  %y = training.concat ins(%x, %z : tensor<3x6xf32>, tensor<3x2xf32>) {axis = 1 : i64} -> tensor<3x9xf32>
  func.return
}

// -----

// gather of i32 indices
// CHECK:      {{^}}indices must have i64 elements, got i32{{$}}
// CHECK:      %y = "training.gather"(%w, %ids)
// CHECK:      | Operation does not verify: indices must have i64 elements, got i32{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case5(%w: tensor<5x3xf32>, %ids: tensor<2x4xi32>) {
  %y = training.gather ins(%w, %ids : tensor<5x3xf32>, tensor<2x4xi32>) {axis = 0 : i64} -> tensor<2x4x3xf32>
  func.return
}

// -----

// gather of integer data
// CHECK:      {{^}}X must have f32 elements, got i64{{$}}
// CHECK:      %y = "training.gather"(%w, %ids)
// CHECK:      | Operation does not verify: X must have f32 elements, got i64{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case6(%w: tensor<5x3xi64>, %ids: tensor<2x4xi64>) {
  %y = training.gather ins(%w, %ids : tensor<5x3xi64>, tensor<2x4xi64>) {axis = 0 : i64} -> tensor<2x4x3xf32>
  func.return
}

// -----

// gather_grad whose dY does not match dX and the indices
// CHECK:      {{^}}dY is 2x4x3 but dX 5x3 and indices 2x3 along axis 0 give 2x3x3{{$}}
// CHECK:      %y = "training.gather_grad"(%dy, %ids)
// CHECK:      | Operation does not verify: dY is 2x4x3 but dX 5x3 and indices 2x3 along axis 0 give 2x3x3{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case7(%dy: tensor<2x4x3xf32>, %ids: tensor<2x3xi64>) {
  %y = training.gather_grad ins(%dy, %ids : tensor<2x4x3xf32>, tensor<2x3xi64>) {axis = 0 : i64} -> tensor<5x3xf32>
  func.return
}

// -----

// gather_grad axis out of range
// CHECK:      {{^}}axis 2 is out of range for rank 2: it must be in [0, 2) (the importer turns negative axes into these){{$}}
// CHECK:      %y = "training.gather_grad"(%dy, %ids)
// CHECK:      | Operation does not verify: axis 2 is out of range for rank 2: it must be in [0, 2) (the importer turns negative axes into these){{$}}
func.func @case8(%dy: tensor<2x4x3xf32>, %ids: tensor<2x4xi64>) {
  %y = training.gather_grad ins(%dy, %ids : tensor<2x4x3xf32>, tensor<2x4xi64>) {axis = 2 : i64} -> tensor<5x3xf32>
  func.return
}
