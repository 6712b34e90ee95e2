// RUN: deeploy-opt %s -p 'dma-decompose{engine=pulp-open}' | filecheck %s
// RUN: deeploy-opt %s -p 'dma-decompose{engine=gap9}' | filecheck %s

// dma-decompose of a copy issued on a slot of a request ring (`on %r[%s]`):
// its sub-copies go on that slot, and a `dma.wait %t` of the copy's token
// becomes a wait of the same slot, `dma.wait %r[%s]` -- not `dma.wait %r`,
// which is slot 0 and would return before the sub-copies on slot %s landed.

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
