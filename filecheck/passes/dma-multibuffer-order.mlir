// RUN: bash -c 'for i in 1 2 3 4 5 6 7 8; do deeploy-opt "$0" -p "tiling-materialize,dma-multibuffer" | md5sum; done' %s | sort -u | wc -l | filecheck %s

// dma-multibuffer is deterministic: the tile buffers of a loop are taken in
// operand order (ins then outs, without duplicates), not from a Python set
// (ordered by memory address), so the same input gives the same output. This
// runs the pass 8 times on four loops with four tile buffers each and expects
// one distinct output (with a set, three different orders showed up in 15
// runs).

// CHECK: {{^ *}}1{{$}}

func.func @gemms(%x: memref<2x3xf32, "L2">, %w: memref<4x3xf32, "L2">, %b: memref<4xf32, "L2">,
                 %y1: memref<2x4xf32, "L2">, %y2: memref<2x4xf32, "L2">, %y3: memref<2x4xf32, "L2">, %y4: memref<2x4xf32, "L2">) {
  tiling.tiled tiles [2, 2, 3] {
    training.gemm ins(%x, %w, %b : memref<2x3xf32, "L2">, memref<4x3xf32, "L2">, memref<4xf32, "L2">) outs(%y1 : memref<2x4xf32, "L2">) {trans_b}
  }
  tiling.tiled tiles [2, 2, 3] {
    training.gemm ins(%x, %w, %b : memref<2x3xf32, "L2">, memref<4x3xf32, "L2">, memref<4xf32, "L2">) outs(%y2 : memref<2x4xf32, "L2">) {trans_b}
  }
  tiling.tiled tiles [2, 2, 3] {
    training.gemm ins(%x, %w, %b : memref<2x3xf32, "L2">, memref<4x3xf32, "L2">, memref<4xf32, "L2">) outs(%y3 : memref<2x4xf32, "L2">) {trans_b}
  }
  tiling.tiled tiles [2, 2, 3] {
    training.gemm ins(%x, %w, %b : memref<2x3xf32, "L2">, memref<4x3xf32, "L2">, memref<4xf32, "L2">) outs(%y4 : memref<2x4xf32, "L2">) {trans_b}
  }
  func.return
}
