// RUN: deeploy-opt %s -p "memory-regime{regime=spill}" | filecheck %s

// memory-regime and views: spilling a temporary to L3 moves its views with
// it (the same storage), and the ops that read a view are staged through L2
// from the view, after the store of the source. The view is no buffer: the
// footprint counts the temporary's 48 bytes of activations once.

// CHECK:       training.regime = #training.regime<spill, {{{.*}}activations = 48,
// CHECK-LABEL: func.func @training_step
// CHECK-NEXT:    %h = memref.alloc() : memref<2x3x2xf32, "L3">
// CHECK:         %h_store = dma.copy %h_l2[%0, %0, %0] -> %h[%0, %0, %0] sizes [2, 3, 2]
// CHECK-NEXT:    dma.wait %h_store
// CHECK-NEXT:    %f = training.view %h : memref<2x3x2xf32, "L3"> to memref<2x6xf32, "L3">
// CHECK-NEXT:    %f_l2 = memref.alloc() : memref<2x6xf32, "L2">
// CHECK-NEXT:    %1 = arith.constant 0 : index
// CHECK-NEXT:    %f_fetch = dma.copy %f[%1, %1] -> %f_l2[%1, %1] sizes [2, 6] : memref<2x6xf32, "L3">, memref<2x6xf32, "L2">
// CHECK-NEXT:    dma.wait %f_fetch
// CHECK-NEXT:    training.relu ins(%f_l2 : memref<2x6xf32, "L2">) outs(%o : memref<2x6xf32, "L2">)
func.func @training_step(%x: memref<2x3x2xf32, "L2"> {training.arg = #training.arg<input "x">},
                         %o: memref<2x6xf32, "L2"> {training.arg = #training.arg<output "o">}) {
  %h = memref.alloc() : memref<2x3x2xf32, "L2">
  training.relu ins(%x : memref<2x3x2xf32, "L2">) outs(%h : memref<2x3x2xf32, "L2">)
  %f = training.view %h : memref<2x3x2xf32, "L2"> to memref<2x6xf32, "L2">
  training.relu ins(%f : memref<2x6xf32, "L2">) outs(%o : memref<2x6xf32, "L2">)
  func.return
}
