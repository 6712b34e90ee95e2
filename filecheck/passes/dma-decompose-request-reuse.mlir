// RUN: deeploy-opt %s -p 'dma-decompose{engine=pulp-open}' | filecheck %s
// RUN: deeploy-opt %s -p 'dma-decompose{engine=pulp-open}' | not filecheck %s --check-prefix=REUSED

// dma-decompose, engine=pulp-open: the sub-copies of a decomposed L3 copy
// are all issued on one request, and a pi_cl_ram_req_t holds one transfer
// (the host emulation stops at a reused request: "dm-host: L3 RAM request
// 'dm_req_t[0]' reused while a transfer is in flight"), so PULPOpen's engine
// is shared_request like GAP9's and each sub-copy is waited for before the
// next. The first RUN checks the decomposition; the second looks for the
// faulty shape -- a pulp-open-ram sub-copy on a bare request directly
// followed by the end of its loop -- and must not find it.

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
