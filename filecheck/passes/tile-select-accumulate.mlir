// RUN: deeploy-opt %s -p "tile-select{l1=4000}" | filecheck %s --check-prefix=FITS
// RUN: deeploy-opt %s -p "tile-select{l1=1200}" | filecheck %s --check-prefix=SPLIT
// RUN: deeploy-opt %s -p "tile-select{l1=1000}" | filecheck %s --check-prefix=ROWS

// A conv2d_grad computing dX, dW and dB keeps every reduction dim whole: dX
// sums over the output channels (M, dim 1), dW and dB over the batch and the
// output rows and columns (dims 0, 3, 4), so only the input channels (CG,
// dim 2) may tile. That is enough at 4000 bytes (two of the four input
// channels: dY 1024 + X 512 + W 288 + dX 512 + dW 288 + dB 16 = 2640 bytes;
// the whole op needs 4240).
// FITS-LABEL: func.func @grad
// FITS:      tiling.tiled tiles [1, 4, 2, 8, 8, 3, 3, 8, 8] {
// FITS-NEXT:   training.conv2d_grad {{.*}} outs(%dx, %dw, %db : {{.*}}) {pads = array<i64: 1, 1, 1, 1>}
// FITS-NOT:  tiling.tiled

// At 1200 bytes even one input channel does not fit (dY alone is 1024
// bytes), so tile-select splits the op in two with the same inputs: dX alone,
// whose output channels may tile (dX adds up their contributions), and dW
// with dB. Neither kernel reads all three inputs: the dX kernel does not read
// X, the dW kernel not W, so those get no tile buffer (the output's tile,
// of the same shape, stands in) and count nothing. dX: 2 of 4 output
// channels, 2 input channels: dY 512 + W 144 + dX 512 = 1168 bytes. dW and
// dB: 2 output channels with their reductions whole: dY 512 + X 512 + dW 144
// + dB 8 = 1176 bytes.
// SPLIT-LABEL: func.func @grad
// SPLIT:      tiling.tiled tiles [1, 2, 2, 8, 8, 3, 3, 8, 8] {
// SPLIT-NEXT:   training.conv2d_grad ins(%dy, %x, %w : {{.*}}) outs(%dx : {{.*}}) {pads = array<i64: 1, 1, 1, 1>, outputs = ["dX"]}
// SPLIT:      tiling.tiled tiles [1, 2, 2, 8, 8, 3, 3, 8, 8] {
// SPLIT-NEXT:   training.conv2d_grad ins(%dy, %x, %w : {{.*}}) outs(%dw, %db : {{.*}}) {pads = array<i64: 1, 1, 1, 1>, outputs = ["dW", "dB"]}
// SPLIT-NOT:  tiling.tiled
func.func @grad(%dy: memref<1x4x8x8xf32, "L2">, %x: memref<1x4x8x8xf32, "L2">, %w: memref<4x4x3x3xf32, "L2">, %dx: memref<1x4x8x8xf32, "L2">, %dw: memref<4x4x3x3xf32, "L2">, %db: memref<4xf32, "L2">) {
  training.conv2d_grad ins(%dy, %x, %w : memref<1x4x8x8xf32, "L2">, memref<1x4x8x8xf32, "L2">, memref<4x4x3x3xf32, "L2">) outs(%dx, %dw, %db : memref<1x4x8x8xf32, "L2">, memref<4x4x3x3xf32, "L2">, memref<4xf32, "L2">) {pads = array<i64: 1, 1, 1, 1>}
  func.return
}

// dW and dB alone, planes of 16 x 16 that do not fit 1000 bytes: they sum
// over the batch (dim 0) and the output rows (dim 3), which tile; X's rows
// (dim 7) follow with their halo: 2 output rows read 4 input rows. The input
// channels (dim 2) stay whole while the reduction tiles (dB does not index
// them: tiles of them would add dB's terms twice). W is not read. dY 2 x 2
// x 16 x 4 = 256 bytes, X 2 x 4 x 16 x 4 = 512, dW 144, dB 8: 920 bytes in
// 16 tiles (3 rows: 1176 bytes; one output channel with 3 rows fits, 908
// bytes, but takes 24 tiles).
// FITS-LABEL: func.func @dw_rows
// SPLIT-LABEL: func.func @dw_rows
// ROWS-LABEL: func.func @dw_rows
// ROWS:       tiling.tiled tiles [1, 2, 2, 2, 16, 3, 3, 4, 16] {
// ROWS-NEXT:    training.conv2d_grad {{.*}} outs(%dw, %db : {{.*}}) {pads = array<i64: 1, 1, 1, 1>, outputs = ["dW", "dB"]}
func.func @dw_rows(%dy: memref<2x2x16x16xf32, "L2">, %x: memref<2x2x16x16xf32, "L2">, %w: memref<2x2x3x3xf32, "L2">, %dw: memref<2x2x3x3xf32, "L2">, %db: memref<2xf32, "L2">) {
  training.conv2d_grad ins(%dy, %x, %w : memref<2x2x16x16xf32, "L2">, memref<2x2x16x16xf32, "L2">, memref<2x2x3x3xf32, "L2">) outs(%dw, %db : memref<2x2x3x3xf32, "L2">, memref<2xf32, "L2">) {pads = array<i64: 1, 1, 1, 1>, outputs = ["dW", "dB"]}
  func.return
}
