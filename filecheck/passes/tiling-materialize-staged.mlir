// RUN: deeploy-opt %s -p tiling-materialize | filecheck %s

// tiling-materialize of a `tiling.tiled` with `outer` tiles (an operand in
// L3): per outer variant, L2 stage buffers for the L3 operands and a loop
// {tiling.loop = #tiling.loop<stage>} over the stage tiles. Per stage tile: the L3 -> L2
// copies of the L3 inputs and their waits, then the L1 tile loops of the op
// inside the stage tile (their L1 buffers allocated in the stage loop body, so
// that arena-plan sees they live within one stage tile), then the L2 -> L3
// copies of the L3 outputs and their waits. L1 tiles of a staged operand are
// copied from its stage tile (offsets relative to it); those of an operand in
// L2 straight from the tensor (offset = stage tile offset + L1 tile offset).
//
// %x: 10 floats in L3, stage tiles of 4 (10 = 2 * 4 + 2), L1 tiles of 2.
func.func @staged(%x: memref<10xf32, "L3">, %y: memref<10xf32, "L2">) {
  tiling.tiled tiles [2] attributes {outer = array<i64: 4>} {
    training.relu ins(%x : memref<10xf32, "L3">) outs(%y : memref<10xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @staged
// The two full stage tiles: offset 4 * i.
// CHECK-NEXT:    %[[ST:.*]] = memref.alloc() : memref<4xf32, "L2">
// CHECK-NEXT:    %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[UB:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[LB]] to %[[UB]] step %[[ONE]] {
// CHECK-NEXT:      %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[SOFF:.*]] = arith.muli %[[I]], %[[FOUR]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[F:.*]] = dma.copy %x[%[[SOFF]]] -> %[[ST]][%[[Z]]] sizes [4] : memref<10xf32, "L3">, memref<4xf32, "L2">
// CHECK-NEXT:      dma.wait %[[F]]
// CHECK-NEXT:      %[[XT:.*]] = memref.alloc() : memref<2xf32, "L1">
// CHECK-NEXT:      %[[YT:.*]] = memref.alloc() : memref<2xf32, "L1">
// CHECK-NEXT:      %[[LB2:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[UB2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[ONE2:.*]] = arith.constant 1 : index
// CHECK-NEXT:      scf.for %[[J:.*]] = %[[LB2]] to %[[UB2]] step %[[ONE2]] {
// CHECK-NEXT:        %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[TOFF:.*]] = arith.muli %[[J]], %[[TWO]] : index
// CHECK-NEXT:        %[[Z2:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[IN:.*]] = dma.copy %[[ST]][%[[TOFF]]] -> %[[XT]][%[[Z2]]] sizes [2] : memref<4xf32, "L2">, memref<2xf32, "L1">
// CHECK-NEXT:        dma.wait %[[IN]]
// CHECK-NEXT:        training.relu ins(%[[XT]] : memref<2xf32, "L1">) outs(%[[YT]] : memref<2xf32, "L1">)
// CHECK-NEXT:        %[[YOFF:.*]] = arith.addi %[[SOFF]], %[[TOFF]] : index
// CHECK-NEXT:        %[[OUT:.*]] = dma.copy %[[YT]][%[[Z2]]] -> %y[%[[YOFF]]] sizes [2] : memref<2xf32, "L1">, memref<10xf32, "L2">
// CHECK-NEXT:        dma.wait %[[OUT]]
// CHECK-NEXT:      } {tiling.loop = #tiling.loop<tile>}
// CHECK-NEXT:    } {tiling.loop = #tiling.loop<stage>}
// The ragged stage tile: 2 floats at offset 8, one L1 tile, no loops.
// CHECK-NEXT:    %[[ST2:.*]] = memref.alloc() : memref<2xf32, "L2">
// CHECK-NEXT:    %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[Z3:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[F2:.*]] = dma.copy %x[%[[EIGHT]]] -> %[[ST2]][%[[Z3]]] sizes [2] : memref<10xf32, "L3">, memref<2xf32, "L2">
// CHECK-NEXT:    dma.wait %[[F2]]
// CHECK-NEXT:    %[[XT2:.*]] = memref.alloc() : memref<2xf32, "L1">
// CHECK-NEXT:    %[[YT2:.*]] = memref.alloc() : memref<2xf32, "L1">
// CHECK-NEXT:    %[[Z4:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[IN2:.*]] = dma.copy %[[ST2]][%[[Z4]]] -> %[[XT2]][%[[Z4]]] sizes [2] : memref<2xf32, "L2">, memref<2xf32, "L1">
// CHECK-NEXT:    dma.wait %[[IN2]]
// CHECK-NEXT:    training.relu ins(%[[XT2]] : memref<2xf32, "L1">) outs(%[[YT2]] : memref<2xf32, "L1">)
// CHECK-NEXT:    %[[EIGHT2:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[OUT2:.*]] = dma.copy %[[YT2]][%[[Z4]]] -> %y[%[[EIGHT2]]] sizes [2] : memref<2xf32, "L1">, memref<10xf32, "L2">
// CHECK-NEXT:    dma.wait %[[OUT2]]
// CHECK-NEXT:    func.return

// =============================================================================
// An output in L3, written in place (read and written): its stage tile is
// fetched before and stored after the L1 tiles.
// =============================================================================
func.func @inplace(%w: memref<6xf32, "L3">, %g: memref<6xf32, "L2">, %lr: memref<1xf32, "L2">) {
  tiling.tiled tiles [3] attributes {outer = array<i64: 3>} {
    training.sgd ins(%w, %g, %lr : memref<6xf32, "L3">, memref<6xf32, "L2">, memref<1xf32, "L2">) outs(%w : memref<6xf32, "L3">)
  }
  func.return
}

// CHECK-LABEL: func.func @inplace
// CHECK:         %[[WS:.*]] = memref.alloc() : memref<3xf32, "L2">
// CHECK:         scf.for
// CHECK:           %[[F:.*]] = dma.copy %w[%{{.*}}] -> %[[WS]][%{{.*}}] sizes [3] : memref<6xf32, "L3">, memref<3xf32, "L2">
// CHECK-NEXT:      dma.wait %[[F]]
// CHECK:           training.sgd
// CHECK:           dma.copy %{{.*}} -> %[[WS]][%{{.*}}] sizes [3] : memref<3xf32, "L1">, memref<3xf32, "L2">
// CHECK:           %[[S:.*]] = dma.copy %[[WS]][%{{.*}}] -> %w[%{{.*}}] sizes [3] : memref<3xf32, "L2">, memref<6xf32, "L3">
// CHECK-NEXT:      dma.wait %[[S]]
// CHECK-NEXT:    } {tiling.loop = #tiling.loop<stage>}
