// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

func.func @copies(%big: memref<8x6xf32, "L2">, %tile: memref<4x6xf32, "L1">, %tt: memref<6x4xf32, "L1">, %ring: memref<2x4x6xf32, "L1">, %l3: memref<8x6xf32, "L3">, %s: memref<f32, "L2">, %t: memref<f32, "L1">) {
  %i = arith.constant 4 : index
  %z = arith.constant 0 : index
  %a = dma.copy %big[%i, %z] -> %tile[%z, %z] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  dma.wait %a
  %b = dma.copy %big[%i, %z] -> %tt[%z, %z] sizes [4, 6] perm [1, 0] : memref<8x6xf32, "L2">, memref<6x4xf32, "L1">
  %b2 = dma.copy %big[%i, %z] -> %tile[%z, %z] sizes [4, 6] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 65536, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  dma.wait %b
  %r = dma.request count 2
  %slot = dma.slot %ring[%z] : memref<2x4x6xf32, "L1"> -> memref<4x6xf32, "L1">
  %c = dma.copy %slot[%z, %z] -> %big[%i, %z] sizes [4, 6] on %r[%z] : memref<4x6xf32, "L1">, memref<8x6xf32, "L2">
  dma.wait %r[%z]
  %d = dma.copy %l3[%z, %z] -> %big[%z, %z] sizes [8, 6] on %r : memref<8x6xf32, "L3">, memref<8x6xf32, "L2">
  dma.wait %d
  %e = dma.copy %s[] -> %t[] sizes [] : memref<f32, "L2">, memref<f32, "L1">
  dma.wait %e
  func.return
}

// CHECK-LABEL: func.func @copies
// CHECK:         %a = dma.copy %big[%i, %z] -> %tile[%z, %z] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
// CHECK-NEXT:    dma.wait %a
// CHECK-NEXT:    %b = dma.copy %big[%i, %z] -> %tt[%z, %z] sizes [4, 6] perm [1, 0] : memref<8x6xf32, "L2">, memref<6x4xf32, "L1">
// CHECK-NEXT:    %b2 = dma.copy %big[%i, %z] -> %tile[%z, %z] sizes [4, 6] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 65536, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
// CHECK-NEXT:    dma.wait %b
// CHECK-NEXT:    %r = dma.request count 2
// CHECK-NEXT:    %slot = dma.slot %ring[%z] : memref<2x4x6xf32, "L1"> -> memref<4x6xf32, "L1">
// CHECK-NEXT:    %c = dma.copy %slot[%z, %z] -> %big[%i, %z] sizes [4, 6] on %r[%z] : memref<4x6xf32, "L1">, memref<8x6xf32, "L2">
// CHECK-NEXT:    dma.wait %r[%z]
// CHECK-NEXT:    %d = dma.copy %l3[%z, %z] -> %big[%z, %z] sizes [8, 6] on %r : memref<8x6xf32, "L3">, memref<8x6xf32, "L2">
// CHECK-NEXT:    dma.wait %d
// CHECK-NEXT:    %e = dma.copy %s[] -> %t[] sizes [] : memref<f32, "L2">, memref<f32, "L1">
// CHECK-NEXT:    dma.wait %e
