// RUN: deeploy-opt %s -p "memory-home{home=L3 prefetch=true}" | filecheck %s

// memory-home and views: a training.view moves with its source (the same
// storage: %h goes to L3, so does its view %f), the ops that read the view
// are staged through L2 like those of any L3 tensor (%f_fetch), and the
// prefetch (`prefetch=true`: each fetch issued one op earlier) does not move
// the fetch of the view above the store into its source (%h_store): it would
// read %h before the first ReLU's result is written back.

// CHECK-LABEL: func.func @training_step
// CHECK-SAME:    %h: memref<2x3x2xf32, "L3">
// CHECK:         training.relu ins(%x_l2 : memref<2x3x2xf32, "L2">) outs(%h_l2 : memref<2x3x2xf32, "L2">)
// CHECK-NEXT:    %h_store = dma.copy %h_l2[%1, %1, %1] -> %h[%1, %1, %1] sizes [2, 3, 2]
// CHECK-NEXT:    dma.wait %h_store
// CHECK-NEXT:    %f = training.view %h : memref<2x3x2xf32, "L3"> to memref<2x6xf32, "L3">
// CHECK-NEXT:    %f_l2 = memref.alloc() : memref<2x6xf32, "L2">
// CHECK-NEXT:    %2 = arith.constant 0 : index
// CHECK-NEXT:    %f_fetch = dma.copy %f[%2, %2] -> %f_l2[%2, %2] sizes [2, 6] : memref<2x6xf32, "L3">, memref<2x6xf32, "L2">
// CHECK-NEXT:    dma.wait %f_fetch
// CHECK:         training.relu ins(%f_l2 : memref<2x6xf32, "L2">) outs(%o_l2 : memref<2x6xf32, "L2">)
func.func @training_step(%x: memref<2x3x2xf32, "L2"> {training.arg = #training.arg<input "x">},
                         %h: memref<2x3x2xf32, "L2"> {training.arg = #training.arg<output "h">},
                         %o: memref<2x6xf32, "L2"> {training.arg = #training.arg<output "o">}) {
  training.relu ins(%x : memref<2x3x2xf32, "L2">) outs(%h : memref<2x3x2xf32, "L2">)
  %f = training.view %h : memref<2x3x2xf32, "L2"> to memref<2x6xf32, "L2">
  training.relu ins(%f : memref<2x6xf32, "L2">) outs(%o : memref<2x6xf32, "L2">)
  func.return
}
