// RUN: deeploy-opt %s -p transpose-fold | filecheck %s
// RUN: not deeploy-opt %s -p training-bufferize,transpose-fold 2>&1 | filecheck %s --check-prefix=ERR

// What transpose-fold must leave as it is (each function unchanged).

// A transpose with a use that is not a product operand (a relu; C of a
// gemm; the function's result) stays, and so do the products that read it.
// CHECK-LABEL: func.func @other_uses
// CHECK:         %t = training.transpose ins(%x : tensor<3x3xf32>) {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %y = training.gemm ins(%t, %x : tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK-NEXT:    %r = training.relu ins(%t : tensor<3x3xf32>)
// CHECK:         %u = training.transpose ins(%x : tensor<3x3xf32>) {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %z = training.gemm ins(%x, %x, %u : tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK:         %v = training.transpose ins(%x : tensor<3x3xf32>) {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %w = training.matmul ins(%v, %x : tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK-NEXT:    func.return %y, %r, %z, %v, %w
func.func @other_uses(%x: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>) {
  %t = training.transpose ins(%x : tensor<3x3xf32>) {perm = array<i64: 1, 0>} -> tensor<3x3xf32>
  %y = training.gemm ins(%t, %x : tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %r = training.relu ins(%t : tensor<3x3xf32>) -> tensor<3x3xf32>
  %u = training.transpose ins(%x : tensor<3x3xf32>) {perm = array<i64: 1, 0>} -> tensor<3x3xf32>
  %z = training.gemm ins(%x, %x, %u : tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %v = training.transpose ins(%x : tensor<3x3xf32>) {perm = array<i64: 1, 0>} -> tensor<3x3xf32>
  %w = training.matmul ins(%v, %x : tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  func.return %y, %r, %z, %v, %w : tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>
}

// Perms that are not a swap of the last two dims: the CCT's head
// permutation [0, 2, 1, 3] and [1, 0, 2] (a batch dim moves) feeding a
// batch_matmul; the flags cannot express them.
// CHECK-LABEL: func.func @other_perms
// CHECK:         %t = training.transpose ins(%q : tensor<1x4x2x3xf32>) {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT:    %y = training.batch_matmul ins(%t, %k : tensor<1x2x4x3xf32>, tensor<1x2x3x4xf32>)
// CHECK:         %u = training.transpose ins(%p : tensor<3x2x4xf32>) {perm = array<i64: 1, 0, 2>}
// CHECK-NEXT:    %z = training.batch_matmul ins(%u, %b : tensor<2x3x4xf32>, tensor<4x5xf32>)
func.func @other_perms(%q: tensor<1x4x2x3xf32>, %k: tensor<1x2x3x4xf32>, %p: tensor<3x2x4xf32>, %b: tensor<4x5xf32>) -> (tensor<1x2x4x4xf32>, tensor<2x3x5xf32>) {
  %t = training.transpose ins(%q : tensor<1x4x2x3xf32>) {perm = array<i64: 0, 2, 1, 3>} -> tensor<1x2x4x3xf32>
  %y = training.batch_matmul ins(%t, %k : tensor<1x2x4x3xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x4x4xf32>
  %u = training.transpose ins(%p : tensor<3x2x4xf32>) {perm = array<i64: 1, 0, 2>} -> tensor<2x3x4xf32>
  %z = training.batch_matmul ins(%u, %b : tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  func.return %y, %z : tensor<1x2x4x4xf32>, tensor<2x3x5xf32>
}

// A product transposed is left alone when it has C (C^T would need a C of
// its own), when its result has another use, or when the transpose is not
// a matrix transpose.
// CHECK-LABEL: func.func @products_left
// CHECK:         %y = training.gemm ins(%a, %b, %c : tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %yt = training.transpose ins(%y : tensor<2x4xf32>) {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %z = training.gemm ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %zt = training.transpose ins(%z : tensor<2x4xf32>) {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %zr = training.relu ins(%z : tensor<2x4xf32>)
// CHECK-NEXT:    %w = training.batch_matmul ins(%p, %b : tensor<2x2x3xf32>, tensor<3x4xf32>) -> tensor<2x2x4xf32>
// CHECK-NEXT:    %wt = training.transpose ins(%w : tensor<2x2x4xf32>) {perm = array<i64: 1, 0, 2>}
func.func @products_left(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<4xf32>, %p: tensor<2x2x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<2x4xf32>, tensor<2x2x4xf32>) {
  %y = training.gemm ins(%a, %b, %c : tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %yt = training.transpose ins(%y : tensor<2x4xf32>) {perm = array<i64: 1, 0>} -> tensor<4x2xf32>
  %z = training.gemm ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %zt = training.transpose ins(%z : tensor<2x4xf32>) {perm = array<i64: 1, 0>} -> tensor<4x2xf32>
  %zr = training.relu ins(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %w = training.batch_matmul ins(%p, %b : tensor<2x2x3xf32>, tensor<3x4xf32>) -> tensor<2x2x4xf32>
  %wt = training.transpose ins(%w : tensor<2x2x4xf32>) {perm = array<i64: 1, 0, 2>} -> tensor<2x2x4xf32>
  func.return %yt, %zt, %zr, %wt : tensor<4x2xf32>, tensor<4x2xf32>, tensor<2x4xf32>, tensor<2x2x4xf32>
}

// After training-bufferize the pass refuses to run (it rewrites tensors).
// ERR: transpose-fold: expects tensor-form IR (run it before training-bufferize, once)
