// RUN: not deeploy-opt %s -p kernel-select 2>&1 | filecheck %s

// The binary kernel takes shapes of rank 4 at most (dm_binary_args_t's
// shape[4]): rank 5 is an error naming the op.

// CHECK: {{^}}deeploy-opt: error: training.binary: rank 5 > 4 is not supported by the kernel{{$}}
func.func @rank5(%a: memref<1x2x1x2x2xf32, "L2">) {
  training.binary ins(%a, %a : memref<1x2x1x2x2xf32, "L2">, memref<1x2x1x2x2xf32, "L2">) outs(%a : memref<1x2x1x2x2xf32, "L2">) {kind = "add"}
  func.return
}
