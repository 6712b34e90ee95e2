// RUN: deeploy-opt %s -p 'tiling-materialize,dma-multibuffer{count=2 levels=l3-only}' | filecheck %s

// dma-multibuffer on the L3 hop (deeploy_mlir/passes/dma_multibuffer.py):
// each stage loop {tiling.loop = #tiling.loop<stage>} of tiling-materialize gets rings of
// `count` stage tiles in L2 and rings of requests. Stage tile 0 is fetched
// before the loop; iteration i waits for its fetch, fetches tile i+1 into the
// next slot (scf.if i+1 < trip count), waits for its slot's previous
// write-back only when there is one (i >= count), runs the L1 tiles on the
// slot, and writes its stage tile back without waiting; after the loop, one
// wait per used slot. `levels=l3-only` leaves the L1 tile loops alone.

// 12 floats in L3 in stage tiles of 4 (3 stage tiles), one L1 tile each.
func.func @l3_in_out(%x: memref<12xf32, "L3">, %y: memref<12xf32, "L3">) {
  tiling.tiled tiles [4] attributes {outer = array<i64: 4>} {
    training.relu ins(%x : memref<12xf32, "L3">) outs(%y : memref<12xf32, "L3">)
  }
  func.return
}

// CHECK-LABEL: func.func @l3_in_out
// CHECK-NEXT:    %[[XR:.*]] = memref.alloc() : memref<2x4xf32, "L2">
// CHECK-NEXT:    %[[YR:.*]] = memref.alloc() : memref<2x4xf32, "L2">
// CHECK-NEXT:    %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[UB:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[FR:.*]] = dma.request count 2
// CHECK-NEXT:    %[[SR:.*]] = dma.request count 2
// The prologue: stage tile 0 into slot 0.
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    %[[O0:.*]] = arith.muli %[[Z]], %[[FOUR]] : index
// CHECK-NEXT:    %[[S0:.*]] = dma.slot %[[XR]][%[[Z]]] : memref<2x4xf32, "L2"> -> memref<4xf32, "L2">
// CHECK-NEXT:    %{{.*}} = dma.copy %x[%[[O0]]] -> %[[S0]][%{{.*}}] sizes [4] on %[[FR]][%[[Z]]] : memref<12xf32, "L3">, memref<4xf32, "L2">
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[LB]] to %[[UB]] step %[[ONE]] {
// CHECK:           %[[OFF:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[SLOT:.*]] = arith.remui %[[I]], %[[TWO]] : index
// CHECK-NEXT:      %[[XS:.*]] = dma.slot %[[XR]][%[[SLOT]]]
// CHECK-NEXT:      %[[YS:.*]] = dma.slot %[[YR]][%[[SLOT]]]
// CHECK-NEXT:      dma.wait %[[FR]][%[[SLOT]]]
// CHECK-NEXT:      %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:      %[[NXT:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi ult, %[[NXT]], %[[UB]] : index
// CHECK-NEXT:      scf.if %[[MORE]] {
// CHECK:             %[[NOFF:.*]] = arith.muli %[[NXT]], %{{.*}} : index
// CHECK-NEXT:        %[[NS:.*]] = dma.slot %[[XR]][%{{.*}}]
// CHECK-NEXT:        %{{.*}} = dma.copy %x[%[[NOFF]]] -> %[[NS]][%{{.*}}] sizes [4] on %[[FR]][%{{.*}}]
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[USED:.*]] = arith.cmpi uge, %[[I]], %[[C2]] : index
// CHECK-NEXT:      scf.if %[[USED]] {
// CHECK-NEXT:        dma.wait %[[SR]][%[[SLOT]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[XT:.*]] = memref.alloc() : memref<4xf32, "L1">
// CHECK-NEXT:      %[[YT:.*]] = memref.alloc() : memref<4xf32, "L1">
// CHECK-NEXT:      %[[IN:.*]] = dma.copy %[[XS]][%{{.*}}] -> %[[XT]][%{{.*}}] sizes [4] : memref<4xf32, "L2">, memref<4xf32, "L1">
// CHECK-NEXT:      dma.wait %[[IN]]
// CHECK-NEXT:      training.relu ins(%[[XT]] : memref<4xf32, "L1">) outs(%[[YT]] : memref<4xf32, "L1">)
// CHECK-NEXT:      %[[OUT:.*]] = dma.copy %[[YT]][%{{.*}}] -> %[[YS]][%{{.*}}] sizes [4] : memref<4xf32, "L1">, memref<4xf32, "L2">
// CHECK-NEXT:      dma.wait %[[OUT]]
// CHECK-NEXT:      %{{.*}} = dma.copy %[[YS]][%{{.*}}] -> %y[%[[OFF]]] sizes [4] on %[[SR]][%[[SLOT]]] : memref<4xf32, "L2">, memref<12xf32, "L3">
// CHECK-NEXT:    } {tiling.loop = #tiling.loop<stage>}
// CHECK-NEXT:    %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    dma.wait %[[SR]][%[[K0]]]
// CHECK-NEXT:    %[[K1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    dma.wait %[[SR]][%[[K1]]]
// CHECK-NEXT:    func.return

// In place (SGD writes its L3 weight): the stage loop stays single-buffered.
func.func @inplace(%w: memref<6xf32, "L3">, %g: memref<6xf32, "L2">, %lr: memref<1xf32, "L2">) {
  tiling.tiled tiles [3] attributes {outer = array<i64: 3>} {
    training.sgd ins(%w, %g, %lr : memref<6xf32, "L3">, memref<6xf32, "L2">, memref<1xf32, "L2">) outs(%w : memref<6xf32, "L3">)
  }
  func.return
}

// CHECK-LABEL: func.func @inplace
// CHECK-NOT:     dma.request
// CHECK:         } {tiling.loop = #tiling.loop<stage>, dma.remark = "dma-multibuffer: the L3 hop keeps single buffering: %w_stage is fetched and written back in place (the next tile's fetch would overwrite what is written back)"}

// Fewer stage buffers than asked for (tile-select kept one): single-buffered.
func.func @kept_one(%x: memref<8xf32, "L3">, %y: memref<8xf32, "L2">) {
  tiling.tiled tiles [2] attributes {outer = array<i64: 2>, stage_buffers = 1 : i64} {
    training.relu ins(%x : memref<8xf32, "L3">) outs(%y : memref<8xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @kept_one
// CHECK-NOT:     dma.request
// CHECK:         } {tiling.loop = #tiling.loop<stage, stage_buffers = 1>, dma.remark = "dma-multibuffer: the L3 hop keeps single buffering: two stage tiles of this op do not fit the L2 the plan leaves free (tile-select kept one)"}
