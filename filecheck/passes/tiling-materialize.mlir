// RUN: deeploy-opt %s -p tiling-materialize | filecheck %s

// 10 elements in tiles of 4: a loop over the two full tiles, then the ragged
// remainder of 2 at offset 8, each with its own static L1 buffer.
func.func @ragged(%x: memref<10xf32, "L2">, %y: memref<10xf32, "L2">) {
  tiling.tiled tiles [4] {
    training.relu ins(%x : memref<10xf32, "L2">) outs(%y : memref<10xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @ragged
// CHECK:         %[[XT:.*]] = memref.alloc() : memref<4xf32, "L1">
// CHECK-NEXT:    %[[YT:.*]] = memref.alloc() : memref<4xf32, "L1">
// CHECK-NEXT:    %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[UB:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[IV:.*]] = %[[LB]] to %[[UB]] step %[[ONE]] {
// CHECK-NEXT:      %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[OFF:.*]] = arith.muli %[[IV]], %[[FOUR]] : index
// CHECK-NEXT:      dma.copy "in" %x, %[[XT]] at [%[[OFF]]] : memref<10xf32, "L2">, memref<4xf32, "L1">
// CHECK-NEXT:      training.relu ins(%[[XT]] : memref<4xf32, "L1">) outs(%[[YT]] : memref<4xf32, "L1">)
// CHECK-NEXT:      dma.copy "out" %[[YT]], %y at [%[[OFF]]] : memref<4xf32, "L1">, memref<10xf32, "L2">
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[XR:.*]] = memref.alloc() : memref<2xf32, "L1">
// CHECK-NEXT:    %[[YR:.*]] = memref.alloc() : memref<2xf32, "L1">
// CHECK-NEXT:    %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT:    dma.copy "in" %x, %[[XR]] at [%[[EIGHT]]] : memref<10xf32, "L2">, memref<2xf32, "L1">
// CHECK-NEXT:    training.relu ins(%[[XR]] : memref<2xf32, "L1">) outs(%[[YR]] : memref<2xf32, "L1">)
// CHECK-NEXT:    dma.copy "out" %[[YR]], %y at [%[[EIGHT]]] : memref<2xf32, "L1">, memref<10xf32, "L2">
// CHECK-NEXT:    func.return

// A Gemm tiled on N only: the A tile is the same for every tile (offset 0),
// the bias follows N, and an in-place operand is one L1 buffer copied in and out.
func.func @gemm(%x: memref<2x3xf32, "L2">, %w: memref<4x3xf32, "L2">, %b: memref<4xf32, "L2">, %y: memref<2x4xf32, "L2">) {
  tiling.tiled tiles [2, 2, 3] {
    training.gemm ins(%x, %w, %b : memref<2x3xf32, "L2">, memref<4x3xf32, "L2">, memref<4xf32, "L2">) outs(%y : memref<2x4xf32, "L2">) {trans_b}
  }
  tiling.tiled tiles [1, 4] {
    training.relu ins(%y : memref<2x4xf32, "L2">) outs(%y : memref<2x4xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @gemm
// CHECK:         scf.for %[[N:.*]] = {{.*}} {
// CHECK:           %[[NOFF:.*]] = arith.muli %[[N]], {{.*}} : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      dma.copy "in" %x, %{{.*}} at [%[[Z]], %[[Z]]] : memref<2x3xf32, "L2">, memref<2x3xf32, "L1">
// CHECK-NEXT:      dma.copy "in" %w, %{{.*}} at [%[[NOFF]], %[[Z]]] : memref<4x3xf32, "L2">, memref<2x3xf32, "L1">
// CHECK-NEXT:      dma.copy "in" %b, %{{.*}} at [%[[NOFF]]] : memref<4xf32, "L2">, memref<2xf32, "L1">
// CHECK-NEXT:      training.gemm
// CHECK-NEXT:      dma.copy "out" %{{.*}}, %y at [%[[Z]], %[[NOFF]]] : memref<2x2xf32, "L1">, memref<2x4xf32, "L2">
// CHECK:         %[[YT:.*]] = memref.alloc() : memref<1x4xf32, "L1">
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for
// CHECK:           dma.copy "in" %y, %[[YT]]
// CHECK-NEXT:      training.relu ins(%[[YT]] : memref<1x4xf32, "L1">) outs(%[[YT]] : memref<1x4xf32, "L1">)
// CHECK-NEXT:      dma.copy "out" %[[YT]], %y
