// RUN: deeploy-opt %s -p arena-plan | filecheck %s

// arena-plan keeps a buffer live while a training.view of it is read: the
// view is the same storage. %y's own last use is the view op %f, but %f is
// read by the gemm after %z is allocated and written, so %z (48 bytes, like
// %y) must not take %y's place. The view keeps its source (it is no buffer:
// the arena holds %y, %z and the arguments, 4 x 48 + 16 = 208 bytes).

// CHECK:       builtin.module attributes {training.arena_L2 = #training.arena<size = 208, bound = 208>}
// CHECK:         %y = training.arena_view at [[Y:[0-9]+]] : memref<2x3x2xf32, "L2">
// CHECK-NEXT:    training.relu ins(%x : memref<2x3x2xf32, "L2">) outs(%y : memref<2x3x2xf32, "L2">)
// CHECK-NEXT:    %f = training.view %y : memref<2x3x2xf32, "L2"> to memref<2x6xf32, "L2">
// CHECK-NEXT:    %z = training.arena_view at
// CHECK-NOT:       [[Y]] :
// CHECK-SAME:      : memref<2x6xf32, "L2">
// CHECK-NEXT:    training.relu ins(%w : memref<2x6xf32, "L2">) outs(%z : memref<2x6xf32, "L2">)
// CHECK-NEXT:    training.gemm ins(%f, %z : memref<2x6xf32, "L2">, memref<2x6xf32, "L2">) outs(%g : memref<2x2xf32, "L2">) {trans_b}
func.func @training_step(%x: memref<2x3x2xf32, "L2"> {training.arg = #training.arg<input "x">},
                         %w: memref<2x6xf32, "L2"> {training.arg = #training.arg<input "w">},
                         %g: memref<2x2xf32, "L2"> {training.arg = #training.arg<output "out">}) {
  %y = memref.alloc() : memref<2x3x2xf32, "L2">
  training.relu ins(%x : memref<2x3x2xf32, "L2">) outs(%y : memref<2x3x2xf32, "L2">)
  %f = training.view %y : memref<2x3x2xf32, "L2"> to memref<2x6xf32, "L2">
  %z = memref.alloc() : memref<2x6xf32, "L2">
  training.relu ins(%w : memref<2x6xf32, "L2">) outs(%z : memref<2x6xf32, "L2">)
  training.gemm ins(%f, %z : memref<2x6xf32, "L2">, memref<2x6xf32, "L2">) outs(%g : memref<2x2xf32, "L2">) {trans_b}
  func.return
}
