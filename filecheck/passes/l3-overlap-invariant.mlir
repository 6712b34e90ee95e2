// RUN: deeploy-opt %s -p 'l3-overlap' | filecheck %s

// l3-overlap (deeploy_mlir/memory/forward.py `hoist_invariant_fetch`): a
// fetch that a top-level stage loop repeats unchanged is issued once, above
// the loop, with its wait (its index constant cloned there).
//   loop 1: each iteration fetches all of w into w2 (offset 0): hoisted.
//   loop 2: the same fetch into y2, but relu writes y2 in place: each
//           iteration needs w's bytes again, the fetch stays.
//   loop 3: the fetch's offset follows the loop index: it stays.
func.func @training_step(%w: memref<16xf32, "L3"> {training.arg = #training.arg<param "w">},
                         %y: memref<32xf32, "L3"> {training.arg = #training.arg<output "y">},
                         %v: memref<32xf32, "L3"> {training.arg = #training.arg<output "v">}) {
  %w2 = memref.alloc() : memref<16xf32, "L2">
  %t = memref.alloc() : memref<16xf32, "L2">
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %z = arith.constant 0 : index
    %f = dma.copy %w[%z] -> %w2[%z] sizes [16] : memref<16xf32, "L3">, memref<16xf32, "L2">
    dma.wait %f
    training.relu ins(%w2 : memref<16xf32, "L2">) outs(%t : memref<16xf32, "L2">)
    %off = arith.muli %i, %c16 : index
    %s = dma.copy %t[%z] -> %y[%off] sizes [16] : memref<16xf32, "L2">, memref<32xf32, "L3">
    dma.wait %s
  }
  %y2 = memref.alloc() : memref<16xf32, "L2">
  scf.for %i = %c0 to %c2 step %c1 {
    %z = arith.constant 0 : index
    %f = dma.copy %w[%z] -> %y2[%z] sizes [16] : memref<16xf32, "L3">, memref<16xf32, "L2">
    dma.wait %f
    training.relu ins(%y2 : memref<16xf32, "L2">) outs(%y2 : memref<16xf32, "L2">)
    %off = arith.muli %i, %c16 : index
    %s = dma.copy %y2[%z] -> %v[%off] sizes [16] : memref<16xf32, "L2">, memref<32xf32, "L3">
    dma.wait %s
  }
  %y3 = memref.alloc() : memref<16xf32, "L2">
  scf.for %i = %c0 to %c2 step %c1 {
    %z = arith.constant 0 : index
    %off = arith.muli %i, %c16 : index
    %f = dma.copy %y[%off] -> %y3[%z] sizes [16] : memref<32xf32, "L3">, memref<16xf32, "L2">
    dma.wait %f
    training.relu ins(%y3 : memref<16xf32, "L2">) outs(%t : memref<16xf32, "L2">)
    %s = dma.copy %t[%z] -> %v[%off] sizes [16] : memref<16xf32, "L2">, memref<32xf32, "L3">
    dma.wait %s
  }
  func.return
}

// CHECK-LABEL: func.func @training_step
// CHECK:         %c16 = arith.constant 16 : index
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %f = dma.copy %w[%[[Z]]] -> %w2[%[[Z]]] sizes [16]
// CHECK-NEXT:    dma.wait %f
// CHECK-NEXT:    scf.for %i = %c0 to %c2 step %c1 {
// CHECK-NEXT:      %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:      training.relu ins(%w2
// CHECK:         %y2 = memref.alloc()
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK-NEXT:      %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:      %{{.*}} = dma.copy %w[%{{.*}}] -> %y2
// CHECK-NEXT:      dma.wait
// CHECK-NEXT:      training.relu ins(%y2
// CHECK:         %y3 = memref.alloc()
// CHECK-NEXT:    scf.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK-NEXT:      %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:      %{{.*}} = arith.muli
// CHECK-NEXT:      %{{.*}} = dma.copy %y[%{{.*}}] -> %y3
// CHECK-NEXT:      dma.wait
