// RUN: deeploy-opt %s --split-input-file -p 'tiling-materialize,dma-multibuffer{count=2}' | filecheck %s
// RUN: deeploy-opt %s --split-input-file -p 'tiling-materialize,dma-multibuffer{count=2 levels=l3-only}' | filecheck %s --check-prefix=L3ONLY
// RUN: deeploy-opt %s --split-input-file -p 'tiling-materialize,dma-multibuffer{count=3}' | filecheck %s --check-prefix=COUNT3
// RUN: deeploy-opt %s --split-input-file -p 'tiling-materialize,dma-multibuffer{count=1}' | filecheck %s --check-prefix=COUNT1
// RUN: not deeploy-opt %s -p 'dma-multibuffer{count=0}' 2>&1 | filecheck %s --check-prefix=ERR-COUNT
// RUN: not deeploy-opt %s -p 'dma-multibuffer{levels=l2}' 2>&1 | filecheck %s --check-prefix=ERR-LEVELS

// dma-multibuffer{count=N levels=all|l3-only} (deeploy_mlir/passes/dma_multibuffer.py)
// on the tile loops of tiling-materialize (scf.for {tiling.loop = #tiling.loop<tile>}: copies
// in, their waits, the compute op, copies out, their waits). Most inputs are
// `tiling.tiled` ops that tiling-materialize turns into that loop; a few
// loops tiling-materialize cannot write (ops whose dims all stay whole) are
// written by hand in its form.
//
// The slot views of one iteration (dma.slot) are matched in any order (DAG
// checks); their order is the operand order (dma-multibuffer-order.mlir).

// ERR-COUNT:  {{^}}deeploy-opt: error: dma-multibuffer: count must be at least 1, got 0{{$}}
// ERR-COUNT-NOT: {{.}}
// ERR-LEVELS: {{^}}deeploy-opt: error: pass pipeline: dma-multibuffer: levels must be one of all, l3-only, got 'l2'{{$}}
// ERR-LEVELS-NOT: {{.}}

// =============================================================================
// One input, one output, L2 <-> L1
// =============================================================================
//
// 12 elements in tiles of 4: one tile loop of 3, double buffered.
func.func @relu(%x: memref<12xf32, "L2">, %y: memref<12xf32, "L2">) {
  tiling.tiled tiles [4] {
    training.relu ins(%x : memref<12xf32, "L2">) outs(%y : memref<12xf32, "L2">)
  }
  func.return
}

// Each tile buffer becomes a ring of 2 slots (in place of the tile's alloc),
// each copy a ring of 2 requests (named after the copy's token).
// CHECK-LABEL: func.func @relu
// CHECK-NEXT:    %[[XR:.*]] = memref.alloc() : memref<2x4xf32, "L1">
// CHECK-NEXT:    %[[YR:.*]] = memref.alloc() : memref<2x4xf32, "L1">
// CHECK-NEXT:    %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[STEP:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[RIN:.*]] = dma.request count 2
// CHECK-NEXT:    %[[ROUT:.*]] = dma.request count 2
// Tile 0 is fetched into slot 0 before the loop (the loop's offset
// arithmetic, with index 0).
// CHECK-NEXT:    %[[I0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[FOUR0:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[OFF0:.*]] = arith.muli %[[I0]], %[[FOUR0]] : index
// CHECK-NEXT:    %[[Z0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[S0:.*]] = dma.slot %[[XR]][%[[I0]]] : memref<2x4xf32, "L1"> -> memref<4xf32, "L1">
// CHECK-NEXT:    %{{.*}} = dma.copy %x[%[[OFF0]]] -> %[[S0]][%[[Z0]]] sizes [4] on %[[RIN]][%[[I0]]] : memref<12xf32, "L2">, memref<4xf32, "L1">
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[LB]] to %[[N]] step %[[STEP]] {
// This tile's offset, then its slot i % 2 and the views of both rings.
// CHECK-NEXT:      %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[OFF:.*]] = arith.muli %[[I]], %[[FOUR]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[SLOT:.*]] = arith.remui %[[I]], %[[TWO]] : index
// CHECK-DAG:       %[[XS:.*]] = dma.slot %[[XR]][%[[SLOT]]] : memref<2x4xf32, "L1"> -> memref<4xf32, "L1">
// CHECK-DAG:       %[[YS:.*]] = dma.slot %[[YR]][%[[SLOT]]] : memref<2x4xf32, "L1"> -> memref<4xf32, "L1">
// Tile i's input has landed in its slot ...
// CHECK:           dma.wait %[[RIN]][%[[SLOT]]]
// ... tile i + 1, when there is one, is fetched into slot (i + 1) % 2 ...
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[I]], %[[ONE]] : index
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi ult, %[[NEXT]], %[[N]] : index
// CHECK-NEXT:      scf.if %[[MORE]] {
// CHECK-NEXT:        %[[TWO2:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[NSLOT:.*]] = arith.remui %[[NEXT]], %[[TWO2]] : index
// CHECK-NEXT:        %[[FOUR2:.*]] = arith.constant 4 : index
// CHECK-NEXT:        %[[NOFF:.*]] = arith.muli %[[NEXT]], %[[FOUR2]] : index
// CHECK-NEXT:        %[[Z2:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[NS:.*]] = dma.slot %[[XR]][%[[NSLOT]]] : memref<2x4xf32, "L1"> -> memref<4xf32, "L1">
// CHECK-NEXT:        %{{.*}} = dma.copy %x[%[[NOFF]]] -> %[[NS]][%[[Z2]]] sizes [4] on %[[RIN]][%[[NSLOT]]] : memref<12xf32, "L2">, memref<4xf32, "L1">
// CHECK-NEXT:      }
// ... the output slot's previous write-back (tile i - 2) has landed -- from
// iteration 2 on only: before, nothing was issued on the slot, and a wait on
// a request that never had a transfer is a bug on the board (frees mchan
// transfer id 0; an L3 RAM wait never returns; dma-multibuffer-idle-wait.mlir) ...
// CHECK-NEXT:      %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[USED:.*]] = arith.cmpi uge, %[[I]], %[[C2]] : index
// CHECK-NEXT:      scf.if %[[USED]] {
// CHECK-NEXT:        dma.wait %[[ROUT]][%[[SLOT]]]
// CHECK-NEXT:      }
// ... the kernel runs on the slots ...
// CHECK-NEXT:      training.relu ins(%[[XS]] : memref<4xf32, "L1">) outs(%[[YS]] : memref<4xf32, "L1">)
// ... and tile i is written back without a wait.
// CHECK-NEXT:      %{{.*}} = dma.copy %[[YS]][%[[Z]]] -> %y[%[[OFF]]] sizes [4] on %[[ROUT]][%[[SLOT]]] : memref<4xf32, "L1">, memref<12xf32, "L2">
// CHECK-NEXT:    } {tiling.loop = #tiling.loop<tile>}
// After the loop, both write-back slots are waited for.
// CHECK-NEXT:    %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[K1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    dma.wait %[[ROUT]][%[[K0]]]
// CHECK-NEXT:    dma.wait %[[ROUT]][%[[K1]]]
// CHECK-NEXT:    func.return

// levels=l3-only leaves this L2 <-> L1 loop as tiling-materialize wrote it
// (no remark: the L3 hop is what it is asked to overlap).
// L3ONLY-LABEL: func.func @relu
// L3ONLY-NEXT:    %[[XT:.*]] = memref.alloc() : memref<4xf32, "L1">
// L3ONLY-NEXT:    %[[YT:.*]] = memref.alloc() : memref<4xf32, "L1">
// L3ONLY-NOT:     dma.request
// L3ONLY:         scf.for
// L3ONLY:           %[[IN:.*]] = dma.copy %x[%{{.*}}] -> %[[XT]][%{{.*}}] sizes [4] :
// L3ONLY-NEXT:      dma.wait %[[IN]]
// L3ONLY-NEXT:      training.relu ins(%[[XT]] : memref<4xf32, "L1">) outs(%[[YT]] : memref<4xf32, "L1">)
// L3ONLY-NEXT:      %[[OUT:.*]] = dma.copy %[[YT]][%{{.*}}] -> %y[%{{.*}}] sizes [4] :
// L3ONLY-NEXT:      dma.wait %[[OUT]]
// L3ONLY-NEXT:    } {tiling.loop = #tiling.loop<tile>}
// L3ONLY-NEXT:    func.return

// count=3: rings of 3, slot i % 3, the next tile into (i + 1) % 3. The loop
// has 3 tiles, so no slot is ever written twice: no wait for a previous
// write-back inside the loop at all, and the three slots waited for after it.
// COUNT3-LABEL: func.func @relu
// COUNT3-NEXT:    %[[XR:.*]] = memref.alloc() : memref<3x4xf32, "L1">
// COUNT3-NEXT:    %[[YR:.*]] = memref.alloc() : memref<3x4xf32, "L1">
// COUNT3:         %[[RIN:.*]] = dma.request count 3
// COUNT3-NEXT:    %[[ROUT:.*]] = dma.request count 3
// COUNT3:         scf.for %[[I:.*]] = {{.*}} {
// COUNT3:           %[[THREE:.*]] = arith.constant 3 : index
// COUNT3-NEXT:      %[[SLOT:.*]] = arith.remui %[[I]], %[[THREE]] : index
// COUNT3:           dma.wait %[[RIN]][%[[SLOT]]]
// COUNT3:           scf.if
// COUNT3-NEXT:        arith.constant 3 : index
// COUNT3-NEXT:        arith.remui
// COUNT3-NOT:       dma.wait
// COUNT3:         } {tiling.loop = #tiling.loop<tile>}
// COUNT3-NEXT:    %[[K0:.*]] = arith.constant 0 : index
// COUNT3-NEXT:    %[[K1:.*]] = arith.constant 1 : index
// COUNT3-NEXT:    %[[K2:.*]] = arith.constant 2 : index
// COUNT3-NEXT:    dma.wait %[[ROUT]][%[[K0]]]
// COUNT3-NEXT:    dma.wait %[[ROUT]][%[[K1]]]
// COUNT3-NEXT:    dma.wait %[[ROUT]][%[[K2]]]
// COUNT3-NEXT:    func.return

// count=1 is single buffering: nothing changes.
// COUNT1-LABEL: func.func @relu
// COUNT1-NEXT:    memref.alloc() : memref<4xf32, "L1">
// COUNT1-NEXT:    memref.alloc() : memref<4xf32, "L1">
// COUNT1-NOT:     dma.request
// COUNT1-NOT:     dma.slot
// COUNT1:         } {tiling.loop = #tiling.loop<tile>}
// COUNT1-NEXT:    func.return

// -----

// =============================================================================
// The L3 <-> L2 hop (tiles in L2)
// =============================================================================
//
// Multi-buffered with levels=all and with levels=l3-only alike; the rings
// live in the tile level, L2.
func.func @l3(%x: memref<12xf32, "L3">, %y: memref<12xf32, "L3">) {
  tiling.tiled tiles [4] attributes {level = "L2"} {
    training.relu ins(%x : memref<12xf32, "L3">) outs(%y : memref<12xf32, "L3">)
  }
  func.return
}

// CHECK-LABEL: func.func @l3
// CHECK-NEXT:    %[[XR:.*]] = memref.alloc() : memref<2x4xf32, "L2">
// CHECK-NEXT:    %[[YR:.*]] = memref.alloc() : memref<2x4xf32, "L2">
// CHECK:         %[[RIN:.*]] = dma.request count 2
// CHECK-NEXT:    %[[ROUT:.*]] = dma.request count 2
// CHECK:         dma.copy %x[%{{.*}}] -> %{{.*}}[%{{.*}}] sizes [4] on %[[RIN]][%{{.*}}] : memref<12xf32, "L3">, memref<4xf32, "L2">
// CHECK-NEXT:    scf.for
// CHECK:           dma.wait %[[RIN]][%[[SLOT:.*]]]
// CHECK:           scf.if
// CHECK:             dma.copy %x[%{{.*}}] -> %{{.*}} on %[[RIN]][%{{.*}}] : memref<12xf32, "L3">, memref<4xf32, "L2">
// CHECK:           scf.if
// CHECK-NEXT:        dma.wait %[[ROUT]][%[[SLOT]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      training.relu
// CHECK-NEXT:      dma.copy %{{.*}} -> %y[%{{.*}}] sizes [4] on %[[ROUT]][%[[SLOT]]] : memref<4xf32, "L2">, memref<12xf32, "L3">
// CHECK-NEXT:    } {tiling.loop = #tiling.loop<tile>}

// L3ONLY-LABEL: func.func @l3
// L3ONLY-NEXT:    %[[XR:.*]] = memref.alloc() : memref<2x4xf32, "L2">
// L3ONLY-NEXT:    %[[YR:.*]] = memref.alloc() : memref<2x4xf32, "L2">
// L3ONLY:         %[[RIN:.*]] = dma.request count 2
// L3ONLY-NEXT:    %[[ROUT:.*]] = dma.request count 2
// L3ONLY:         scf.if
// L3ONLY:         } {tiling.loop = #tiling.loop<tile>}
// L3ONLY-NEXT:    arith.constant 0 : index
// L3ONLY-NEXT:    arith.constant 1 : index
// L3ONLY-NEXT:    dma.wait %[[ROUT]]
// L3ONLY-NEXT:    dma.wait %[[ROUT]]

// -----

// =============================================================================
// Several inputs, and a ragged tile after the loop
// =============================================================================
//
// Gemm tiled on N (5 = 2 * 2 + 1): the tile loop of 2 is multi-buffered --
// one ring per tile buffer and one request ring per copy; each iteration
// waits for the inputs of its slot and prefetches those of the next tile.
// The loop has 2 tiles, as many as the ring has slots: no slot is written
// twice, so no wait for a previous write-back inside it. The ragged tile
// (offset 4) is not a loop and stays as it was.
// x's tile is the same box ([0, 0] sizes [2, 3]) in every iteration: its
// copy's offsets do not depend on the loop index, the gemm does not write
// it and no write-back writes %x. It keeps one buffer (no ring), fetched once
// before the loop and waited once after tile 0's fetches are issued -- where
// single buffering fetches it again in each iteration.
func.func @gemm(%x: memref<2x3xf32, "L2">, %w: memref<5x3xf32, "L2">, %b: memref<5xf32, "L2">, %y: memref<2x5xf32, "L2">) {
  tiling.tiled tiles [2, 2, 3] {
    training.gemm ins(%x, %w, %b : memref<2x3xf32, "L2">, memref<5x3xf32, "L2">, memref<5xf32, "L2">) outs(%y : memref<2x5xf32, "L2">) {trans_b}
  }
  func.return
}

// CHECK-LABEL: func.func @gemm
// CHECK-NEXT:    %[[XT0:.*]] = memref.alloc() : memref<2x3xf32, "L1">
// CHECK-NEXT:    %[[WR:.*]] = memref.alloc() : memref<2x2x3xf32, "L1">
// CHECK-NEXT:    %[[BR:.*]] = memref.alloc() : memref<2x2xf32, "L1">
// CHECK-NEXT:    %[[YR:.*]] = memref.alloc() : memref<2x2x2xf32, "L1">
// CHECK-NEXT:    arith.constant 0 : index
// CHECK-NEXT:    %[[N:.*]] = arith.constant 2 : index
// CHECK-NEXT:    arith.constant 1 : index
// x once, on its own request (the offset constant cloned before the loop).
// CHECK-NEXT:    %[[XZ:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[XIN:.*]] = dma.copy %x[%[[XZ]], %[[XZ]]] -> %[[XT0]][%[[XZ]], %[[XZ]]] sizes [2, 3] : memref<2x3xf32, "L2">, memref<2x3xf32, "L1">
// CHECK-NEXT:    %[[RW:.*]] = dma.request count 2
// CHECK-NEXT:    %[[RB:.*]] = dma.request count 2
// CHECK-NEXT:    %[[RY:.*]] = dma.request count 2
// Tile 0 of the other inputs into slot 0, then the wait for x.
// CHECK-NEXT:    %[[I0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[T0:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[OFF0:.*]] = arith.muli %[[I0]], %[[T0]] : index
// CHECK-NEXT:    %[[Z0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[W0:.*]] = dma.slot %[[WR]][%[[I0]]]
// CHECK-NEXT:    dma.copy %w[%[[OFF0]], %[[Z0]]] -> %[[W0]][%[[Z0]], %[[Z0]]] sizes [2, 3] on %[[RW]][%[[I0]]]
// CHECK-NEXT:    %[[B0:.*]] = dma.slot %[[BR]][%[[I0]]]
// CHECK-NEXT:    dma.copy %b[%[[OFF0]]] -> %[[B0]][%[[Z0]]] sizes [2] on %[[RB]][%[[I0]]]
// CHECK-NEXT:    dma.wait %[[XIN]]
// CHECK-NEXT:    scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT:      arith.constant 2 : index
// CHECK-NEXT:      %[[OFF:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      arith.constant 2 : index
// CHECK-NEXT:      %[[SLOT:.*]] = arith.remui %[[I]], %{{.*}} : index
// CHECK-DAG:       %[[WS:.*]] = dma.slot %[[WR]][%[[SLOT]]] : memref<2x2x3xf32, "L1"> -> memref<2x3xf32, "L1">
// CHECK-DAG:       %[[BS:.*]] = dma.slot %[[BR]][%[[SLOT]]] : memref<2x2xf32, "L1"> -> memref<2xf32, "L1">
// CHECK-DAG:       %[[YS:.*]] = dma.slot %[[YR]][%[[SLOT]]] : memref<2x2x2xf32, "L1"> -> memref<2x2xf32, "L1">
// CHECK:           dma.wait %[[RW]][%[[SLOT]]]
// CHECK-NEXT:      dma.wait %[[RB]][%[[SLOT]]]
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[I]], %[[ONE]] : index
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi ult, %[[NEXT]], %[[N]] : index
// CHECK-NEXT:      scf.if %[[MORE]] {
// CHECK-NEXT:        arith.constant 2 : index
// CHECK-NEXT:        %[[NSLOT:.*]] = arith.remui %[[NEXT]], %{{.*}} : index
// CHECK-NEXT:        arith.constant 2 : index
// CHECK-NEXT:        %[[NOFF:.*]] = arith.muli %[[NEXT]], %{{.*}} : index
// CHECK-NEXT:        %[[NZ:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[WN:.*]] = dma.slot %[[WR]][%[[NSLOT]]]
// CHECK-NEXT:        dma.copy %w[%[[NOFF]], %[[NZ]]] -> %[[WN]][%[[NZ]], %[[NZ]]] sizes [2, 3] on %[[RW]][%[[NSLOT]]]
// CHECK-NEXT:        %[[BN:.*]] = dma.slot %[[BR]][%[[NSLOT]]]
// CHECK-NEXT:        dma.copy %b[%[[NOFF]]] -> %[[BN]][%[[NZ]]] sizes [2] on %[[RB]][%[[NSLOT]]]
// CHECK-NEXT:      }
// x's one tile beside the slots.
// CHECK-NEXT:      training.gemm ins(%[[XT0]], %[[WS]], %[[BS]] : memref<2x3xf32, "L1">, memref<2x3xf32, "L1">, memref<2xf32, "L1">) outs(%[[YS]] : memref<2x2xf32, "L1">) {trans_b}
// CHECK-NEXT:      dma.copy %[[YS]][%[[Z]], %[[Z]]] -> %y[%[[Z]], %[[OFF]]] sizes [2, 2] on %[[RY]][%[[SLOT]]]
// CHECK-NEXT:    } {tiling.loop = #tiling.loop<tile>}
// CHECK-NEXT:    %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[K1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    dma.wait %[[RY]][%[[K0]]]
// CHECK-NEXT:    dma.wait %[[RY]][%[[K1]]]
// The ragged tile: single-buffered, as tiling-materialize wrote it.
// CHECK-NEXT:    %[[XT:.*]] = memref.alloc() : memref<2x3xf32, "L1">
// CHECK-NEXT:    memref.alloc() : memref<1x3xf32, "L1">
// CHECK-NEXT:    memref.alloc() : memref<1xf32, "L1">
// CHECK-NEXT:    memref.alloc() : memref<2x1xf32, "L1">
// CHECK-NEXT:    arith.constant 0 : index
// CHECK-NEXT:    %[[XI:.*]] = dma.copy %x[{{.*}}] -> %[[XT]][{{.*}}] sizes [2, 3] : memref<2x3xf32, "L2">, memref<2x3xf32, "L1">
// CHECK-NOT:     dma.request
// CHECK:         dma.wait %[[XI]]
// CHECK:         training.gemm
// CHECK-NEXT:    %[[YO:.*]] = dma.copy
// CHECK-NEXT:    dma.wait %[[YO]]
// CHECK-NEXT:    func.return

// -----

// =============================================================================
// Refusals: the loop stays single-buffered, with a dma.remark saying why
// =============================================================================
//
// With levels=l3-only none of these L2 <-> L1 loops is looked at: no remark.

// SGD writes the weight it reads (output #0 is input #0's tile).
func.func @sgd(%w: memref<8xf32, "L2">, %g: memref<8xf32, "L2">, %lr: memref<1xf32, "L2">) {
  tiling.tiled tiles [4] {
    training.sgd ins(%w, %g, %lr : memref<8xf32, "L2">, memref<8xf32, "L2">, memref<1xf32, "L2">) outs(%w : memref<8xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @sgd
// CHECK-NOT:     dma.request
// CHECK-NOT:     dma.slot
// CHECK:         %[[WT:.*]] = memref.alloc() : memref<4xf32, "L1">
// CHECK:           %[[WI:.*]] = dma.copy %w[%{{.*}}] -> %[[WT]]
// CHECK:           dma.wait %[[WI]]
// CHECK:           training.sgd ins(%[[WT]], %{{.*}}, %{{.*}} : memref<4xf32, "L1">, memref<4xf32, "L1">, memref<1xf32, "L1">) outs(%[[WT]] : memref<4xf32, "L1">)
// CHECK-NEXT:      %[[WO:.*]] = dma.copy %[[WT]][%{{.*}}] -> %w
// CHECK-NEXT:      dma.wait %[[WO]]
// CHECK-NEXT:    } {tiling.loop = #tiling.loop<tile>, dma.remark = "dma-multibuffer: training.sgd writing %w keeps single buffering: its output #0 aliases input #0 (written in place)"}

// L3ONLY-LABEL: func.func @sgd
// L3ONLY-NOT:     dma.request
// L3ONLY:         } {tiling.loop = #tiling.loop<tile>}
// L3ONLY-NEXT:    func.return

// Gradient accumulation writes its buffer in place too.
func.func @accumulate(%buf: memref<8xf32, "L2">, %g: memref<8xf32, "L2">, %reset: memref<1xi1, "L2">) {
  tiling.tiled tiles [4] {
    training.accumulate ins(%buf, %g, %reset : memref<8xf32, "L2">, memref<8xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<8xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @accumulate
// CHECK-NOT:     dma.request
// CHECK:         } {tiling.loop = #tiling.loop<tile>, dma.remark = "dma-multibuffer: training.accumulate writing %buf keeps single buffering: its output #0 aliases input #0 (written in place)"}

// L3ONLY-LABEL: func.func @accumulate
// L3ONLY:         } {tiling.loop = #tiling.loop<tile>}
// L3ONLY-NEXT:    func.return

// A scalar in the pattern: the broadcast factor %s of x * s. Its copy would be
// one element per tile; the whole pattern stays single-buffered.
func.func @scale(%s: memref<f32, "L2">, %x: memref<8xf32, "L2">, %y: memref<8xf32, "L2">) {
  tiling.tiled tiles [4] {
    training.binary ins(%s, %x : memref<f32, "L2">, memref<8xf32, "L2">) outs(%y : memref<8xf32, "L2">) {kind = "mul"}
  }
  func.return
}

// CHECK-LABEL: func.func @scale
// CHECK-NOT:     dma.request
// CHECK:           dma.copy %s[] -> %{{.*}}[] sizes [] : memref<f32, "L2">, memref<f32, "L1">
// CHECK:         } {tiling.loop = #tiling.loop<tile>, dma.remark = "dma-multibuffer: training.binary writing %y: the whole pattern falls back to single buffering: %s is a scalar"}

// L3ONLY-LABEL: func.func @scale
// L3ONLY:         } {tiling.loop = #tiling.loop<tile>}
// L3ONLY-NEXT:    func.return

// Softmax cross-entropy loss writes a scalar (the loss) and the log-probs.
// Both of its dims stay whole, so tiling-materialize never puts it in a loop;
// this loop over two batch halves is written by hand in tiling-materialize's
// form to reach the rule. Of the rules it breaks (two outputs in different
// buffers; a scalar tensor), the outputs rule is checked first and reported.
func.func @sce(%s: memref<4x10xf32, "L2">, %l: memref<4xi64, "L2">, %loss: memref<f32, "L2">, %lp: memref<4x10xf32, "L2">) {
  %s_tile = memref.alloc() : memref<2x10xf32, "L1">
  %l_tile = memref.alloc() : memref<2xi64, "L1">
  %loss_tile = memref.alloc() : memref<f32, "L1">
  %lp_tile = memref.alloc() : memref<2x10xf32, "L1">
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %t = arith.constant 2 : index
    %off = arith.muli %i, %t : index
    %z = arith.constant 0 : index
    %s_in = dma.copy %s[%off, %z] -> %s_tile[%z, %z] sizes [2, 10] : memref<4x10xf32, "L2">, memref<2x10xf32, "L1">
    %l_in = dma.copy %l[%off] -> %l_tile[%z] sizes [2] : memref<4xi64, "L2">, memref<2xi64, "L1">
    dma.wait %s_in
    dma.wait %l_in
    training.softmax_cross_entropy_loss ins(%s_tile, %l_tile : memref<2x10xf32, "L1">, memref<2xi64, "L1">) outs(%loss_tile, %lp_tile : memref<f32, "L1">, memref<2x10xf32, "L1">)
    %loss_out = dma.copy %loss_tile[] -> %loss[] sizes [] : memref<f32, "L1">, memref<f32, "L2">
    %lp_out = dma.copy %lp_tile[%z, %z] -> %lp[%off, %z] sizes [2, 10] : memref<2x10xf32, "L1">, memref<4x10xf32, "L2">
    dma.wait %loss_out
    dma.wait %lp_out
  } {tiling.loop = #tiling.loop<tile>}
  func.return
}

// CHECK-LABEL: func.func @sce
// CHECK-NOT:     dma.request
// CHECK:         } {tiling.loop = #tiling.loop<tile>, dma.remark = "dma-multibuffer: training.softmax_cross_entropy_loss writing %loss keeps single buffering: its 2 outputs live in different buffers that different consumers free"}

// L3ONLY-LABEL: func.func @sce
// L3ONLY:         } {tiling.loop = #tiling.loop<tile>}
// L3ONLY-NEXT:    func.return

// Its gradient reads the scalar upstream gradient dY: the scalar rule.
// (By hand as well, for the same reason.)
func.func @sce_grad(%dy: memref<f32, "L2">, %lp: memref<4x10xf32, "L2">, %l: memref<4xi64, "L2">, %dx: memref<4x10xf32, "L2">) {
  %dy_tile = memref.alloc() : memref<f32, "L1">
  %lp_tile = memref.alloc() : memref<2x10xf32, "L1">
  %l_tile = memref.alloc() : memref<2xi64, "L1">
  %dx_tile = memref.alloc() : memref<2x10xf32, "L1">
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %t = arith.constant 2 : index
    %off = arith.muli %i, %t : index
    %z = arith.constant 0 : index
    %dy_in = dma.copy %dy[] -> %dy_tile[] sizes [] : memref<f32, "L2">, memref<f32, "L1">
    %lp_in = dma.copy %lp[%off, %z] -> %lp_tile[%z, %z] sizes [2, 10] : memref<4x10xf32, "L2">, memref<2x10xf32, "L1">
    %l_in = dma.copy %l[%off] -> %l_tile[%z] sizes [2] : memref<4xi64, "L2">, memref<2xi64, "L1">
    dma.wait %dy_in
    dma.wait %lp_in
    dma.wait %l_in
    training.softmax_cross_entropy_loss_grad ins(%dy_tile, %lp_tile, %l_tile : memref<f32, "L1">, memref<2x10xf32, "L1">, memref<2xi64, "L1">) outs(%dx_tile : memref<2x10xf32, "L1">)
    %dx_out = dma.copy %dx_tile[%z, %z] -> %dx[%off, %z] sizes [2, 10] : memref<2x10xf32, "L1">, memref<4x10xf32, "L2">
    dma.wait %dx_out
  } {tiling.loop = #tiling.loop<tile>}
  func.return
}

// CHECK-LABEL: func.func @sce_grad
// CHECK-NOT:     dma.request
// CHECK:         } {tiling.loop = #tiling.loop<tile>, dma.remark = "dma-multibuffer: training.softmax_cross_entropy_loss_grad writing %dx: the whole pattern falls back to single buffering: %dy is a scalar"}

// L3ONLY-LABEL: func.func @sce_grad
// L3ONLY:         } {tiling.loop = #tiling.loop<tile>}
// L3ONLY-NEXT:    func.return

// A tile loop must hold exactly one compute op (by hand: two kernels).
func.func @two(%x: memref<8xf32, "L2">, %y: memref<8xf32, "L2">) {
  %x_tile = memref.alloc() : memref<4xf32, "L1">
  %y_tile = memref.alloc() : memref<4xf32, "L1">
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %t = arith.constant 4 : index
    %off = arith.muli %i, %t : index
    %z = arith.constant 0 : index
    %x_in = dma.copy %x[%off] -> %x_tile[%z] sizes [4] : memref<8xf32, "L2">, memref<4xf32, "L1">
    dma.wait %x_in
    training.relu ins(%x_tile : memref<4xf32, "L1">) outs(%y_tile : memref<4xf32, "L1">)
    training.relu ins(%y_tile : memref<4xf32, "L1">) outs(%x_tile : memref<4xf32, "L1">)
    %y_out = dma.copy %x_tile[%z] -> %y[%off] sizes [4] : memref<4xf32, "L1">, memref<8xf32, "L2">
    dma.wait %y_out
  } {tiling.loop = #tiling.loop<tile>}
  func.return
}

// CHECK-LABEL: func.func @two
// CHECK-NOT:     dma.request
// CHECK:         } {tiling.loop = #tiling.loop<tile>, dma.remark = "dma-multibuffer: the loop does not hold exactly one compute op"}

// L3ONLY-LABEL: func.func @two
// L3ONLY:         } {tiling.loop = #tiling.loop<tile>}
// L3ONLY-NEXT:    func.return
