// RUN: not deeploy-opt %s -p kernel-select 2>&1 | filecheck %s

// dm_adamw_fp32 updates the weight and the moments in place: an adamw whose
// output has a buffer of its own (here the new m2) is an error naming the op,
// the output and the input it must share.

// CHECK: {{^}}deeploy-opt: error: kernel-select: training.adamw: output #2 must be written in place of input #3 (its kernel updates in place); it has a buffer of its own{{$}}
func.func @not_in_place(%w: memref<4xf32, "L2">, %g: memref<4xf32, "L2">, %m1: memref<4xf32, "L2">, %m2: memref<4xf32, "L2">, %n2: memref<4xf32, "L2">, %lr: memref<1xf32, "L2">, %count: memref<1xi64, "L2">) {
  training.adamw ins(%w, %g, %m1, %m2, %lr, %count : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<4xf32, "L2">, memref<4xf32, "L2">, memref<1xf32, "L2">, memref<1xi64, "L2">) outs(%w, %m1, %n2 : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<4xf32, "L2">)
  func.return
}
