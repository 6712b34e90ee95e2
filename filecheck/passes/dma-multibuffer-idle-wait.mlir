// RUN: env DEEPLOY_MLIR_DEBUG=1 deeploy-mlir run %S/../../examples/mlp_small --data %S/../../examples/mlp_small/data.npz --l1 10112 --buffering double --steps 1 2>&1 | filecheck %s --check-prefix=TRAIN
// RUN: env DEEPLOY_MLIR_DEBUG=1 deeploy-mlir run %S/../../examples/mlp_small --data %S/../../examples/mlp_small/data.npz --l1 10112 --buffering double --steps 1 --target gap9 2>&1 | filecheck %s --check-prefix=TRAIN
// RUN: deeploy-opt %s --split-input-file -p 'dma-multibuffer{count=3}' | filecheck %s
// (--l1 10112: a 2,048-byte L1 arena plus the 8,064 bytes of cluster stacks)

// dma-multibuffer never waits on a request slot that has nothing in flight.
// In iteration i of a multi-buffered tile loop the output slot's previous
// write-back (tile i - N) is waited for only from iteration N on (scf.if
// i >= N), and after the loop only the slots that a tile used are waited for
// (min(N, trip count)). Before, the pass waited on the output slot in every
// iteration and on all N slots after the loop; the emitter turned the first N
// of those waits into pi_cl_dma_cmd_wait on a zero-initialised command, which
// on the board waits for transfer id 0 and frees it while another transfer
// may hold it (an L3 RAM wait never returns).
//
// The host emulation stops at such a wait by default (DM_HOST_LENIENT=1 makes
// it a warning), so the first two RUNs -- mlp_small with --l1 2048, which
// tiles its first Gemm into a loop that double buffering overlaps, on both
// targets -- train only if no such wait is left.

// TRAIN-NOT: dm-host: {{.*}}which has no transfer issued
// TRAIN:     step 0 mini-batch 0: loss
// TRAIN-NOT: dm-host: {{.*}}which has no transfer issued

// A loop of 2 tiles with rings of 3 slots (tiling-materialize's form, by
// hand): no slot is written twice, so no wait for a previous write-back in the
// loop, and after it only the two slots that were used are waited for (slot 2
// never had a transfer).
func.func @short(%x: memref<8xf32, "L2">, %y: memref<8xf32, "L2">) {
  %xt = memref.alloc() : memref<4xf32, "L1">
  %yt = memref.alloc() : memref<4xf32, "L1">
  %lb = arith.constant 0 : index
  %ub = arith.constant 2 : index
  %one = arith.constant 1 : index
  scf.for %i = %lb to %ub step %one {
    %c4 = arith.constant 4 : index
    %off = arith.muli %i, %c4 : index
    %z = arith.constant 0 : index
    %x_in = dma.copy %x[%off] -> %xt[%z] sizes [4] : memref<8xf32, "L2">, memref<4xf32, "L1">
    dma.wait %x_in
    training.relu ins(%xt : memref<4xf32, "L1">) outs(%yt : memref<4xf32, "L1">)
    %y_out = dma.copy %yt[%z] -> %y[%off] sizes [4] : memref<4xf32, "L1">, memref<8xf32, "L2">
    dma.wait %y_out
  } {tiling.loop = #tiling.loop<tile>}
  func.return
}

// CHECK-LABEL: func.func @short
// CHECK:         dma.request count 3
// CHECK-NEXT:    %[[ROUT:.*]] = dma.request count 3
// CHECK:         scf.for
// CHECK-NOT:       dma.wait %[[ROUT]]
// CHECK:           training.relu
// CHECK-NEXT:      dma.copy {{.*}} on %[[ROUT]][%{{.*}}] :
// CHECK-NEXT:    } {tiling.loop = #tiling.loop<tile>}
// CHECK-NEXT:    %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[K1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    dma.wait %[[ROUT]][%[[K0]]]
// CHECK-NEXT:    dma.wait %[[ROUT]][%[[K1]]]
// CHECK-NEXT:    func.return

// -----

// A trip count known only at run time (%n tiles): the previous write-back is
// waited for under i >= 3, and after the loop slot k under n > k.
func.func @dynamic(%x: memref<64xf32, "L2">, %y: memref<64xf32, "L2">, %n: index) {
  %xt = memref.alloc() : memref<4xf32, "L1">
  %yt = memref.alloc() : memref<4xf32, "L1">
  %lb = arith.constant 0 : index
  %one = arith.constant 1 : index
  scf.for %i = %lb to %n step %one {
    %c4 = arith.constant 4 : index
    %off = arith.muli %i, %c4 : index
    %z = arith.constant 0 : index
    %x_in = dma.copy %x[%off] -> %xt[%z] sizes [4] : memref<64xf32, "L2">, memref<4xf32, "L1">
    dma.wait %x_in
    training.relu ins(%xt : memref<4xf32, "L1">) outs(%yt : memref<4xf32, "L1">)
    %y_out = dma.copy %yt[%z] -> %y[%off] sizes [4] : memref<4xf32, "L1">, memref<64xf32, "L2">
    dma.wait %y_out
  } {tiling.loop = #tiling.loop<tile>}
  func.return
}

// CHECK-LABEL: func.func @dynamic
// CHECK:         dma.request count 3
// CHECK-NEXT:    %[[ROUT:.*]] = dma.request count 3
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %n step
// CHECK:           %[[SLOT:.*]] = arith.remui %[[I]], %{{.*}} : index
// CHECK:             dma.copy %x[{{.*}}] -> {{.*}} on %{{.*}}[%{{.*}}] :
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[USED:.*]] = arith.cmpi uge, %[[I]], %[[C3]] : index
// CHECK-NEXT:      scf.if %[[USED]] {
// CHECK-NEXT:        dma.wait %[[ROUT]][%[[SLOT]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      training.relu
// CHECK:         } {tiling.loop = #tiling.loop<tile>}
// CHECK-NEXT:    %[[K0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[K1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[K2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[M0:.*]] = arith.cmpi ugt, %n, %[[K0]] : index
// CHECK-NEXT:    scf.if %[[M0]] {
// CHECK-NEXT:      dma.wait %[[ROUT]][%[[K0]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[M1:.*]] = arith.cmpi ugt, %n, %[[K1]] : index
// CHECK-NEXT:    scf.if %[[M1]] {
// CHECK-NEXT:      dma.wait %[[ROUT]][%[[K1]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[M2:.*]] = arith.cmpi ugt, %n, %[[K2]] : index
// CHECK-NEXT:    scf.if %[[M2]] {
// CHECK-NEXT:      dma.wait %[[ROUT]][%[[K2]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
