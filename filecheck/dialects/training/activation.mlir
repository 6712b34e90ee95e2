// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

// Round trip of the activation ops of the training dialect (issue 20,
// dialects/training/activation.py): training.unary with every kind (alpha
// only on leaky_relu and quick_gelu) and training.unary_grad with every
// kind, in tensor form and in buffer form (in place: Y over X, dX over dY).

// CHECK-LABEL: builtin.module {

func.func @tensor_form(%x: tensor<2x3xf32>, %dy: tensor<2x3xf32>) {
  %0 = training.unary ins(%x : tensor<2x3xf32>) {kind = "sigmoid"} -> tensor<2x3xf32>
  %1 = training.unary ins(%x : tensor<2x3xf32>) {kind = "tanh"} -> tensor<2x3xf32>
  %2 = training.unary ins(%x : tensor<2x3xf32>) {kind = "leaky_relu", alpha = 0.01 : f32} -> tensor<2x3xf32>
  %3 = training.unary ins(%x : tensor<2x3xf32>) {kind = "quick_gelu", alpha = 1.0 : f32} -> tensor<2x3xf32>
  %4 = training.unary ins(%x : tensor<2x3xf32>) {kind = "abs"} -> tensor<2x3xf32>
  %5 = training.unary ins(%x : tensor<2x3xf32>) {kind = "sign"} -> tensor<2x3xf32>
  %6 = training.unary ins(%x : tensor<2x3xf32>) {kind = "neg"} -> tensor<2x3xf32>
  %7 = training.unary ins(%4 : tensor<2x3xf32>) {kind = "log"} -> tensor<2x3xf32>
  %8 = training.unary ins(%x : tensor<2x3xf32>) {kind = "exp"} -> tensor<2x3xf32>
  %9 = training.unary ins(%4 : tensor<2x3xf32>) {kind = "sqrt"} -> tensor<2x3xf32>
  %10 = training.unary ins(%x : tensor<2x3xf32>) {kind = "reciprocal"} -> tensor<2x3xf32>
  %11 = training.unary_grad ins(%dy, %0 : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "sigmoid"} -> tensor<2x3xf32>
  %12 = training.unary_grad ins(%dy, %1 : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "tanh"} -> tensor<2x3xf32>
  %13 = training.unary_grad ins(%dy, %2 : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "leaky_relu", alpha = 0.01 : f32} -> tensor<2x3xf32>
  %14 = training.unary_grad ins(%dy, %x : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "quick_gelu", alpha = 1.702 : f32} -> tensor<2x3xf32>
  func.return
}

// CHECK-LABEL: func.func @tensor_form(%x: tensor<2x3xf32>, %dy: tensor<2x3xf32>) {
// CHECK-NEXT:    %0 = training.unary ins(%x : tensor<2x3xf32>) {kind = "sigmoid"} -> tensor<2x3xf32>
// CHECK-NEXT:    %1 = training.unary ins(%x : tensor<2x3xf32>) {kind = "tanh"} -> tensor<2x3xf32>
// CHECK-NEXT:    %2 = training.unary ins(%x : tensor<2x3xf32>) {kind = "leaky_relu", alpha = 1.000000e-02 : f32} -> tensor<2x3xf32>
// CHECK-NEXT:    %3 = training.unary ins(%x : tensor<2x3xf32>) {kind = "quick_gelu", alpha = 1.000000e+00 : f32} -> tensor<2x3xf32>
// CHECK-NEXT:    %4 = training.unary ins(%x : tensor<2x3xf32>) {kind = "abs"} -> tensor<2x3xf32>
// CHECK-NEXT:    %5 = training.unary ins(%x : tensor<2x3xf32>) {kind = "sign"} -> tensor<2x3xf32>
// CHECK-NEXT:    %6 = training.unary ins(%x : tensor<2x3xf32>) {kind = "neg"} -> tensor<2x3xf32>
// CHECK-NEXT:    %7 = training.unary ins(%4 : tensor<2x3xf32>) {kind = "log"} -> tensor<2x3xf32>
// CHECK-NEXT:    %8 = training.unary ins(%x : tensor<2x3xf32>) {kind = "exp"} -> tensor<2x3xf32>
// CHECK-NEXT:    %9 = training.unary ins(%4 : tensor<2x3xf32>) {kind = "sqrt"} -> tensor<2x3xf32>
// CHECK-NEXT:    %10 = training.unary ins(%x : tensor<2x3xf32>) {kind = "reciprocal"} -> tensor<2x3xf32>
// CHECK-NEXT:    %11 = training.unary_grad ins(%dy, %0 : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "sigmoid"} -> tensor<2x3xf32>
// CHECK-NEXT:    %12 = training.unary_grad ins(%dy, %1 : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "tanh"} -> tensor<2x3xf32>
// CHECK-NEXT:    %13 = training.unary_grad ins(%dy, %2 : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "leaky_relu", alpha = 1.000000e-02 : f32} -> tensor<2x3xf32>
// CHECK-NEXT:    %14 = training.unary_grad ins(%dy, %x : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "quick_gelu", alpha = 1.702000e+00 : f32} -> tensor<2x3xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

func.func @buffer_form(%x: memref<4x5xf32, "L1">, %dy: memref<4x5xf32, "L1">) {
  training.unary ins(%x : memref<4x5xf32, "L1">) outs(%x : memref<4x5xf32, "L1">) {kind = "tanh"}
  training.unary_grad ins(%dy, %x : memref<4x5xf32, "L1">, memref<4x5xf32, "L1">) outs(%dy : memref<4x5xf32, "L1">) {kind = "leaky_relu", alpha = 2.500000e-01 : f32}
  func.return
}

// CHECK-LABEL: func.func @buffer_form(%x: memref<4x5xf32, "L1">, %dy: memref<4x5xf32, "L1">) {
// CHECK-NEXT:    training.unary ins(%x : memref<4x5xf32, "L1">) outs(%x : memref<4x5xf32, "L1">) {kind = "tanh"}
// CHECK-NEXT:    training.unary_grad ins(%dy, %x : memref<4x5xf32, "L1">, memref<4x5xf32, "L1">) outs(%dy : memref<4x5xf32, "L1">) {kind = "leaky_relu", alpha = 2.500000e-01 : f32}
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
