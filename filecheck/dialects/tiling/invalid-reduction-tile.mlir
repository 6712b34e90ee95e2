// RUN: deeploy-opt %s --verify-diagnostics | filecheck %s

// tiling.tiled must not cut a reduction dim (TiledOp.verify_): the kernels sum
// the whole dim in one tile, so tiles of a reduction dim would each write a
// partial sum over the whole output and the last one would win (for this
// reduce_sum of 8 elements in tiles of 4: x[4] + ... + x[7]). tile-select
// keeps such dims whole; a hand-written or --pass-pipeline `tiling.tiled`
// is rejected. The message itself is checked in invalid.mlir.

// CHECK: "tiling.tiled"
// CHECK: | Operation does not verify: {{.+$}}
func.func @f(%x: memref<8xf32, "L2">, %s: memref<f32, "L2">) {
  tiling.tiled tiles [4] {
    training.reduce_sum ins(%x : memref<8xf32, "L2">) outs(%s : memref<f32, "L2">) {axes = array<i64: 0>}
  }
  func.return
}
