// RUN: deeploy-opt %s -p tiling-materialize | filecheck %s

// Spatial tiles with halos. Output tiles are disjoint; each input tile is the
// window's footprint of its output rows, clipped to the input (the padding is
// not stored), so neighbours overlap (the halo is read twice). The first and
// last tiles differ from the interior ones in input rows and pads: they are
// variants of their own (like a ragged tile), each with its own buffers and
// loop, and the compute op of each carries its tile's pads.

// Conv, 3x3, stride 1, pads 1: 8 output rows in tiles of 2 (input tile
// (2 - 1) * 1 + 3 = 4 rows). Output rows [2k, 2k + 2) read input rows
// [2k - 1, 2k + 3):
//   k = 0: rows -1..2 -> input rows 0..2 (3 rows), top pad 1, bottom 0
//   k = 1, 2: input rows 1..4 and 3..6 (4 rows, offset 2k - 1), no pads
//   k = 3: rows 5..8 -> input rows 5..7 (3 rows), top pad 0, bottom 1
// The columns stay whole (left and right pads 1).
func.func @conv(%x: memref<1x2x8x6xf32, "L2">, %w: memref<3x2x3x3xf32, "L2">, %y: memref<1x3x8x6xf32, "L2">) {
  tiling.tiled tiles [1, 3, 2, 2, 6, 3, 3, 4, 6] {
    training.conv2d ins(%x, %w : memref<1x2x8x6xf32, "L2">, memref<3x2x3x3xf32, "L2">) outs(%y : memref<1x3x8x6xf32, "L2">) {pads = array<i64: 1, 1, 1, 1>}
  }
  func.return
}

// CHECK-LABEL: func.func @conv
// the top tile: one tile, no loop
// CHECK:         %[[X0:.*]] = memref.alloc() : memref<1x2x3x6xf32, "L1">
// CHECK:         %[[Z0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    dma.copy %x[%[[Z0]], %[[Z0]], %[[Z0]], %[[Z0]]] -> %[[X0]][{{.*}}] sizes [1, 2, 3, 6]
// CHECK:         training.conv2d ins(%[[X0]], {{.*}}) outs({{.*}} : memref<1x3x2x6xf32, "L1">) {pads = array<i64: 1, 1, 0, 1>}
// CHECK:         dma.copy {{.*}} -> %y[%[[Z0]], %[[Z0]], %[[Z0]], %[[Z0]]] sizes [1, 3, 2, 6]
// the two interior tiles: one loop; output row 2 + 2i, input row 1 + 2i
// CHECK:         %[[X1:.*]] = memref.alloc() : memref<1x2x4x6xf32, "L1">
// CHECK:         %[[UB:.*]] = arith.constant 2 : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[UB]] step
// CHECK-NEXT:      %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[M:.*]] = arith.muli %[[I]], %[[C2]] : index
// CHECK-NEXT:      %[[B2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[OUT:.*]] = arith.addi %[[M]], %[[B2]] : index
// CHECK-NEXT:      %[[S2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[MI:.*]] = arith.muli %[[I]], %[[S2]] : index
// CHECK-NEXT:      %[[B1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[IN:.*]] = arith.addi %[[MI]], %[[B1]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      dma.copy %x[%[[Z]], %[[Z]], %[[IN]], %[[Z]]] -> %[[X1]][{{.*}}] sizes [1, 2, 4, 6]
// CHECK:           training.conv2d ins(%[[X1]], {{.*}}) outs({{.*}} : memref<1x3x2x6xf32, "L1">) {pads = array<i64: 0, 1, 0, 1>}
// CHECK:           dma.copy {{.*}} -> %y[%[[Z]], %[[Z]], %[[OUT]], %[[Z]]] sizes [1, 3, 2, 6]
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
// the bottom tile: input rows from 5, output rows from 6
// CHECK:         %[[X3:.*]] = memref.alloc() : memref<1x2x3x6xf32, "L1">
// CHECK:         %[[F5:.*]] = arith.constant 5 : index
// CHECK-NEXT:    dma.copy %x[%{{.*}}, %{{.*}}, %[[F5]], %{{.*}}] -> %[[X3]][{{.*}}] sizes [1, 2, 3, 6]
// CHECK:         training.conv2d ins(%[[X3]], {{.*}}) {pads = array<i64: 0, 1, 1, 1>}
// CHECK-NEXT:    %[[S6:.*]] = arith.constant 6 : index
// CHECK-NEXT:    dma.copy {{.*}} -> %y[%{{.*}}, %{{.*}}, %[[S6]], %{{.*}}] sizes [1, 3, 2, 6]
// CHECK:         func.return

// MaxPool 3x3, stride 2, pads 1, with Indices: 4 output rows in tiles of 2 and
// channels in tiles of 1. Output rows [2k, 2k + 2) read input rows
// [4k - 1, 4k + 4): k = 0 -> rows 0..3 (4 rows, top pad 1); k = 1 -> rows
// 3..7 (5 rows, no pad: the last window ends at row 7, the bottom pad of the
// whole op is not needed). Each tile's maxpool2d gets its origin in the
// whole input (n, c, h, w) and the whole input's [C, H, W], so that its
// Indices count in the whole input.
func.func @maxpool(%x: memref<1x4x8x8xf32, "L2">, %y: memref<1x4x4x4xf32, "L2">, %i: memref<1x4x4x4xi64, "L2">) {
  tiling.tiled tiles [1, 1, 2, 4, 3, 3, 5, 8] {
    training.maxpool2d ins(%x : memref<1x4x8x8xf32, "L2">) outs(%y, %i : memref<1x4x4x4xf32, "L2">, memref<1x4x4x4xi64, "L2">) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
  }
  func.return
}

// CHECK-LABEL: func.func @maxpool
// CHECK:         memref.alloc() : memref<1x1x4x8xf32, "L1">
// CHECK:         scf.for %[[C:.*]] = {{.*}} {
// CHECK:           %[[CH:.*]] = arith.muli %[[C]], %{{.*}} : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK:           training.maxpool2d ins({{.*}} : memref<1x1x4x8xf32, "L1">) outs({{.*}}) origin(%[[Z]], %[[CH]], %[[Z]], %[[Z]]) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 1>, index_frame = array<i64: 4, 8, 8>}
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
// CHECK:         memref.alloc() : memref<1x1x5x8xf32, "L1">
// CHECK:         scf.for %[[C2:.*]] = {{.*}} {
// CHECK:           %[[CH2:.*]] = arith.muli %[[C2]], %{{.*}} : index
// CHECK-NEXT:      %[[Z2:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[R3:.*]] = arith.constant 3 : index
// CHECK-NEXT:      dma.copy %x[%[[Z2]], %[[CH2]], %[[R3]], %[[Z2]]] {{.*}} sizes [1, 1, 5, 8]
// CHECK:           training.maxpool2d ins({{.*}} : memref<1x1x5x8xf32, "L1">) outs({{.*}}) origin(%[[Z2]], %[[CH2]], %[[R3]], %[[Z2]]) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 1, 0, 1>, index_frame = array<i64: 4, 8, 8>}
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
