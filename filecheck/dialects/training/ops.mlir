// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

// Round trip of every op of the training dialect: each compute op in tensor
// form (results, no outs) and in buffer form (outs, no results), with every
// property variant; then training.constant (tensor only) and
// training.arena_view (memref only). Properties equal to their default
// (alpha = beta = 1.0 : f32, reduction = "mean") are not printed.

// CHECK-LABEL: builtin.module {

// =============================================================================
// Tensor form
// =============================================================================

func.func @gemm_tensor(%a: tensor<3x4xf32>, %at: tensor<4x3xf32>, %b: tensor<4x5xf32>, %bt: tensor<5x4xf32>,
                       %c: tensor<5xf32>, %c1: tensor<1x5xf32>, %c2: tensor<3x1xf32>, %c3: tensor<3x5xf32>, %cs: tensor<f32>) {
  %g0 = training.gemm ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %g1 = training.gemm ins(%at, %b : tensor<4x3xf32>, tensor<4x5xf32>) {trans_a} -> tensor<3x5xf32>
  %g2 = training.gemm ins(%a, %bt : tensor<3x4xf32>, tensor<5x4xf32>) {trans_b} -> tensor<3x5xf32>
  %g3 = training.gemm ins(%at, %bt : tensor<4x3xf32>, tensor<5x4xf32>) {trans_a, trans_b} -> tensor<3x5xf32>
  %g4 = training.gemm ins(%a, %b, %c : tensor<3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %g5 = training.gemm ins(%a, %b, %c1 : tensor<3x4xf32>, tensor<4x5xf32>, tensor<1x5xf32>) {alpha = 5.000000e-01 : f32} -> tensor<3x5xf32>
  %g6 = training.gemm ins(%a, %b, %c2 : tensor<3x4xf32>, tensor<4x5xf32>, tensor<3x1xf32>) {beta = 0.000000e+00 : f32} -> tensor<3x5xf32>
  %g7 = training.gemm ins(%at, %bt, %c3 : tensor<4x3xf32>, tensor<5x4xf32>, tensor<3x5xf32>) {trans_a, trans_b, alpha = 2.000000e+00 : f32, beta = -1.000000e+00 : f32} -> tensor<3x5xf32>
  %g8 = training.gemm ins(%a, %b, %cs : tensor<3x4xf32>, tensor<4x5xf32>, tensor<f32>) {alpha = 2.500000e-01 : f64, beta = 3.000000e+00 : f64} -> tensor<3x5xf32>
  // Defaults written out are not printed back.
  %g9 = training.gemm ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) {alpha = 1.0 : f32, beta = 1.0 : f32} -> tensor<3x5xf32>
  func.return
}

// CHECK-NEXT:  func.func @gemm_tensor(%a: tensor<3x4xf32>, %at: tensor<4x3xf32>, %b: tensor<4x5xf32>, %bt: tensor<5x4xf32>, %c: tensor<5xf32>, %c1: tensor<1x5xf32>, %c2: tensor<3x1xf32>, %c3: tensor<3x5xf32>, %cs: tensor<f32>) {
// CHECK-NEXT:    %g0 = training.gemm ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %g1 = training.gemm ins(%at, %b : tensor<4x3xf32>, tensor<4x5xf32>) {trans_a} -> tensor<3x5xf32>
// CHECK-NEXT:    %g2 = training.gemm ins(%a, %bt : tensor<3x4xf32>, tensor<5x4xf32>) {trans_b} -> tensor<3x5xf32>
// CHECK-NEXT:    %g3 = training.gemm ins(%at, %bt : tensor<4x3xf32>, tensor<5x4xf32>) {trans_a, trans_b} -> tensor<3x5xf32>
// CHECK-NEXT:    %g4 = training.gemm ins(%a, %b, %c : tensor<3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %g5 = training.gemm ins(%a, %b, %c1 : tensor<3x4xf32>, tensor<4x5xf32>, tensor<1x5xf32>) {alpha = 5.000000e-01 : f32} -> tensor<3x5xf32>
// CHECK-NEXT:    %g6 = training.gemm ins(%a, %b, %c2 : tensor<3x4xf32>, tensor<4x5xf32>, tensor<3x1xf32>) {beta = 0.000000e+00 : f32} -> tensor<3x5xf32>
// CHECK-NEXT:    %g7 = training.gemm ins(%at, %bt, %c3 : tensor<4x3xf32>, tensor<5x4xf32>, tensor<3x5xf32>) {trans_a, trans_b, alpha = 2.000000e+00 : f32, beta = -1.000000e+00 : f32} -> tensor<3x5xf32>
// CHECK-NEXT:    %g8 = training.gemm ins(%a, %b, %cs : tensor<3x4xf32>, tensor<4x5xf32>, tensor<f32>) {alpha = 2.500000e-01 : f64, beta = 3.000000e+00 : f64} -> tensor<3x5xf32>
// CHECK-NEXT:    %g9 = training.gemm ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

func.func @other_tensor(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %x: tensor<3x5xf32>, %row: tensor<5xf32>,
                        %col: tensor<3x1xf32>, %s: tensor<f32>, %l: tensor<3xi64>, %dy1: tensor<1xf32>) {
  %m = training.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %add = training.binary ins(%m, %row : tensor<3x5xf32>, tensor<5xf32>) {kind = "add"} -> tensor<3x5xf32>
  %sub = training.binary ins(%col, %x : tensor<3x1xf32>, tensor<3x5xf32>) {kind = "sub"} -> tensor<3x5xf32>
  %mul = training.binary ins(%s, %x : tensor<f32>, tensor<3x5xf32>) {kind = "mul"} -> tensor<3x5xf32>
  %div = training.binary ins(%col, %row : tensor<3x1xf32>, tensor<5xf32>) {kind = "div"} -> tensor<3x5xf32>
  %y = training.relu ins(%add : tensor<3x5xf32>) -> tensor<3x5xf32>
  %dx = training.relu_grad ins(%sub, %y : tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %loss, %lp = training.softmax_cross_entropy_loss ins(%y, %l : tensor<3x5xf32>, tensor<3xi64>) -> tensor<f32>, tensor<3x5xf32>
  %loss2, %lp2 = training.softmax_cross_entropy_loss ins(%y, %l : tensor<3x5xf32>, tensor<3xi64>) {reduction = "sum"} -> tensor<f32>, tensor<3x5xf32>
  %loss3, %lp3 = training.softmax_cross_entropy_loss ins(%y, %l : tensor<3x5xf32>, tensor<3xi64>) {reduction = "mean"} -> tensor<f32>, tensor<3x5xf32>
  %dl = training.softmax_cross_entropy_loss_grad ins(%loss, %lp, %l : tensor<f32>, tensor<3x5xf32>, tensor<3xi64>) -> tensor<3x5xf32>
  %dl2 = training.softmax_cross_entropy_loss_grad ins(%dy1, %lp2, %l : tensor<1xf32>, tensor<3x5xf32>, tensor<3xi64>) {reduction = "sum"} -> tensor<3x5xf32>
  %r0 = training.reduce_sum ins(%dl : tensor<3x5xf32>) {axes = array<i64: 0>} -> tensor<5xf32>
  %r1 = training.reduce_sum ins(%dl : tensor<3x5xf32>) {axes = array<i64: 1>, keepdims} -> tensor<3x1xf32>
  %r2 = training.reduce_sum ins(%dl : tensor<3x5xf32>) {axes = array<i64: 0, 1>} -> tensor<f32>
  %r3 = training.reduce_sum ins(%dl : tensor<3x5xf32>) {axes = array<i64: 0, 1>, keepdims} -> tensor<1x1xf32>
  func.return
}

// CHECK-NEXT:  func.func @other_tensor(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %x: tensor<3x5xf32>, %row: tensor<5xf32>, %col: tensor<3x1xf32>, %s: tensor<f32>, %l: tensor<3xi64>, %dy1: tensor<1xf32>) {
// CHECK-NEXT:    %m = training.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %add = training.binary ins(%m, %row : tensor<3x5xf32>, tensor<5xf32>) {kind = "add"} -> tensor<3x5xf32>
// CHECK-NEXT:    %sub = training.binary ins(%col, %x : tensor<3x1xf32>, tensor<3x5xf32>) {kind = "sub"} -> tensor<3x5xf32>
// CHECK-NEXT:    %mul = training.binary ins(%s, %x : tensor<f32>, tensor<3x5xf32>) {kind = "mul"} -> tensor<3x5xf32>
// CHECK-NEXT:    %div = training.binary ins(%col, %row : tensor<3x1xf32>, tensor<5xf32>) {kind = "div"} -> tensor<3x5xf32>
// CHECK-NEXT:    %y = training.relu ins(%add : tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %dx = training.relu_grad ins(%sub, %y : tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %loss, %lp = training.softmax_cross_entropy_loss ins(%y, %l : tensor<3x5xf32>, tensor<3xi64>) -> tensor<f32>, tensor<3x5xf32>
// CHECK-NEXT:    %loss2, %lp2 = training.softmax_cross_entropy_loss ins(%y, %l : tensor<3x5xf32>, tensor<3xi64>) {reduction = "sum"} -> tensor<f32>, tensor<3x5xf32>
// CHECK-NEXT:    %loss3, %lp3 = training.softmax_cross_entropy_loss ins(%y, %l : tensor<3x5xf32>, tensor<3xi64>) -> tensor<f32>, tensor<3x5xf32>
// CHECK-NEXT:    %dl = training.softmax_cross_entropy_loss_grad ins(%loss, %lp, %l : tensor<f32>, tensor<3x5xf32>, tensor<3xi64>) -> tensor<3x5xf32>
// CHECK-NEXT:    %dl2 = training.softmax_cross_entropy_loss_grad ins(%dy1, %lp2, %l : tensor<1xf32>, tensor<3x5xf32>, tensor<3xi64>) {reduction = "sum"} -> tensor<3x5xf32>
// CHECK-NEXT:    %r0 = training.reduce_sum ins(%dl : tensor<3x5xf32>) {axes = array<i64: 0>} -> tensor<5xf32>
// CHECK-NEXT:    %r1 = training.reduce_sum ins(%dl : tensor<3x5xf32>) {axes = array<i64: 1>, keepdims} -> tensor<3x1xf32>
// CHECK-NEXT:    %r2 = training.reduce_sum ins(%dl : tensor<3x5xf32>) {axes = array<i64: 0, 1>} -> tensor<f32>
// CHECK-NEXT:    %r3 = training.reduce_sum ins(%dl : tensor<3x5xf32>) {axes = array<i64: 0, 1>, keepdims} -> tensor<1x1xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

func.func @state_tensor(%w: tensor<5x4xf32>, %g: tensor<5x4xf32>, %buf: tensor<5xf32>, %gb: tensor<5xf32>,
                        %reset: tensor<1xi1>, %reset0: tensor<i1>, %lr: tensor<1xf32>, %lr0: tensor<f32>, %l: tensor<3xi64>) {
  %acc = training.accumulate ins(%buf, %gb, %reset : tensor<5xf32>, tensor<5xf32>, tensor<1xi1>) -> tensor<5xf32>
  %acc0 = training.accumulate ins(%buf, %gb, %reset0 : tensor<5xf32>, tensor<5xf32>, tensor<i1>) -> tensor<5xf32>
  %w1 = training.sgd ins(%w, %g, %lr : tensor<5x4xf32>, tensor<5x4xf32>, tensor<1xf32>) -> tensor<5x4xf32>
  %w2 = training.sgd ins(%w, %g, %lr0 : tensor<5x4xf32>, tensor<5x4xf32>, tensor<f32>) -> tensor<5x4xf32>
  %c = training.copy ins(%w : tensor<5x4xf32>) -> tensor<5x4xf32>
  %ci = training.copy ins(%l : tensor<3xi64>) -> tensor<3xi64>
  %k0 = training.constant {value = dense<1.000000e+00> : tensor<f32>} : tensor<f32>
  %k1 = training.constant {value = dense<[1.000000e+00, -2.500000e-01]> : tensor<2xf32>} : tensor<2xf32>
  %k2 = training.constant {value = dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi64>} : tensor<2x3xi64>
  %k3 = training.constant {value = dense<true> : tensor<1xi1>} : tensor<1xi1>
  %k4 = training.constant {value = dense<0.0> : tensor<2x2xf32>} : tensor<2x2xf32>
  func.return
}

// CHECK-NEXT:  func.func @state_tensor(%w: tensor<5x4xf32>, %g: tensor<5x4xf32>, %buf: tensor<5xf32>, %gb: tensor<5xf32>, %reset: tensor<1xi1>, %reset0: tensor<i1>, %lr: tensor<1xf32>, %lr0: tensor<f32>, %l: tensor<3xi64>) {
// CHECK-NEXT:    %acc = training.accumulate ins(%buf, %gb, %reset : tensor<5xf32>, tensor<5xf32>, tensor<1xi1>) -> tensor<5xf32>
// CHECK-NEXT:    %acc0 = training.accumulate ins(%buf, %gb, %reset0 : tensor<5xf32>, tensor<5xf32>, tensor<i1>) -> tensor<5xf32>
// CHECK-NEXT:    %w1 = training.sgd ins(%w, %g, %lr : tensor<5x4xf32>, tensor<5x4xf32>, tensor<1xf32>) -> tensor<5x4xf32>
// CHECK-NEXT:    %w2 = training.sgd ins(%w, %g, %lr0 : tensor<5x4xf32>, tensor<5x4xf32>, tensor<f32>) -> tensor<5x4xf32>
// CHECK-NEXT:    %c = training.copy ins(%w : tensor<5x4xf32>) -> tensor<5x4xf32>
// CHECK-NEXT:    %ci = training.copy ins(%l : tensor<3xi64>) -> tensor<3xi64>
// CHECK-NEXT:    %k0 = training.constant {value = dense<1.000000e+00> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:    %k1 = training.constant {value = dense<[1.000000e+00, -2.500000e-01]> : tensor<2xf32>} : tensor<2xf32>
// CHECK-NEXT:    %k2 = training.constant {value = dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi64>} : tensor<2x3xi64>
// CHECK-NEXT:    %k3 = training.constant {value = dense<true> : tensor<1xi1>} : tensor<1xi1>
// CHECK-NEXT:    %k4 = training.constant {value = dense<0.000000e+00> : tensor<2x2xf32>} : tensor<2x2xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// =============================================================================
// Buffer form (memrefs with a memory space, as training-bufferize writes them;
// the compute ops do not require one)
// =============================================================================

func.func @gemm_buffer(%a: memref<3x4xf32, "L2">, %at: memref<4x3xf32, "L2">, %b: memref<4x5xf32, "L2">, %bt: memref<5x4xf32, "L2">,
                       %c: memref<5xf32, "L2">, %c2: memref<3x1xf32, "L2">, %y: memref<3x5xf32, "L2">, %y1: memref<3x5xf32, "L1">) {
  training.gemm ins(%a, %b : memref<3x4xf32, "L2">, memref<4x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">)
  training.gemm ins(%at, %b : memref<4x3xf32, "L2">, memref<4x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {trans_a}
  training.gemm ins(%a, %bt : memref<3x4xf32, "L2">, memref<5x4xf32, "L2">) outs(%y1 : memref<3x5xf32, "L1">) {trans_b}
  training.gemm ins(%at, %bt, %c : memref<4x3xf32, "L2">, memref<5x4xf32, "L2">, memref<5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {trans_a, trans_b}
  training.gemm ins(%a, %b, %c2 : memref<3x4xf32, "L2">, memref<4x5xf32, "L2">, memref<3x1xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {alpha = 5.000000e-01 : f32, beta = 0.000000e+00 : f32}
  training.gemm ins(%a, %b, %y : memref<3x4xf32, "L2">, memref<4x5xf32, "L2">, memref<3x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {beta = 2.000000e+00 : f32}
  func.return
}

// CHECK-NEXT:  func.func @gemm_buffer(%a: memref<3x4xf32, "L2">, %at: memref<4x3xf32, "L2">, %b: memref<4x5xf32, "L2">, %bt: memref<5x4xf32, "L2">, %c: memref<5xf32, "L2">, %c2: memref<3x1xf32, "L2">, %y: memref<3x5xf32, "L2">, %y1: memref<3x5xf32, "L1">) {
// CHECK-NEXT:    training.gemm ins(%a, %b : memref<3x4xf32, "L2">, memref<4x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">)
// CHECK-NEXT:    training.gemm ins(%at, %b : memref<4x3xf32, "L2">, memref<4x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {trans_a}
// CHECK-NEXT:    training.gemm ins(%a, %bt : memref<3x4xf32, "L2">, memref<5x4xf32, "L2">) outs(%y1 : memref<3x5xf32, "L1">) {trans_b}
// CHECK-NEXT:    training.gemm ins(%at, %bt, %c : memref<4x3xf32, "L2">, memref<5x4xf32, "L2">, memref<5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {trans_a, trans_b}
// CHECK-NEXT:    training.gemm ins(%a, %b, %c2 : memref<3x4xf32, "L2">, memref<4x5xf32, "L2">, memref<3x1xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {alpha = 5.000000e-01 : f32, beta = 0.000000e+00 : f32}
// CHECK-NEXT:    training.gemm ins(%a, %b, %y : memref<3x4xf32, "L2">, memref<4x5xf32, "L2">, memref<3x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {beta = 2.000000e+00 : f32}
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

func.func @other_buffer(%a: memref<3x4xf32, "L2">, %b: memref<4x5xf32, "L2">, %x: memref<3x5xf32, "L2">, %row: memref<5xf32, "L2">,
                        %col: memref<3x1xf32, "L2">, %s: memref<f32, "L2">, %l: memref<3xi64, "L2">, %dy1: memref<1xf32, "L2">,
                        %y: memref<3x5xf32, "L2">, %z: memref<3x5xf32>, %loss: memref<f32, "L2">, %r: memref<5xf32, "L2">, %rk: memref<1x1xf32, "L2">) {
  training.matmul ins(%a, %b : memref<3x4xf32, "L2">, memref<4x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">)
  training.binary ins(%y, %row : memref<3x5xf32, "L2">, memref<5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {kind = "add"}
  training.binary ins(%col, %x : memref<3x1xf32, "L2">, memref<3x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {kind = "sub"}
  training.binary ins(%s, %x : memref<f32, "L2">, memref<3x5xf32, "L2">) outs(%z : memref<3x5xf32>) {kind = "mul"}
  training.binary ins(%col, %row : memref<3x1xf32, "L2">, memref<5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {kind = "div"}
  training.relu ins(%y : memref<3x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">)
  training.relu_grad ins(%x, %y : memref<3x5xf32, "L2">, memref<3x5xf32, "L2">) outs(%x : memref<3x5xf32, "L2">)
  training.softmax_cross_entropy_loss ins(%y, %l : memref<3x5xf32, "L2">, memref<3xi64, "L2">) outs(%loss, %x : memref<f32, "L2">, memref<3x5xf32, "L2">)
  training.softmax_cross_entropy_loss ins(%y, %l : memref<3x5xf32, "L2">, memref<3xi64, "L2">) outs(%loss, %x : memref<f32, "L2">, memref<3x5xf32, "L2">) {reduction = "sum"}
  training.softmax_cross_entropy_loss_grad ins(%loss, %x, %l : memref<f32, "L2">, memref<3x5xf32, "L2">, memref<3xi64, "L2">) outs(%y : memref<3x5xf32, "L2">)
  training.softmax_cross_entropy_loss_grad ins(%dy1, %x, %l : memref<1xf32, "L2">, memref<3x5xf32, "L2">, memref<3xi64, "L2">) outs(%y : memref<3x5xf32, "L2">) {reduction = "sum"}
  training.reduce_sum ins(%y : memref<3x5xf32, "L2">) outs(%r : memref<5xf32, "L2">) {axes = array<i64: 0>}
  training.reduce_sum ins(%y : memref<3x5xf32, "L2">) outs(%col : memref<3x1xf32, "L2">) {axes = array<i64: 1>, keepdims}
  training.reduce_sum ins(%y : memref<3x5xf32, "L2">) outs(%s : memref<f32, "L2">) {axes = array<i64: 0, 1>}
  training.reduce_sum ins(%y : memref<3x5xf32, "L2">) outs(%rk : memref<1x1xf32, "L2">) {axes = array<i64: 0, 1>, keepdims}
  func.return
}

// CHECK-NEXT:  func.func @other_buffer(%a: memref<3x4xf32, "L2">, %b: memref<4x5xf32, "L2">, %x: memref<3x5xf32, "L2">, %row: memref<5xf32, "L2">, %col: memref<3x1xf32, "L2">, %s: memref<f32, "L2">, %l: memref<3xi64, "L2">, %dy1: memref<1xf32, "L2">, %y: memref<3x5xf32, "L2">, %z: memref<3x5xf32>, %loss: memref<f32, "L2">, %r: memref<5xf32, "L2">, %rk: memref<1x1xf32, "L2">) {
// CHECK-NEXT:    training.matmul ins(%a, %b : memref<3x4xf32, "L2">, memref<4x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">)
// CHECK-NEXT:    training.binary ins(%y, %row : memref<3x5xf32, "L2">, memref<5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {kind = "add"}
// CHECK-NEXT:    training.binary ins(%col, %x : memref<3x1xf32, "L2">, memref<3x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {kind = "sub"}
// CHECK-NEXT:    training.binary ins(%s, %x : memref<f32, "L2">, memref<3x5xf32, "L2">) outs(%z : memref<3x5xf32>) {kind = "mul"}
// CHECK-NEXT:    training.binary ins(%col, %row : memref<3x1xf32, "L2">, memref<5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {kind = "div"}
// CHECK-NEXT:    training.relu ins(%y : memref<3x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">)
// CHECK-NEXT:    training.relu_grad ins(%x, %y : memref<3x5xf32, "L2">, memref<3x5xf32, "L2">) outs(%x : memref<3x5xf32, "L2">)
// CHECK-NEXT:    training.softmax_cross_entropy_loss ins(%y, %l : memref<3x5xf32, "L2">, memref<3xi64, "L2">) outs(%loss, %x : memref<f32, "L2">, memref<3x5xf32, "L2">)
// CHECK-NEXT:    training.softmax_cross_entropy_loss ins(%y, %l : memref<3x5xf32, "L2">, memref<3xi64, "L2">) outs(%loss, %x : memref<f32, "L2">, memref<3x5xf32, "L2">) {reduction = "sum"}
// CHECK-NEXT:    training.softmax_cross_entropy_loss_grad ins(%loss, %x, %l : memref<f32, "L2">, memref<3x5xf32, "L2">, memref<3xi64, "L2">) outs(%y : memref<3x5xf32, "L2">)
// CHECK-NEXT:    training.softmax_cross_entropy_loss_grad ins(%dy1, %x, %l : memref<1xf32, "L2">, memref<3x5xf32, "L2">, memref<3xi64, "L2">) outs(%y : memref<3x5xf32, "L2">) {reduction = "sum"}
// CHECK-NEXT:    training.reduce_sum ins(%y : memref<3x5xf32, "L2">) outs(%r : memref<5xf32, "L2">) {axes = array<i64: 0>}
// CHECK-NEXT:    training.reduce_sum ins(%y : memref<3x5xf32, "L2">) outs(%col : memref<3x1xf32, "L2">) {axes = array<i64: 1>, keepdims}
// CHECK-NEXT:    training.reduce_sum ins(%y : memref<3x5xf32, "L2">) outs(%s : memref<f32, "L2">) {axes = array<i64: 0, 1>}
// CHECK-NEXT:    training.reduce_sum ins(%y : memref<3x5xf32, "L2">) outs(%rk : memref<1x1xf32, "L2">) {axes = array<i64: 0, 1>, keepdims}
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

func.func @state_buffer(%w: memref<5x4xf32, "L2">, %g: memref<5x4xf32, "L2">, %buf: memref<5xf32, "L2">, %gb: memref<5xf32, "L2">,
                        %reset: memref<1xi1, "L2">, %lr: memref<1xf32, "L2">, %lr0: memref<f32, "L2">, %l: memref<3xi64, "L2">) {
  training.accumulate ins(%buf, %gb, %reset : memref<5xf32, "L2">, memref<5xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<5xf32, "L2">)
  training.sgd ins(%w, %g, %lr : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<1xf32, "L2">) outs(%w : memref<5x4xf32, "L2">)
  training.sgd ins(%w, %g, %lr0 : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<f32, "L2">) outs(%g : memref<5x4xf32, "L2">)
  %t = training.arena_view at 0 : memref<5x4xf32, "L1">
  %u = training.arena_view at 80 : memref<3xi64, "L3">
  %v = training.arena_view at 1024 {training.note = "tmp"} : memref<5xf32, "L2">
  training.copy ins(%w : memref<5x4xf32, "L2">) outs(%t : memref<5x4xf32, "L1">)
  training.copy ins(%l : memref<3xi64, "L2">) outs(%u : memref<3xi64, "L3">)
  training.copy ins(%buf : memref<5xf32, "L2">) outs(%v : memref<5xf32, "L2">)
  func.return
}

// CHECK-NEXT:  func.func @state_buffer(%w: memref<5x4xf32, "L2">, %g: memref<5x4xf32, "L2">, %buf: memref<5xf32, "L2">, %gb: memref<5xf32, "L2">, %reset: memref<1xi1, "L2">, %lr: memref<1xf32, "L2">, %lr0: memref<f32, "L2">, %l: memref<3xi64, "L2">) {
// CHECK-NEXT:    training.accumulate ins(%buf, %gb, %reset : memref<5xf32, "L2">, memref<5xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<5xf32, "L2">)
// CHECK-NEXT:    training.sgd ins(%w, %g, %lr : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<1xf32, "L2">) outs(%w : memref<5x4xf32, "L2">)
// CHECK-NEXT:    training.sgd ins(%w, %g, %lr0 : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<f32, "L2">) outs(%g : memref<5x4xf32, "L2">)
// CHECK-NEXT:    %t = training.arena_view at 0 : memref<5x4xf32, "L1">
// CHECK-NEXT:    %u = training.arena_view at 80 : memref<3xi64, "L3">
// CHECK-NEXT:    %v = training.arena_view at 1024 {training.note = "tmp"} : memref<5xf32, "L2">
// CHECK-NEXT:    training.copy ins(%w : memref<5x4xf32, "L2">) outs(%t : memref<5x4xf32, "L1">)
// CHECK-NEXT:    training.copy ins(%l : memref<3xi64, "L2">) outs(%u : memref<3xi64, "L3">)
// CHECK-NEXT:    training.copy ins(%buf : memref<5xf32, "L2">) outs(%v : memref<5xf32, "L2">)
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// CHECK-NEXT:  }
