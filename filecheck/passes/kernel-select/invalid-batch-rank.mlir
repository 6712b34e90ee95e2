// RUN: not deeploy-opt %s -p kernel-select 2>&1 | filecheck %s

// The batched matmul kernel takes 4 batch dims at most (DM_BATCH_MAX_RANK).

// CHECK: {{^}}deeploy-opt: error: training.batch_matmul: batch dims 5 > 4 is not supported by the kernel{{$}}
func.func @batch5(%a: memref<1x1x1x1x2x2x3xf32, "L2">, %b: memref<3x4xf32, "L2">, %y: memref<1x1x1x1x2x2x4xf32, "L2">) {
  training.batch_matmul ins(%a, %b : memref<1x1x1x1x2x2x3xf32, "L2">, memref<3x4xf32, "L2">) outs(%y : memref<1x1x1x1x2x2x4xf32, "L2">)
  func.return
}
