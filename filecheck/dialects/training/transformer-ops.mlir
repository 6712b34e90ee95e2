// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

// Round trip of the transformer ops of the training dialect (issue 8), in
// tensor form and in buffer form: batch_matmul, softmax, softmax_grad,
// layer_norm (one to three outputs), layer_norm_grad, gelu, gelu_grad,
// transpose, reduce_mean, and binary with kind = "pow". Defaults (alpha =
// beta = 1.0, epsilon = 1e-5, outputs = ["dX", "dScale", "dBias"]) are not
// printed.

// CHECK-LABEL: builtin.module {

func.func @tensor_form(%a: tensor<2x3x4xf32>, %w: tensor<5x4xf32>, %c: tensor<5xf32>, %s: tensor<4xf32>, %m: tensor<2x3x1xf32>, %dy: tensor<2x3x4xf32>) {
  %0 = training.batch_matmul ins(%a, %w, %c : tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) {alpha = 5.000000e-01 : f32, trans_b} -> tensor<2x3x5xf32>
  %1 = training.batch_matmul ins(%dy, %a : tensor<2x3x4xf32>, tensor<2x3x4xf32>) {trans_a, alpha = 1.0 : f32} -> tensor<2x4x4xf32>
  %2 = training.softmax ins(%a : tensor<2x3x4xf32>) {axis = 2 : i64} -> tensor<2x3x4xf32>
  %3 = training.softmax_grad ins(%dy, %2 : tensor<2x3x4xf32>, tensor<2x3x4xf32>) {axis = 1 : i64} -> tensor<2x3x4xf32>
  %4, %5, %6 = training.layer_norm ins(%a, %s, %s : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) {axis = 2 : i64, epsilon = 1.000000e-03 : f32} -> tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>
  %7 = training.layer_norm ins(%a, %s : tensor<2x3x4xf32>, tensor<4xf32>) {axis = 2 : i64, epsilon = 1.0e-05 : f32} -> tensor<2x3x4xf32>
  %8 = training.layer_norm_grad ins(%dy, %a, %s : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>) {axis = 2 : i64, outputs = ["dX"]} -> tensor<2x3x4xf32>
  %9, %10, %11 = training.layer_norm_grad ins(%dy, %a, %s, %m, %m : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>) {axis = 2 : i64} -> tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>
  %12 = training.gelu ins(%a : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %13 = training.gelu_grad ins(%dy, %a : tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %14 = training.transpose ins(%a : tensor<2x3x4xf32>) {perm = array<i64: 2, 0, 1>} -> tensor<4x2x3xf32>
  %15 = training.reduce_mean ins(%a : tensor<2x3x4xf32>) {axes = array<i64: 1>, keepdims} -> tensor<2x1x4xf32>
  %16 = training.reduce_mean ins(%a : tensor<2x3x4xf32>) {axes = array<i64: 0, 2>} -> tensor<3xf32>
  %17 = training.binary ins(%a, %m : tensor<2x3x4xf32>, tensor<2x3x1xf32>) {kind = "pow"} -> tensor<2x3x4xf32>
  func.return
}

// CHECK-NEXT:  func.func @tensor_form(%a: tensor<2x3x4xf32>, %w: tensor<5x4xf32>, %c: tensor<5xf32>, %s: tensor<4xf32>, %m: tensor<2x3x1xf32>, %dy: tensor<2x3x4xf32>) {
// CHECK-NEXT:    %0 = training.batch_matmul ins(%a, %w, %c : tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) {alpha = 5.000000e-01 : f32, trans_b} -> tensor<2x3x5xf32>
// CHECK-NEXT:    %1 = training.batch_matmul ins(%dy, %a : tensor<2x3x4xf32>, tensor<2x3x4xf32>) {trans_a} -> tensor<2x4x4xf32>
// CHECK-NEXT:    %2 = training.softmax ins(%a : tensor<2x3x4xf32>) {axis = 2 : i64} -> tensor<2x3x4xf32>
// CHECK-NEXT:    %3 = training.softmax_grad ins(%dy, %2 : tensor<2x3x4xf32>, tensor<2x3x4xf32>) {axis = 1 : i64} -> tensor<2x3x4xf32>
// CHECK-NEXT:    %4, %5, %6 = training.layer_norm ins(%a, %s, %s : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) {axis = 2 : i64, epsilon = 1.000000e-03 : f32} -> tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>
// CHECK-NEXT:    %7 = training.layer_norm ins(%a, %s : tensor<2x3x4xf32>, tensor<4xf32>) {axis = 2 : i64} -> tensor<2x3x4xf32>
// CHECK-NEXT:    %8 = training.layer_norm_grad ins(%dy, %a, %s : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>) {axis = 2 : i64, outputs = ["dX"]} -> tensor<2x3x4xf32>
// CHECK-NEXT:    %9, %10, %11 = training.layer_norm_grad ins(%dy, %a, %s, %m, %m : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>) {axis = 2 : i64} -> tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:    %12 = training.gelu ins(%a : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %13 = training.gelu_grad ins(%dy, %a : tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %14 = training.transpose ins(%a : tensor<2x3x4xf32>) {perm = array<i64: 2, 0, 1>} -> tensor<4x2x3xf32>
// CHECK-NEXT:    %15 = training.reduce_mean ins(%a : tensor<2x3x4xf32>) {axes = array<i64: 1>, keepdims} -> tensor<2x1x4xf32>
// CHECK-NEXT:    %16 = training.reduce_mean ins(%a : tensor<2x3x4xf32>) {axes = array<i64: 0, 2>} -> tensor<3xf32>
// CHECK-NEXT:    %17 = training.binary ins(%a, %m : tensor<2x3x4xf32>, tensor<2x3x1xf32>) {kind = "pow"} -> tensor<2x3x4xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

func.func @buffer_form(%a: memref<2x3x4xf32, "L2">, %s: memref<4xf32, "L2">, %y: memref<2x3x4xf32, "L2">, %m: memref<2x3x1xf32, "L2">, %t: memref<4x2x3xf32, "L1">, %b: memref<2x4x4xf32, "L1">) {
  training.batch_matmul ins(%a, %a : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">) outs(%b : memref<2x4x4xf32, "L1">) {trans_a}
  training.softmax ins(%a : memref<2x3x4xf32, "L2">) outs(%y : memref<2x3x4xf32, "L2">) {axis = 0 : i64}
  training.softmax_grad ins(%a, %y : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">) outs(%y : memref<2x3x4xf32, "L2">) {axis = 2 : i64}
  training.layer_norm ins(%a, %s : memref<2x3x4xf32, "L2">, memref<4xf32, "L2">) outs(%y, %m : memref<2x3x4xf32, "L2">, memref<2x3x1xf32, "L2">) {axis = 2 : i64}
  training.layer_norm_grad ins(%a, %a, %s, %m, %m : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">, memref<4xf32, "L2">, memref<2x3x1xf32, "L2">, memref<2x3x1xf32, "L2">) outs(%s : memref<4xf32, "L2">) {axis = 2 : i64, outputs = ["dBias"]}
  training.gelu ins(%a : memref<2x3x4xf32, "L2">) outs(%a : memref<2x3x4xf32, "L2">)
  training.gelu_grad ins(%y, %a : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">) outs(%y : memref<2x3x4xf32, "L2">)
  training.transpose ins(%a : memref<2x3x4xf32, "L2">) outs(%t : memref<4x2x3xf32, "L1">) {perm = array<i64: 2, 0, 1>}
  training.reduce_mean ins(%a : memref<2x3x4xf32, "L2">) outs(%m : memref<2x3x1xf32, "L2">) {axes = array<i64: 2>, keepdims}
  func.return
}

// CHECK-NEXT:  func.func @buffer_form(%a: memref<2x3x4xf32, "L2">, %s: memref<4xf32, "L2">, %y: memref<2x3x4xf32, "L2">, %m: memref<2x3x1xf32, "L2">, %t: memref<4x2x3xf32, "L1">, %b: memref<2x4x4xf32, "L1">) {
// CHECK-NEXT:    training.batch_matmul ins(%a, %a : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">) outs(%b : memref<2x4x4xf32, "L1">) {trans_a}
// CHECK-NEXT:    training.softmax ins(%a : memref<2x3x4xf32, "L2">) outs(%y : memref<2x3x4xf32, "L2">) {axis = 0 : i64}
// CHECK-NEXT:    training.softmax_grad ins(%a, %y : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">) outs(%y : memref<2x3x4xf32, "L2">) {axis = 2 : i64}
// CHECK-NEXT:    training.layer_norm ins(%a, %s : memref<2x3x4xf32, "L2">, memref<4xf32, "L2">) outs(%y, %m : memref<2x3x4xf32, "L2">, memref<2x3x1xf32, "L2">) {axis = 2 : i64}
// CHECK-NEXT:    training.layer_norm_grad ins(%a, %a, %s, %m, %m : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">, memref<4xf32, "L2">, memref<2x3x1xf32, "L2">, memref<2x3x1xf32, "L2">) outs(%s : memref<4xf32, "L2">) {axis = 2 : i64, outputs = ["dBias"]}
// CHECK-NEXT:    training.gelu ins(%a : memref<2x3x4xf32, "L2">) outs(%a : memref<2x3x4xf32, "L2">)
// CHECK-NEXT:    training.gelu_grad ins(%y, %a : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">) outs(%y : memref<2x3x4xf32, "L2">)
// CHECK-NEXT:    training.transpose ins(%a : memref<2x3x4xf32, "L2">) outs(%t : memref<4x2x3xf32, "L1">) {perm = array<i64: 2, 0, 1>}
// CHECK-NEXT:    training.reduce_mean ins(%a : memref<2x3x4xf32, "L2">) outs(%m : memref<2x3x1xf32, "L2">) {axes = array<i64: 2>, keepdims}
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
