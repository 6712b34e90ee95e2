// RUN: deeploy-opt %s --split-input-file -p 'dma-decompose{engine=gap9}' | filecheck %s --check-prefix=GAP9
// RUN: deeploy-opt %s --split-input-file -p 'dma-decompose{engine=gap9},dma-decompose{engine=gap9}' | filecheck %s --check-prefix=GAP9
// RUN: deeploy-opt %s --split-input-file -p 'dma-decompose{engine=pulp-open}' | filecheck %s --check-prefix=PULP
// RUN: deeploy-opt %s --split-input-file -p 'dma-decompose{engine=gap9 wait_each=false}' | filecheck %s --check-prefix=NOWAIT
// RUN: deeploy-opt %s --split-input-file -p 'dma-decompose{engine=mchan}' | filecheck %s --check-prefix=MCHAN
// RUN: not deeploy-opt %s -p 'dma-decompose{engine=x86}' 2>&1 | filecheck %s --check-prefix=ERR
// RUN: sed -n 's|^// CONFLICT-INPUT: ||p' %s | not deeploy-opt -p 'dma-decompose{engine=gap9}' 2>&1 | filecheck %s --check-prefix=CONFLICT

// dma-decompose{engine=NAME|TARGET wait_each=B} (deeploy_mlir/passes/dma_decompose.py).
// The second RUN runs the pass twice: its output is a fixed point (the
// sub-copies are legal and keep their engine), so the GAP9 checks hold again.
//
// Notation of the derivations below: a box dim is (count, ext step, loc step)
// in bytes -- the ext side is the larger level (L3 of L3 <-> L2, L2 of
// L2 <-> L1), loc the smaller. The pass peels box dims in order of their loc
// step, largest first, one scf.for each, until the rest is one transfer the
// engine takes: rank 1 (one contiguous run) or rank 2 (rows of contiguous
// bytes, strided on the ext side, back to back on the loc side), at most
// max_bytes. Every engine here takes rank 2; the L3 ones need 4-byte
// alignment, which f32 always has.

// =============================================================================
// (a, b, e) A rank-3 transposing copy L3 -> L2
// =============================================================================
//
// memref<2x3x4xf32, "L3"> (element strides 12, 4, 1) into
// memref<4x3x2xf32, "L2"> (strides 6, 2, 1) with perm [2, 1, 0]: box dim k lands
// in L2 dim perm[k], so its loc step is the stride of that dim.
//   box dim 0: (2, 12*4 = 48, 1*4 = 4)
//   box dim 1: (3,  4*4 = 16, 2*4 = 8)
//   box dim 2: (4,  1*4 =  4, 6*4 = 24)
// plus the 4 contiguous bytes of one element. No two dims merge (box dim 0
// is 48 bytes apart in L3, not 4), so the copy has rank 4.
//   Peel box dim 2 (loc step 24, the largest): a loop of 4 -> rank 3 still.
//   Peel box dim 1 (loc step 8): a loop of 3 inside it -> what remains is box
//   dim 0 and the element: 2 rows of 4 bytes, 48 bytes apart in L3 and back
//   to back (loc step 4 = the row) in L2: rank 2, 8 bytes -- legal.
// So 4 x 3 = 12 sub-copies of sizes [2, 1, 1]. The outer index moves box dim 2
// (source dim 2, destination dim perm[2] = 0), the inner one box dim 1
// (source dim 1, destination dim perm[1] = 1). Rows 4 bytes, steps 48 and 4:
// aligned to 4. The offsets are distinct values (zero at run time, the box is
// the whole tensor) so that the checks see which index goes where.
func.func @transpose(%a: memref<2x3x4xf32, "L3">, %b: memref<4x3x2xf32, "L2">,
                     %s0: index, %s1: index, %s2: index, %d0: index, %d1: index, %d2: index) {
  %t = dma.copy %a[%s0, %s1, %s2] -> %b[%d0, %d1, %d2] sizes [2, 3, 4] perm [2, 1, 0] : memref<2x3x4xf32, "L3">, memref<4x3x2xf32, "L2">
  dma.wait %t
  func.return
}

// The copy's token becomes one request that all sub-copies are issued on;
// its wait stays where it was and now waits for all 12.
// GAP9-LABEL: func.func @transpose
// GAP9-NEXT:    %[[R:.*]] = dma.request count 1
// GAP9-NEXT:    %[[LB:.*]] = arith.constant 0 : index
// GAP9-NEXT:    %[[UB:.*]] = arith.constant 4 : index
// GAP9-NEXT:    %[[ST:.*]] = arith.constant 1 : index
// GAP9-NEXT:    scf.for %[[K:.*]] = %[[LB]] to %[[UB]] step %[[ST]] {
// GAP9-NEXT:      %[[SK:.*]] = arith.addi %s2, %[[K]] : index
// GAP9-NEXT:      %[[DK:.*]] = arith.addi %d0, %[[K]] : index
// GAP9-NEXT:      %[[LB2:.*]] = arith.constant 0 : index
// GAP9-NEXT:      %[[UB2:.*]] = arith.constant 3 : index
// GAP9-NEXT:      %[[ST2:.*]] = arith.constant 1 : index
// GAP9-NEXT:      scf.for %[[J:.*]] = %[[LB2]] to %[[UB2]] step %[[ST2]] {
// GAP9-NEXT:        %[[SJ:.*]] = arith.addi %s1, %[[J]] : index
// GAP9-NEXT:        %[[DJ:.*]] = arith.addi %d1, %[[J]] : index
// GAP9-NEXT:        %[[S:.*]] = dma.copy %a[%s0, %[[SJ]], %[[SK]]] -> %b[%[[DK]], %[[DJ]], %d2] sizes [2, 1, 1] perm [2, 1, 0] engine #dma.engine<"gap9-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = true> on %[[R]] : memref<2x3x4xf32, "L3">, memref<4x3x2xf32, "L2">
// The GAP9 L3 request holds one transfer in flight: every sub-copy is waited
// before the next is issued.
// GAP9-NEXT:        dma.wait %[[S]]
// GAP9-NEXT:      }
// GAP9-NEXT:    }
// GAP9-NEXT:    dma.wait %[[R]]
// GAP9-NEXT:    func.return

// PULPOpen: a pi_cl_ram_req_t holds one transfer too (pulp-sdk), so its
// engine is also shared_request: the same 12 sub-copies, each waited for
// before the next (dma-decompose-request-reuse.mlir).
// PULP-LABEL: func.func @transpose
// PULP-NEXT:    %[[R:.*]] = dma.request count 1
// PULP:         %[[UB:.*]] = arith.constant 4 : index
// PULP:         scf.for %[[K:.*]] = %{{.*}} to %[[UB]] step %{{.*}} {
// PULP:           %[[UB2:.*]] = arith.constant 3 : index
// PULP:           scf.for %[[J:.*]] = %{{.*}} to %[[UB2]] step %{{.*}} {
// PULP:             %[[S:.*]] = dma.copy %a[%s0, %{{.*}}, %{{.*}}] -> %b[%{{.*}}, %{{.*}}, %d2] sizes [2, 1, 1] perm [2, 1, 0] engine #dma.engine<"pulp-open-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = true> on %[[R]] : memref<2x3x4xf32, "L3">, memref<4x3x2xf32, "L2">
// PULP-NEXT:        dma.wait %[[S]]
// PULP-NEXT:      }
// PULP-NEXT:    }
// PULP-NEXT:    dma.wait %[[R]]
// PULP-NEXT:    func.return

// wait_each=false (only to show the bug the waits prevent): GAP9's engine,
// no wait between the sub-copies.
// NOWAIT-LABEL: func.func @transpose
// NOWAIT:             dma.copy {{.*}} sizes [2, 1, 1] perm [2, 1, 0] engine #dma.engine<"gap9-ram", {{.*}}, shared_request = true> on %[[R:.*]] :
// NOWAIT-NEXT:      }
// NOWAIT-NEXT:    }
// NOWAIT-NEXT:    dma.wait %[[R]]
// NOWAIT-NEXT:    func.return

// engine=mchan names only the cluster DMA: an L3 copy is left as it is.
// MCHAN-LABEL: func.func @transpose
// MCHAN-NEXT:    %t = dma.copy %a[%s0, %s1, %s2] -> %b[%d0, %d1, %d2] sizes [2, 3, 4] perm [2, 1, 0] : memref<2x3x4xf32, "L3">, memref<4x3x2xf32, "L2">
// MCHAN-NEXT:    dma.wait %t
// MCHAN-NEXT:    func.return

// (f) An engine name that is neither an engine nor a target: one line.
// ERR-NOT:     Traceback
// ERR:         {{^}}deeploy-opt: error: pass pipeline: dma-decompose: engine must be one of pulp-open, gap9, mchan, pulp-open-ram, gap9-ram, got 'x86'{{$}}
// ERR-NOT:     {{.}}

// -----

// =============================================================================
// (c) L2 <-> L1 rank-3 boxes on the cluster DMA (mchan)
// =============================================================================
//
// In: the box [2, 3, 4] at %i of memref<4x6x8xf32, "L2"> (strides 48, 8, 1)
// into a whole memref<2x3x4xf32, "L1"> tile (strides 12, 4, 1):
//   box dim 0: (2, 192, 48)   box dim 1: (3, 32, 16)   box dim 2: (4, 4, 4)
// Box dim 2 merges with the element (4 bytes apart on both sides): rows of
// 16 contiguous bytes. Box dim 1 does not merge with them in L2 (rows 32
// bytes apart, not 16), box dim 0 not with box dim 1 (192 != 3 * 32): rank 3.
// mchan takes 2: peel box dim 0 (loc step 48, the largest) -> 3 rows of 16
// bytes, 32 apart in L2, back to back in L1: rank 2. A loop of 2 sub-copies of
// [1, 3, 4]. The cluster DMA completes in order and its request may hold
// several commands: no wait inside the loop on either target.
//
// Out: the same box written back (L1 -> L2). The loc side is now the source,
// the numbers are the same: a loop of 2, box dim 0 moving source dim 0 and
// destination dim 0.
func.func @box(%a: memref<4x6x8xf32, "L2">, %b: memref<2x3x4xf32, "L1">, %i: index, %z: index) {
  %t = dma.copy %a[%i, %z, %z] -> %b[%z, %z, %z] sizes [2, 3, 4] : memref<4x6x8xf32, "L2">, memref<2x3x4xf32, "L1">
  dma.wait %t
  %u = dma.copy %b[%z, %z, %z] -> %a[%i, %z, %z] sizes [2, 3, 4] : memref<2x3x4xf32, "L1">, memref<4x6x8xf32, "L2">
  dma.wait %u
  func.return
}

// GAP9-LABEL: func.func @box
// GAP9-NEXT:    %[[R:.*]] = dma.request count 1
// GAP9-NEXT:    %{{.*}} = arith.constant 0 : index
// GAP9-NEXT:    %[[TWO:.*]] = arith.constant 2 : index
// GAP9-NEXT:    %{{.*}} = arith.constant 1 : index
// GAP9-NEXT:    scf.for %[[K:.*]] = %{{.*}} to %[[TWO]] step %{{.*}} {
// GAP9-NEXT:      %[[SO:.*]] = arith.addi %i, %[[K]] : index
// GAP9-NEXT:      %[[DO:.*]] = arith.addi %z, %[[K]] : index
// GAP9-NEXT:      %{{.*}} = dma.copy %a[%[[SO]], %z, %z] -> %b[%[[DO]], %z, %z] sizes [1, 3, 4] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false> on %[[R]] : memref<4x6x8xf32, "L2">, memref<2x3x4xf32, "L1">
// GAP9-NEXT:    }
// GAP9-NEXT:    dma.wait %[[R]]
// GAP9-NEXT:    %[[R2:.*]] = dma.request count 1
// GAP9-NEXT:    %{{.*}} = arith.constant 0 : index
// GAP9-NEXT:    %[[TWO2:.*]] = arith.constant 2 : index
// GAP9-NEXT:    %{{.*}} = arith.constant 1 : index
// GAP9-NEXT:    scf.for %[[K2:.*]] = %{{.*}} to %[[TWO2]] step %{{.*}} {
// GAP9-NEXT:      %[[SO2:.*]] = arith.addi %z, %[[K2]] : index
// GAP9-NEXT:      %[[DO2:.*]] = arith.addi %i, %[[K2]] : index
// GAP9-NEXT:      %{{.*}} = dma.copy %b[%[[SO2]], %z, %z] -> %a[%[[DO2]], %z, %z] sizes [1, 3, 4] engine #dma.engine<"mchan", {{.*}}> on %[[R2]] : memref<2x3x4xf32, "L1">, memref<4x6x8xf32, "L2">
// GAP9-NEXT:    }
// GAP9-NEXT:    dma.wait %[[R2]]
// GAP9-NEXT:    func.return

// PULP-LABEL: func.func @box
// PULP:         scf.for
// PULP-NEXT:      arith.addi
// PULP-NEXT:      arith.addi
// PULP-NEXT:      dma.copy %a[%{{.*}}, %z, %z] -> %b[%{{.*}}, %z, %z] sizes [1, 3, 4] engine #dma.engine<"mchan", {{.*}}> on
// PULP-NEXT:    }
// PULP-NEXT:    dma.wait
// PULP:         scf.for
// PULP-NEXT:      arith.addi
// PULP-NEXT:      arith.addi
// PULP-NEXT:      dma.copy %b[%{{.*}}, %z, %z] -> %a[%{{.*}}, %z, %z] sizes [1, 3, 4] engine #dma.engine<"mchan", {{.*}}> on
// PULP-NEXT:    }
// PULP-NEXT:    dma.wait

// MCHAN-LABEL: func.func @box
// MCHAN:         dma.copy %a[%{{.*}}, %z, %z] -> %b[%{{.*}}, %z, %z] sizes [1, 3, 4] engine #dma.engine<"mchan"
// MCHAN:         dma.copy %b[%{{.*}}, %z, %z] -> %a[%{{.*}}, %z, %z] sizes [1, 3, 4] engine #dma.engine<"mchan"

// -----

// =============================================================================
// (d) Copies the engine takes as they are
// =============================================================================
//
// %t: rows 0..3, columns 0..2 of memref<8x6xf32, "L2"> into a memref<4x3xf32,
// "L1"> tile: 4 rows of 12 bytes, 24 apart in L2, back to back in L1 -- rank 2,
// 48 bytes: legal on mchan. %u: the same on the L3 -> L2 hop, legal on both
// L3 engines (rows 12 bytes, step 24: aligned to 4). %v: a whole contiguous
// tensor, rank 1. Each only gets its engine and stays one asynchronous copy:
// no request, no loop, and no wait added -- not even on GAP9, whose waits are
// between the sub-copies of a decomposed copy only. The waits stay after the
// three copies, where they were.
func.func @legal(%a: memref<8x6xf32, "L2">, %b: memref<4x3xf32, "L1">, %l3: memref<8x6xf32, "L3">,
                 %c: memref<4x3xf32, "L2">, %w: memref<8x6xf32, "L1">, %i: index, %z: index) {
  %t = dma.copy %a[%i, %z] -> %b[%z, %z] sizes [4, 3] : memref<8x6xf32, "L2">, memref<4x3xf32, "L1">
  %u = dma.copy %l3[%i, %z] -> %c[%z, %z] sizes [4, 3] : memref<8x6xf32, "L3">, memref<4x3xf32, "L2">
  %v = dma.copy %w[%z, %z] -> %a[%z, %z] sizes [8, 6] : memref<8x6xf32, "L1">, memref<8x6xf32, "L2">
  dma.wait %t
  dma.wait %u
  dma.wait %v
  func.return
}

// GAP9-LABEL: func.func @legal
// GAP9-NEXT:    %t = dma.copy %a[%i, %z] -> %b[%z, %z] sizes [4, 3] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x3xf32, "L1">
// GAP9-NEXT:    %u = dma.copy %l3[%i, %z] -> %c[%z, %z] sizes [4, 3] engine #dma.engine<"gap9-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = true> : memref<8x6xf32, "L3">, memref<4x3xf32, "L2">
// GAP9-NEXT:    %v = dma.copy %w[%z, %z] -> %a[%z, %z] sizes [8, 6] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false> : memref<8x6xf32, "L1">, memref<8x6xf32, "L2">
// GAP9-NEXT:    dma.wait %t
// GAP9-NEXT:    dma.wait %u
// GAP9-NEXT:    dma.wait %v
// GAP9-NEXT:    func.return

// PULP-LABEL: func.func @legal
// PULP-NEXT:    %t = dma.copy %a[%i, %z] -> %b[%z, %z] sizes [4, 3] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x3xf32, "L1">
// PULP-NEXT:    %u = dma.copy %l3[%i, %z] -> %c[%z, %z] sizes [4, 3] engine #dma.engine<"pulp-open-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = true> : memref<8x6xf32, "L3">, memref<4x3xf32, "L2">
// PULP-NEXT:    %v = dma.copy %w[%z, %z] -> %a[%z, %z] sizes [8, 6] engine #dma.engine<"mchan", {{.*}}> : memref<8x6xf32, "L1">, memref<8x6xf32, "L2">
// PULP-NEXT:    dma.wait %t
// PULP-NEXT:    dma.wait %u
// PULP-NEXT:    dma.wait %v
// PULP-NEXT:    func.return

// MCHAN-LABEL: func.func @legal
// MCHAN-NEXT:    %t = dma.copy %a[%i, %z] -> %b[%z, %z] sizes [4, 3] engine #dma.engine<"mchan", {{.*}}> :
// MCHAN-NEXT:    %u = dma.copy %l3[%i, %z] -> %c[%z, %z] sizes [4, 3] : memref<8x6xf32, "L3">, memref<4x3xf32, "L2">
// MCHAN-NEXT:    %v = dma.copy %w[%z, %z] -> %a[%z, %z] sizes [8, 6] engine #dma.engine<"mchan", {{.*}}> :

// -----

// =============================================================================
// Too many bytes for one transfer
// =============================================================================
//
// mchan's limits, as pulp-sdk passes the sizes (pos/implem/dma.h: a 1-D size
// and a 2-D row length as unsigned short; archi/dma/mchan_v7.h: a 17-bit
// length field for a 2-D size): one contiguous run (a 1-D copy, or a row) of
// at most 65535 bytes, a 2-D copy of at most 131071.
//
// @big: a whole memref<20x1024xf32>, L2 -> L1: contiguous on both sides, so
// one dim of 81920 bytes -- rank 1 and under 131071, but one run longer than
// 65535. Peel box dim 0 (loc step 4096, the largest): 20 sub-copies of one
// 4096-byte row, on one request, in a loop marked {dma.sub_copies}: the C
// emitter waits for the previous sub-copy on the command before it issues the
// next (each mchan transfer holds one of 16 transfer ids until its wait).
func.func @big(%a: memref<20x1024xf32, "L2">, %b: memref<20x1024xf32, "L1">, %z: index) {
  %t = dma.copy %a[%z, %z] -> %b[%z, %z] sizes [20, 1024] : memref<20x1024xf32, "L2">, memref<20x1024xf32, "L1">
  dma.wait %t
  func.return
}

// GAP9-LABEL: func.func @big
// GAP9-NEXT:    %[[R:.*]] = dma.request count 1
// GAP9-NEXT:    %{{.*}} = arith.constant 0 : index
// GAP9-NEXT:    %[[N:.*]] = arith.constant 20 : index
// GAP9-NEXT:    %{{.*}} = arith.constant 1 : index
// GAP9-NEXT:    scf.for %[[K:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// GAP9-NEXT:      %[[SO:.*]] = arith.addi %z, %[[K]] : index
// GAP9-NEXT:      %[[DO:.*]] = arith.addi %z, %[[K]] : index
// GAP9-NEXT:      %{{.*}} = dma.copy %a[%[[SO]], %z] -> %b[%[[DO]], %z] sizes [1, 1024] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false> on %[[R]] :
// GAP9-NEXT:    } {dma.sub_copies}
// GAP9-NEXT:    dma.wait %[[R]]
// GAP9-NEXT:    func.return

// -----

// Rows of 32 KiB: 5 of the 8 rows of a memref<8x16384xf32> (rows 64 KiB
// apart, the first half of each), L2 -> L1. Each row (32768 bytes) fits the
// 16-bit row length, but 5 rows are 163840 bytes, over the 2-D limit of
// 131071: peel box dim 0 -> 5 sub-copies of one 32768-byte run. 3 of them
// (98304 bytes) are one legal 2-D copy: no loop.
func.func @rows(%a: memref<8x16384xf32, "L2">, %b: memref<5x8192xf32, "L1">, %c: memref<3x8192xf32, "L1">, %z: index) {
  %t = dma.copy %a[%z, %z] -> %b[%z, %z] sizes [5, 8192] : memref<8x16384xf32, "L2">, memref<5x8192xf32, "L1">
  %u = dma.copy %a[%z, %z] -> %c[%z, %z] sizes [3, 8192] : memref<8x16384xf32, "L2">, memref<3x8192xf32, "L1">
  dma.wait %t
  dma.wait %u
  func.return
}

// GAP9-LABEL: func.func @rows
// GAP9-NEXT:    %[[R:.*]] = dma.request count 1
// GAP9-NEXT:    %{{.*}} = arith.constant 0 : index
// GAP9-NEXT:    %[[N:.*]] = arith.constant 5 : index
// GAP9-NEXT:    %{{.*}} = arith.constant 1 : index
// GAP9-NEXT:    scf.for %[[K:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// GAP9-NEXT:      %[[SO:.*]] = arith.addi %z, %[[K]] : index
// GAP9-NEXT:      %[[DO:.*]] = arith.addi %z, %[[K]] : index
// GAP9-NEXT:      %{{.*}} = dma.copy %a[%[[SO]], %z] -> %b[%[[DO]], %z] sizes [1, 8192] engine #dma.engine<"mchan", {{.*}}> on %[[R]] :
// GAP9-NEXT:    } {dma.sub_copies}
// GAP9-NEXT:    %u = dma.copy %a[%z, %z] -> %c[%z, %z] sizes [3, 8192] engine #dma.engine<"mchan", {{.*}}> :
// GAP9-NEXT:    dma.wait %[[R]]
// GAP9-NEXT:    dma.wait %u

// -----

// =============================================================================
// A copy already on a slot of a request ring (as dma-multibuffer writes it)
// =============================================================================
//
// The transposing copy of @transpose issued on slot %s of a ring: the
// sub-copies go on the same ring slot (no new request), and the waits that
// name the ring slot stay.
func.func @ring(%a: memref<2x3x4xf32, "L3">, %ring: memref<2x4x3x2xf32, "L2">, %s: index, %z: index) {
  %r = dma.request count 2
  %b = dma.slot %ring[%s] : memref<2x4x3x2xf32, "L2"> -> memref<4x3x2xf32, "L2">
  %t = dma.copy %a[%z, %z, %z] -> %b[%z, %z, %z] sizes [2, 3, 4] perm [2, 1, 0] on %r[%s] : memref<2x3x4xf32, "L3">, memref<4x3x2xf32, "L2">
  dma.wait %r[%s]
  func.return
}

// GAP9-LABEL: func.func @ring
// GAP9-NEXT:    %r = dma.request count 2
// GAP9-NEXT:    %b = dma.slot %ring[%s]
// GAP9-NOT:     dma.request
// GAP9:         scf.for
// GAP9:           scf.for
// GAP9:             %[[S:.*]] = dma.copy %a[%z, %{{.*}}, %{{.*}}] -> %b[%{{.*}}, %{{.*}}, %z] sizes [2, 1, 1] perm [2, 1, 0] engine #dma.engine<"gap9-ram", {{.*}}> on %r[%s] :
// GAP9-NEXT:        dma.wait %[[S]]
// GAP9-NEXT:      }
// GAP9-NEXT:    }
// GAP9-NEXT:    dma.wait %r[%s]
// GAP9-NEXT:    func.return

// PULP-LABEL: func.func @ring
// PULP-NOT:     dma.request count 1
// PULP:             %[[S:.*]] = dma.copy {{.*}} sizes [2, 1, 1] perm [2, 1, 0] engine #dma.engine<"pulp-open-ram", {{.*}}> on %r[%s] :
// PULP-NEXT:        dma.wait %[[S]]
// PULP-NEXT:      }
// PULP-NEXT:    }
// PULP-NEXT:    dma.wait %r[%s]

// =============================================================================
// Errors
// =============================================================================
//
// A copy that already has another engine for its hop is an error, not a
// silent change of engine (the input of the CONFLICT run, extracted by sed):
// CONFLICT-INPUT: func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
// CONFLICT-INPUT:   %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] engine #dma.engine<"other", L2 -> L1, rank = 2, max_bytes = 65536, max_row = 65536, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
// CONFLICT-INPUT:   func.return
// CONFLICT-INPUT: }
// CONFLICT-NOT:   Traceback
// CONFLICT:       {{^}}deeploy-opt: error: dma-decompose: a copy L2 -> L1 already has engine 'other', not 'mchan'{{$}}
// CONFLICT-NOT:   {{.}}
