// XFAIL: *
// RUN: deeploy-opt %s -p 'dma-decompose{engine=pulp-open}' | filecheck %s
// RUN: deeploy-opt %s -p 'dma-decompose{engine=pulp-open}' | not filecheck %s --check-prefix=REUSED

// BUG (dma-decompose, engine=pulp-open): the sub-copies of a decomposed L3
// copy are all issued on one request (`dma.request count 1`, no slot) with no
// wait between them. dma.py documents PULPOpen's L3 RAM engine as "one
// request per sub-copy" (shared_request = false), and the runtime agrees that
// an L3 RAM request holds one transfer: the emitter gives every sub-copy the
// same pi_cl_ram_req_t, and the host emulation stops at the second one:
//   dm-host: L3 RAM request 'dm_req_t[0]' reused while a transfer is in flight
//   (wait for it before issuing the next)
// (GAP9 is safe only because its engine is marked shared_request and gets a
// wait after every sub-copy.) Reachable from the default pipeline whenever an
// L3 copy needs decomposition on pulp-open: a transposing copy, or a whole
// L3 tensor over 1 MiB (max_bytes), which is peeled into rows.
// Expected: no two sub-copies in flight on one L3 request -- one request per
// sub-copy (a ring, each sub-copy on its own slot), or a wait after each.
//
// The first RUN checks that the pass decomposes the copy (sanity); the second
// finds the faulty shape -- a pulp-open-ram sub-copy on a bare request
// directly followed by the end of its loop -- and fails while it is there.
// Once fixed, the test passes unexpectedly: drop the XFAIL, and update the
// PULP checks of dma-decompose.mlir, which describe today's behaviour.
//
// Reproduce in C: the harness of tests/test_dma.py (_emit_and_run) with
// `dma-decompose{engine=pulp-open}` in place of engine=gap9 builds, and the
// program exits 3 with the message above.

func.func @transpose(%a: memref<2x3x4xf32, "L3">, %b: memref<4x3x2xf32, "L2">, %z: index) {
  %t = dma.copy %a[%z, %z, %z] -> %b[%z, %z, %z] sizes [2, 3, 4] perm [2, 1, 0] : memref<2x3x4xf32, "L3">, memref<4x3x2xf32, "L2">
  dma.wait %t
  func.return
}

// CHECK-LABEL: func.func @transpose
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             dma.copy {{.*}} sizes [2, 1, 1] perm [2, 1, 0] engine #dma.engine<"pulp-open-ram"

// REUSED:             dma.copy {{.*}} engine #dma.engine<"pulp-open-ram"{{.*}}> on %{{[^[ ]+}} :
// REUSED-NEXT:      }
