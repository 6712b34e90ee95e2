// RUN: deeploy-opt %s -p "tiling-materialize,dma-multibuffer" | filecheck %s

// A tiled reduction (dX of conv2d_grad sums over the output channels: 4 in
// tiles of 2, the batch of 2 in tiles of 1). The loop of the tiles that write
// the sums (channels 0-1) is double-buffered like any other; the loop of the
// tiles that add to them keeps single buffering and says why: tile i + 1 would
// fetch a partial sum that tile i (or an earlier one) has not yet written
// back. Each loop has buffers of its own (the rings replace the first loop's).

// CHECK-LABEL: func.func @dx
// CHECK:         %dx_tile_ring = memref.alloc() : memref<2x1x3x4x4xf32, "L1">
// CHECK:         scf.for
// CHECK:           training.conv2d_grad {{.*}} {outputs = ["dX"]}{{$}}
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
// CHECK:         %dy_tile = memref.alloc() : memref<1x2x4x4xf32, "L1">
// CHECK:         %dx_tile = memref.alloc() : memref<1x3x4x4xf32, "L1">
// CHECK:         scf.for
// CHECK-NOT:       dma.slot
// CHECK:           %dx_sum = dma.copy %dx
// CHECK:           training.conv2d_grad {{.*}} outs(%dx_tile : {{.*}}) {outputs = ["dX"], accumulate = array<i64: 0>}
// CHECK:         } {tiling.loop = #tiling.loop<tile>, dma.remark = "dma-multibuffer: training.conv2d_grad writing %dx keeps single buffering: it adds into its output tiles (a reduction dim tiles), and the next tile would fetch a sum before it is written back"}
func.func @dx(%dy: memref<2x4x4x4xf32, "L2">, %x: memref<2x3x4x4xf32, "L2">, %w: memref<4x3x1x1xf32, "L2">, %dx: memref<2x3x4x4xf32, "L2">) {
  tiling.tiled tiles [1, 2, 3, 4, 4, 1, 1, 4, 4] {
    training.conv2d_grad ins(%dy, %x, %w : memref<2x4x4x4xf32, "L2">, memref<2x3x4x4xf32, "L2">, memref<4x3x1x1xf32, "L2">) outs(%dx : memref<2x3x4x4xf32, "L2">) {outputs = ["dX"]}
  }
  func.return
}
