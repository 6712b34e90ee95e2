// RUN: deeploy-opt %s -p "tile-select{l1=600}" | filecheck %s --check-prefix=CONV
// RUN: deeploy-opt %s -p "tile-select{l1=400}" | filecheck %s --check-prefix=POOL
// RUN: not deeploy-opt %s -p "tile-select{l1=100}" 2>&1 | filecheck %s --check-prefix=NOFIT

// Spatial tiles with halos: an output tile of t rows reads the window's
// footprint, (t - 1) * stride + dilation * (k - 1) + 1 input rows (at most the
// input), which the footprint and the cycles count (setup 100 per transfer,
// 8 B/cycle). Spatial dims are offered only when whole planes do not fit.

// Conv X 1x2x8x6, W 3x2x3x3, pads 1, stride 1 -> Y 1x3x8x6. Loop dims
// [N, M, CG, OH, OW, KH, KW, IH, IW]; CG, KH, KW are reductions.
// Whole planes, one output channel: X 384 + W 72 + Y 192 = 648 B > 600.
// Rows free (columns whole): for m channels and t rows, IH = min(8, t + 2),
// footprint 48 IH + 72 m + 24 m t bytes:
//   (m=3, t=2): 192 + 216 + 144 = 552, 4 tiles x (300 + 552/8) = 1476  <- chosen
//   (m=3, t=3): 672 too big; (m=1, t=4): 456, 6 x 357 = 2142;
//   (m=2, t=3): 528, 6 x 366 = 2196; (m=3, t=1): 432, 8 x 354 = 2832
// CONV: tiling.tiled tiles [1, 3, 2, 2, 6, 3, 3, 4, 6] {
// CONV-NEXT: training.conv2d
func.func @conv(%x: memref<1x2x8x6xf32, "L2">, %w: memref<3x2x3x3xf32, "L2">, %y: memref<1x3x8x6xf32, "L2">) {
  training.conv2d ins(%x, %w : memref<1x2x8x6xf32, "L2">, memref<3x2x3x3xf32, "L2">) outs(%y : memref<1x3x8x6xf32, "L2">) {pads = array<i64: 1, 1, 1, 1>}
  func.return
}

// MaxPool 3x3, stride 2, pads 1, X 1x4x8x8 -> Y and Indices (i64) 1x4x4x4.
// Loop dims [N, C, OH, OW, KH, KW, IH, IW]. Whole planes, one channel:
// X 256 + Y 64 + Indices 128 = 448 B > 400. Rows free: t output rows read
// IH = 3, 5, 8 input rows for t = 1, 2, 4; c channels take c (32 IH + 48 t):
//   (c=1, t=2): 256, 8 tiles x (300 + 32) = 2656  <- chosen
//   (c=2, t=1): 288, 8 x (300 + 36) = 2688; (c=1, t=1): 144, 16 x 318 = 5088
//   (c=2, t=2): 512 and (c=4, t=1): 576 too big
// POOL: tiling.tiled tiles [1, 1, 2, 4, 3, 3, 5, 8] {
// POOL-NEXT: training.maxpool2d
func.func @maxpool(%x: memref<1x4x8x8xf32, "L2">, %y: memref<1x4x4x4xf32, "L2">, %i: memref<1x4x4x4xi64, "L2">) {
  training.maxpool2d ins(%x : memref<1x4x8x8xf32, "L2">) outs(%y, %i : memref<1x4x4x4xf32, "L2">, memref<1x4x4x4xi64, "L2">) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
  func.return
}

// At 100 bytes even one output element does not fit the conv: its 3x3
// window over 2 channels (72 B), one filter (72 B) and one output (4 B).
// NOFIT: @conv: the op writing %y (training.conv2d) needs at least 148 bytes of L1 (smallest tiles, spatial ones with their halos, 1 buffer(s)); the L1 budget is 100 bytes
