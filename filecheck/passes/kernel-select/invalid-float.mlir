// RUN: not deeploy-opt %s -p kernel-select 2>&1 | filecheck %s

// A float field must be finite as a float32: alpha = 1e39 overflows it.

// CHECK: {{^}}deeploy-opt: error: cannot emit the float 1e+39: not finite as a float32{{$}}
func.func @alpha(%a: memref<3x4xf32, "L2">, %b: memref<4x5xf32, "L2">, %y: memref<3x5xf32, "L2">) {
  training.gemm ins(%a, %b : memref<3x4xf32, "L2">, memref<4x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {alpha = 1.0e39 : f64}
  func.return
}
