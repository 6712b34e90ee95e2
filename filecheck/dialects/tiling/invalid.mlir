// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @two_ops(%y: memref<4xf32, "L2">) {
  tiling.tiled tiles [4] {
    training.relu ins(%y : memref<4xf32, "L2">) outs(%y : memref<4xf32, "L2">)
    training.relu ins(%y : memref<4xf32, "L2">) outs(%y : memref<4xf32, "L2">)
  }
  func.return
}
// CHECK: the region must hold exactly one training compute op

// -----

func.func @tensor_form(%y: tensor<4xf32>) {
  tiling.tiled tiles [4] {
    %r = training.relu ins(%y : tensor<4xf32>) -> tensor<4xf32>
  }
  func.return
}
// CHECK: the tiled op must be in buffer form (run training-bufferize)

// -----

func.func @count(%y: memref<4xf32, "L2">) {
  tiling.tiled tiles [4, 1] {
    training.relu ins(%y : memref<4xf32, "L2">) outs(%y : memref<4xf32, "L2">)
  }
  func.return
}
// CHECK: expects 1 tile sizes (one per loop dim of training.relu), got 2

// -----

func.func @range(%y: memref<4xf32, "L2">) {
  tiling.tiled tiles [5] {
    training.relu ins(%y : memref<4xf32, "L2">) outs(%y : memref<4xf32, "L2">)
  }
  func.return
}
// CHECK: tile size 5 of dim 0 is outside [1, 4]

// -----

func.func @whole(%x: memref<2x4xf32, "L2">, %l: memref<2xi64, "L2">, %loss: memref<f32, "L2">, %lp: memref<2x4xf32, "L2">) {
  tiling.tiled tiles [2, 2] {
    training.softmax_cross_entropy_loss ins(%x, %l : memref<2x4xf32, "L2">, memref<2xi64, "L2">) outs(%loss, %lp : memref<f32, "L2">, memref<2x4xf32, "L2">)
  }
  func.return
}
// CHECK: dim 1 of training.softmax_cross_entropy_loss must stay whole (4), got 2

// -----

func.func @buffers(%y: memref<4xf32, "L2">) {
  tiling.tiled tiles [4] attributes {buffers = 0 : i64} {
    training.relu ins(%y : memref<4xf32, "L2">) outs(%y : memref<4xf32, "L2">)
  }
  func.return
}
// CHECK: buffers must be at least 1, got 0

// -----

func.func @level(%y: memref<4xf32, "L2">) {
  tiling.tiled tiles [4] attributes {level = "L3"} {
    training.relu ins(%y : memref<4xf32, "L2">) outs(%y : memref<4xf32, "L2">)
  }
  func.return
}
// CHECK: tiles live in L1 or L2, got 'L3'
