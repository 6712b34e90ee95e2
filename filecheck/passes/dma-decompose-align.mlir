// XFAIL: *
// RUN: not deeploy-opt %s -p 'dma-decompose{engine=pulp-open}' 2>&1 | filecheck %s

// BUG (dma-decompose): the pass attaches an engine to every copy on its hop
// after checking only legality (hop, rank, bytes -- CopyOp.legality), never
// the engine's alignment. A copy the engine cannot align (here one i1 byte,
// e.g. an accumulate reset flag that memory-home moved to L3, on the L3 engines
// of align = 4) leaves the pass as IR that does not verify, and the user gets
// the verifier's message with no pass and no tensor named:
//   deeploy-opt: error: engine 'pulp-open-ram' needs sizes and strides aligned to 4 bytes, the copy has 1
// Expected: dma-decompose reports it itself, one line naming the pass and the
// copy (or handles the copy some other way); in any case its output verifies.
//
// Reproduce: deeploy-opt filecheck/passes/dma-decompose-align.mlir -p 'dma-decompose{engine=pulp-open}'
// (engine=gap9 the same with 'gap9-ram'; f16 rows of 3 elements (6 bytes) too).

func.func @flag(%a: memref<1xi1, "L3">, %b: memref<1xi1, "L2">, %z: index) {
  %t = dma.copy %a[%z] -> %b[%z] sizes [1] : memref<1xi1, "L3">, memref<1xi1, "L2">
  dma.wait %t
  func.return
}

// CHECK: {{^}}deeploy-opt: error: dma-decompose: {{.*}}align{{.*$}}
