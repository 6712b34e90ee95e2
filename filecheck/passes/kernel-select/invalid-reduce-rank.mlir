// RUN: not deeploy-opt %s -p kernel-select 2>&1 | filecheck %s

// The reduction kernels take rank 4 at most (dm_reduce_args_t's shape[4]).

// CHECK: {{^}}deeploy-opt: error: training.reduce_sum: rank 5 > 4 is not supported by the kernel{{$}}
func.func @rank5(%a: memref<1x2x1x2x2xf32, "L2">, %r: memref<2xf32, "L2">) {
  training.reduce_sum ins(%a : memref<1x2x1x2x2xf32, "L2">) outs(%r : memref<2xf32, "L2">) {axes = array<i64: 0, 1, 2, 3>}
  func.return
}
