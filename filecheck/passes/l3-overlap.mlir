// RUN: deeploy-opt %s -p 'l3-overlap{forward=false}' | filecheck %s
// RUN: not deeploy-opt %s -p 'l3-overlap{l2=-1}' 2>&1 | filecheck %s --check-prefix=ERR

// l3-overlap{l2=BYTES} (deeploy_mlir/passes/l3_overlap.py), its moves alone
// (forward=false; forwarding: l3-overlap-forward.mlir): three ops, each
// with its L3 operands fetched into a fresh L2 buffer and stored back around
// it, as tiling-materialize writes one-stage-tile ops (no L1 hop here).
//   op 1 reads a, writes b; op 2 reads w, writes w; op 3 reads b, writes b.
// The moves, in program order:
//   %fa: no compute op before it: stays.
//   wait %sb (store of b): below the next compute op, relu #2 (nothing in
//     between copies from or into b: %fw reads w).
//   %fw (with %w2 and a copy of its index constant): above the compute op
//     before it, relu #1 (the store %sb in between writes b, not w).
//   wait %sw (store of w): below relu #3 (%fb reads b, not w).
//   %fb: the compute op before it is relu #2, but the wait of the store of b
//     now follows relu #2: b's bytes are not there before that wait, so %fb
//     stays.
//   wait %sb2: nothing computes after it: stays before the return.
func.func @training_step(%a: memref<16xf32, "L3"> {training.arg = #training.arg<input "a">},
                         %b: memref<16xf32, "L3"> {training.arg = #training.arg<output "b">},
                         %w: memref<16xf32, "L3"> {training.arg = #training.arg<param "w">}) {
  %a2 = memref.alloc() : memref<16xf32, "L2">
  %b2 = memref.alloc() : memref<16xf32, "L2">
  %c0 = arith.constant 0 : index
  %fa = dma.copy %a[%c0] -> %a2[%c0] sizes [16] : memref<16xf32, "L3">, memref<16xf32, "L2">
  dma.wait %fa
  training.relu ins(%a2 : memref<16xf32, "L2">) outs(%b2 : memref<16xf32, "L2">)
  %sb = dma.copy %b2[%c0] -> %b[%c0] sizes [16] : memref<16xf32, "L2">, memref<16xf32, "L3">
  dma.wait %sb
  %w2 = memref.alloc() : memref<16xf32, "L2">
  %o = memref.alloc() : memref<16xf32, "L2">
  %c1 = arith.constant 0 : index
  %fw = dma.copy %w[%c1] -> %w2[%c1] sizes [16] : memref<16xf32, "L3">, memref<16xf32, "L2">
  dma.wait %fw
  training.relu ins(%w2 : memref<16xf32, "L2">) outs(%o : memref<16xf32, "L2">)
  %sw = dma.copy %o[%c1] -> %w[%c1] sizes [16] : memref<16xf32, "L2">, memref<16xf32, "L3">
  dma.wait %sw
  %b3 = memref.alloc() : memref<16xf32, "L2">
  %c2 = arith.constant 0 : index
  %fb = dma.copy %b[%c2] -> %b3[%c2] sizes [16] : memref<16xf32, "L3">, memref<16xf32, "L2">
  dma.wait %fb
  training.relu ins(%b3 : memref<16xf32, "L2">) outs(%b3 : memref<16xf32, "L2">)
  %sb2 = dma.copy %b3[%c2] -> %b[%c2] sizes [16] : memref<16xf32, "L2">, memref<16xf32, "L3">
  dma.wait %sb2
  func.return
}

// CHECK-LABEL: func.func @training_step
// CHECK:         %fa = dma.copy %a
// CHECK-NEXT:    dma.wait %fa
// CHECK-NEXT:    %[[K:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %w2 = memref.alloc()
// CHECK-NEXT:    %fw = dma.copy %w[%[[K]]] -> %w2[%[[K]]] {{.*}}dma.remark = "l3-overlap: L3 fetch issued before the previous op computes"
// CHECK-NEXT:    training.relu ins(%a2
// CHECK-NEXT:    %sb = dma.copy %b2
// CHECK-NEXT:    %o = memref.alloc()
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    dma.wait %fw
// CHECK-NEXT:    training.relu ins(%w2
// CHECK-NEXT:    dma.wait %sb
// CHECK-NEXT:    %sw = dma.copy %o
// CHECK-NEXT:    %b3 = memref.alloc()
// CHECK-NEXT:    %c2 = arith.constant 0 : index
// CHECK-NEXT:    %fb = dma.copy %b[%c2] -> %b3[%c2] sizes [16] :
// CHECK-NEXT:    dma.wait %fb
// CHECK-NEXT:    training.relu ins(%b3
// CHECK-NEXT:    dma.wait %sw
// CHECK-NEXT:    %sb2 = dma.copy %b3
// CHECK-NEXT:    dma.wait %sb2
// CHECK-NEXT:    func.return

// ERR: l3-overlap: l2 must not be negative, got -1
