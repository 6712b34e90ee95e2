// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

// Round trip of training.view: a buffer's storage under another static shape
// (same element type, element count and memory level, contiguous row-major
// layouts), what training-bufferize makes of a reshape that shares its
// operand's storage. Flatten, Unsqueeze-like (size-1 dims added), a view of a
// view, i64 elements, an L3 view and a view of an arena view.

// CHECK-LABEL: func.func @views
// CHECK-NEXT:    %f = training.view %x : memref<2x4x3x3xf32, "L2"> to memref<2x36xf32, "L2">
// CHECK-NEXT:    %u = training.view %f : memref<2x36xf32, "L2"> to memref<2x1x36x1xf32, "L2">
// CHECK-NEXT:    %i = training.view %k : memref<6xi64, "L2"> to memref<2x3xi64, "L2">
// CHECK-NEXT:    %l = training.view %z : memref<4x5xf32, "L3"> to memref<20xf32, "L3">
// CHECK-NEXT:    %a = training.arena_view at 64 : memref<2x8x1x1xf32, "L2">
// CHECK-NEXT:    %b = training.view %a : memref<2x8x1x1xf32, "L2"> to memref<2x8xf32, "L2">
// CHECK-NEXT:    func.return
func.func @views(%x: memref<2x4x3x3xf32, "L2">, %k: memref<6xi64, "L2">, %z: memref<4x5xf32, "L3">) {
  %f = training.view %x : memref<2x4x3x3xf32, "L2"> to memref<2x36xf32, "L2">
  %u = training.view %f : memref<2x36xf32, "L2"> to memref<2x1x36x1xf32, "L2">
  %i = training.view %k : memref<6xi64, "L2"> to memref<2x3xi64, "L2">
  %l = training.view %z : memref<4x5xf32, "L3"> to memref<20xf32, "L3">
  %a = training.arena_view at 64 : memref<2x8x1x1xf32, "L2">
  %b = training.view %a : memref<2x8x1x1xf32, "L2"> to memref<2x8xf32, "L2">
  func.return
}
