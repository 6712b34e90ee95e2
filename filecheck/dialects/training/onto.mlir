// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

// Round trip of `onto` (accumulate-fuse): a compute op in buffer form whose
// output #0 is a gradient accumulation buffer; its ins end with that buffer
// (output #0 itself) and the reset flag.
// CHECK:      training.transpose ins(%x, %buf, %reset : memref<2x3xf32, "L2">, memref<3x2xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<3x2xf32, "L2">) {perm = array<i64: 1, 0>, onto = array<i64: 0>}
func.func @onto(%x: memref<2x3xf32, "L2">, %buf: memref<3x2xf32, "L2">, %reset: memref<1xi1, "L2">) {
  training.transpose ins(%x, %buf, %reset : memref<2x3xf32, "L2">, memref<3x2xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<3x2xf32, "L2">) {perm = array<i64: 1, 0>, onto = array<i64: 0>}
  func.return
}
