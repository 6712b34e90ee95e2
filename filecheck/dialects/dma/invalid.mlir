// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier message of the dma dialect (deeploy_mlir/dialects/dma.py), one
// case each: the message as the first line of the case's output, exact, and
// the annotation under the op. EngineAttr.verify's "shared_request is a boolean"
// cannot be reached through parsing (the parser reads true/false).

// a source offset missing
// CHECK:      {{^}}expects one source offset per source dim (2), got 1{{$}}
// CHECK:      | Operation does not verify: expects one source offset per source dim (2), got 1{{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i] -> %b[%i, %i] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// a destination offset missing
// CHECK:      {{^}}expects one destination offset per destination dim (2), got 1{{$}}
// CHECK:      | Operation does not verify: expects one destination offset per destination dim (2), got 1{{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// sizes of another rank
// CHECK:      {{^}}sizes, source and destination must have one rank: sizes has 1, source 2, destination 2{{$}}
// CHECK:      | Operation does not verify: sizes, source and destination must have one rank: sizes has 1, source 2, destination 2{{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [24] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// perm repeats a dim
// CHECK:      {{^}}perm [0, 0] is not a permutation of 0..1{{$}}
// CHECK:      | Operation does not verify: perm [0, 0] is not a permutation of 0..1{{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] perm [0, 0] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// an empty box
// CHECK:      {{^}}sizes [0, 6] must be positive{{$}}
// CHECK:      | Operation does not verify: sizes [0, 6] must be positive{{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [0, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// 9 rows of an 8-row source
// CHECK:      {{^}}sizes [9, 6] exceed the source shape [8, 6]{{$}}
// CHECK:      | Operation does not verify: sizes [9, 6] exceed the source shape [8, 6]{{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<9x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [9, 6] : memref<8x6xf32, "L2">, memref<9x6xf32, "L1">
  func.return
}

// -----

// transposed, the 4x6 box is 6x4 in the destination, which has only 3 columns
// CHECK:      {{^}}sizes [6, 4] (in destination order) exceed the destination shape [6, 3]{{$}}
// CHECK:      | Operation does not verify: sizes [6, 4] (in destination order) exceed the destination shape [6, 3]{{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<6x3xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] perm [1, 0] : memref<8x6xf32, "L2">, memref<6x3xf32, "L1">
  func.return
}

// -----

// f32 to i32
// CHECK:      {{^}}source and destination element types differ{{$}}
// CHECK:      | Operation does not verify: source and destination element types differ{{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xi32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xi32, "L1">
  func.return
}

// -----

// no such level
// CHECK:      {{^}}memref<4x6xf32, "L4"> is not in memory level L3, L2 or L1{{$}}
// CHECK:      | Operation does not verify: memref<4x6xf32, "L4"> is not in memory level L3, L2 or L1{{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L4">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L4">
  func.return
}

// -----

// both sides in L2
// CHECK:      {{^}}a copy moves data between two memory levels{{$}}
// CHECK:      | Operation does not verify: a copy moves data between two memory levels{{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L2">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L2">
  func.return
}

// -----

// a slot without a ring (only the generic form can say this)
// CHECK:      {{^}}a slot index needs a request ring (`on`){{$}}
// CHECK:      | Operation does not verify: a slot index needs a request ring (`on`){{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = "dma.copy"(%a, %b, %i, %i, %i, %i, %i) <{sizes = array<i64: 4, 6>, perm = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 1, 2, 2, 0, 1>}> : (memref<8x6xf32, "L2">, memref<4x6xf32, "L1">, index, index, index, index, index) -> !dma.token
  func.return
}

// -----

// transposing fp32: rows of 4 bytes, strided on both sides -> rank 3
// CHECK:      {{^}}the copy has rank 3, engine 'mchan' takes 2 (run dma-decompose){{$}}
// CHECK:      | Operation does not verify: the copy has rank 3, engine 'mchan' takes 2 (run dma-decompose){{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<6x4xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] perm [1, 0] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 65536, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<6x4xf32, "L1">
  func.return
}

// -----

// an L3 copy on the cluster DMA
// CHECK:      {{^}}engine 'mchan' moves L2 <-> L1, the copy L3 -> L2 (run dma-decompose){{$}}
// CHECK:      | Operation does not verify: engine 'mchan' moves L2 <-> L1, the copy L3 -> L2 (run dma-decompose){{$}}
func.func @f(%a: memref<8x6xf32, "L3">, %b: memref<4x6xf32, "L2">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 65536, align = 1, shared_request = false> : memref<8x6xf32, "L3">, memref<4x6xf32, "L2">
  func.return
}

// -----

// 4 x 6 x 4 = 96 bytes on an engine of 64
// CHECK:      {{^}}the copy moves 96 bytes, engine 'tiny' at most 64 (run dma-decompose){{$}}
// CHECK:      | Operation does not verify: the copy moves 96 bytes, engine 'tiny' at most 64 (run dma-decompose){{$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] engine #dma.engine<"tiny", L2 -> L1, rank = 2, max_bytes = 64, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// rows of 3 f16 = 6 bytes on an engine aligned to 4
// CHECK:      {{^}}engine 'gap9-ram' needs sizes and strides aligned to 4 bytes, the copy has 6{{$}}
// CHECK:      | Operation does not verify: engine 'gap9-ram' needs sizes and strides aligned to 4 bytes, the copy has 6{{$}}
func.func @f(%a: memref<8x6xf16, "L3">, %b: memref<4x3xf16, "L2">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 3] engine #dma.engine<"gap9-ram", L3 -> L2, rank = 2, max_bytes = 1048576, align = 4, shared_request = true> : memref<8x6xf16, "L3">, memref<4x3xf16, "L2">
  func.return
}

// -----

// an empty request ring
// CHECK:      {{^}}count must be at least 1, got 0{{$}}
// CHECK:      | Operation does not verify: count must be at least 1, got 0{{$}}
func.func @f() {
  %r = dma.request count 0
  func.return
}

// -----

// a slot of the wrong shape
// CHECK:      {{^}}a slot of memref<2x4xf32, "L1"> has shape [4], got [5]{{$}}
// CHECK:      | Operation does not verify: a slot of memref<2x4xf32, "L1"> has shape [4], got [5]{{$}}
func.func @f(%ring: memref<2x4xf32, "L1">, %i: index) {
  %s = "dma.slot"(%ring, %i) : (memref<2x4xf32, "L1">, index) -> memref<5xf32, "L1">
  func.return
}

// -----

// a slot in another level
// CHECK:      {{^}}a slot has the ring's element type and memory level{{$}}
// CHECK:      | Operation does not verify: a slot has the ring's element type and memory level{{$}}
func.func @f(%ring: memref<2x4xf32, "L1">, %i: index) {
  %s = "dma.slot"(%ring, %i) : (memref<2x4xf32, "L1">, index) -> memref<4xf32, "L2">
  func.return
}

// -----

// a level that does not exist
// CHECK:      {{^}}engine 'x': levels must be L3, L2 or L1{{$}}
func.func @f() attributes {e = #dma.engine<"x", L4 -> L1, rank = 2, max_bytes = 64, align = 1, shared_request = false>} {
  func.return
}

// -----

// the levels the wrong way round
// CHECK:      {{^}}engine 'x': the first level (L1) must be the larger, slower one (L3 -> L2 or L2 -> L1), got L1 -> L2{{$}}
func.func @f() attributes {e = #dma.engine<"x", L1 -> L2, rank = 2, max_bytes = 64, align = 1, shared_request = false>} {
  func.return
}

// -----

// no engine takes rank 3
// CHECK:      {{^}}engine 'x': rank must be 1 or 2, got 3{{$}}
func.func @f() attributes {e = #dma.engine<"x", L2 -> L1, rank = 3, max_bytes = 64, align = 1, shared_request = false>} {
  func.return
}

// -----

// an engine that moves nothing
// CHECK:      {{^}}engine 'x': max_bytes and align must be positive{{$}}
func.func @f() attributes {e = #dma.engine<"x", L2 -> L1, rank = 2, max_bytes = 0, align = 1, shared_request = false>} {
  func.return
}
