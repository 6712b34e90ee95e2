// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

// Round trip of the logic family of the training dialect (issue 20;
// dialects/training/logic.py), in tensor form and in buffer form: compare
// (every kind, broadcasting), logical (and, or, xor), not, where (three-way
// broadcasting), cast (bool <-> f32, i64 <-> f32) and clip. Booleans are i1.

// CHECK-LABEL: builtin.module {

func.func @tensor_form(%a: tensor<2x3xf32>, %r: tensor<3xf32>, %s: tensor<f32>, %l: tensor<2xi64>) {
  %0 = training.compare ins(%a, %r : tensor<2x3xf32>, tensor<3xf32>) {kind = "greater"} -> tensor<2x3xi1>
  %1 = training.compare ins(%a, %s : tensor<2x3xf32>, tensor<f32>) {kind = "greater_equal"} -> tensor<2x3xi1>
  %2 = training.compare ins(%r, %a : tensor<3xf32>, tensor<2x3xf32>) {kind = "less"} -> tensor<2x3xi1>
  %3 = training.compare ins(%a, %a : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "less_equal"} -> tensor<2x3xi1>
  %4 = training.compare ins(%a, %s : tensor<2x3xf32>, tensor<f32>) {kind = "equal"} -> tensor<2x3xi1>
  %5 = training.logical ins(%0, %1 : tensor<2x3xi1>, tensor<2x3xi1>) {kind = "and"} -> tensor<2x3xi1>
  %6 = training.logical ins(%2, %3 : tensor<2x3xi1>, tensor<2x3xi1>) {kind = "or"} -> tensor<2x3xi1>
  %7 = training.logical ins(%5, %6 : tensor<2x3xi1>, tensor<2x3xi1>) {kind = "xor"} -> tensor<2x3xi1>
  %8 = training.not ins(%7 : tensor<2x3xi1>) -> tensor<2x3xi1>
  %9 = training.where ins(%8, %r, %s : tensor<2x3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %10 = training.cast ins(%8 : tensor<2x3xi1>) {to = f32} -> tensor<2x3xf32>
  %11 = training.cast ins(%a : tensor<2x3xf32>) {to = i1} -> tensor<2x3xi1>
  %12 = training.cast ins(%l : tensor<2xi64>) {to = f32} -> tensor<2xf32>
  %13 = training.cast ins(%12 : tensor<2xf32>) {to = i64} -> tensor<2xi64>
  %14 = training.clip ins(%a : tensor<2x3xf32>) {lo = 0.000000e+00 : f32, hi = 6.000000e+00 : f32} -> tensor<2x3xf32>
  func.return
}

// CHECK:      func.func @tensor_form(%a: tensor<2x3xf32>, %r: tensor<3xf32>, %s: tensor<f32>, %l: tensor<2xi64>) {
// CHECK-NEXT:   %0 = training.compare ins(%a, %r : tensor<2x3xf32>, tensor<3xf32>) {kind = "greater"} -> tensor<2x3xi1>
// CHECK-NEXT:   %1 = training.compare ins(%a, %s : tensor<2x3xf32>, tensor<f32>) {kind = "greater_equal"} -> tensor<2x3xi1>
// CHECK-NEXT:   %2 = training.compare ins(%r, %a : tensor<3xf32>, tensor<2x3xf32>) {kind = "less"} -> tensor<2x3xi1>
// CHECK-NEXT:   %3 = training.compare ins(%a, %a : tensor<2x3xf32>, tensor<2x3xf32>) {kind = "less_equal"} -> tensor<2x3xi1>
// CHECK-NEXT:   %4 = training.compare ins(%a, %s : tensor<2x3xf32>, tensor<f32>) {kind = "equal"} -> tensor<2x3xi1>
// CHECK-NEXT:   %5 = training.logical ins(%0, %1 : tensor<2x3xi1>, tensor<2x3xi1>) {kind = "and"} -> tensor<2x3xi1>
// CHECK-NEXT:   %6 = training.logical ins(%2, %3 : tensor<2x3xi1>, tensor<2x3xi1>) {kind = "or"} -> tensor<2x3xi1>
// CHECK-NEXT:   %7 = training.logical ins(%5, %6 : tensor<2x3xi1>, tensor<2x3xi1>) {kind = "xor"} -> tensor<2x3xi1>
// CHECK-NEXT:   %8 = training.not ins(%7 : tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT:   %9 = training.where ins(%8, %r, %s : tensor<2x3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %10 = training.cast ins(%8 : tensor<2x3xi1>) {to = f32} -> tensor<2x3xf32>
// CHECK-NEXT:   %11 = training.cast ins(%a : tensor<2x3xf32>) {to = i1} -> tensor<2x3xi1>
// CHECK-NEXT:   %12 = training.cast ins(%l : tensor<2xi64>) {to = f32} -> tensor<2xf32>
// CHECK-NEXT:   %13 = training.cast ins(%12 : tensor<2xf32>) {to = i64} -> tensor<2xi64>
// CHECK-NEXT:   %14 = training.clip ins(%a : tensor<2x3xf32>) {lo = 0.000000e+00 : f32, hi = 6.000000e+00 : f32} -> tensor<2x3xf32>
// CHECK-NEXT:   func.return
// CHECK-NEXT: }

func.func @buffer_form(%a: memref<2x3xf32, "L1">, %r: memref<3xf32, "L1">, %c: memref<2x1xi1, "L1">, %m: memref<2x3xi1, "L1">, %y: memref<2x3xf32, "L1">, %l: memref<4xi64, "L2">, %f: memref<4xf32, "L2">) {
  training.compare ins(%a, %r : memref<2x3xf32, "L1">, memref<3xf32, "L1">) outs(%m : memref<2x3xi1, "L1">) {kind = "less"}
  training.logical ins(%m, %c : memref<2x3xi1, "L1">, memref<2x1xi1, "L1">) outs(%m : memref<2x3xi1, "L1">) {kind = "and"}
  training.not ins(%m : memref<2x3xi1, "L1">) outs(%m : memref<2x3xi1, "L1">)
  training.where ins(%c, %a, %r : memref<2x1xi1, "L1">, memref<2x3xf32, "L1">, memref<3xf32, "L1">) outs(%y : memref<2x3xf32, "L1">)
  training.cast ins(%m : memref<2x3xi1, "L1">) outs(%y : memref<2x3xf32, "L1">) {to = f32}
  training.cast ins(%l : memref<4xi64, "L2">) outs(%f : memref<4xf32, "L2">) {to = f32}
  training.clip ins(%y : memref<2x3xf32, "L1">) outs(%y : memref<2x3xf32, "L1">) {lo = -5.000000e-01 : f32, hi = 5.000000e-01 : f32}
  func.return
}

// CHECK:      func.func @buffer_form(
// CHECK-NEXT:   training.compare ins(%a, %r : memref<2x3xf32, "L1">, memref<3xf32, "L1">) outs(%m : memref<2x3xi1, "L1">) {kind = "less"}
// CHECK-NEXT:   training.logical ins(%m, %c : memref<2x3xi1, "L1">, memref<2x1xi1, "L1">) outs(%m : memref<2x3xi1, "L1">) {kind = "and"}
// CHECK-NEXT:   training.not ins(%m : memref<2x3xi1, "L1">) outs(%m : memref<2x3xi1, "L1">)
// CHECK-NEXT:   training.where ins(%c, %a, %r : memref<2x1xi1, "L1">, memref<2x3xf32, "L1">, memref<3xf32, "L1">) outs(%y : memref<2x3xf32, "L1">)
// CHECK-NEXT:   training.cast ins(%m : memref<2x3xi1, "L1">) outs(%y : memref<2x3xf32, "L1">) {to = f32}
// CHECK-NEXT:   training.cast ins(%l : memref<4xi64, "L2">) outs(%f : memref<4xf32, "L2">) {to = f32}
// CHECK-NEXT:   training.clip ins(%y : memref<2x3xf32, "L1">) outs(%y : memref<2x3xf32, "L1">) {lo = -5.000000e-01 : f32, hi = 5.000000e-01 : f32}
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
