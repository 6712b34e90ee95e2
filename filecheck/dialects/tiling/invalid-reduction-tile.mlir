// XFAIL: *
// RUN: deeploy-opt %s --verify-diagnostics | filecheck %s

// BUG (tiling dialect, TiledOp.verify_): it rejects tiles that cut a dim of
// `space.whole`, but not a dim of `space.reduction`. tile-select keeps both
// whole (tile_select.whole_dims = whole | reduction); a hand-written or
// --pass-pipeline `tiling.tiled` that cuts a reduction dim verifies, and
// tiling-materialize then computes each tile's partial sum into the output
// tile and copies it over the whole output: the last tile's partial sum wins
// (for this reduce_sum of 8 elements in tiles of 4: x[4] + ... + x[7]).
// Expected: the verifier rejects it like a cut `whole` dim (any message), or
// tiling-materialize accumulates across the tiles of a reduction dim.
//
// Reproduce: deeploy-opt filecheck/dialects/tiling/invalid-reduction-tile.mlir -p tiling-materialize
// (a loop of 2 tiles, each writing the scalar output).

// CHECK: "tiling.tiled"
// CHECK: | Operation does not verify: {{.+$}}
func.func @f(%x: memref<8xf32, "L2">, %s: memref<f32, "L2">) {
  tiling.tiled tiles [4] {
    training.reduce_sum ins(%x : memref<8xf32, "L2">) outs(%s : memref<f32, "L2">) {axes = array<i64: 0>}
  }
  func.return
}
