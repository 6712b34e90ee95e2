// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

// Round trip of the loss family's ops (issue 20; dialects/training/loss.py)
// in tensor and buffer form: log_softmax, log_softmax_grad, dropout (Y and an
// i1 mask), dropout_grad, and softmax cross-entropy (and its gradient) with
// ignore_index. Defaults are not printed: ratio 0.5, seed 20240229 (the
// default --seed), stream 0 of 1 streams, reduction "mean".

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @tensor_form(%a: tensor<2x3x4xf32>, %dy: tensor<2x3x4xf32>, %s: tensor<3x5xf32>, %l: tensor<3xi64>, %m: tensor<2x3x4xi1>, %d1: tensor<1xf32>) {
// CHECK-NEXT:     %0 = training.log_softmax ins(%a : tensor<2x3x4xf32>) {axis = 2 : i64} -> tensor<2x3x4xf32>
// CHECK-NEXT:     %1 = training.log_softmax_grad ins(%dy, %0 : tensor<2x3x4xf32>, tensor<2x3x4xf32>) {axis = 1 : i64} -> tensor<2x3x4xf32>
// CHECK-NEXT:     %2, %3 = training.dropout ins(%a : tensor<2x3x4xf32>) {ratio = 2.500000e-01 : f32, seed = 7 : i64, stream = 1 : i64, streams = 2 : i64} -> tensor<2x3x4xf32>, tensor<2x3x4xi1>
// CHECK-NEXT:     %4, %5 = training.dropout ins(%a : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>, tensor<2x3x4xi1>
// CHECK-NEXT:     %6 = training.dropout_grad ins(%dy, %3 : tensor<2x3x4xf32>, tensor<2x3x4xi1>) {ratio = 2.500000e-01 : f32} -> tensor<2x3x4xf32>
// CHECK-NEXT:     %7, %8 = training.softmax_cross_entropy_loss ins(%s, %l : tensor<3x5xf32>, tensor<3xi64>) {ignore_index = -100 : i64} -> tensor<f32>, tensor<3x5xf32>
// CHECK-NEXT:     %9 = training.softmax_cross_entropy_loss_grad ins(%d1, %8, %l : tensor<1xf32>, tensor<3x5xf32>, tensor<3xi64>) {reduction = "sum", ignore_index = 2 : i64} -> tensor<3x5xf32>
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @buffer_form(%a: memref<2x3x4xf32, "L2">, %y: memref<2x3x4xf32, "L2">, %m: memref<2x3x4xi1, "L2">) {
// CHECK-NEXT:     training.log_softmax ins(%a : memref<2x3x4xf32, "L2">) outs(%y : memref<2x3x4xf32, "L2">) {axis = 0 : i64}
// CHECK-NEXT:     training.log_softmax_grad ins(%a, %y : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">) outs(%a : memref<2x3x4xf32, "L2">) {axis = 2 : i64}
// CHECK-NEXT:     training.dropout ins(%a : memref<2x3x4xf32, "L2">) outs(%y, %m : memref<2x3x4xf32, "L2">, memref<2x3x4xi1, "L2">) {seed = 1 : i64}
// CHECK-NEXT:     training.dropout_grad ins(%y, %m : memref<2x3x4xf32, "L2">, memref<2x3x4xi1, "L2">) outs(%a : memref<2x3x4xf32, "L2">)
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }

func.func @tensor_form(%a: tensor<2x3x4xf32>, %dy: tensor<2x3x4xf32>, %s: tensor<3x5xf32>, %l: tensor<3xi64>, %m: tensor<2x3x4xi1>, %d1: tensor<1xf32>) {
  %0 = training.log_softmax ins(%a : tensor<2x3x4xf32>) {axis = 2 : i64} -> tensor<2x3x4xf32>
  %1 = training.log_softmax_grad ins(%dy, %0 : tensor<2x3x4xf32>, tensor<2x3x4xf32>) {axis = 1 : i64} -> tensor<2x3x4xf32>
  %2, %3 = training.dropout ins(%a : tensor<2x3x4xf32>) {ratio = 2.500000e-01 : f32, seed = 7 : i64, stream = 1 : i64, streams = 2 : i64} -> tensor<2x3x4xf32>, tensor<2x3x4xi1>
  %4, %5 = training.dropout ins(%a : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>, tensor<2x3x4xi1>
  %6 = training.dropout_grad ins(%dy, %3 : tensor<2x3x4xf32>, tensor<2x3x4xi1>) {ratio = 2.500000e-01 : f32} -> tensor<2x3x4xf32>
  %7, %8 = training.softmax_cross_entropy_loss ins(%s, %l : tensor<3x5xf32>, tensor<3xi64>) {ignore_index = -100 : i64} -> tensor<f32>, tensor<3x5xf32>
  %9 = training.softmax_cross_entropy_loss_grad ins(%d1, %8, %l : tensor<1xf32>, tensor<3x5xf32>, tensor<3xi64>) {reduction = "sum", ignore_index = 2 : i64} -> tensor<3x5xf32>
  func.return
}
func.func @buffer_form(%a: memref<2x3x4xf32, "L2">, %y: memref<2x3x4xf32, "L2">, %m: memref<2x3x4xi1, "L2">) {
  training.log_softmax ins(%a : memref<2x3x4xf32, "L2">) outs(%y : memref<2x3x4xf32, "L2">) {axis = 0 : i64}
  training.log_softmax_grad ins(%a, %y : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">) outs(%a : memref<2x3x4xf32, "L2">) {axis = 2 : i64}
  training.dropout ins(%a : memref<2x3x4xf32, "L2">) outs(%y, %m : memref<2x3x4xf32, "L2">, memref<2x3x4xi1, "L2">) {ratio = 5.000000e-01 : f32, seed = 1 : i64}
  training.dropout_grad ins(%y, %m : memref<2x3x4xf32, "L2">, memref<2x3x4xi1, "L2">) outs(%a : memref<2x3x4xf32, "L2">) {ratio = 5.000000e-01 : f32}
  func.return
}
