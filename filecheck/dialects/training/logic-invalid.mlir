// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier message of the logic family of the training dialect
// (compare, logical, not, where, cast, clip): each case checks the message
// as the first line of its output, the op it is reported on, and the
// annotation.

// an unknown compare kind
// CHECK:      {{^}}kind must be one of greater, greater_equal, less, less_equal, equal, got 'not_equal'{{$}}
// CHECK:      %y = "training.compare"(%a, %a)
// CHECK:      | Operation does not verify: kind must be one of greater, greater_equal, less, less_equal, equal, got 'not_equal'{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case0(%a: tensor<2x3xf32>) {
  %y = training.compare ins(%a, %a : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "not_equal"} -> tensor<2x3xi1>
  func.return
}

// -----

// compare operands that do not broadcast
// CHECK:      {{^}}input shapes 2x3, 4 do not broadcast together{{$}}
// CHECK:      %y = "training.compare"(%a, %b)
// CHECK:      | Operation does not verify: input shapes 2x3, 4 do not broadcast together{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case1(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %y = training.compare ins(%a, %b : tensor<2x3xf32>, tensor<4xf32>) {kind = "less"} -> tensor<2x3xi1>
  func.return
}

// -----

// compare of int64 (the kernel compares floats)
// CHECK:      {{^}}input #0 must have f32 elements, got i64{{$}}
// CHECK:      %y = "training.compare"(%a, %a)
// CHECK:      | Operation does not verify: input #0 must have f32 elements, got i64{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case2(%a: tensor<2x3xi64>) {
  %y = training.compare ins(%a, %a : tensor<2x3xi64>, tensor<2x3xi64>) {kind = "less"} -> tensor<2x3xi1>
  func.return
}

// -----

// a compare's result is bool
// CHECK:      {{^}}output #0 must have i1 elements, got f32{{$}}
// CHECK:      %y = "training.compare"(%a, %a)
// CHECK:      | Operation does not verify: output #0 must have i1 elements, got f32{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case3(%a: tensor<2x3xf32>) {
  %y = training.compare ins(%a, %a : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "less"} -> tensor<2x3xf32>
  func.return
}

// -----

// an unknown logical kind
// CHECK:      {{^}}kind must be one of and, or, xor, got 'nand'{{$}}
// CHECK:      %y = "training.logical"(%m, %m)
// CHECK:      | Operation does not verify: kind must be one of and, or, xor, got 'nand'{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case4(%m: tensor<2x3xi1>) {
  %y = training.logical ins(%m, %m : tensor<2x3xi1>, tensor<2x3xi1>) {kind = "nand"} -> tensor<2x3xi1>
  func.return
}

// -----

// logical of a float
// CHECK:      {{^}}input #1 must have i1 elements, got f32{{$}}
// CHECK:      %y = "training.logical"(%m, %a)
// CHECK:      | Operation does not verify: input #1 must have i1 elements, got f32{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case5(%m: tensor<2x3xi1>, %a: tensor<2x3xf32>) {
  %y = training.logical ins(%m, %a : tensor<2x3xi1>, tensor<2x3xf32>) {kind = "or"} -> tensor<2x3xi1>
  func.return
}

// -----

// not of a float
// CHECK:      {{^}}input #0 must have i1 elements, got f32{{$}}
// CHECK:      %y = "training.not"(%a)
// CHECK:      | Operation does not verify: input #0 must have i1 elements, got f32{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case6(%a: tensor<2x3xf32>) {
  %y = training.not ins(%a : tensor<2x3xf32>) -> tensor<2x3xi1>
  func.return
}

// -----

// where's condition is bool
// CHECK:      {{^}}condition (input #0) must have i1 elements, got f32{{$}}
// CHECK:      %y = "training.where"(%a, %a, %a)
// CHECK:      | Operation does not verify: condition (input #0) must have i1 elements, got f32{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case7(%a: tensor<2x3xf32>) {
  %y = training.where ins(%a, %a, %a : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// where of int64 values (the kernel selects floats)
// CHECK:      {{^}}input #1 must have f32 elements, got i64{{$}}
// CHECK:      %y = "training.where"(%m, %l, %l)
// CHECK:      | Operation does not verify: input #1 must have f32 elements, got i64{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case8(%m: tensor<2x3xi1>, %l: tensor<2x3xi64>) {
  %y = training.where ins(%m, %l, %l : tensor<2x3xi1>, tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xf32>
  func.return
}

// -----

// where operands that do not broadcast
// CHECK:      {{^}}input shapes 2x3, 2x3, 2 do not broadcast together{{$}}
// CHECK:      %y = "training.where"(%m, %a, %b)
// CHECK:      | Operation does not verify: input shapes 2x3, 2x3, 2 do not broadcast together{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case9(%m: tensor<2x3xi1>, %a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  %y = training.where ins(%m, %a, %b : tensor<2x3xi1>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// a cast the kernels do not make in one step (the importer goes through f32)
// CHECK:      {{^}}cannot cast i1 to i64 (supported: i1->f32, f32->i1, i64->f32, f32->i64){{$}}
// CHECK:      %y = "training.cast"(%m)
// CHECK:      | Operation does not verify: cannot cast i1 to i64 (supported: i1->f32, f32->i1, i64->f32, f32->i64){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case10(%m: tensor<2x3xi1>) {
  %y = training.cast ins(%m : tensor<2x3xi1>) {to = i64} -> tensor<2x3xi64>
  func.return
}

// -----

// cast's result has the `to` element type
// CHECK:      {{^}}output #0 must have f32 elements, got i1{{$}}
// CHECK:      %y = "training.cast"(%m)
// CHECK:      | Operation does not verify: output #0 must have f32 elements, got i1{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case11(%m: tensor<2x3xi1>) {
  %y = training.cast ins(%m : tensor<2x3xi1>) {to = f32} -> tensor<2x3xi1>
  func.return
}

// -----

// clip with lo above hi (the importer makes lo = hi: ONNX gives max everywhere)
// CHECK:      {{^}}lo (1.0) must not exceed hi (0.0), and neither be NaN{{$}}
// CHECK:      %y = "training.clip"(%a)
// CHECK:      | Operation does not verify: lo (1.0) must not exceed hi (0.0), and neither be NaN{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case12(%a: tensor<2x3xf32>) {
  %y = training.clip ins(%a : tensor<2x3xf32>) {lo = 1.000000e+00 : f32, hi = 0.000000e+00 : f32} -> tensor<2x3xf32>
  func.return
}

// -----

// clip of int64
// CHECK:      {{^}}input #0 must have f32 elements, got i64{{$}}
// CHECK:      %y = "training.clip"(%a)
// CHECK:      | Operation does not verify: input #0 must have f32 elements, got i64{{$}}
func.func @case13(%a: tensor<2x3xi64>) {
  %y = training.clip ins(%a : tensor<2x3xi64>) {lo = 0.000000e+00 : f32, hi = 6.000000e+00 : f32} -> tensor<2x3xi64>
  func.return
}
