// RUN: deeploy-opt %s --verify-diagnostics | filecheck %s

// dma.slot on a rank-0 memref: a ring "has one more (leading) dim than the
// slot", and a rank-0 memref has no slot dim to index. (It used to verify,
// since list(shape)[1:] of () equals the rank-0 result's shape.) The message
// itself is checked in invalid.mlir.

// CHECK: %s = "dma.slot"(%r, %i)
// CHECK: | Operation does not verify: {{.+$}}
func.func @f(%r: memref<f32, "L1">, %i: index) {
  %s = dma.slot %r[%i] : memref<f32, "L1"> -> memref<f32, "L1">
  func.return
}
