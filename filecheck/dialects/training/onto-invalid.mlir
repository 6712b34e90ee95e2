// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier message of `onto` (TrainingComputeOp.verify_onto): each case
// checks the message as the first line of its output.

// onto in tensor form: there is no buffer to add into
// CHECK:      {{^}}onto needs the buffer form (outs): it adds into them{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case0(%x: tensor<2x3xf32>, %b: tensor<3x2xf32>, %r: tensor<1xi1>) {
  %y = training.transpose ins(%x, %b, %r : tensor<2x3xf32>, tensor<3x2xf32>, tensor<1xi1>) {perm = array<i64: 1, 0>, onto = array<i64: 0>} -> tensor<3x2xf32>
  func.return
}

// -----

// transpose has one output: position 1 does not exist
// CHECK:      {{^}}onto must list output positions in increasing order, each once and below 1 (the number of outs), got [1]{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case1(%x: memref<2x3xf32>, %b: memref<3x2xf32>, %r: memref<1xi1>) {
  training.transpose ins(%x, %b, %r : memref<2x3xf32>, memref<3x2xf32>, memref<1xi1>) outs(%b : memref<3x2xf32>) {perm = array<i64: 1, 0>, onto = array<i64: 1>}
  func.return
}

// -----

// relu's kernel has no adding store
// CHECK:      {{^}}onto lists output #0 but training.relu cannot accumulate onto it{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case2(%x: memref<4xf32>, %b: memref<4xf32>, %r: memref<1xi1>) {
  training.relu ins(%x, %b, %r : memref<4xf32>, memref<4xf32>, memref<1xi1>) outs(%b : memref<4xf32>) {onto = array<i64: 0>}
  func.return
}

// -----

// no room for the buffer and the flag at the end of ins
// CHECK:      {{^}}onto needs 1 buffer(s) and the reset flag at the end of ins{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case3(%b: memref<2x2xf32>) {
  training.transpose ins(%b : memref<2x2xf32>) outs(%b : memref<2x2xf32>) {perm = array<i64: 1, 0>, onto = array<i64: 0>}
  func.return
}

// -----

// the buffer input is another memref than output #0
// CHECK:      {{^}}onto's input #1 must be output #0 itself (the buffer it accumulates onto){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @case4(%x: memref<2x3xf32>, %b: memref<3x2xf32>, %c: memref<3x2xf32>, %r: memref<1xi1>) {
  training.transpose ins(%x, %c, %r : memref<2x3xf32>, memref<3x2xf32>, memref<1xi1>) outs(%b : memref<3x2xf32>) {perm = array<i64: 1, 0>, onto = array<i64: 0>}
  func.return
}

// -----

// the flag must be one i1
// CHECK:      {{^}}onto's reset flag must be a memref<1xi1>, got memref<2xi1>{{$}}
func.func @case5(%x: memref<2x3xf32>, %b: memref<3x2xf32>, %r: memref<2xi1>) {
  training.transpose ins(%x, %b, %r : memref<2x3xf32>, memref<3x2xf32>, memref<2xi1>) outs(%b : memref<3x2xf32>) {perm = array<i64: 1, 0>, onto = array<i64: 0>}
  func.return
}
