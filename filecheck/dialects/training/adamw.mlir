// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

// Round trip of the AdamW ops of the training dialect (issue 20): step_count
// (with and without update_signal) and adamw (six or seven inputs, three
// results), in tensor form and in buffer form (in place). Defaults (alpha =
// 0.9, beta = 0.999, epsilon = 1e-8, weight_decay = 0, adam_mode = 0,
// correct_bias = 1) are not printed.

// CHECK-LABEL: builtin.module {
// CHECK-LABEL: func.func @tensor_form
// CHECK-NEXT:    %s = training.step_count ins(%count : tensor<1xi64>) -> tensor<1xi64>
// CHECK-NEXT:    %0, %1, %2 = training.adamw ins(%w, %g, %m1, %m2, %lr, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1xf32>, tensor<1xi64>) -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
// CHECK-NEXT:    %t = training.step_count ins(%count, %sig : tensor<1xi64>, tensor<1xi1>) -> tensor<1xi64>
// CHECK-NEXT:    %3, %4, %5 = training.adamw ins(%w, %g, %m1, %m2, %lr, %t, %sig : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1xf32>, tensor<1xi64>, tensor<1xi1>) {alpha = 8.000000e-01 : f32, beta = 9.900000e-01 : f32, epsilon = 1.000000e-06 : f32, weight_decay = 1.000000e-02 : f32, adam_mode = 1 : i64, correct_bias = 0 : i64} -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @buffer_form
// CHECK-NEXT:    training.step_count ins(%count : memref<1xi64, "L2">) outs(%count : memref<1xi64, "L2">)
// CHECK-NEXT:    training.adamw ins(%w, %g, %m1, %m2, %lr, %count : memref<4x3xf32, "L2">, memref<4x3xf32, "L2">, memref<4x3xf32, "L2">, memref<4x3xf32, "L2">, memref<1xf32, "L2">, memref<1xi64, "L2">) outs(%w, %m1, %m2 : memref<4x3xf32, "L2">, memref<4x3xf32, "L2">, memref<4x3xf32, "L2">) {adam_mode = 1 : i64}
// CHECK-NEXT:    func.return

func.func @tensor_form(%w: tensor<4x3xf32>, %g: tensor<4x3xf32>, %m1: tensor<4x3xf32>, %m2: tensor<4x3xf32>, %lr: tensor<1xf32>, %count: tensor<1xi64>, %sig: tensor<1xi1>) {
  %s = training.step_count ins(%count : tensor<1xi64>) -> tensor<1xi64>
  %0, %1, %2 = training.adamw ins(%w, %g, %m1, %m2, %lr, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1xf32>, tensor<1xi64>) -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  %t = training.step_count ins(%count, %sig : tensor<1xi64>, tensor<1xi1>) -> tensor<1xi64>
  %3, %4, %5 = training.adamw ins(%w, %g, %m1, %m2, %lr, %t, %sig : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1xf32>, tensor<1xi64>, tensor<1xi1>) {alpha = 8.000000e-01 : f32, beta = 9.900000e-01 : f32, epsilon = 1.000000e-06 : f32, weight_decay = 1.000000e-02 : f32, adam_mode = 1 : i64, correct_bias = 0 : i64} -> tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  func.return
}

func.func @buffer_form(%w: memref<4x3xf32, "L2">, %g: memref<4x3xf32, "L2">, %m1: memref<4x3xf32, "L2">, %m2: memref<4x3xf32, "L2">, %lr: memref<1xf32, "L2">, %count: memref<1xi64, "L2">) {
  training.step_count ins(%count : memref<1xi64, "L2">) outs(%count : memref<1xi64, "L2">)
  training.adamw ins(%w, %g, %m1, %m2, %lr, %count : memref<4x3xf32, "L2">, memref<4x3xf32, "L2">, memref<4x3xf32, "L2">, memref<4x3xf32, "L2">, memref<1xf32, "L2">, memref<1xi64, "L2">) outs(%w, %m1, %m2 : memref<4x3xf32, "L2">, memref<4x3xf32, "L2">, memref<4x3xf32, "L2">) {adam_mode = 1 : i64}
  func.return
}
