// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier message of the loss family's ops (dialects/training/loss.py:
// log_softmax, log_softmax_grad, dropout, dropout_grad): each case checks the
// message as the first line of its output, the op it is reported on, and the
// annotation.

// log_softmax axis out of range
// CHECK:      {{^}}axis 2 is out of range for rank 2: it must be in [0, 2) (the importer turns negative axes into these){{$}}
// CHECK:      %y = "training.log_softmax"(%a)
// CHECK:      | Operation does not verify: axis 2 is out of range for rank 2: it must be in [0, 2) (the importer turns negative axes into these){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case0(%a: tensor<2x3xf32>) {
  %y = training.log_softmax ins(%a : tensor<2x3xf32>) {axis = 2 : i64} -> tensor<2x3xf32>
  func.return
}

// -----

// log_softmax_grad of dY and Y of different shapes
// CHECK:      {{^}}dY (2x3) and Y (3x2) must have the same shape{{$}}
// CHECK:      %y = "training.log_softmax_grad"(%a, %b)
// CHECK:      | Operation does not verify: dY (2x3) and Y (3x2) must have the same shape{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case1(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) {
  %y = training.log_softmax_grad ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) {axis = 1 : i64} -> tensor<2x3xf32>
  func.return
}

// -----

// dropout ratio of 1 (everything dropped, scale infinite)
// CHECK:      {{^}}ratio must be in [0, 1), got 1.0{{$}}
// CHECK:      %y, %m = "training.dropout"(%a)
// CHECK:      | Operation does not verify: ratio must be in [0, 1), got 1.0{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case2(%a: tensor<4xf32>) {
  %y, %m = training.dropout ins(%a : tensor<4xf32>) {ratio = 1.0 : f32} -> tensor<4xf32>, tensor<4xi1>
  func.return
}

// -----

// dropout seed beyond 32 bits
// CHECK:      {{^}}seed must be an unsigned 32-bit integer, got 4294967296{{$}}
// CHECK:      %y, %m = "training.dropout"(%a)
// CHECK:      | Operation does not verify: seed must be an unsigned 32-bit integer, got 4294967296{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case3(%a: tensor<4xf32>) {
  %y, %m = training.dropout ins(%a : tensor<4xf32>) {seed = 4294967296 : i64} -> tensor<4xf32>, tensor<4xi1>
  func.return
}

// -----

// dropout stream not below streams
// CHECK:      {{^}}stream must be in [0, streams), got stream 2 of 2{{$}}
// CHECK:      %y, %m = "training.dropout"(%a)
// CHECK:      | Operation does not verify: stream must be in [0, streams), got stream 2 of 2{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case4(%a: tensor<4xf32>) {
  %y, %m = training.dropout ins(%a : tensor<4xf32>) {stream = 2 : i64, streams = 2 : i64} -> tensor<4xf32>, tensor<4xi1>
  func.return
}

// -----

// dropout mask that is not i1
// CHECK:      {{^}}output #1 must have i1 elements, got f32{{$}}
// CHECK:      %y, %m = "training.dropout"(%a)
// CHECK:      | Operation does not verify: output #1 must have i1 elements, got f32{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case5(%a: tensor<4xf32>) {
  %y, %m = training.dropout ins(%a : tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>
  func.return
}

// -----

// dropout_grad of an i64 dY
// CHECK:      {{^}}dY must have f32 elements, got i64{{$}}
// CHECK:      %y = "training.dropout_grad"(%a, %m)
// CHECK:      | Operation does not verify: dY must have f32 elements, got i64{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case6(%a: tensor<4xi64>, %m: tensor<4xi1>) {
  %y = training.dropout_grad ins(%a, %m : tensor<4xi64>, tensor<4xi1>) -> tensor<4xf32>
  func.return
}

// -----

// dropout_grad of a float mask
// CHECK:      {{^}}mask must have i1 elements, got f32{{$}}
// CHECK:      %y = "training.dropout_grad"(%a, %m)
// CHECK:      | Operation does not verify: mask must have i1 elements, got f32{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case7(%a: tensor<4xf32>, %m: tensor<4xf32>) {
  %y = training.dropout_grad ins(%a, %m : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// dropout_grad of a mask of another shape
// CHECK:      {{^}}dY (4) and mask (2x2) must have the same shape{{$}}
// CHECK:      %y = "training.dropout_grad"(%a, %m)
// CHECK:      | Operation does not verify: dY (4) and mask (2x2) must have the same shape{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case8(%a: tensor<4xf32>, %m: tensor<2x2xi1>) {
  %y = training.dropout_grad ins(%a, %m : tensor<4xf32>, tensor<2x2xi1>) -> tensor<4xf32>
  func.return
}

// -----

// dropout_grad ratio below 0
// CHECK:      {{^}}ratio must be in [0, 1), got -0.5{{$}}
// CHECK:      %y = "training.dropout_grad"(%a, %m)
// CHECK:      | Operation does not verify: ratio must be in [0, 1), got -0.5{{$}}
func.func @case9(%a: tensor<4xf32>, %m: tensor<4xi1>) {
  %y = training.dropout_grad ins(%a, %m : tensor<4xf32>, tensor<4xi1>) {ratio = -0.5 : f32} -> tensor<4xf32>
  func.return
}
