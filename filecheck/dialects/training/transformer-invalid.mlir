// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier message of the transformer ops of the training dialect
// (batch_matmul, softmax, softmax_grad, layer_norm, layer_norm_grad, gelu_grad,
// transpose, reduce_mean, binary pow): each case checks the message as the
// first line of its output, the op it is reported on, and the annotation.

// axis out of range
// CHECK:      {{^}}axis 3 is out of range for rank 3: it must be in [0, 3) (the importer turns negative axes into these){{$}}
// CHECK:      %y = "training.softmax"(%a)
// CHECK:      | Operation does not verify: axis 3 is out of range for rank 3: it must be in [0, 3) (the importer turns negative axes into these){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case0(%a: tensor<2x3x4xf32>) {
  %y = training.softmax ins(%a : tensor<2x3x4xf32>) {axis = 3 : i64} -> tensor<2x3x4xf32>
  func.return
}

// -----

// batch_matmul of a vector
// CHECK:      {{^}}A and B must have rank 2 or more (batch dims, then a matrix), got 4 and 4x5{{$}}
// CHECK:      %y = "training.batch_matmul"(%v, %w)
// CHECK:      | Operation does not verify: A and B must have rank 2 or more (batch dims, then a matrix), got 4 and 4x5{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case1(%v: tensor<4xf32>, %w: tensor<4x5xf32>) {
  %y = training.batch_matmul ins(%v, %w : tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
  func.return
}

// -----

// batch dims that do not broadcast
// CHECK:      {{^}}the batch dims of A (2) and B (3) do not broadcast together{{$}}
// CHECK:      %y = "training.batch_matmul"(%a, %b)
// CHECK:      | Operation does not verify: the batch dims of A (2) and B (3) do not broadcast together{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case2(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  %y = training.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  func.return
}

// -----

// bias that does not broadcast
// CHECK:      {{^}}bias C of shape 4 does not broadcast to the result 2x3x5{{$}}
// CHECK:      %y = "training.batch_matmul"(%a, %w, %c)
// CHECK:      | Operation does not verify: bias C of shape 4 does not broadcast to the result 2x3x5{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case3(%a: tensor<2x3x4xf32>, %w: tensor<4x5xf32>, %c: tensor<4xf32>) {
  %y = training.batch_matmul ins(%a, %w, %c : tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<4xf32>) -> tensor<2x3x5xf32>
  func.return
}

// -----

// softmax_grad operands
// CHECK:      {{^}}dY (2x3) and Y (3x2) must have the same shape{{$}}
// CHECK:      %y = "training.softmax_grad"(%a, %b)
// CHECK:      | Operation does not verify: dY (2x3) and Y (3x2) must have the same shape{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case4(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) {
  %y = training.softmax_grad ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) {axis = 1 : i64} -> tensor<3x2xf32>
  func.return
}

// -----

// layer_norm of a scalar
// CHECK:      {{^}}X must have rank 1 or more{{$}}
// CHECK:      %y = "training.layer_norm"(%x, %s)
// CHECK:      | Operation does not verify: X must have rank 1 or more{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case5(%x: tensor<f32>, %s: tensor<f32>) {
  %y = training.layer_norm ins(%x, %s : tensor<f32>, tensor<f32>) {axis = 0 : i64} -> tensor<f32>
  func.return
}

// -----

// layer_norm scale
// CHECK:      {{^}}scale must have the normalized shape 3x4 (X's dims from axis 1), got 4{{$}}
// CHECK:      %y = "training.layer_norm"(%x, %s)
// CHECK:      | Operation does not verify: scale must have the normalized shape 3x4 (X's dims from axis 1), got 4{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case6(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>) {
  %y = training.layer_norm ins(%x, %s : tensor<2x3x4xf32>, tensor<4xf32>) {axis = 1 : i64} -> tensor<2x3x4xf32>
  func.return
}

// -----

// layer_norm bias
// CHECK:      {{^}}bias must have the normalized shape 4 (X's dims from axis 2), got 3{{$}}
// CHECK:      %y = "training.layer_norm"(%x, %s, %b)
// CHECK:      | Operation does not verify: bias must have the normalized shape 4 (X's dims from axis 2), got 3{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case7(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>, %b: tensor<3xf32>) {
  %y = training.layer_norm ins(%x, %s, %b : tensor<2x3x4xf32>, tensor<4xf32>, tensor<3xf32>) {axis = 2 : i64} -> tensor<2x3x4xf32>
  func.return
}

// -----

// layer_norm with four outputs
// CHECK:      {{^}}expects 1 to 3 results (Y, then optionally Mean and InvStdDev), got 4{{$}}
// CHECK:      %y, %m, %i, %z = "training.layer_norm"(%x, %s)
// CHECK:      | Operation does not verify: expects 1 to 3 results (Y, then optionally Mean and InvStdDev), got 4{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case8(%x: tensor<2x4xf32>, %s: tensor<4xf32>) {
  %y, %m, %i, %z = training.layer_norm ins(%x, %s : tensor<2x4xf32>, tensor<4xf32>) {axis = 1 : i64} -> tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>
  func.return
}

// -----

// layer_norm statistics shape
// CHECK:      {{^}}output #1 has shape 2 but the inputs give 2x1{{$}}
// CHECK:      %y, %m = "training.layer_norm"(%x, %s)
// CHECK:      | Operation does not verify: output #1 has shape 2 but the inputs give 2x1{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case9(%x: tensor<2x4xf32>, %s: tensor<4xf32>) {
  %y, %m = training.layer_norm ins(%x, %s : tensor<2x4xf32>, tensor<4xf32>) {axis = 1 : i64} -> tensor<2x4xf32>, tensor<2xf32>
  func.return
}

// -----

// layer_norm_grad outputs order
// CHECK:      {{^}}outputs must list some of dX, dScale, dBias, each once and in that order, got ["dBias", "dX"]{{$}}
// CHECK:      %y, %z = "training.layer_norm_grad"(%d, %x, %s)
// CHECK:      | Operation does not verify: outputs must list some of dX, dScale, dBias, each once and in that order, got ["dBias", "dX"]{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case10(%d: tensor<2x4xf32>, %x: tensor<2x4xf32>, %s: tensor<4xf32>) {
  %y, %z = training.layer_norm_grad ins(%d, %x, %s : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) {axis = 1 : i64, outputs = ["dBias", "dX"]} -> tensor<4xf32>, tensor<2x4xf32>
  func.return
}

// -----

// layer_norm_grad with Mean only
// CHECK:      {{^}}expects Mean and InvStdDev both (5 inputs) or neither (3 inputs), got 4 inputs{{$}}
// CHECK:      %y = "training.layer_norm_grad"(%d, %x, %s, %m)
// CHECK:      | Operation does not verify: expects Mean and InvStdDev both (5 inputs) or neither (3 inputs), got 4 inputs{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case11(%d: tensor<2x4xf32>, %x: tensor<2x4xf32>, %s: tensor<4xf32>, %m: tensor<2x1xf32>) {
  %y = training.layer_norm_grad ins(%d, %x, %s, %m : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<2x1xf32>) {axis = 1 : i64, outputs = ["dX"]} -> tensor<2x4xf32>
  func.return
}

// -----

// layer_norm_grad dY and X
// CHECK:      {{^}}dY (4x2) and X (2x4) must have the same shape{{$}}
// CHECK:      %y = "training.layer_norm_grad"(%d, %x, %s)
// CHECK:      | Operation does not verify: dY (4x2) and X (2x4) must have the same shape{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case12(%d: tensor<4x2xf32>, %x: tensor<2x4xf32>, %s: tensor<4xf32>) {
  %y = training.layer_norm_grad ins(%d, %x, %s : tensor<4x2xf32>, tensor<2x4xf32>, tensor<4xf32>) {axis = 1 : i64, outputs = ["dX"]} -> tensor<2x4xf32>
  func.return
}

// -----

// layer_norm_grad Mean shape
// CHECK:      {{^}}Mean must have X's outer dims 2 followed by 1s (e.g. 2x1), got 4{{$}}
// CHECK:      %y = "training.layer_norm_grad"(%d, %x, %s, %m, %m)
// CHECK:      | Operation does not verify: Mean must have X's outer dims 2 followed by 1s (e.g. 2x1), got 4{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case13(%d: tensor<2x4xf32>, %x: tensor<2x4xf32>, %s: tensor<4xf32>, %m: tensor<4xf32>) {
  %y = training.layer_norm_grad ins(%d, %x, %s, %m, %m : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {axis = 1 : i64, outputs = ["dX"]} -> tensor<2x4xf32>
  func.return
}

// -----

// layer_norm_grad dScale without statistics
// CHECK:      {{^}}dScale and dBias need the forward's Mean and InvStdDev as inputs #3 and #4{{$}}
// CHECK:      %y = "training.layer_norm_grad"(%d, %x, %s)
// CHECK:      | Operation does not verify: dScale and dBias need the forward's Mean and InvStdDev as inputs #3 and #4{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case14(%d: tensor<2x4xf32>, %x: tensor<2x4xf32>, %s: tensor<4xf32>) {
  %y = training.layer_norm_grad ins(%d, %x, %s : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) {axis = 1 : i64, outputs = ["dScale"]} -> tensor<4xf32>
  func.return
}

// -----

// gelu_grad operands
// CHECK:      {{^}}dY (2x3) and X (6) must have the same shape{{$}}
// CHECK:      %y = "training.gelu_grad"(%a, %b)
// CHECK:      | Operation does not verify: dY (2x3) and X (6) must have the same shape{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case15(%a: tensor<2x3xf32>, %b: tensor<6xf32>) {
  %y = training.gelu_grad ins(%a, %b : tensor<2x3xf32>, tensor<6xf32>) -> tensor<6xf32>
  func.return
}

// -----

// transpose perm
// CHECK:      {{^}}perm [0, 2] must be a permutation of 0..1 (X is 2x3){{$}}
// CHECK:      %y = "training.transpose"(%a)
// CHECK:      | Operation does not verify: perm [0, 2] must be a permutation of 0..1 (X is 2x3){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case16(%a: tensor<2x3xf32>) {
  %y = training.transpose ins(%a : tensor<2x3xf32>) {perm = array<i64: 0, 2>} -> tensor<2x3xf32>
  func.return
}

// -----

// reduce_mean axes
// CHECK:      {{^}}axes [1, 1] must be sorted, distinct and in [0, 2) for an input of rank 2{{$}}
// CHECK:      %y = "training.reduce_mean"(%a)
// CHECK:      | Operation does not verify: axes [1, 1] must be sorted, distinct and in [0, 2) for an input of rank 2{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case17(%a: tensor<2x3xf32>) {
  %y = training.reduce_mean ins(%a : tensor<2x3xf32>) {axes = array<i64: 1, 1>} -> tensor<2xf32>
  func.return
}

// -----

// pow needs broadcastable shapes
// CHECK:      {{^}}shapes 2x3 and 2 do not broadcast together{{$}}
// CHECK:      %y = "training.binary"(%a, %b)
// CHECK:      | Operation does not verify: shapes 2x3 and 2 do not broadcast together{{$}}
func.func @case18(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  %y = training.binary ins(%a, %b : tensor<2x3xf32>, tensor<2xf32>) {kind = "pow"} -> tensor<2x3xf32>
  func.return
}
