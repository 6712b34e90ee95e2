// RUN: deeploy-opt %s -p transpose-fold | filecheck %s
// RUN: deeploy-opt %s -p 'transpose-fold{results=false}' | filecheck %s --check-prefix=OFF
// RUN: deeploy-opt %s -p transpose-fold,training-inplace-alias,training-bufferize,accumulate-fuse | filecheck %s --check-prefix=FUSED

// results: a product without C whose only use is a matrix transpose
// computes the transposed product, Y^T = (A' B')^T = B'^T A'^T: B first,
// then A, trans_a = not trans_b, trans_b = not trans_a, alpha kept.

// The CCT's weight gradient: dW^T = X^T dY (gemm trans_a, [4,3]^T [4,5] =
// [3,5]), transposed to dW [5,3], accumulated. Folded: dW = dY^T X, a gemm
// of (dY, X) with trans_a (not trans_b) and no trans_b (not trans_a), whose
// result takes the transpose's name. accumulate-fuse then fuses the
// accumulation into the gemm (onto), where it fused it into the transpose.
// CHECK-LABEL: func.func @weight_grad
// CHECK-NOT:     training.transpose
// CHECK:         %dw = training.gemm ins(%dy, %x : tensor<4x5xf32>, tensor<4x3xf32>) {trans_a} -> tensor<5x3xf32>
// CHECK-NEXT:    %acc = training.accumulate ins(%buf, %dw, %reset
// OFF-LABEL:   func.func @weight_grad
// OFF:           %dw = training.transpose
// FUSED-LABEL: func.func @weight_grad
// FUSED-NOT:     training.transpose
// FUSED:         training.gemm ins(%dy, %x, %buf, %reset : memref<4x5xf32, "L2">, memref<4x3xf32, "L2">, memref<5x3xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<5x3xf32, "L2">) {trans_a, onto = array<i64: 0>}
// FUSED-NOT:     training.accumulate
func.func @weight_grad(%x: tensor<4x3xf32>, %dy: tensor<4x5xf32>,
                       %buf: tensor<5x3xf32> {training.arg = #training.arg<grad_accum "buf">},
                       %reset: tensor<1xi1> {training.arg = #training.arg<reset_flag "reset">})
    -> (tensor<5x3xf32> {training.result = #training.result<"buf_out" updates 2>}) {
  %g = training.gemm ins(%x, %dy : tensor<4x3xf32>, tensor<4x5xf32>) {trans_a} -> tensor<3x5xf32>
  %dw = training.transpose ins(%g : tensor<3x5xf32>) {perm = array<i64: 1, 0>} -> tensor<5x3xf32>
  %acc = training.accumulate ins(%buf, %dw, %reset : tensor<5x3xf32>, tensor<5x3xf32>, tensor<1xi1>) -> tensor<5x3xf32>
  func.return %acc : tensor<5x3xf32>
}

// A matmul (A B)^T = B^T A^T: a gemm of (B, A) with both flags. A gemm with
// trans_b and alpha, (A W^T)^T = W A^T: (W, A), trans_a off (W was read
// transposed), trans_b on, alpha kept.
// CHECK-LABEL: func.func @matmul_and_alpha
// CHECK-NOT:     training.transpose
// CHECK:         %yt = training.gemm ins(%b, %a : tensor<3x5xf32>, tensor<2x3xf32>) {trans_a, trans_b} -> tensor<5x2xf32>
// CHECK-NEXT:    %zt = training.gemm ins(%w, %a : tensor<4x3xf32>, tensor<2x3xf32>) {trans_b, alpha = 2.500000e-01 : f32} -> tensor<4x2xf32>
func.func @matmul_and_alpha(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %w: tensor<4x3xf32>) -> (tensor<5x2xf32>, tensor<4x2xf32>) {
  %y = training.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  %yt = training.transpose ins(%y : tensor<2x5xf32>) {perm = array<i64: 1, 0>} -> tensor<5x2xf32>
  %z = training.gemm ins(%a, %w : tensor<2x3xf32>, tensor<4x3xf32>) {trans_b, alpha = 2.500000e-01 : f32} -> tensor<2x4xf32>
  %zt = training.transpose ins(%z : tensor<2x4xf32>) {perm = array<i64: 1, 0>} -> tensor<4x2xf32>
  func.return %yt, %zt : tensor<5x2xf32>, tensor<4x2xf32>
}

// A batch_matmul whose batches are transposed ([0, 2, 1]): per batch
// Y_b^T = B'^T A'_b^T, the batch dims broadcasting alike in either order
// (A [2,3,4], B [4,5] -> Y^T [2,5,3] from (B, A) with both flags).
// CHECK-LABEL: func.func @batch
// CHECK-NOT:     training.transpose
// CHECK:         %yt = training.batch_matmul ins(%b, %a : tensor<4x5xf32>, tensor<2x3x4xf32>) {trans_a, trans_b, alpha = 5.000000e-01 : f32} -> tensor<2x5x3xf32>
func.func @batch(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x5x3xf32> {
  %y = training.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<4x5xf32>) {alpha = 5.000000e-01 : f32} -> tensor<2x3x5xf32>
  %yt = training.transpose ins(%y : tensor<2x3x5xf32>) {perm = array<i64: 0, 2, 1>} -> tensor<2x5x3xf32>
  func.return %yt : tensor<2x5x3xf32>
}
