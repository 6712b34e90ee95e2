// XFAIL: *
// RUN: deeploy-opt %s -p 'dma-decompose{engine=pulp-open}' | filecheck %s
// RUN: deeploy-opt %s -p 'dma-decompose{engine=gap9}' | filecheck %s

// BUG (dma-decompose): a decomposed copy issued on a slot of a request ring
// (`on %r[%s]`) stands for that slot (dma.py: "with on %r[%s] it is issued on
// slot %s of the request ring %r (and returns that request)"; the C emitter's
// _FnCtx.request resolves such a token to dm_req_r[s]). DmaDecompose._decompose
// ends with `copy.token.replace_all_uses_with(req)`, where req is the bare ring
// %r: a `dma.wait %t` of the copy's token becomes `dma.wait %r`, which is
// slot 0 ("slot 0 when used without an index"), not slot %s -- it waits on the
// wrong request and returns before the sub-copies on slot %s have landed.
// Expected: the waits of the token wait on %r[%s] (or keep waiting on a token
// of the same slot).
//
// Not hit by the default pipeline today (dma-multibuffer waits on %r[%slot],
// never on a copy's token), but any waited slotted copy that needs
// decomposition is.
//
// Reproduce: deeploy-opt filecheck/passes/dma-decompose-ring-slot-wait.mlir -p 'dma-decompose{engine=pulp-open}'
// prints `dma.wait %r` after the loops.

func.func @slotted(%a: memref<2x3x4xf32, "L3">, %ring: memref<2x4x3x2xf32, "L2">, %s: index, %z: index) {
  %r = dma.request count 2
  %b = dma.slot %ring[%s] : memref<2x4x3x2xf32, "L2"> -> memref<4x3x2xf32, "L2">
  %t = dma.copy %a[%z, %z, %z] -> %b[%z, %z, %z] sizes [2, 3, 4] perm [2, 1, 0] on %r[%s] : memref<2x3x4xf32, "L3">, memref<4x3x2xf32, "L2">
  dma.wait %t
  func.return
}

// CHECK-LABEL: func.func @slotted
// CHECK:             dma.copy {{.*}} sizes [2, 1, 1] perm [2, 1, 0] engine {{.*}} on %r[%s] :
// CHECK:           }
// CHECK-NEXT:    }
// CHECK-NEXT:    dma.wait %r[%s]
// CHECK-NEXT:    func.return
