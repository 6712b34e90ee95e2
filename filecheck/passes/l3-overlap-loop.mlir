// RUN: deeploy-opt %s -p 'l3-overlap' | filecheck %s

// l3-overlap (deeploy_mlir/passes/l3_overlap.py): a fetch is not issued
// above a loop that stores into its L3 source. The loop writes b tile by
// tile (two 8-element stores); the fetch of b after it reads those bytes,
// so it stays below the loop (and below the stores' waits inside it).
func.func @training_step(%a: memref<8xf32, "L2"> {training.arg = #training.arg<input "a">},
                         %b: memref<16xf32, "L3"> {training.arg = #training.arg<output "b">}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %t = memref.alloc() : memref<8xf32, "L2">
  scf.for %i = %c0 to %c2 step %c1 {
    training.relu ins(%a : memref<8xf32, "L2">) outs(%t : memref<8xf32, "L2">)
    %off = arith.muli %i, %c8 : index
    %s = dma.copy %t[%c0] -> %b[%off] sizes [8] : memref<8xf32, "L2">, memref<16xf32, "L3">
    dma.wait %s
  }
  %b3 = memref.alloc() : memref<16xf32, "L2">
  %fb = dma.copy %b[%c0] -> %b3[%c0] sizes [16] : memref<16xf32, "L3">, memref<16xf32, "L2">
  dma.wait %fb
  training.relu ins(%b3 : memref<16xf32, "L2">) outs(%b3 : memref<16xf32, "L2">)
  %sb = dma.copy %b3[%c0] -> %b[%c0] sizes [16] : memref<16xf32, "L2">, memref<16xf32, "L3">
  dma.wait %sb
  func.return
}

// CHECK-LABEL: func.func @training_step
// CHECK:         scf.for
// CHECK:           dma.wait %s
// CHECK-NEXT:    }
// CHECK-NEXT:    %b3 = memref.alloc()
// CHECK-NEXT:    %fb = dma.copy %b[%c0] -> %b3[%c0] sizes [16] :
// CHECK-NOT:     dma.remark
// CHECK-NEXT:    dma.wait %fb
// CHECK-NEXT:    training.relu ins(%b3
