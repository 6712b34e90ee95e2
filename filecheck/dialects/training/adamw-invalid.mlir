// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier message of the AdamW ops of the training dialect (adamw,
// step_count): each case checks the message as the first line of its
// output, the op it is reported on, and the annotation.

// a moment whose shape is not the weight's
// CHECK:      {{^}}weight (4x3) and m1 (3x4) must have the same shape{{$}}
// CHECK:      "training.adamw"
// CHECK:      | Operation does not verify: weight (4x3) and m1 (3x4) must have the same shape{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case0(%w: tensor<4x3xf32>, %g: tensor<4x3xf32>, %m1: tensor<3x4xf32>, %m2: tensor<4x3xf32>, %lr: tensor<1xf32>, %s: tensor<1xi64>) {
  %0, %1, %2 = training.adamw ins(%w, %g, %m1, %m2, %lr, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3x4xf32>, tensor<4x3xf32>, tensor<1xf32>, tensor<1xi64>) -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  func.return
}

// -----

// a step count that is not int64
// CHECK:      {{^}}step must have i64 elements, got i32{{$}}
// CHECK:      "training.adamw"
// CHECK:      | Operation does not verify: step must have i64 elements, got i32{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case1(%w: tensor<4x3xf32>, %g: tensor<4x3xf32>, %m1: tensor<4x3xf32>, %m2: tensor<4x3xf32>, %lr: tensor<1xf32>, %s: tensor<1xi32>) {
  %0, %1, %2 = training.adamw ins(%w, %g, %m1, %m2, %lr, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1xf32>, tensor<1xi32>) -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  func.return
}

// -----

// a learning rate of two elements
// CHECK:      {{^}}learning rate must have one element, got 2{{$}}
// CHECK:      "training.adamw"
// CHECK:      | Operation does not verify: learning rate must have one element, got 2{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case2(%w: tensor<4x3xf32>, %g: tensor<4x3xf32>, %m1: tensor<4x3xf32>, %m2: tensor<4x3xf32>, %lr: tensor<2xf32>, %s: tensor<1xi64>) {
  %0, %1, %2 = training.adamw ins(%w, %g, %m1, %m2, %lr, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<2xf32>, tensor<1xi64>) -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  func.return
}

// -----

// adam_mode other than 0 and 1
// CHECK:      {{^}}adam_mode must be 0 or 1, got 2{{$}}
// CHECK:      "training.adamw"
// CHECK:      | Operation does not verify: adam_mode must be 0 or 1, got 2{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case3(%w: tensor<4x3xf32>, %g: tensor<4x3xf32>, %m1: tensor<4x3xf32>, %m2: tensor<4x3xf32>, %lr: tensor<1xf32>, %s: tensor<1xi64>) {
  %0, %1, %2 = training.adamw ins(%w, %g, %m1, %m2, %lr, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1xf32>, tensor<1xi64>) {adam_mode = 2 : i64} -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  func.return
}

// -----

// correct_bias other than 0 and 1
// CHECK:      {{^}}correct_bias must be 0 or 1, got 3{{$}}
// CHECK:      "training.adamw"
// CHECK:      | Operation does not verify: correct_bias must be 0 or 1, got 3{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case4(%w: tensor<4x3xf32>, %g: tensor<4x3xf32>, %m1: tensor<4x3xf32>, %m2: tensor<4x3xf32>, %lr: tensor<1xf32>, %s: tensor<1xi64>) {
  %0, %1, %2 = training.adamw ins(%w, %g, %m1, %m2, %lr, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1xf32>, tensor<1xi64>) {correct_bias = 3 : i64} -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  func.return
}

// -----

// an update_signal that is not i1
// CHECK:      {{^}}update_signal must have i1 elements, got f32{{$}}
// CHECK:      "training.adamw"
// CHECK:      | Operation does not verify: update_signal must have i1 elements, got f32{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case5(%w: tensor<4x3xf32>, %g: tensor<4x3xf32>, %m1: tensor<4x3xf32>, %m2: tensor<4x3xf32>, %lr: tensor<1xf32>, %s: tensor<1xi64>, %u: tensor<1xf32>) {
  %0, %1, %2 = training.adamw ins(%w, %g, %m1, %m2, %lr, %s, %u : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  func.return
}

// -----

// too few inputs (no step)
// CHECK:      {{^}}expects 6 to 7 inputs, got 5{{$}}
// CHECK:      "training.adamw"
// CHECK:      | Operation does not verify: expects 6 to 7 inputs, got 5{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case6(%w: tensor<4x3xf32>, %g: tensor<4x3xf32>, %m1: tensor<4x3xf32>, %m2: tensor<4x3xf32>, %lr: tensor<1xf32>, %s: tensor<1xi64>) {
  %0, %1, %2 = training.adamw ins(%w, %g, %m1, %m2, %lr : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1xf32>) -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  func.return
}

// -----

// a result of the wrong shape
// CHECK:      {{^}}output #2 has shape 4x4 but the inputs give 4x3{{$}}
// CHECK:      "training.adamw"
// CHECK:      | Operation does not verify: output #2 has shape 4x4 but the inputs give 4x3{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case7(%w: tensor<4x3xf32>, %g: tensor<4x3xf32>, %m1: tensor<4x3xf32>, %m2: tensor<4x3xf32>, %lr: tensor<1xf32>, %s: tensor<1xi64>) {
  %0, %1, %2 = training.adamw ins(%w, %g, %m1, %m2, %lr, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1xf32>, tensor<1xi64>) -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>
  func.return
}

// -----

// step_count of a float
// CHECK:      {{^}}step count must have i64 elements, got f32{{$}}
// CHECK:      "training.step_count"
// CHECK:      | Operation does not verify: step count must have i64 elements, got f32{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case8(%c: tensor<1xf32>) {
  %0 = training.step_count ins(%c : tensor<1xf32>) -> tensor<1xi64>
  func.return
}

// -----

// step_count of two elements
// CHECK:      {{^}}step count must have one element, got 2{{$}}
// CHECK:      "training.step_count"
// CHECK:      | Operation does not verify: step count must have one element, got 2{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case9(%c: tensor<2xi64>) {
  %0 = training.step_count ins(%c : tensor<2xi64>) -> tensor<2xi64>
  func.return
}

// -----

// step_count with an update_signal of two elements
// CHECK:      {{^}}update_signal must have one element, got 2{{$}}
// CHECK:      "training.step_count"
// CHECK:      | Operation does not verify: update_signal must have one element, got 2{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case10(%c: tensor<1xi64>, %u: tensor<2xi1>) {
  %0 = training.step_count ins(%c, %u : tensor<1xi64>, tensor<2xi1>) -> tensor<1xi64>
  func.return
}

// -----

// step_count giving a float
// CHECK:      {{^}}output #0 must have i64 elements, got f32{{$}}
// CHECK:      "training.step_count"
// CHECK:      | Operation does not verify: output #0 must have i64 elements, got f32{{$}}
func.func @case11(%c: tensor<1xi64>) {
  %0 = training.step_count ins(%c : tensor<1xi64>) -> tensor<1xf32>
  func.return
}
