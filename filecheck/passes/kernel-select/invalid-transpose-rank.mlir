// RUN: not deeploy-opt %s -p kernel-select 2>&1 | filecheck %s

// The transpose kernel takes rank 6 at most (DM_TRANSPOSE_MAX_RANK).

// CHECK: {{^}}deeploy-opt: error: training.transpose: rank 7 > 6 is not supported by the kernel{{$}}
func.func @rank7(%a: memref<1x1x1x1x1x2x3xf32, "L2">, %t: memref<1x1x1x1x1x3x2xf32, "L2">) {
  training.transpose ins(%a : memref<1x1x1x1x1x2x3xf32, "L2">) outs(%t : memref<1x1x1x1x1x3x2xf32, "L2">) {perm = array<i64: 0, 1, 2, 3, 4, 6, 5>}
  func.return
}
