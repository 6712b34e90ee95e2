// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier message of training.view: each case checks the message as
// the first line of its output, the op it is reported on, and the annotation.

// element counts differ
// CHECK:      {{^}}source 2x4x3x3 has 72 elements but result 2x35 has 70{{$}}
// CHECK:      %f = "training.view"(%x)
// CHECK:      | Operation does not verify: source 2x4x3x3 has 72 elements but result 2x35 has 70{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @count(%x: memref<2x4x3x3xf32, "L2">) {
  %f = training.view %x : memref<2x4x3x3xf32, "L2"> to memref<2x35xf32, "L2">
  func.return
}

// -----

// element types differ (a view reinterprets the shape, never the bytes)
// CHECK:      {{^}}element types differ: source f32, result i32{{$}}
// CHECK:      %f = "training.view"(%x)
// CHECK:      | Operation does not verify: element types differ: source f32, result i32{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @elem(%x: memref<6xf32, "L2">) {
  %f = training.view %x : memref<6xf32, "L2"> to memref<2x3xi32, "L2">
  func.return
}

// -----

// memory levels differ (a view is the same storage)
// CHECK:      {{^}}memory spaces differ: source "L2", result "L3" (a view is the same storage){{$}}
// CHECK:      %f = "training.view"(%x)
// CHECK:      | Operation does not verify: memory spaces differ: source "L2", result "L3" (a view is the same storage){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @level(%x: memref<6xf32, "L2">) {
  %f = training.view %x : memref<6xf32, "L2"> to memref<2x3xf32, "L3">
  func.return
}

// -----

// a strided (not contiguous row-major) source
// CHECK:      {{^}}the source must have the contiguous row-major layout, got strided<[1, 2]>{{$}}
// CHECK:      %f = "training.view"(%x)
// CHECK:      | Operation does not verify: the source must have the contiguous row-major layout, got strided<[1, 2]>{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @layout(%x: memref<2x3xf32, strided<[1, 2]>, "L2">) {
  %f = training.view %x : memref<2x3xf32, strided<[1, 2]>, "L2"> to memref<6xf32, "L2">
  func.return
}

// -----

// a tensor is no buffer: views exist in buffer form only
// CHECK:      {{^}}operand 'source' at position 0 does not verify:{{$}}
// CHECK-NEXT: {{^}}tensor<6xf32> should be of base attribute memref{{$}}
// CHECK:      %f = "training.view"(%x)
// CHECK:      | Operation does not verify: operand 'source' at position 0 does not verify:
func.func @tensor(%x: tensor<6xf32>) {
  %f = "training.view"(%x) : (tensor<6xf32>) -> memref<2x3xf32, "L2">
  func.return
}
