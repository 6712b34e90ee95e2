// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

// Round trip of the gather_split ops of the training dialect (issue 20), in
// tensor form and in buffer form: split (two and three parts), concat,
// gather (an embedding lookup of 2x4 token ids; a constant scalar index
// along axis 1) and gather_grad (the scatter-add into a declared 5x3 dX).

// CHECK-LABEL: builtin.module {

func.func @tensor_form(%x: tensor<3x6xf32>, %w: tensor<5x3xf32>, %ids: tensor<2x4xi64>, %i: tensor<i64>, %dy: tensor<2x4x3xf32>) {
  %0, %1 = training.split ins(%x : tensor<3x6xf32>) {axis = 1 : i64, sizes = array<i64: 2, 4>} -> tensor<3x2xf32>, tensor<3x4xf32>
  %2, %3, %4 = training.split ins(%x : tensor<3x6xf32>) {axis = 0 : i64, sizes = array<i64: 1, 1, 1>} -> tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x6xf32>
  %5 = training.concat ins(%1, %0 : tensor<3x4xf32>, tensor<3x2xf32>) {axis = 1 : i64} -> tensor<3x6xf32>
  %6 = training.gather ins(%w, %ids : tensor<5x3xf32>, tensor<2x4xi64>) {axis = 0 : i64} -> tensor<2x4x3xf32>
  %7 = training.gather ins(%x, %i : tensor<3x6xf32>, tensor<i64>) {axis = 1 : i64} -> tensor<3xf32>
  %8 = training.gather_grad ins(%dy, %ids : tensor<2x4x3xf32>, tensor<2x4xi64>) {axis = 0 : i64} -> tensor<5x3xf32>
  func.return
}

// CHECK-NEXT:  func.func @tensor_form(%x: tensor<3x6xf32>, %w: tensor<5x3xf32>, %ids: tensor<2x4xi64>, %i: tensor<i64>, %dy: tensor<2x4x3xf32>) {
// CHECK-NEXT:    %0, %1 = training.split ins(%x : tensor<3x6xf32>) {axis = 1 : i64, sizes = array<i64: 2, 4>} -> tensor<3x2xf32>, tensor<3x4xf32>
// CHECK-NEXT:    %2, %3, %4 = training.split ins(%x : tensor<3x6xf32>) {axis = 0 : i64, sizes = array<i64: 1, 1, 1>} -> tensor<1x6xf32>, tensor<1x6xf32>, tensor<1x6xf32>
// CHECK-NEXT:    %5 = training.concat ins(%1, %0 : tensor<3x4xf32>, tensor<3x2xf32>) {axis = 1 : i64} -> tensor<3x6xf32>
// CHECK-NEXT:    %6 = training.gather ins(%w, %ids : tensor<5x3xf32>, tensor<2x4xi64>) {axis = 0 : i64} -> tensor<2x4x3xf32>
// CHECK-NEXT:    %7 = training.gather ins(%x, %i : tensor<3x6xf32>, tensor<i64>) {axis = 1 : i64} -> tensor<3xf32>
// CHECK-NEXT:    %8 = training.gather_grad ins(%dy, %ids : tensor<2x4x3xf32>, tensor<2x4xi64>) {axis = 0 : i64} -> tensor<5x3xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

func.func @buffer_form(%x: memref<3x6xf32, "L2">, %a: memref<3x2xf32, "L2">, %b: memref<3x4xf32, "L2">, %w: memref<5x3xf32, "L2">, %ids: memref<2x4xi64, "L2">, %e: memref<2x4x3xf32, "L2">) {
  training.split ins(%x : memref<3x6xf32, "L2">) outs(%a, %b : memref<3x2xf32, "L2">, memref<3x4xf32, "L2">) {axis = 1 : i64, sizes = array<i64: 2, 4>}
  training.concat ins(%a, %b : memref<3x2xf32, "L2">, memref<3x4xf32, "L2">) outs(%x : memref<3x6xf32, "L2">) {axis = 1 : i64}
  training.gather ins(%w, %ids : memref<5x3xf32, "L2">, memref<2x4xi64, "L2">) outs(%e : memref<2x4x3xf32, "L2">) {axis = 0 : i64}
  training.gather_grad ins(%e, %ids : memref<2x4x3xf32, "L2">, memref<2x4xi64, "L2">) outs(%w : memref<5x3xf32, "L2">) {axis = 0 : i64}
  func.return
}

// CHECK-NEXT:  func.func @buffer_form(%x: memref<3x6xf32, "L2">, %a: memref<3x2xf32, "L2">, %b: memref<3x4xf32, "L2">, %w: memref<5x3xf32, "L2">, %ids: memref<2x4xi64, "L2">, %e: memref<2x4x3xf32, "L2">) {
// CHECK-NEXT:    training.split ins(%x : memref<3x6xf32, "L2">) outs(%a, %b : memref<3x2xf32, "L2">, memref<3x4xf32, "L2">) {axis = 1 : i64, sizes = array<i64: 2, 4>}
// CHECK-NEXT:    training.concat ins(%a, %b : memref<3x2xf32, "L2">, memref<3x4xf32, "L2">) outs(%x : memref<3x6xf32, "L2">) {axis = 1 : i64}
// CHECK-NEXT:    training.gather ins(%w, %ids : memref<5x3xf32, "L2">, memref<2x4xi64, "L2">) outs(%e : memref<2x4x3xf32, "L2">) {axis = 0 : i64}
// CHECK-NEXT:    training.gather_grad ins(%e, %ids : memref<2x4x3xf32, "L2">, memref<2x4xi64, "L2">) outs(%w : memref<5x3xf32, "L2">) {axis = 0 : i64}
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
