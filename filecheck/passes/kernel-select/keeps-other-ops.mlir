// RUN: deeploy-opt %s -p kernel-select | filecheck %s

// kernel-select replaces the compute ops and nothing else: an unused
// constant or arena view stays where it was (no dead-code elimination: the C
// printer names loop counters by the number of values it has seen, so
// dropping one would rename every later loop of the emitted C).

// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %unused = arith.constant 7 : index
// CHECK-NEXT:    %view = training.arena_view
// CHECK-NEXT:    kernel.call @dm_relu_fp32 dm_unary_args_t {X = %x, Y = %x, size = 4}
// CHECK-NEXT:    func.return
func.func @f(%x: memref<4xf32, "L2">) {
  %unused = arith.constant 7 : index
  %view = training.arena_view at 0 : memref<4xf32, "L2">
  training.relu ins(%x : memref<4xf32, "L2">) outs(%x : memref<4xf32, "L2">)
  func.return
}
