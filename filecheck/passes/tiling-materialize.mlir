// RUN: deeploy-opt %s -p tiling-materialize | filecheck %s

// 10 elements in tiles of 4: one loop over the two full tiles (marked
// tiling.tile_loop), then the ragged remainder of 2 at offset 8, each with its
// own static L1 buffers. Per tile: the input copies, their waits, the kernel,
// the output copies, their waits.
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
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[IN:.*]] = dma.copy %x[%[[OFF]]] -> %[[XT]][%[[Z]]] sizes [4] : memref<10xf32, "L2">, memref<4xf32, "L1">
// CHECK-NEXT:      dma.wait %[[IN]]
// CHECK-NEXT:      training.relu ins(%[[XT]] : memref<4xf32, "L1">) outs(%[[YT]] : memref<4xf32, "L1">)
// CHECK-NEXT:      %[[OUT:.*]] = dma.copy %[[YT]][%[[Z]]] -> %y[%[[OFF]]] sizes [4] : memref<4xf32, "L1">, memref<10xf32, "L2">
// CHECK-NEXT:      dma.wait %[[OUT]]
// CHECK-NEXT:    } {tiling.tile_loop}
// CHECK-NEXT:    %[[XR:.*]] = memref.alloc() : memref<2xf32, "L1">
// CHECK-NEXT:    %[[YR:.*]] = memref.alloc() : memref<2xf32, "L1">
// CHECK-NEXT:    %[[Z2:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[IN2:.*]] = dma.copy %x[%[[EIGHT]]] -> %[[XR]][%[[Z2]]] sizes [2] : memref<10xf32, "L2">, memref<2xf32, "L1">
// CHECK-NEXT:    dma.wait %[[IN2]]
// CHECK-NEXT:    training.relu ins(%[[XR]] : memref<2xf32, "L1">) outs(%[[YR]] : memref<2xf32, "L1">)
// CHECK-NEXT:    %[[OUT2:.*]] = dma.copy %[[YR]][%[[Z2]]] -> %y[%[[EIGHT]]] sizes [2] : memref<2xf32, "L1">, memref<10xf32, "L2">
// CHECK-NEXT:    dma.wait %[[OUT2]]
// CHECK-NEXT:    func.return

// A Gemm tiled on N only: the A tile is the same for every tile (offset 0),
// the bias follows N; all inputs are in flight together before the first wait.
// An in-place operand is one L1 buffer, copied in and out.
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
// CHECK-NEXT:      %[[XI:.*]] = dma.copy %x[%[[Z]], %[[Z]]] -> %{{.*}}[%[[Z]], %[[Z]]] sizes [2, 3] : memref<2x3xf32, "L2">, memref<2x3xf32, "L1">
// CHECK-NEXT:      %[[WI:.*]] = dma.copy %w[%[[NOFF]], %[[Z]]] -> %{{.*}}[%[[Z]], %[[Z]]] sizes [2, 3] : memref<4x3xf32, "L2">, memref<2x3xf32, "L1">
// CHECK-NEXT:      %[[BI:.*]] = dma.copy %b[%[[NOFF]]] -> %{{.*}}[%[[Z]]] sizes [2] : memref<4xf32, "L2">, memref<2xf32, "L1">
// CHECK-NEXT:      dma.wait %[[XI]]
// CHECK-NEXT:      dma.wait %[[WI]]
// CHECK-NEXT:      dma.wait %[[BI]]
// CHECK-NEXT:      training.gemm
// CHECK-NEXT:      %[[YO:.*]] = dma.copy %{{.*}}[%[[Z]], %[[Z]]] -> %y[%[[Z]], %[[NOFF]]] sizes [2, 2] : memref<2x2xf32, "L1">, memref<2x4xf32, "L2">
// CHECK-NEXT:      dma.wait %[[YO]]
// CHECK:         %[[YT:.*]] = memref.alloc() : memref<1x4xf32, "L1">
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for
// CHECK:           dma.copy %y[{{.*}}] -> %[[YT]]
// CHECK-NEXT:      dma.wait
// CHECK-NEXT:      training.relu ins(%[[YT]] : memref<1x4xf32, "L1">) outs(%[[YT]] : memref<1x4xf32, "L1">)
// CHECK-NEXT:      dma.copy %[[YT]][{{.*}}] -> %y

// Two tiled dims (3 x 2 tiles of 2x2 over 6x4): one loop over the 6 tiles,
// whose index i splits into the row tile i / 2 and the column tile i % 2.
func.func @grid(%x: memref<6x4xf32, "L2">, %y: memref<6x4xf32, "L2">) {
  tiling.tiled tiles [2, 2] {
    training.relu ins(%x : memref<6x4xf32, "L2">) outs(%y : memref<6x4xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @grid
// CHECK:         %[[UB:.*]] = arith.constant 6 : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[UB]] step %{{.*}} {
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[COL:.*]] = arith.remui %[[I]], %[[TWO]] : index
// CHECK-NEXT:      %[[TWO2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[COFF:.*]] = arith.muli %[[COL]], %[[TWO2]] : index
// CHECK-NEXT:      %[[TWO3:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.divui %[[I]], %[[TWO3]] : index
// CHECK-NEXT:      %[[TWO4:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[ROFF:.*]] = arith.muli %[[ROW]], %[[TWO4]] : index
// CHECK:           dma.copy %x[%[[ROFF]], %[[COFF]]] -> %{{.*}} sizes [2, 2]
// CHECK:         } {tiling.tile_loop}
