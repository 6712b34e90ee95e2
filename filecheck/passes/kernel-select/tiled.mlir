// RUN: deeploy-opt %s -p tiling-materialize,kernel-select | filecheck %s

// kernel-select rewrites the compute ops inside tile loops too, each on its
// tile buffers with the tile's own sizes: 10 elements in tiles of 4 are a
// loop over 2 full tiles (size 4) and a remainder tile of 2 (size 2); the
// copies, waits and loops around them stay as they are.

// CHECK-LABEL: func.func @ragged
// CHECK:         scf.for
// CHECK:           dma.wait
// CHECK-NEXT:      kernel.call @dm_relu_fp32 dm_unary_args_t {X = %{{.*}}, Y = %{{.*}}, size = 4} note "training.relu" : memref<4xf32, "L1">, memref<4xf32, "L1">
// CHECK-NEXT:      dma.copy
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
// CHECK:         dma.wait
// CHECK-NEXT:    kernel.call @dm_relu_fp32 dm_unary_args_t {X = %{{.*}}, Y = %{{.*}}, size = 2} note "training.relu" : memref<2xf32, "L1">, memref<2xf32, "L1">
// CHECK-NOT:     training.
func.func @ragged(%x: memref<10xf32, "L2">, %y: memref<10xf32, "L2">) {
  tiling.tiled tiles [4] {
    training.relu ins(%x : memref<10xf32, "L2">) outs(%y : memref<10xf32, "L2">)
  }
  func.return
}
