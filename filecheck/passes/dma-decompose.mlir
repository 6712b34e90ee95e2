// RUN: deeploy-opt %s --split-input-file -p 'dma-decompose{engine=gap9}' | filecheck %s --check-prefix=GAP9
// RUN: deeploy-opt %s --split-input-file -p 'dma-decompose{engine=pulp-open}' | filecheck %s --check-prefix=PULP
// RUN: deeploy-opt %s --split-input-file -p 'dma-decompose{engine=gap9 wait_each=false}' | filecheck %s --check-prefix=NOWAIT
// RUN: not deeploy-opt %s -p 'dma-decompose{engine=x86}' 2>&1 | filecheck %s --check-prefix=ERR

// A rank-3 transposing copy from L3 ([2,3,4] at strides 12,4,1) into L2 as
// [4,3,2] (perm [2,1,0]). On the L2 (loc) side box dim 2 has stride 6, dim 1
// stride 2, dim 0 stride 1. Box dim 0 reads L3 every 12 elements: rows of one
// element, 2 rows 48 bytes apart, contiguous in L2 -- one 2-D transfer. The
// L3 engines take rank 2, so the two dims outermost on the loc side are peeled:
// a loop over box dim 2 (4) and inside it over box dim 1 (3): 12 sub-copies.
func.func @transpose(%a: memref<2x3x4xf32, "L3">, %b: memref<4x3x2xf32, "L2">) {
  %c0 = arith.constant 0 : index
  %t = dma.copy %a[%c0, %c0, %c0] -> %b[%c0, %c0, %c0] sizes [2, 3, 4] perm [2, 1, 0] : memref<2x3x4xf32, "L3">, memref<4x3x2xf32, "L2">
  dma.wait %t
  func.return
}

// GAP9-LABEL: func.func @transpose
// GAP9:         %[[R:.*]] = dma.request count 1
// GAP9:         %[[N4:.*]] = arith.constant 4 : index
// GAP9:         scf.for %[[K:.*]] = %{{.*}} to %[[N4]] step %{{.*}} {
// GAP9:           %[[N3:.*]] = arith.constant 3 : index
// GAP9:           scf.for %[[J:.*]] = %{{.*}} to %[[N3]] step %{{.*}} {
// GAP9:             %[[S:.*]] = dma.copy %a[%c0, %{{.*}}, %{{.*}}] -> %b[%{{.*}}, %{{.*}}, %c0] sizes [2, 1, 1] perm [2, 1, 0] engine #dma.engine<"gap9-ram", L3 -> L2, rank = 2, max_bytes = 1048576, align = 4, shared_request = true> on %[[R]] : memref<2x3x4xf32, "L3">, memref<4x3x2xf32, "L2">
// The GAP9 L3 request holds one transfer: a wait after every sub-copy.
// GAP9-NEXT:        dma.wait %[[S]]
// GAP9-NEXT:      }
// GAP9-NEXT:    }
// GAP9-NEXT:    dma.wait %[[R]]

// PULP-LABEL: func.func @transpose
// PULP:         %[[R:.*]] = dma.request count 1
// PULP:         scf.for
// PULP:           scf.for
// PULP:             dma.copy {{.*}} sizes [2, 1, 1] perm [2, 1, 0] engine #dma.engine<"pulp-open-ram", L3 -> L2, rank = 2, max_bytes = 1048576, align = 4, shared_request = false> on %[[R]]
// PULPOpen's requests may carry several sub-copies: no wait inside the loops,
// one wait for all of them where the copy was waited for.
// PULP-NEXT:        }
// PULP-NEXT:      }
// PULP-NEXT:      dma.wait %[[R]]

// Without the per-sub-copy waits (only to show the bug they prevent):
// NOWAIT-LABEL: func.func @transpose
// NOWAIT:             dma.copy {{.*}} on
// NOWAIT-NEXT:        }
// NOWAIT-NEXT:      }
// NOWAIT-NEXT:      dma.wait

// ERR: deeploy-opt: error: dma-decompose: unknown engine 'x86' (engines: mchan, pulp-open-ram, gap9-ram; targets: pulp-open, gap9)

// -----

// L2 -> L1, a rank-3 box [2,3,4] of [4,6,8] into a contiguous tile: rows of
// 4 elements (16 bytes) at stride 8 elements, 3 rows per plane, 2 planes 48
// elements apart. Rows and planes do not merge (8*3 != 48), so the copy has
// rank 3; the cluster DMA takes 2: box dim 0 (the outermost on the L1 side)
// is peeled into a loop of 2 sub-copies of 3 rows each. Same on both targets.
func.func @box(%a: memref<4x6x8xf32, "L2">, %b: memref<2x3x4xf32, "L1">, %i: index) {
  %c0 = arith.constant 0 : index
  %t = dma.copy %a[%i, %c0, %c0] -> %b[%c0, %c0, %c0] sizes [2, 3, 4] : memref<4x6x8xf32, "L2">, memref<2x3x4xf32, "L1">
  dma.wait %t
  func.return
}

// GAP9-LABEL: func.func @box
// GAP9:         %[[R:.*]] = dma.request count 1
// GAP9:         %[[TWO:.*]] = arith.constant 2 : index
// GAP9:         scf.for %[[K:.*]] = %{{.*}} to %[[TWO]] step %{{.*}} {
// GAP9-NEXT:      %[[SO:.*]] = arith.addi %i, %[[K]] : index
// GAP9-NEXT:      %[[DO:.*]] = arith.addi %c0, %[[K]] : index
// GAP9-NEXT:      dma.copy %a[%[[SO]], %c0, %c0] -> %b[%[[DO]], %c0, %c0] sizes [1, 3, 4] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 65536, align = 1, shared_request = false> on %[[R]]
// The cluster DMA completes in order: no wait inside the loop.
// GAP9-NEXT:    }
// GAP9-NEXT:    dma.wait %[[R]]

// -----

// A 2-D strided copy the cluster DMA takes as it is: it only gets its engine,
// and stays asynchronous (no request, no loop, no extra wait).
func.func @legal(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %c0 = arith.constant 0 : index
  %t = dma.copy %a[%i, %c0] -> %b[%c0, %c0] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// PULP-LABEL: func.func @legal
// PULP-NEXT:    %c0 = arith.constant 0 : index
// PULP-NEXT:    %t = dma.copy %a[%i, %c0] -> %b[%c0, %c0] sizes [4, 6] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 65536, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
// PULP-NEXT:    func.return
