// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

// Round trip of batch normalization in training mode (issue 20):
// training.batch_norm (BatchNormInternal) and training.batch_norm_grad
// (BatchNormalizationGrad), rank 2 ([N, C], BatchNorm1d) and rank 4 (NCHW,
// BatchNorm2d), tensor and buffer form (the running statistics updated in
// place). Defaults (epsilon = 1e-5, momentum = 0.9) are not printed.

func.func @tensor_form(%x: tensor<4x3xf32>, %c: tensor<3xf32>, %x4: tensor<2x3x5x5xf32>) {
  %0, %1, %2, %3, %4 = training.batch_norm ins(%x, %c, %c, %c, %c : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %5, %6, %7, %8, %9 = training.batch_norm ins(%x4, %c, %c, %c, %c : tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {epsilon = 1.000000e-03 : f32, momentum = 5.000000e-01 : f32} -> tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %10, %11, %12 = training.batch_norm_grad ins(%x, %x, %c, %3, %4 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
  %13, %14, %15 = training.batch_norm_grad ins(%5, %x4, %c, %8, %9 : tensor<2x3x5x5xf32>, tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {epsilon = 1.000000e-03 : f32} -> tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>
  func.return
}
func.func @buffer_form(%x: memref<2x3x5x5xf32, "L2">, %c: memref<3xf32, "L2">, %rm: memref<3xf32, "L2">, %rv: memref<3xf32, "L2">, %y: memref<2x3x5x5xf32, "L2">, %m: memref<3xf32, "L2">, %s: memref<3xf32, "L2">) {
  training.batch_norm ins(%x, %c, %c, %rm, %rv : memref<2x3x5x5xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">) outs(%y, %rm, %rv, %m, %s : memref<2x3x5x5xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">)
  training.batch_norm_grad ins(%y, %x, %c, %m, %s : memref<2x3x5x5xf32, "L2">, memref<2x3x5x5xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">) outs(%y, %m, %s : memref<2x3x5x5xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">)
  func.return
}

// CHECK-LABEL: builtin.module {
// CHECK-NEXT:   func.func @tensor_form(%x: tensor<4x3xf32>, %c: tensor<3xf32>, %x4: tensor<2x3x5x5xf32>) {
// CHECK-NEXT:     %0, %1, %2, %3, %4 = training.batch_norm ins(%x, %c, %c, %c, %c : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT:     %5, %6, %7, %8, %9 = training.batch_norm ins(%x4, %c, %c, %c, %c : tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {epsilon = 1.000000e-03 : f32, momentum = 5.000000e-01 : f32} -> tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT:     %10, %11, %12 = training.batch_norm_grad ins(%x, %x, %c, %3, %4 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT:     %13, %14, %15 = training.batch_norm_grad ins(%5, %x4, %c, %8, %9 : tensor<2x3x5x5xf32>, tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {epsilon = 1.000000e-03 : f32} -> tensor<2x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @buffer_form(%x: memref<2x3x5x5xf32, "L2">, %c: memref<3xf32, "L2">, %rm: memref<3xf32, "L2">, %rv: memref<3xf32, "L2">, %y: memref<2x3x5x5xf32, "L2">, %m: memref<3xf32, "L2">, %s: memref<3xf32, "L2">) {
// CHECK-NEXT:     training.batch_norm ins(%x, %c, %c, %rm, %rv : memref<2x3x5x5xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">) outs(%y, %rm, %rv, %m, %s : memref<2x3x5x5xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">)
// CHECK-NEXT:     training.batch_norm_grad ins(%y, %x, %c, %m, %s : memref<2x3x5x5xf32, "L2">, memref<2x3x5x5xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">) outs(%y, %m, %s : memref<2x3x5x5xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">)
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
