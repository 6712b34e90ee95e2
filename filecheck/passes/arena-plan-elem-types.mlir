// RUN: deeploy-opt %s -p arena-plan | filecheck %s

// Element sizes come from the element type's bit width, so any element type
// the training dialect accepts is planned: an i32 buffer like an f32 one (4
// bytes an element), an i8 buffer at one byte an element.

// All arguments live throughout: "x" (4 x i32 = 16 bytes) at 0, "y" (16 bytes)
// at 16, "z" (5 x i8 = 5 bytes, rounded up to the 4-byte alignment: 8) at 32;
// the arena and the bound are 16 + 16 + 8 = 40 bytes.
// CHECK:      builtin.module attributes {training.arena_L2 = #training.arena<size = 40, bound = 40>} {
// CHECK:        training.arg = #training.arg<input "x" at 0>
// CHECK:        training.arg = #training.arg<output "y" at 16>
// CHECK:        training.arg = #training.arg<output "z" at 32>
func.func @training_step(%x: memref<4xi32, "L2"> {training.arg = #training.arg<input "x">},
                         %y: memref<4xi32, "L2"> {training.arg = #training.arg<output "y">},
                         %z: memref<5xi8, "L2"> {training.arg = #training.arg<output "z">}) {
  training.copy ins(%x : memref<4xi32, "L2">) outs(%y : memref<4xi32, "L2">)
  func.return
}
