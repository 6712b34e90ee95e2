// RUN: deeploy-opt %s -p 'l3-overlap' | filecheck %s
// RUN: deeploy-opt %s -p 'l3-overlap{overlap=false}' | filecheck %s --check-prefix=NOMOVE

// l3-overlap's forwarding (deeploy_mlir/memory/forward.py), then its moves.
// One-stage-tile ops as tiling-materialize writes them (no L1 hop here):
//   t: op 1 writes a, stored to t (%s1); %f1 fetches t back into b for an
//      in-place op 2, stored again (%s2); %f2 fetches it for op 3.
//      %f1: the last copy of t before it is %s1, the same 16 elements from
//        a, waited for before %f1; a is not written between nor used after
//        %f1: b's readers read a, %f1 and b go.
//      %f2: the same with %s2 (from b, now a): b2's readers read a.
//      %s1: the next copy of t is %s2, the same box: dead, it goes.
//      The wait of %s2 moves below op 3 (which reads a, writes o).
//   u: op 4 writes d, stored to u (%s3) and fetched back (%f3) into e for an
//      in-place op 5: forwarded (e's readers read d), %s3 stays (nothing
//      stores u again), and its wait stays above op 5, which writes d: the
//      store reads d until it is waited for.
//   w: %f4 into w1, written in place by op 6; %f5 fetches w again: w1 no
//      longer holds w's bytes, so %f5 stays. Both fetches are hoisted one
//      op early (l3-overlap's move).
// overlap=false (the default pipeline's single buffering): the same
// forwarding and dropped store, no move: every wait stays right after its
// copy, %f4 and %f5 stay right before their readers, no dma.remark.
func.func @training_step(%x: memref<16xf32, "L2"> {training.arg = #training.arg<input "x">},
                         %t: memref<16xf32, "L3"> {training.arg = #training.arg<output "t">},
                         %u: memref<16xf32, "L3"> {training.arg = #training.arg<output "u">},
                         %w: memref<16xf32, "L3"> {training.arg = #training.arg<param "w">},
                         %o: memref<16xf32, "L2"> {training.arg = #training.arg<output "o">}) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<16xf32, "L2">
  training.relu ins(%x : memref<16xf32, "L2">) outs(%a : memref<16xf32, "L2">)
  %s1 = dma.copy %a[%c0] -> %t[%c0] sizes [16] : memref<16xf32, "L2">, memref<16xf32, "L3">
  dma.wait %s1
  %b = memref.alloc() : memref<16xf32, "L2">
  %c1 = arith.constant 0 : index
  %f1 = dma.copy %t[%c1] -> %b[%c1] sizes [16] : memref<16xf32, "L3">, memref<16xf32, "L2">
  dma.wait %f1
  training.relu ins(%b : memref<16xf32, "L2">) outs(%b : memref<16xf32, "L2">)
  %s2 = dma.copy %b[%c1] -> %t[%c1] sizes [16] : memref<16xf32, "L2">, memref<16xf32, "L3">
  dma.wait %s2
  %b2 = memref.alloc() : memref<16xf32, "L2">
  %f2 = dma.copy %t[%c0] -> %b2[%c0] sizes [16] : memref<16xf32, "L3">, memref<16xf32, "L2">
  dma.wait %f2
  training.relu ins(%b2 : memref<16xf32, "L2">) outs(%o : memref<16xf32, "L2">)
  %d = memref.alloc() : memref<16xf32, "L2">
  training.relu ins(%o : memref<16xf32, "L2">) outs(%d : memref<16xf32, "L2">)
  %s3 = dma.copy %d[%c0] -> %u[%c0] sizes [16] : memref<16xf32, "L2">, memref<16xf32, "L3">
  dma.wait %s3
  %e = memref.alloc() : memref<16xf32, "L2">
  %f3 = dma.copy %u[%c0] -> %e[%c0] sizes [16] : memref<16xf32, "L3">, memref<16xf32, "L2">
  dma.wait %f3
  training.relu ins(%e : memref<16xf32, "L2">) outs(%e : memref<16xf32, "L2">)
  %w1 = memref.alloc() : memref<16xf32, "L2">
  %f4 = dma.copy %w[%c0] -> %w1[%c0] sizes [16] : memref<16xf32, "L3">, memref<16xf32, "L2">
  dma.wait %f4
  training.relu ins(%w1 : memref<16xf32, "L2">) outs(%w1 : memref<16xf32, "L2">)
  %w2 = memref.alloc() : memref<16xf32, "L2">
  %f5 = dma.copy %w[%c0] -> %w2[%c0] sizes [16] : memref<16xf32, "L3">, memref<16xf32, "L2">
  dma.wait %f5
  training.relu ins(%w2 : memref<16xf32, "L2">) outs(%e : memref<16xf32, "L2">)
  func.return
}

// CHECK-LABEL: func.func @training_step
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %a = memref.alloc()
// CHECK-NEXT:    training.relu ins(%x : memref<16xf32, "L2">) outs(%a : memref<16xf32, "L2">)
// CHECK-NEXT:    %c1 = arith.constant 0 : index
// CHECK-NEXT:    training.relu ins(%a : memref<16xf32, "L2">) outs(%a : memref<16xf32, "L2">)
// CHECK-NEXT:    %s2 = dma.copy %a[%c1] -> %t[%c1] sizes [16]
// CHECK-NEXT:    training.relu ins(%a : memref<16xf32, "L2">) outs(%o : memref<16xf32, "L2">)
// CHECK-NEXT:    dma.wait %s2
// CHECK-NEXT:    %d = memref.alloc()
// CHECK-NEXT:    training.relu ins(%o : memref<16xf32, "L2">) outs(%d : memref<16xf32, "L2">)
// CHECK-NEXT:    %s3 = dma.copy %d[%c0] -> %u[%c0] sizes [16]
// CHECK-NEXT:    dma.wait %s3
// CHECK-NEXT:    %w1 = memref.alloc()
// CHECK-NEXT:    %f4 = dma.copy %w[%c0] -> %w1[%c0] sizes [16] {{.*}}dma.remark
// CHECK-NEXT:    training.relu ins(%d : memref<16xf32, "L2">) outs(%d : memref<16xf32, "L2">)
// CHECK-NEXT:    dma.wait %f4
// CHECK-NEXT:    %w2 = memref.alloc()
// CHECK-NEXT:    %f5 = dma.copy %w[%c0] -> %w2[%c0] sizes [16] {{.*}}dma.remark
// CHECK-NEXT:    training.relu ins(%w1 : memref<16xf32, "L2">) outs(%w1 : memref<16xf32, "L2">)
// CHECK-NEXT:    dma.wait %f5
// CHECK-NEXT:    training.relu ins(%w2 : memref<16xf32, "L2">) outs(%d : memref<16xf32, "L2">)
// CHECK-NEXT:    func.return

// NOMOVE-LABEL: func.func @training_step
// NOMOVE-NEXT:    %c0 = arith.constant 0 : index
// NOMOVE-NEXT:    %a = memref.alloc()
// NOMOVE-NEXT:    training.relu ins(%x : memref<16xf32, "L2">) outs(%a : memref<16xf32, "L2">)
// NOMOVE-NEXT:    %c1 = arith.constant 0 : index
// NOMOVE-NEXT:    training.relu ins(%a : memref<16xf32, "L2">) outs(%a : memref<16xf32, "L2">)
// NOMOVE-NEXT:    %s2 = dma.copy %a[%c1] -> %t[%c1] sizes [16]
// NOMOVE-NEXT:    dma.wait %s2
// NOMOVE-NEXT:    training.relu ins(%a : memref<16xf32, "L2">) outs(%o : memref<16xf32, "L2">)
// NOMOVE-NEXT:    %d = memref.alloc()
// NOMOVE-NEXT:    training.relu ins(%o : memref<16xf32, "L2">) outs(%d : memref<16xf32, "L2">)
// NOMOVE-NEXT:    %s3 = dma.copy %d[%c0] -> %u[%c0] sizes [16]
// NOMOVE-NEXT:    dma.wait %s3
// NOMOVE-NEXT:    training.relu ins(%d : memref<16xf32, "L2">) outs(%d : memref<16xf32, "L2">)
// NOMOVE-NEXT:    %w1 = memref.alloc()
// NOMOVE-NEXT:    %f4 = dma.copy %w[%c0] -> %w1[%c0] sizes [16]
// NOMOVE-NOT:     dma.remark
// NOMOVE-NEXT:    dma.wait %f4
// NOMOVE-NEXT:    training.relu ins(%w1 : memref<16xf32, "L2">) outs(%w1 : memref<16xf32, "L2">)
// NOMOVE-NEXT:    %w2 = memref.alloc()
// NOMOVE-NEXT:    %f5 = dma.copy %w[%c0] -> %w2[%c0] sizes [16]
// NOMOVE-NEXT:    dma.wait %f5
// NOMOVE-NEXT:    training.relu ins(%w2 : memref<16xf32, "L2">) outs(%d : memref<16xf32, "L2">)
// NOMOVE-NEXT:    func.return
