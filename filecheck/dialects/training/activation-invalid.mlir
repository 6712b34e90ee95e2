// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier message of the activation ops of the training dialect
// (training.unary, training.unary_grad; dialects/training/activation.py and
// the shape and element rules of base.py they share): each case checks the
// message as the first line of its output, the op it is reported on, and the
// annotation.

// unknown unary kind
// CHECK:      {{^}}kind must be one of sigmoid, tanh, leaky_relu, quick_gelu, abs, sign, neg, log, exp, sqrt, reciprocal, got 'relu6'{{$}}
// CHECK:      %y = "training.unary"(%a)
// CHECK:      | Operation does not verify: kind must be one of sigmoid, tanh, leaky_relu, quick_gelu, abs, sign, neg, log, exp, sqrt, reciprocal, got 'relu6'{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case0(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %i: tensor<2x3xi64>) {
  %y = training.unary ins(%a : tensor<2x3xf32>) {kind = "relu6"} -> tensor<2x3xf32>
  func.return
}

// -----

// a unary kind without a gradient kind
// CHECK:      {{^}}kind must be one of sigmoid, tanh, leaky_relu, quick_gelu, got 'abs'{{$}}
// CHECK:      %y = "training.unary_grad"(%a, %a)
// CHECK:      | Operation does not verify: kind must be one of sigmoid, tanh, leaky_relu, quick_gelu, got 'abs'{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case1(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %i: tensor<2x3xi64>) {
  %y = training.unary_grad ins(%a, %a : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "abs"} -> tensor<2x3xf32>
  func.return
}

// -----

// leaky_relu without alpha
// CHECK:      {{^}}kind 'leaky_relu' needs alpha{{$}}
// CHECK:      %y = "training.unary"(%a)
// CHECK:      | Operation does not verify: kind 'leaky_relu' needs alpha{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case2(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %i: tensor<2x3xi64>) {
  %y = training.unary ins(%a : tensor<2x3xf32>) {kind = "leaky_relu"} -> tensor<2x3xf32>
  func.return
}

// -----

// quick_gelu gradient without alpha
// CHECK:      {{^}}kind 'quick_gelu' needs alpha{{$}}
// CHECK:      %y = "training.unary_grad"(%a, %a)
// CHECK:      | Operation does not verify: kind 'quick_gelu' needs alpha{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case3(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %i: tensor<2x3xi64>) {
  %y = training.unary_grad ins(%a, %a : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "quick_gelu"} -> tensor<2x3xf32>
  func.return
}

// -----

// alpha on a kind without one
// CHECK:      {{^}}kind 'sigmoid' takes no alpha (only leaky_relu, quick_gelu do){{$}}
// CHECK:      %y = "training.unary"(%a)
// CHECK:      | Operation does not verify: kind 'sigmoid' takes no alpha (only leaky_relu, quick_gelu do){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case4(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %i: tensor<2x3xi64>) {
  %y = training.unary ins(%a : tensor<2x3xf32>) {kind = "sigmoid", alpha = 1.0 : f32} -> tensor<2x3xf32>
  func.return
}

// -----

// alpha not finite (0x7F800000 is +inf)
// CHECK:      {{^}}alpha must be finite, got inf{{$}}
// CHECK:      %y = "training.unary"(%a)
// CHECK:      | Operation does not verify: alpha must be finite, got inf{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case5(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %i: tensor<2x3xi64>) {
  %y = training.unary ins(%a : tensor<2x3xf32>) {kind = "leaky_relu", alpha = 0x7F800000 : f32} -> tensor<2x3xf32>
  func.return
}

// -----

// dY and Z of different shapes
// CHECK:      {{^}}gradient dY (2x3) and Z (3x2) must have the same shape{{$}}
// CHECK:      %y = "training.unary_grad"(%a, %b)
// CHECK:      | Operation does not verify: gradient dY (2x3) and Z (3x2) must have the same shape{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case6(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %i: tensor<2x3xi64>) {
  %y = training.unary_grad ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) {kind = "tanh"} -> tensor<2x3xf32>
  func.return
}

// -----

// a result of another shape
// CHECK:      {{^}}output #0 has shape 6 but the inputs give 2x3{{$}}
// CHECK:      %y = "training.unary"(%a)
// CHECK:      | Operation does not verify: output #0 has shape 6 but the inputs give 2x3{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case7(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %i: tensor<2x3xi64>) {
  %y = training.unary ins(%a : tensor<2x3xf32>) {kind = "exp"} -> tensor<6xf32>
  func.return
}

// -----

// an integer input
// CHECK:      {{^}}input #0 must have f32 elements, got i64{{$}}
// CHECK:      %y = "training.unary"(%i)
// CHECK:      | Operation does not verify: input #0 must have f32 elements, got i64{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case8(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %i: tensor<2x3xi64>) {
  %y = training.unary ins(%i : tensor<2x3xi64>) {kind = "neg"} -> tensor<2x3xf32>
  func.return
}

// -----

// a gradient with one input
// CHECK:      {{^}}expects 2 inputs, got 1{{$}}
// CHECK:      %y = "training.unary_grad"(%a)
// CHECK:      | Operation does not verify: expects 2 inputs, got 1{{$}}
func.func @case9(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %i: tensor<2x3xi64>) {
  %y = training.unary_grad ins(%a : tensor<2x3xf32>) {kind = "sigmoid"} -> tensor<2x3xf32>
  func.return
}
