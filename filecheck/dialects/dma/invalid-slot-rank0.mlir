// XFAIL: *
// RUN: deeploy-opt %s --verify-diagnostics | filecheck %s

// BUG (dma dialect, SlotOp.verify_): a ring "has one more (leading) dim than
// the slot", but a rank-0 memref passes as a ring: list(shape)[1:] of () is
// [], equal to the rank-0 result's shape, so
//   dma.slot %r[%i] : memref<f32, "L1"> -> memref<f32, "L1">
// verifies (and prints back unchanged) although %r has no slot dim to index.
// Expected: a verifier error (any message) on the dma.slot.
//
// Reproduce: deeploy-opt filecheck/dialects/dma/invalid-slot-rank0.mlir
// (prints the module back, exit code 0).

// CHECK: %s = "dma.slot"(%r, %i)
// CHECK: | Operation does not verify: {{.+$}}
func.func @f(%r: memref<f32, "L1">, %i: index) {
  %s = dma.slot %r[%i] : memref<f32, "L1"> -> memref<f32, "L1">
  func.return
}
