// RUN: deeploy-opt %s --split-input-file -p 'tiling-materialize,dma-multibuffer{count=2}' | filecheck %s
// RUN: deeploy-opt %s --split-input-file -p 'tiling-materialize,dma-multibuffer{count=2 levels=l3-only}' | filecheck %s --check-prefix=L3ONLY

// 12 elements in tiles of 4: three tiles, one loop, double buffered.
func.func @relu(%x: memref<12xf32, "L2">, %y: memref<12xf32, "L2">) {
  tiling.tiled tiles [4] {
    training.relu ins(%x : memref<12xf32, "L2">) outs(%y : memref<12xf32, "L2">)
  }
  func.return
}

// Each tile buffer becomes a ring of two slots, each copy a ring of two requests.
// CHECK-LABEL: func.func @relu
// CHECK:         %[[XR:.*]] = memref.alloc() : memref<2x4xf32, "L1">
// CHECK-NEXT:    %[[YR:.*]] = memref.alloc() : memref<2x4xf32, "L1">
// CHECK:         %[[N:.*]] = arith.constant 3 : index
// CHECK:         %[[RIN:.*]] = dma.request count 2
// CHECK-NEXT:    %[[ROUT:.*]] = dma.request count 2
// Tile 0 is fetched into slot 0 before the loop.
// CHECK-NEXT:    %[[I0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[FOUR0:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[OFF0:.*]] = arith.muli %[[I0]], %[[FOUR0]] : index
// CHECK-NEXT:    %[[Z0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[S0:.*]] = dma.slot %[[XR]][%[[I0]]] : memref<2x4xf32, "L1"> -> memref<4xf32, "L1">
// CHECK-NEXT:    dma.copy %x[%[[OFF0]]] -> %[[S0]][%[[Z0]]] sizes [4] on %[[RIN]][%[[I0]]]
// CHECK-NEXT:    scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK:           %[[OFF:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:           %[[SLOT:.*]] = arith.remui %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[XS:.*]] = dma.slot %[[XR]][%[[SLOT]]]
// CHECK-NEXT:      %[[YS:.*]] = dma.slot %[[YR]][%[[SLOT]]]
// Tile i's input has landed in its slot...
// CHECK-NEXT:      dma.wait %[[RIN]][%[[SLOT]]]
// ... tile i+1 (when there is one) is fetched into the next slot ...
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[I]], %[[ONE]] : index
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi ult, %[[NEXT]], %[[N]] : index
// CHECK-NEXT:      scf.if %[[MORE]] {
// CHECK-NEXT:        %{{.*}} = arith.constant 2 : index
// CHECK-NEXT:        %[[NSLOT:.*]] = arith.remui %[[NEXT]], %{{.*}} : index
// CHECK-NEXT:        %{{.*}} = arith.constant 4 : index
// CHECK-NEXT:        %[[NOFF:.*]] = arith.muli %[[NEXT]], %{{.*}} : index
// CHECK-NEXT:        %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:        %[[NS:.*]] = dma.slot %[[XR]][%[[NSLOT]]]
// CHECK-NEXT:        dma.copy %x[%[[NOFF]]] -> %[[NS]][%{{.*}}] sizes [4] on %[[RIN]][%[[NSLOT]]]
// CHECK-NEXT:      }
// ... the output slot's previous write-back (tile i-2) has landed ...
// CHECK-NEXT:      dma.wait %[[ROUT]][%[[SLOT]]]
// CHECK-NEXT:      training.relu ins(%[[XS]] : memref<4xf32, "L1">) outs(%[[YS]] : memref<4xf32, "L1">)
// ... and tile i is written back without waiting.
// CHECK-NEXT:      dma.copy %[[YS]][%{{.*}}] -> %y[%[[OFF]]] sizes [4] on %[[ROUT]][%[[SLOT]]]
// CHECK-NEXT:    } {tiling.tile_loop}
// Both write-back slots are waited for after the loop.
// CHECK-NEXT:    %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[K1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    dma.wait %[[ROUT]][%[[K0]]]
// CHECK-NEXT:    dma.wait %[[ROUT]][%[[K1]]]
// CHECK-NEXT:    func.return

// levels=l3-only leaves this L2 <-> L1 loop single-buffered, without a remark.
// L3ONLY-LABEL: func.func @relu
// L3ONLY-NOT:     dma.request
// L3ONLY-NOT:     dma.remark
// L3ONLY:         } {tiling.tile_loop}

// -----

// SGD writes the weight it reads: refused, with the reason.
func.func @sgd(%w: memref<8xf32, "L2">, %g: memref<8xf32, "L2">, %lr: memref<1xf32, "L2">) {
  tiling.tiled tiles [4] {
    training.sgd ins(%w, %g, %lr : memref<8xf32, "L2">, memref<8xf32, "L2">, memref<1xf32, "L2">) outs(%w : memref<8xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @sgd
// CHECK-NOT:     dma.request
// CHECK:         } {tiling.tile_loop, dma.remark = "dma-multibuffer: training.sgd writing %w keeps single buffering: its output #0 aliases input #0 (written in place)"}

// -----

// A scalar in the pattern: the whole pattern stays single-buffered.
func.func @scale(%s: memref<f32, "L2">, %x: memref<8xf32, "L2">, %y: memref<8xf32, "L2">) {
  tiling.tiled tiles [4] {
    training.binary ins(%s, %x : memref<f32, "L2">, memref<8xf32, "L2">) outs(%y : memref<8xf32, "L2">) {kind = "mul"}
  }
  func.return
}

// CHECK-LABEL: func.func @scale
// CHECK-NOT:     dma.request
// CHECK:         } {tiling.tile_loop, dma.remark = "dma-multibuffer: training.binary writing %y: the whole pattern falls back to single buffering: %s is a scalar"}
