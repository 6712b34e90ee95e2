// RUN: not deeploy-opt %s -p kernel-select 2>&1 | filecheck %s

// dm_adamw_fp32 updates the weight and the moments in place; an output with
// a buffer of its own is first copied from its input, but an output that is
// another input's buffer (here the new m2 written over the gradient, which
// the kernel still reads) is an error naming the op, the output and the input.

// CHECK: {{^}}deeploy-opt: error: kernel-select: training.adamw: output #2 is input #1's buffer; it can only be written in place of input #3{{$}}
func.func @over_the_gradient(%w: memref<4xf32, "L2">, %g: memref<4xf32, "L2">, %m1: memref<4xf32, "L2">, %m2: memref<4xf32, "L2">, %lr: memref<1xf32, "L2">, %count: memref<1xi64, "L2">) {
  training.adamw ins(%w, %g, %m1, %m2, %lr, %count : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<4xf32, "L2">, memref<4xf32, "L2">, memref<1xf32, "L2">, memref<1xi64, "L2">) outs(%w, %m1, %g : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<4xf32, "L2">)
  func.return
}
