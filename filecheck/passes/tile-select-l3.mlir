// RUN: deeploy-opt %s -p 'tile-select{l1=16 l2=56}' | filecheck %s
// RUN: deeploy-opt %s -p 'tile-select{l1=16 l2=200}' | filecheck %s --check-prefix=ROOMY
// RUN: deeploy-opt %s -p 'tile-select{l1=16 l2=44}' | filecheck %s --check-prefix=TIGHT
// RUN: deeploy-opt %s -p 'tile-select{l1=16 l2=72 l3_buffers=2}' | filecheck %s --check-prefix=TWO
// RUN: deeploy-opt %s -p 'tile-select{l1=16 l2=46 l3_buffers=2}' | filecheck %s --check-prefix=KEPT
// RUN: not deeploy-opt %s -p 'tile-select{l1=16 l2=42}' 2>&1 | filecheck %s --check-prefix=ERR

// tile-select with an L2 budget (deeploy_mlir/passes/tile_select.py): an op
// with an operand in L3 gets `outer` tile sizes -- the tiles of the L3 -> L2
// hop, staged in L2 -- chosen so that its L3 operands' stage tiles fit what
// the L2 plan leaves free (budget minus the L2 arena without stages), then L1
// tiles chosen within one stage tile.
//
// Here %y (40 B) is the whole L2 arena. l2=56 leaves 16 B: the stage tile of
// %x holds at most 4 floats, and the fewest transfers with at most 4 is a tile
// of 4 (10 = 4 + 4 + 2). L1 = 16 B holds tiles of %x and %y of 2 floats each.
func.func @staged(%x: memref<10xf32, "L3">, %y: memref<10xf32, "L2">) {
  training.relu ins(%x : memref<10xf32, "L3">) outs(%y : memref<10xf32, "L2">)
  func.return
}

// CHECK:      tiling.tiled tiles [2] attributes {outer = array<i64: 4>} {
// CHECK-NEXT:   training.relu ins(%x : memref<10xf32, "L3">) outs(%y : memref<10xf32, "L2">)

// With 160 B free the whole of %x is staged at once (outer = the dim).
// ROOMY:      tiling.tiled tiles [2] attributes {outer = array<i64: 10>} {

// 44 - 40 = 4 B free: one float per stage tile, and so one per L1 tile.
// TIGHT:      tiling.tiled tiles [1] attributes {outer = array<i64: 1>} {

// Two stage buffers (l3_buffers=2, the L3 hop double-buffered): 72 - 40 = 32
// B free hold two stage tiles of 4 floats.
// TWO:        tiling.tiled tiles [2] attributes {outer = array<i64: 4>} {

// 46 - 40 = 6 B free: two stage tiles of one float (8 B) do not fit, one does;
// the op keeps one stage buffer and says so (dma-multibuffer then leaves its
// L3 hop single-buffered).
// KEPT:       tiling.tiled tiles [1] attributes {outer = array<i64: 1>, stage_buffers = 1 : i64} {

// 2 B free cannot stage even one float of %x.
// ERR: deeploy-opt: error: @staged: the op writing %y (training.relu) needs at least 4 bytes of L2 to stage its L3 operands (smallest tiles, 1 buffer(s)); the L2 budget leaves 2 bytes free
