// RUN: deeploy-opt %s -p transpose-fold | filecheck %s
// RUN: deeploy-opt %s -p 'transpose-fold{operands=false}' | filecheck %s --check-prefix=OFF

// operands: a matrix transpose (perm [1, 0], or the last two dims of a
// batch swapped) all of whose uses are operand A or B of a product is
// gone; each product reads the transpose's input with that operand's flag
// flipped (A' = A^T when trans_a: reading t = x^T with trans_a off is
// reading x with trans_a on).

// The CCT's weight: W^T feeds the forward product (X W^T, B' = t) and the
// gradient's (dY (W^T)^T, trans_b): both read W, with trans_b on, then off.
// CHECK-LABEL: func.func @weight
// CHECK-NOT:     training.transpose
// CHECK:         %y = training.batch_matmul ins(%x, %w : tensor<2x3x4xf32>, tensor<5x4xf32>) {trans_b} -> tensor<2x3x5xf32>
// CHECK-NEXT:    %dx = training.batch_matmul ins(%dy, %w : tensor<2x3x5xf32>, tensor<5x4xf32>) {beta = 0.000000e+00 : f32} -> tensor<2x3x4xf32>
// OFF-LABEL:   func.func @weight
// OFF:           training.transpose
func.func @weight(%x: tensor<2x3x4xf32>, %w: tensor<5x4xf32>, %dy: tensor<2x3x5xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x4xf32>) {
  %t = training.transpose ins(%w : tensor<5x4xf32>) {perm = array<i64: 1, 0>} -> tensor<4x5xf32>
  %y = training.batch_matmul ins(%x, %t : tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %dx = training.batch_matmul ins(%dy, %t : tensor<2x3x5xf32>, tensor<4x5xf32>) {trans_b, beta = 0.000000e+00 : f32} -> tensor<2x3x4xf32>
  func.return %y, %dx : tensor<2x3x5xf32>, tensor<2x3x4xf32>
}

// A gemm's A (trans_a flips on; alpha, beta and C kept); a matmul, which has
// no flags, becomes a gemm (alpha 1, no C) with trans_b.
// CHECK-LABEL: func.func @gemm_and_matmul
// CHECK-NOT:     training.transpose
// CHECK:         %y = training.gemm ins(%a, %b, %c : tensor<4x3xf32>, tensor<4x5xf32>, tensor<5xf32>) {trans_a, alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32} -> tensor<3x5xf32>
// CHECK-NEXT:    %z = training.gemm ins(%a, %e : tensor<4x3xf32>, tensor<6x3xf32>) {trans_b} -> tensor<4x6xf32>
func.func @gemm_and_matmul(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>, %c: tensor<5xf32>, %e: tensor<6x3xf32>) -> (tensor<3x5xf32>, tensor<4x6xf32>) {
  %ta = training.transpose ins(%a : tensor<4x3xf32>) {perm = array<i64: 1, 0>} -> tensor<3x4xf32>
  %y = training.gemm ins(%ta, %b, %c : tensor<3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32} -> tensor<3x5xf32>
  %te = training.transpose ins(%e : tensor<6x3xf32>) {perm = array<i64: 1, 0>} -> tensor<3x6xf32>
  %z = training.matmul ins(%a, %te : tensor<4x3xf32>, tensor<3x6xf32>) -> tensor<4x6xf32>
  func.return %y, %z : tensor<3x5xf32>, tensor<4x6xf32>
}

// One transpose as both operands of one gemm (t t = x^T x^T): both flags
// flip. A batch of matrices with its last two dims swapped ([0, 2, 1]) folds
// into a batch_matmul's A like a matrix (trans_a off: it was on).
// CHECK-LABEL: func.func @both_and_batch
// CHECK-NOT:     training.transpose
// CHECK:         %y = training.gemm ins(%x, %x : tensor<3x3xf32>, tensor<3x3xf32>) {trans_a, trans_b} -> tensor<3x3xf32>
// CHECK-NEXT:    %z = training.batch_matmul ins(%p, %q : tensor<2x4x3xf32>, tensor<3x5xf32>) -> tensor<2x4x5xf32>
func.func @both_and_batch(%x: tensor<3x3xf32>, %p: tensor<2x4x3xf32>, %q: tensor<3x5xf32>) -> (tensor<3x3xf32>, tensor<2x4x5xf32>) {
  %t = training.transpose ins(%x : tensor<3x3xf32>) {perm = array<i64: 1, 0>} -> tensor<3x3xf32>
  %y = training.gemm ins(%t, %t : tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %tp = training.transpose ins(%p : tensor<2x4x3xf32>) {perm = array<i64: 0, 2, 1>} -> tensor<2x3x4xf32>
  %z = training.batch_matmul ins(%tp, %q : tensor<2x3x4xf32>, tensor<3x5xf32>) {trans_a} -> tensor<2x4x5xf32>
  func.return %y, %z : tensor<3x3xf32>, tensor<2x4x5xf32>
}
