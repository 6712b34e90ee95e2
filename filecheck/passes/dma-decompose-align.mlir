// RUN: not deeploy-opt %s -p 'dma-decompose{engine=pulp-open}' 2>&1 | filecheck %s

// dma-decompose checks the engine's alignment itself: a copy the engine
// cannot align (here one i1 byte, e.g. an accumulate reset flag in L3, on the
// L3 engines of align = 4) is one error line naming the pass, the tensor and
// the alignment, instead of IR that does not verify (the verifier's message
// named neither the pass nor the tensor).

func.func @flag(%a: memref<1xi1, "L3">, %b: memref<1xi1, "L2">, %z: index) {
  %t = dma.copy %a[%z] -> %b[%z] sizes [1] : memref<1xi1, "L3">, memref<1xi1, "L2">
  dma.wait %t
  func.return
}

// CHECK-NOT: Traceback
// CHECK:     {{^}}deeploy-opt: error: dma-decompose: the L3 -> L2 copy of %a cannot move on engine 'pulp-open-ram': engine 'pulp-open-ram' needs sizes and strides aligned to 4 bytes, the copy has 1{{$}}
// CHECK-NOT: {{.}}
