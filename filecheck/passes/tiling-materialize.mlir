// RUN: deeploy-opt %s -p tiling-materialize | filecheck %s

// tiling-materialize (deeploy_mlir/passes/tiling_materialize.py): each
// `tiling.tiled` becomes, per variant (every combination of the full-tile part
// and the ragged remainder of each tiled dim), its own static tile buffers
// (memref.alloc in the tile level, L1 by default) and one scf.for over the
// variant's tiles, marked {tiling.loop = #tiling.loop<tile>}, whose index splits into the
// per-dim tile indices with arith.remui / arith.divui (innermost dim fastest).
// A variant of one tile has no loop. Per tile: every input tile copied in
// (dma.copy, asynchronous), then the waits of all of them, the compute op on
// the tile buffers, every output tile copied out, then their waits.

// =============================================================================
// One dim, with a ragged last tile
// =============================================================================
//
// 10 elements in tiles of 4: 10 = 2 * 4 + 2. A loop over the 2 full tiles
// (offset i * 4), then the remainder of 2 at offset 8 -- one tile, no loop --
// each with its own static buffers.
func.func @ragged(%x: memref<10xf32, "L2">, %y: memref<10xf32, "L2">) {
  tiling.tiled tiles [4] {
    training.relu ins(%x : memref<10xf32, "L2">) outs(%y : memref<10xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @ragged
// CHECK-NEXT:    %[[XT:.*]] = memref.alloc() : memref<4xf32, "L1">
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
// CHECK-NEXT:    } {tiling.loop = #tiling.loop<tile>}
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

// =============================================================================
// Two tiled dims: one loop, its index split
// =============================================================================
//
// 6x4 in tiles of 2x2: 3 row tiles x 2 column tiles = 6 tiles, one loop of 6.
// The column (inner) tile is i % 2 (remui: 2 < 6 tiles); the row tile is
// i / 2 (divui by the 2 column tiles, and no remui: 2 * 3 = 6 covers the loop).
func.func @grid(%x: memref<6x4xf32, "L2">, %y: memref<6x4xf32, "L2">) {
  tiling.tiled tiles [2, 2] {
    training.relu ins(%x : memref<6x4xf32, "L2">) outs(%y : memref<6x4xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @grid
// CHECK-NEXT:    %[[XT:.*]] = memref.alloc() : memref<2x2xf32, "L1">
// CHECK-NEXT:    %[[YT:.*]] = memref.alloc() : memref<2x2xf32, "L1">
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    %[[UB:.*]] = arith.constant 6 : index
// CHECK-NEXT:    %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %{{.*}} to %[[UB]] step %{{.*}} {
// CHECK-NEXT:      %[[NC:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[COL:.*]] = arith.remui %[[I]], %[[NC]] : index
// CHECK-NEXT:      %[[TC:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[COFF:.*]] = arith.muli %[[COL]], %[[TC]] : index
// CHECK-NEXT:      %[[NC2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.divui %[[I]], %[[NC2]] : index
// CHECK-NEXT:      %[[TR:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[ROFF:.*]] = arith.muli %[[ROW]], %[[TR]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[IN:.*]] = dma.copy %x[%[[ROFF]], %[[COFF]]] -> %[[XT]][%[[Z]], %[[Z]]] sizes [2, 2] : memref<6x4xf32, "L2">, memref<2x2xf32, "L1">
// CHECK-NEXT:      dma.wait %[[IN]]
// CHECK-NEXT:      training.relu ins(%[[XT]] : memref<2x2xf32, "L1">) outs(%[[YT]] : memref<2x2xf32, "L1">)
// CHECK-NEXT:      %[[OUT:.*]] = dma.copy %[[YT]][%[[Z]], %[[Z]]] -> %y[%[[ROFF]], %[[COFF]]] sizes [2, 2] : memref<2x2xf32, "L1">, memref<6x4xf32, "L2">
// CHECK-NEXT:      dma.wait %[[OUT]]
// CHECK-NEXT:    } {tiling.loop = #tiling.loop<tile>}
// CHECK-NEXT:    func.return

// =============================================================================
// Three tiled dims: the middle one needs divui and remui
// =============================================================================
//
// 2x3x4 in tiles of 1x1x2: 2 x 3 x 2 = 12 tiles. Innermost first:
//   dim 2: i % 2, times 2
//   dim 1: (i / 2) % 3 (2 * 3 = 6 < 12 tiles), times 1
//   dim 0: i / 6 (6 * 2 = 12: no remui), times 1
func.func @cube(%x: memref<2x3x4xf32, "L2">, %y: memref<2x3x4xf32, "L2">) {
  tiling.tiled tiles [1, 1, 2] {
    training.relu ins(%x : memref<2x3x4xf32, "L2">) outs(%y : memref<2x3x4xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @cube
// CHECK:         %[[UB:.*]] = arith.constant 12 : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[UB]] step %{{.*}} {
// CHECK-NEXT:      %[[C2A:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[I2:.*]] = arith.remui %[[I]], %[[C2A]] : index
// CHECK-NEXT:      %[[C2B:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[O2:.*]] = arith.muli %[[I2]], %[[C2B]] : index
// CHECK-NEXT:      %[[C2C:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[Q1:.*]] = arith.divui %[[I]], %[[C2C]] : index
// CHECK-NEXT:      %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[I1:.*]] = arith.remui %[[Q1]], %[[C3]] : index
// CHECK-NEXT:      %[[C1A:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[O1:.*]] = arith.muli %[[I1]], %[[C1A]] : index
// CHECK-NEXT:      %[[C6:.*]] = arith.constant 6 : index
// CHECK-NEXT:      %[[I0:.*]] = arith.divui %[[I]], %[[C6]] : index
// CHECK-NEXT:      %[[C1B:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[O0:.*]] = arith.muli %[[I0]], %[[C1B]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %{{.*}} = dma.copy %x[%[[O0]], %[[O1]], %[[O2]]] -> %{{.*}}[%[[Z]], %[[Z]], %[[Z]]] sizes [1, 1, 2] : memref<2x3x4xf32, "L2">, memref<1x1x2xf32, "L1">
// CHECK:           dma.copy %{{.*}}[%[[Z]], %[[Z]], %[[Z]]] -> %y[%[[O0]], %[[O1]], %[[O2]]] sizes [1, 1, 2]
// CHECK:         } {tiling.loop = #tiling.loop<tile>}

// =============================================================================
// Ragged in both dims: four variants
// =============================================================================
//
// 5x5 in tiles of 2x2: each dim is 2 full tiles (offsets 0, 2) and a ragged
// tile of 1 at offset 4. The variants, rows outer:
//   full x full:     2 x 2 = 4 tiles of 2x2, one loop of 4 (col i % 2, row i / 2)
//   full x ragged:   2 tiles of 2x1 at column 4, a loop of 2 over the rows
//   ragged x full:   2 tiles of 1x2 at row 4, a loop of 2 over the columns
//   ragged x ragged: the 1x1 corner at (4, 4), no loop
func.func @ragged2d(%x: memref<5x5xf32, "L2">, %y: memref<5x5xf32, "L2">) {
  tiling.tiled tiles [2, 2] {
    training.relu ins(%x : memref<5x5xf32, "L2">) outs(%y : memref<5x5xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @ragged2d
// CHECK-NEXT:    %[[XA:.*]] = memref.alloc() : memref<2x2xf32, "L1">
// CHECK-NEXT:    %{{.*}} = memref.alloc() : memref<2x2xf32, "L1">
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    %[[UBA:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[IA:.*]] = %{{.*}} to %[[UBA]] step %{{.*}} {
// CHECK-NEXT:      arith.constant 2 : index
// CHECK-NEXT:      %[[CA:.*]] = arith.remui %[[IA]], %{{.*}} : index
// CHECK-NEXT:      arith.constant 2 : index
// CHECK-NEXT:      %[[COA:.*]] = arith.muli %[[CA]], %{{.*}} : index
// CHECK-NEXT:      arith.constant 2 : index
// CHECK-NEXT:      %[[RA:.*]] = arith.divui %[[IA]], %{{.*}} : index
// CHECK-NEXT:      arith.constant 2 : index
// CHECK-NEXT:      %[[ROA:.*]] = arith.muli %[[RA]], %{{.*}} : index
// CHECK-NEXT:      %[[ZA:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %{{.*}} = dma.copy %x[%[[ROA]], %[[COA]]] -> %[[XA]][%[[ZA]], %[[ZA]]] sizes [2, 2] :
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
// CHECK-NEXT:    %[[XB:.*]] = memref.alloc() : memref<2x1xf32, "L1">
// CHECK-NEXT:    %{{.*}} = memref.alloc() : memref<2x1xf32, "L1">
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    %[[UBB:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[IB:.*]] = %{{.*}} to %[[UBB]] step %{{.*}} {
// CHECK-NEXT:      arith.constant 2 : index
// CHECK-NEXT:      %[[ROB:.*]] = arith.muli %[[IB]], %{{.*}} : index
// CHECK-NEXT:      %[[ZB:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[FOURB:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %{{.*}} = dma.copy %x[%[[ROB]], %[[FOURB]]] -> %[[XB]][%[[ZB]], %[[ZB]]] sizes [2, 1] :
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
// CHECK-NEXT:    %[[XC:.*]] = memref.alloc() : memref<1x2xf32, "L1">
// CHECK-NEXT:    %{{.*}} = memref.alloc() : memref<1x2xf32, "L1">
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    %[[UBC:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[IC:.*]] = %{{.*}} to %[[UBC]] step %{{.*}} {
// CHECK-NEXT:      arith.constant 2 : index
// CHECK-NEXT:      %[[COC:.*]] = arith.muli %[[IC]], %{{.*}} : index
// CHECK-NEXT:      %[[ZC:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[FOURC:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %{{.*}} = dma.copy %x[%[[FOURC]], %[[COC]]] -> %[[XC]][%[[ZC]], %[[ZC]]] sizes [1, 2] :
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
// CHECK-NEXT:    %[[XD:.*]] = memref.alloc() : memref<1x1xf32, "L1">
// CHECK-NEXT:    %[[YD:.*]] = memref.alloc() : memref<1x1xf32, "L1">
// CHECK-NEXT:    %[[ZD:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[FOURD:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[IND:.*]] = dma.copy %x[%[[FOURD]], %[[FOURD]]] -> %[[XD]][%[[ZD]], %[[ZD]]] sizes [1, 1] : memref<5x5xf32, "L2">, memref<1x1xf32, "L1">
// CHECK-NEXT:    dma.wait %[[IND]]
// CHECK-NEXT:    training.relu ins(%[[XD]] : memref<1x1xf32, "L1">) outs(%[[YD]] : memref<1x1xf32, "L1">)
// CHECK-NEXT:    %[[OUTD:.*]] = dma.copy %[[YD]][%[[ZD]], %[[ZD]]] -> %y[%[[FOURD]], %[[FOURD]]] sizes [1, 1] : memref<1x1xf32, "L1">, memref<5x5xf32, "L2">
// CHECK-NEXT:    dma.wait %[[OUTD]]
// CHECK-NEXT:    func.return

// =============================================================================
// Several operands: all inputs in flight before the first wait
// =============================================================================
//
// Gemm Y[2x5] = X[2x3] W[5x3]^T + B[5], tiles [M=2, N=2, K=3]: only N is cut,
// 5 = 2 * 2 + 1. The X tile is the whole X at (0, 0) on every tile; W's rows
// and B follow N (offset n * 2); Y's columns follow N. The three input copies
// are issued together, then waited for; the ragged N tile of 1 (offset 4)
// follows without a loop.
func.func @gemm(%x: memref<2x3xf32, "L2">, %w: memref<5x3xf32, "L2">, %b: memref<5xf32, "L2">, %y: memref<2x5xf32, "L2">) {
  tiling.tiled tiles [2, 2, 3] {
    training.gemm ins(%x, %w, %b : memref<2x3xf32, "L2">, memref<5x3xf32, "L2">, memref<5xf32, "L2">) outs(%y : memref<2x5xf32, "L2">) {trans_b}
  }
  func.return
}

// CHECK-LABEL: func.func @gemm
// CHECK-NEXT:    %[[XT:.*]] = memref.alloc() : memref<2x3xf32, "L1">
// CHECK-NEXT:    %[[WT:.*]] = memref.alloc() : memref<2x3xf32, "L1">
// CHECK-NEXT:    %[[BT:.*]] = memref.alloc() : memref<2xf32, "L1">
// CHECK-NEXT:    %[[YT:.*]] = memref.alloc() : memref<2x2xf32, "L1">
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    %[[UB:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[N:.*]] = %{{.*}} to %[[UB]] step %{{.*}} {
// CHECK-NEXT:      %[[TN:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[NOFF:.*]] = arith.muli %[[N]], %[[TN]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[XI:.*]] = dma.copy %x[%[[Z]], %[[Z]]] -> %[[XT]][%[[Z]], %[[Z]]] sizes [2, 3] : memref<2x3xf32, "L2">, memref<2x3xf32, "L1">
// CHECK-NEXT:      %[[WI:.*]] = dma.copy %w[%[[NOFF]], %[[Z]]] -> %[[WT]][%[[Z]], %[[Z]]] sizes [2, 3] : memref<5x3xf32, "L2">, memref<2x3xf32, "L1">
// CHECK-NEXT:      %[[BI:.*]] = dma.copy %b[%[[NOFF]]] -> %[[BT]][%[[Z]]] sizes [2] : memref<5xf32, "L2">, memref<2xf32, "L1">
// CHECK-NEXT:      dma.wait %[[XI]]
// CHECK-NEXT:      dma.wait %[[WI]]
// CHECK-NEXT:      dma.wait %[[BI]]
// CHECK-NEXT:      training.gemm ins(%[[XT]], %[[WT]], %[[BT]] : memref<2x3xf32, "L1">, memref<2x3xf32, "L1">, memref<2xf32, "L1">) outs(%[[YT]] : memref<2x2xf32, "L1">) {trans_b}
// CHECK-NEXT:      %[[YO:.*]] = dma.copy %[[YT]][%[[Z]], %[[Z]]] -> %y[%[[Z]], %[[NOFF]]] sizes [2, 2] : memref<2x2xf32, "L1">, memref<2x5xf32, "L2">
// CHECK-NEXT:      dma.wait %[[YO]]
// CHECK-NEXT:    } {tiling.loop = #tiling.loop<tile>}
// CHECK-NEXT:    %[[XR:.*]] = memref.alloc() : memref<2x3xf32, "L1">
// CHECK-NEXT:    %[[WR:.*]] = memref.alloc() : memref<1x3xf32, "L1">
// CHECK-NEXT:    %[[BR:.*]] = memref.alloc() : memref<1xf32, "L1">
// CHECK-NEXT:    %[[YR:.*]] = memref.alloc() : memref<2x1xf32, "L1">
// CHECK-NEXT:    %[[Z2:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[XI2:.*]] = dma.copy %x[%[[Z2]], %[[Z2]]] -> %[[XR]][%[[Z2]], %[[Z2]]] sizes [2, 3] :
// CHECK-NEXT:    %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[WI2:.*]] = dma.copy %w[%[[FOUR]], %[[Z2]]] -> %[[WR]][%[[Z2]], %[[Z2]]] sizes [1, 3] :
// CHECK-NEXT:    %[[BI2:.*]] = dma.copy %b[%[[FOUR]]] -> %[[BR]][%[[Z2]]] sizes [1] :
// CHECK-NEXT:    dma.wait %[[XI2]]
// CHECK-NEXT:    dma.wait %[[WI2]]
// CHECK-NEXT:    dma.wait %[[BI2]]
// CHECK-NEXT:    training.gemm ins(%[[XR]], %[[WR]], %[[BR]] : memref<2x3xf32, "L1">, memref<1x3xf32, "L1">, memref<1xf32, "L1">) outs(%[[YR]] : memref<2x1xf32, "L1">) {trans_b}
// CHECK-NEXT:    %[[YO2:.*]] = dma.copy %[[YR]][%[[Z2]], %[[Z2]]] -> %y[%[[Z2]], %[[FOUR]]] sizes [2, 1] :
// CHECK-NEXT:    dma.wait %[[YO2]]
// CHECK-NEXT:    func.return

// =============================================================================
// Broadcast, scalar and in-place operands; a single tile
// =============================================================================
//
// %b (1x4) broadcasts over the rows of 6x4 tiled [2, 4]: its row dim maps to no
// loop dim, so its tile is 1x4 at (0, 0) on every tile. The scalar %s is a
// rank-0 tile, copied with no offsets. %y read and written in place (same
// value, same map) is one L1 buffer, copied in and out. Tiles equal to the
// whole tensor: one tile, no loop, no #tiling.loop<tile>.
func.func @operands(%x: memref<6x4xf32, "L2">, %b: memref<1x4xf32, "L2">, %s: memref<f32, "L2">, %y: memref<6x4xf32, "L2">) {
  tiling.tiled tiles [2, 4] {
    training.binary ins(%x, %b : memref<6x4xf32, "L2">, memref<1x4xf32, "L2">) outs(%y : memref<6x4xf32, "L2">) {kind = "add"}
  }
  tiling.tiled tiles [3, 4] {
    training.binary ins(%s, %y : memref<f32, "L2">, memref<6x4xf32, "L2">) outs(%y : memref<6x4xf32, "L2">) {kind = "mul"}
  }
  tiling.tiled tiles [6, 4] {
    training.relu ins(%y : memref<6x4xf32, "L2">) outs(%x : memref<6x4xf32, "L2">)
  }
  func.return
}

// CHECK-LABEL: func.func @operands
// CHECK-NEXT:    %[[XT:.*]] = memref.alloc() : memref<2x4xf32, "L1">
// CHECK-NEXT:    %[[BT:.*]] = memref.alloc() : memref<1x4xf32, "L1">
// CHECK-NEXT:    %[[YT:.*]] = memref.alloc() : memref<2x4xf32, "L1">
// CHECK:         scf.for %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      %{{.*}} = arith.constant 2 : index
// CHECK-NEXT:      %[[ROFF:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[XI:.*]] = dma.copy %x[%[[ROFF]], %[[Z]]] -> %[[XT]][%[[Z]], %[[Z]]] sizes [2, 4] :
// CHECK-NEXT:      %[[BI:.*]] = dma.copy %b[%[[Z]], %[[Z]]] -> %[[BT]][%[[Z]], %[[Z]]] sizes [1, 4] : memref<1x4xf32, "L2">, memref<1x4xf32, "L1">
// CHECK-NEXT:      dma.wait %[[XI]]
// CHECK-NEXT:      dma.wait %[[BI]]
// CHECK-NEXT:      training.binary ins(%[[XT]], %[[BT]] : memref<2x4xf32, "L1">, memref<1x4xf32, "L1">) outs(%[[YT]] : memref<2x4xf32, "L1">) {kind = "add"}
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
// CHECK-NEXT:    %[[ST:.*]] = memref.alloc() : memref<f32, "L1">
// CHECK-NEXT:    %[[YT2:.*]] = memref.alloc() : memref<3x4xf32, "L1">
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %[[J:.*]] = {{.*}} {
// CHECK-NEXT:      %{{.*}} = arith.constant 3 : index
// CHECK-NEXT:      %[[ROFF2:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK-NEXT:      %[[Z2:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[SI:.*]] = dma.copy %s[] -> %[[ST]][] sizes [] : memref<f32, "L2">, memref<f32, "L1">
// CHECK-NEXT:      %[[YI:.*]] = dma.copy %y[%[[ROFF2]], %[[Z2]]] -> %[[YT2]][%[[Z2]], %[[Z2]]] sizes [3, 4] :
// CHECK-NEXT:      dma.wait %[[SI]]
// CHECK-NEXT:      dma.wait %[[YI]]
// CHECK-NEXT:      training.binary ins(%[[ST]], %[[YT2]] : memref<f32, "L1">, memref<3x4xf32, "L1">) outs(%[[YT2]] : memref<3x4xf32, "L1">) {kind = "mul"}
// CHECK-NEXT:      %[[YO:.*]] = dma.copy %[[YT2]][%[[Z2]], %[[Z2]]] -> %y[%[[ROFF2]], %[[Z2]]] sizes [3, 4] :
// CHECK-NEXT:      dma.wait %[[YO]]
// CHECK-NEXT:    } {tiling.loop = #tiling.loop<tile>}
// CHECK-NEXT:    %[[YW:.*]] = memref.alloc() : memref<6x4xf32, "L1">
// CHECK-NEXT:    %[[XW:.*]] = memref.alloc() : memref<6x4xf32, "L1">
// CHECK-NEXT:    %[[Z3:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[IN:.*]] = dma.copy %y[%[[Z3]], %[[Z3]]] -> %[[YW]][%[[Z3]], %[[Z3]]] sizes [6, 4] :
// CHECK-NEXT:    dma.wait %[[IN]]
// CHECK-NEXT:    training.relu ins(%[[YW]] : memref<6x4xf32, "L1">) outs(%[[XW]] : memref<6x4xf32, "L1">)
// CHECK-NEXT:    %[[OUT:.*]] = dma.copy %[[XW]][%[[Z3]], %[[Z3]]] -> %x[%[[Z3]], %[[Z3]]] sizes [6, 4] :
// CHECK-NEXT:    dma.wait %[[OUT]]
// CHECK-NEXT:    func.return

// =============================================================================
// Tiles in L2 (level = "L2"): an L3 -> L2 tile loop
// =============================================================================
func.func @l3(%x: memref<12xf32, "L3">, %y: memref<12xf32, "L3">) {
  tiling.tiled tiles [4] attributes {level = "L2"} {
    training.relu ins(%x : memref<12xf32, "L3">) outs(%y : memref<12xf32, "L3">)
  }
  func.return
}

// CHECK-LABEL: func.func @l3
// CHECK-NEXT:    %[[XT:.*]] = memref.alloc() : memref<4xf32, "L2">
// CHECK-NEXT:    %[[YT:.*]] = memref.alloc() : memref<4xf32, "L2">
// CHECK:           dma.copy %x[%{{.*}}] -> %[[XT]][%{{.*}}] sizes [4] : memref<12xf32, "L3">, memref<4xf32, "L2">
// CHECK:           dma.copy %[[YT]][%{{.*}}] -> %y[%{{.*}}] sizes [4] : memref<4xf32, "L2">, memref<12xf32, "L3">
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
