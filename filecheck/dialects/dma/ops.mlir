// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

func.func @copies(%big: memref<8x6xf32, "L2">, %tile: memref<4x6xf32, "L1">, %s: memref<f32, "L2">, %t: memref<f32, "L1">) {
  %i = arith.constant 4 : index
  %z = arith.constant 0 : index
  dma.copy "in" %big, %tile at [%i, %z] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  dma.copy "out" %tile, %big at [%z, %z] : memref<4x6xf32, "L1">, memref<8x6xf32, "L2">
  dma.copy "in" %s, %t : memref<f32, "L2">, memref<f32, "L1">
  func.return
}

// CHECK: dma.copy "in" %big, %tile at [%i, %z] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
// CHECK: dma.copy "out" %tile, %big at [%z, %z] : memref<4x6xf32, "L1">, memref<8x6xf32, "L2">
// CHECK: dma.copy "in" %s, %t : memref<f32, "L2">, memref<f32, "L1">
