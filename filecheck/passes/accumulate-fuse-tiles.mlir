// RUN: deeploy-opt %s -p tiling-materialize | filecheck %s

// The tiles of an op that accumulate-fuse made write a gradient buffer
// (`onto`): the buffer is an input (read unless reset) and the output, one
// tile buffer copied in and out; the reset flag is a one-element input tile.
// dW and dB sum over the batch, 3 images in tiles of 1 (as in
// tiling-materialize-accumulate.mlir): tile 0 copies dW's buffer in (its
// kernel adds the old value at the store unless reset) and writes dW; tiles
// 1 and 2 copy dW in (the buffer input) and go on from the partial sums
// (`accumulate`, which wins over `onto`: no second old value). dB is not a
// buffer here: the first tile does not copy it in (no `%db_sum` before the
// loop), the adding tiles do.
// CHECK-LABEL: func.func @dw
// CHECK:         %[[DW:dw_tile]] = memref.alloc() : memref<4x2x1x1xf32, "L1">
// CHECK-NEXT:    %[[R:reset_tile]] = memref.alloc() : memref<1xi1, "L1">
// CHECK-NEXT:    %[[DB:db_tile]] = memref.alloc() : memref<4xf32, "L1">
// CHECK-NOT:     %db_sum
// CHECK:         %dw_in = dma.copy %dw[{{.*}}] -> %[[DW]][{{.*}}] sizes [4, 2, 1, 1]
// CHECK-NEXT:    %reset_in = dma.copy %reset[{{.*}}] -> %[[R]][{{.*}}] sizes [1]
// CHECK:         training.conv2d_grad ins({{.*}}, %[[DW]], %[[DW]], %[[R]] : {{.*}}) outs(%[[DW]], %[[DB]] : {{.*}}) {{{.*}}onto = array<i64: 0>}{{$}}
// CHECK-NEXT:    dma.copy %[[DW]][{{.*}}] -> %dw
// CHECK:         scf.for
// CHECK:           dma.copy %dw[{{.*}}] -> %dw_tile_1
// CHECK:           %db_sum = dma.copy %db[{{.*}}] -> %db_tile_1
// CHECK:           training.conv2d_grad ins({{.*}}, %dw_tile_1, %dw_tile_1, %reset_tile_1 : {{.*}}) outs(%dw_tile_1, %db_tile_1 : {{.*}}) {{{.*}}onto = array<i64: 0>, accumulate = array<i64: 0, 1>}
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
func.func @dw(%dy: memref<3x4x4x4xf32, "L2">, %x: memref<3x2x4x4xf32, "L2">, %w: memref<4x2x1x1xf32, "L2">, %dw: memref<4x2x1x1xf32, "L2">, %db: memref<4xf32, "L2">, %reset: memref<1xi1, "L2">) {
  tiling.tiled tiles [1, 4, 2, 4, 4, 1, 1, 4, 4] {
    training.conv2d_grad ins(%dy, %x, %w, %dw, %reset : memref<3x4x4x4xf32, "L2">, memref<3x2x4x4xf32, "L2">, memref<4x2x1x1xf32, "L2">, memref<4x2x1x1xf32, "L2">, memref<1xi1, "L2">) outs(%dw, %db : memref<4x2x1x1xf32, "L2">, memref<4xf32, "L2">) {outputs = ["dW", "dB"], onto = array<i64: 0>}
  }
  func.return
}
