// RUN: deeploy-opt %s -p "tile-select{l1=8192 buffers=2}" | filecheck %s --check-prefix=SELECT
// RUN: deeploy-opt %s -p "tile-select{l1=8192 buffers=2},tiling-materialize,dma-multibuffer" | filecheck %s --check-prefix=LOOPS
// RUN: deeploy-opt %s -p "tile-select{l1=8192}" | filecheck %s --check-prefix=ONE
// RUN: deeploy-opt %s -p "tile-select{l1=8192 buffers=2 fallback=false}" | filecheck %s --check-prefix=FORCED

// With two buffers per tile, tile-select also chooses each op's tiles for one
// buffer and keeps them (`tile_buffers = 1`) when the cycle model finds them
// faster.
//
// @inplace: a relu written in place on 64x64 f32. Its output aliases its
// input, so dma-multibuffer never overlaps it: two buffers only halve its
// tiles. A tile of r rows (whole rows: 256 r bytes, one buffer for x in and
// out): two buffers need 512 r <= 8192, r <= 16 (4 tiles); one buffer
// 256 r <= 8192, r <= 32 (2 tiles). The same bytes move either way, serially;
// 2 tiles pay the per-copy issue and setup and the kernel call half as often
// as 4, so the single-buffered [32, 64] is faster and kept.
// SELECT-LABEL: func.func @inplace
// SELECT: tiling.tiled tiles [32, 64] attributes {tile_buffers = 1 : i64} {
// fallback=false: no comparison, the two buffers' [16, 64] (r <= 16 above).
// FORCED-LABEL: func.func @inplace
// FORCED: tiling.tiled tiles [16, 64] attributes {buffers = 2 : i64} {
// FORCED-NOT: tile_buffers
// Its tile loop (2 tiles) is marked, and dma-multibuffer leaves it
// single-buffered with a remark.
// LOOPS-LABEL: func.func @inplace
// LOOPS: %x_tile = memref.alloc() : memref<32x64xf32, "L1">
// LOOPS: dma.wait %x_in
// LOOPS-NEXT: training.relu ins(%x_tile
// LOOPS: dma.wait %x_out
// LOOPS-NEXT: } {tiling.loop = #tiling.loop<tile, buffers = 1>, dma.remark = "dma-multibuffer: training.relu writing %x keeps single buffering: tile-select found its single-buffered tiles faster than its double-buffered ones (`buffers = 1`)"}
func.func @inplace(%x: memref<64x64xf32, "L2">) {
  training.relu ins(%x : memref<64x64xf32, "L2">) outs(%x : memref<64x64xf32, "L2">)
  func.return
}

// @copybound: a relu from x to y, 256x64 f32: one comparison per 8 bytes
// moved, so its tile loop is the copies (in and out, 512 bytes a row). Two
// buffers (r rows: 2 x 2 x 256 r <= 8192, r <= 8) overlap tile i's compute
// with the copies of tiles i+1 and i-1; one buffer (r <= 16, half the tiles)
// waits for every copy. The overlap is worth more than the halved tile
// count: the double-buffered tiles stay, with no tile_buffers, and the loop
// gets rings.
// SELECT-LABEL: func.func @copybound
// SELECT: tiling.tiled tiles [8, 64] attributes {buffers = 2 : i64} {
// LOOPS-LABEL: func.func @copybound
// LOOPS-NOT: buffers = 1
// LOOPS: memref.alloc() : memref<2x8x64xf32, "L1">
// LOOPS: } {tiling.loop = #tiling.loop<tile>}
func.func @copybound(%x: memref<256x64xf32, "L2">, %y: memref<256x64xf32, "L2">) {
  training.relu ins(%x : memref<256x64xf32, "L2">) outs(%y : memref<256x64xf32, "L2">)
  func.return
}

// One buffer asked for: nothing to compare, no tile_buffers.
// ONE-NOT: tile_buffers
