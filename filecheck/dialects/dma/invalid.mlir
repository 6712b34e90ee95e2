// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @f(%big: memref<8x6xf32, "L2">, %tile: memref<4x6xf32, "L1">, %i: index) {
  dma.copy "sideways" %big, %tile at [%i, %i] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}
// CHECK: direction must be 'in' or 'out', got 'sideways'

// -----

func.func @f(%big: memref<8x6xf32, "L2">, %tile: memref<4x6xf32, "L1">, %i: index) {
  dma.copy "in" %big, %tile at [%i] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}
// CHECK: expects one offset per dimension of the tensor side (2), got 1

// -----

func.func @f(%big: memref<8x6xf32, "L2">, %tile: memref<24xf32, "L1">, %i: index) {
  dma.copy "in" %big, %tile at [%i, %i] : memref<8x6xf32, "L2">, memref<24xf32, "L1">
  func.return
}
// CHECK: tile rank 1 differs from the tensor rank 2

// -----

func.func @f(%big: memref<8x6xf32, "L2">, %tile: memref<4x7xf32, "L1">, %i: index) {
  dma.copy "in" %big, %tile at [%i, %i] : memref<8x6xf32, "L2">, memref<4x7xf32, "L1">
  func.return
}
// CHECK: tile shape [4, 7] exceeds the tensor shape [8, 6]

// -----

func.func @f(%big: memref<8x6xf32, "L2">, %tile: memref<4x6xi64, "L1">, %i: index) {
  dma.copy "in" %big, %tile at [%i, %i] : memref<8x6xf32, "L2">, memref<4x6xi64, "L1">
  func.return
}
// CHECK: source and destination element types differ

// -----

func.func @f(%big: memref<8x6xf32, "L2">, %tile: memref<4x6xf32, "L2">, %i: index) {
  dma.copy "in" %big, %tile at [%i, %i] : memref<8x6xf32, "L2">, memref<4x6xf32, "L2">
  func.return
}
// CHECK: a copy moves data between two memory levels
