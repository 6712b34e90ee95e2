// RUN: deeploy-opt %s -p tiling-materialize | filecheck %s

// Reduction dims that tile (IterationSpace.accumulate): the tiles along them
// run in order, outermost in the loop order; the tiles whose reduction offset
// is 0 write the outputs that do not index the reduction dim, the later ones
// copy those partial sums in ("_sum"), add to them (`accumulate`, the output
// positions) and copy them out again.

// dW and dB sum over the batch: 3 images in tiles of 1. Tile 0 writes (no
// loop: one tile), tiles 1 and 2 add (a loop from 1 to 3). The input
// channels stay whole (dB does not index them).
func.func @dw(%dy: memref<3x4x4x4xf32, "L2">, %x: memref<3x2x4x4xf32, "L2">, %w: memref<4x2x1x1xf32, "L2">, %dw: memref<4x2x1x1xf32, "L2">, %db: memref<4xf32, "L2">) {
  tiling.tiled tiles [1, 4, 2, 4, 4, 1, 1, 4, 4] {
    training.conv2d_grad ins(%dy, %x, %w : memref<3x4x4x4xf32, "L2">, memref<3x2x4x4xf32, "L2">, memref<4x2x1x1xf32, "L2">) outs(%dw, %db : memref<4x2x1x1xf32, "L2">, memref<4xf32, "L2">) {outputs = ["dW", "dB"]}
  }
  func.return
}

// CHECK-LABEL: func.func @dw
// CHECK:         %[[DW:dw_tile]] = memref.alloc() : memref<4x2x1x1xf32, "L1">
// CHECK-NEXT:    %[[DB:db_tile]] = memref.alloc() : memref<4xf32, "L1">
// CHECK-NOT:     scf.for
// CHECK-NOT:     -> %[[DW]]
// CHECK:         training.conv2d_grad {{.*}} outs(%[[DW]], %[[DB]] : {{.*}}) {outputs = ["dW", "dB"]}{{$}}
// CHECK:         dma.copy %[[DW]][{{.*}}] -> %dw
// the adding tiles have buffers of their own (dma-multibuffer makes rings of
// a loop's buffers; the two lifetimes do not overlap)
// CHECK:         %[[DW2:dw_tile_1]] = memref.alloc() : memref<4x2x1x1xf32, "L1">
// CHECK-NEXT:    %[[DB2:db_tile_1]] = memref.alloc() : memref<4xf32, "L1">
// CHECK:         %[[LO:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[HI:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[LO]] to %[[HI]] step %[[ONE]] {
// CHECK:           %dw_sum = dma.copy %dw[{{.*}}] -> %[[DW2]][{{.*}}] sizes [4, 2, 1, 1]
// CHECK-NEXT:      %db_sum = dma.copy %db[{{.*}}] -> %[[DB2]][{{.*}}] sizes [4]
// CHECK:           dma.wait %dw_sum
// CHECK-NEXT:      dma.wait %db_sum
// CHECK-NEXT:      training.conv2d_grad {{.*}} outs(%[[DW2]], %[[DB2]] : {{.*}}) {outputs = ["dW", "dB"], accumulate = array<i64: 0, 1>}
// CHECK-NEXT:      dma.copy %[[DW2]][{{.*}}] -> %dw
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
// CHECK-NEXT:    func.return

// dX sums over the output channels: 4 in tiles of 2, and the batch of 2
// tiles too. The output channels are the outer dim of the loop order
// (index / 2), the batch the inner (index % 2): tiles 0 and 1 (channels 0-1,
// both images) write, tiles 2 and 3 (channels 2-3) add.
func.func @dx(%dy: memref<2x4x4x4xf32, "L2">, %x: memref<2x3x4x4xf32, "L2">, %w: memref<4x3x1x1xf32, "L2">, %dx: memref<2x3x4x4xf32, "L2">) {
  tiling.tiled tiles [1, 2, 3, 4, 4, 1, 1, 4, 4] {
    training.conv2d_grad ins(%dy, %x, %w : memref<2x4x4x4xf32, "L2">, memref<2x3x4x4xf32, "L2">, memref<4x3x1x1xf32, "L2">) outs(%dx : memref<2x3x4x4xf32, "L2">) {outputs = ["dX"]}
  }
  func.return
}

// The dX kernel does not read X: X gets no tile buffer and no copy, the dX
// tile (same shape) stands in for it in the tile op.
// CHECK-LABEL: func.func @dx
// CHECK-NOT:     %x_tile
// CHECK:         %[[DX:dx_tile]] = memref.alloc() : memref<1x3x4x4xf32, "L1">
// CHECK-NEXT:    %[[LO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[HI:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[LO]] to %[[HI]] step %[[ONE]] {
// CHECK:           %[[N:.*]] = arith.remui %[[I]], %{{.*}} : index
// CHECK:           %[[M:.*]] = arith.divui %[[I]], %{{.*}} : index
// CHECK-NOT:       _sum
// CHECK-NOT:       dma.copy %x
// CHECK:           training.conv2d_grad ins(%dy_tile, %[[DX]], %w_tile : {{.*}}) outs(%[[DX]] : {{.*}}) {outputs = ["dX"]}{{$}}
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
// CHECK:         %[[DX2:dx_tile_1]] = memref.alloc() : memref<1x3x4x4xf32, "L1">
// CHECK-NEXT:    %[[LO2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[HI2:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[ONE2:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[J:.*]] = %[[LO2]] to %[[HI2]] step %[[ONE2]] {
// CHECK:           %dx_sum = dma.copy %dx[{{.*}}] -> %[[DX2]][{{.*}}] sizes [1, 3, 4, 4]
// CHECK:           training.conv2d_grad {{.*}} outs(%[[DX2]] : {{.*}}) {outputs = ["dX"], accumulate = array<i64: 0>}
// CHECK:         } {tiling.loop = #tiling.loop<tile>}

// layer_norm_grad: 6 rows in tiles of 2. dX indexes the rows (written by
// every tile); dScale and dBias sum over them (outputs 1 and 2 add).
func.func @ln(%dy: memref<6x8xf32, "L2">, %x: memref<6x8xf32, "L2">, %s: memref<8xf32, "L2">, %m: memref<6x1xf32, "L2">, %r: memref<6x1xf32, "L2">, %dx: memref<6x8xf32, "L2">, %ds: memref<8xf32, "L2">, %dbias: memref<8xf32, "L2">) {
  tiling.tiled tiles [2, 8] {
    training.layer_norm_grad ins(%dy, %x, %s, %m, %r : memref<6x8xf32, "L2">, memref<6x8xf32, "L2">, memref<8xf32, "L2">, memref<6x1xf32, "L2">, memref<6x1xf32, "L2">) outs(%dx, %ds, %dbias : memref<6x8xf32, "L2">, memref<8xf32, "L2">, memref<8xf32, "L2">) {axis = 1 : i64}
  }
  func.return
}

// CHECK-LABEL: func.func @ln
// CHECK-NOT:     _sum
// CHECK:         training.layer_norm_grad {{.*}} {axis = 1 : i64}{{$}}
// CHECK:         scf.for
// CHECK-NOT:       %dx_sum
// CHECK:           %ds_sum = dma.copy %ds
// CHECK-NEXT:      %dbias_sum = dma.copy %dbias
// CHECK:           training.layer_norm_grad {{.*}} {axis = 1 : i64, accumulate = array<i64: 1, 2>}
// CHECK-NEXT:      %dx_out_1 = dma.copy
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
