// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

func.func @tiled(%x: memref<6x16xf32, "L2">, %w: memref<12x16xf32, "L2">, %y: memref<6x12xf32, "L2">) {
  tiling.tiled tiles [6, 4, 16] {
    training.gemm ins(%x, %w : memref<6x16xf32, "L2">, memref<12x16xf32, "L2">) outs(%y : memref<6x12xf32, "L2">) {trans_b}
  }
  tiling.tiled tiles [3, 12] attributes {buffers = 2 : i64, level = "L2"} {
    training.relu ins(%y : memref<6x12xf32, "L2">) outs(%y : memref<6x12xf32, "L2">)
  }
  func.return
}

// CHECK:      tiling.tiled tiles [6, 4, 16] {
// CHECK-NEXT:   training.gemm ins(%x, %w : memref<6x16xf32, "L2">, memref<12x16xf32, "L2">) outs(%y : memref<6x12xf32, "L2">) {trans_b}
// CHECK-NEXT: }
// CHECK-NEXT: tiling.tiled tiles [3, 12] attributes {buffers = 2 : i64, level = "L2"} {
// CHECK-NEXT:   training.relu ins(%y : memref<6x12xf32, "L2">) outs(%y : memref<6x12xf32, "L2">)
// CHECK-NEXT: }
