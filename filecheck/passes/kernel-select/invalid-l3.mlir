// RUN: not deeploy-opt %s -p kernel-select 2>&1 | filecheck %s

// Kernels run on L2 or L1 buffers: a compute op on an L3 memref is an error
// naming the op and what to run (the L3 operand here is the input).

// CHECK: {{^}}deeploy-opt: error: training.relu reads or writes L3 directly; kernels run on L2/L1 buffers (run memory-home to stage L3 tensors through L2){{$}}
func.func @l3(%x: memref<4xf32, "L3">, %y: memref<4xf32, "L2">) {
  training.relu ins(%x : memref<4xf32, "L3">) outs(%y : memref<4xf32, "L2">)
  func.return
}
