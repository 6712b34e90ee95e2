// RUN: deeploy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier message of the dma dialect (deeploy_mlir/dialects/dma.py):
// each `raise VerifyException(...)` of CopyOp (its own rules, the engine
// legality -- hop, rank, bytes, all ending "(run dma-decompose)" -- and the
// engine alignment), RequestOp, SlotOp and EngineAttr.verify has at least one
// case below, some two (both branches of a condition). An op case checks the
// message as the first line of its output (exact, {{^}}...{{$}}), the op it is
// reported on and the annotation under that op. EngineAttr.verify runs while
// the attribute is parsed, so xDSL prints its message alone (no op, no
// annotation): those cases check that the case's output is that one line.
//
// Not reachable from text, so not tested here: EngineAttr's
// "shared_request is a boolean" (the parser reads `true`/`false` only, and an
// attribute has no generic form that would bypass it).

// a source offset missing
// CHECK:      {{^}}expects one source offset per source dim (2), got 1{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i)
// CHECK:      | Operation does not verify: expects one source offset per source dim (2), got 1{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i] -> %b[%i, %i] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// a destination offset too many
// CHECK:      {{^}}expects one destination offset per destination dim (2), got 3{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: expects one destination offset per destination dim (2), got 3{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i, %i] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// sizes of another rank than the memrefs
// CHECK:      {{^}}sizes, source and destination must have one rank: sizes has 1, source 2, destination 2{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: sizes, source and destination must have one rank: sizes has 1, source 2, destination 2{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [24] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// source and destination of different ranks (a reshaping copy is not a dma.copy)
// CHECK:      {{^}}sizes, source and destination must have one rank: sizes has 2, source 2, destination 1{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i)
// CHECK:      | Operation does not verify: sizes, source and destination must have one rank: sizes has 2, source 2, destination 1{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<24xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i] sizes [4, 6] : memref<8x6xf32, "L2">, memref<24xf32, "L1">
  func.return
}

// -----

// perm repeats a dim
// CHECK:      {{^}}perm [0, 0] is not a permutation of 0..1{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: perm [0, 0] is not a permutation of 0..1{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] perm [0, 0] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// perm of the wrong length
// CHECK:      {{^}}perm [0] is not a permutation of 0..1{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: perm [0] is not a permutation of 0..1{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] perm [0] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// an empty box
// CHECK:      {{^}}sizes [4, 0] must be positive{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: sizes [4, 0] must be positive{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 0] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// 9 rows of an 8-row source
// CHECK:      {{^}}sizes [9, 6] exceed the source shape [8, 6]{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: sizes [9, 6] exceed the source shape [8, 6]{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<9x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [9, 6] : memref<8x6xf32, "L2">, memref<9x6xf32, "L1">
  func.return
}

// -----

// the box fits the source but not the destination
// CHECK:      {{^}}sizes [8, 6] (in destination order) exceed the destination shape [4, 6]{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: sizes [8, 6] (in destination order) exceed the destination shape [4, 6]{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [8, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// transposed, the 4x6 box is 6x4 in the destination, which has 3 columns
// CHECK:      {{^}}sizes [6, 4] (in destination order) exceed the destination shape [6, 3]{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: sizes [6, 4] (in destination order) exceed the destination shape [6, 3]{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<6x3xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] perm [1, 0] : memref<8x6xf32, "L2">, memref<6x3xf32, "L1">
  func.return
}

// -----

// f32 to i32
// CHECK:      {{^}}source and destination element types differ{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: source and destination element types differ{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xi32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xi32, "L1">
  func.return
}

// -----

// a level that does not exist
// CHECK:      {{^}}memref<4x6xf32, "L4"> is not in memory level L3, L2 or L1{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: memref<4x6xf32, "L4"> is not in memory level L3, L2 or L1{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L4">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L4">
  func.return
}

// -----

// no memory space at all
// CHECK:      {{^}}memref<8x6xf32> is not in memory level L3, L2 or L1{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: memref<8x6xf32> is not in memory level L3, L2 or L1{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32>, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] : memref<8x6xf32>, memref<4x6xf32, "L1">
  func.return
}

// -----

// both sides in L2
// CHECK:      {{^}}a copy moves data between two memory levels{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: a copy moves data between two memory levels{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L2">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L2">
  func.return
}

// -----

// a slot without a request ring (only the generic form can write it)
// CHECK:      {{^}}a slot index needs a request ring (`on`){{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: a slot index needs a request ring (`on`){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = "dma.copy"(%a, %b, %i, %i, %i, %i, %i) <{sizes = array<i64: 4, 6>, perm = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 1, 2, 2, 0, 1>}> : (memref<8x6xf32, "L2">, memref<4x6xf32, "L1">, index, index, index, index, index) -> !dma.token
  func.return
}

// -----

// an L3 copy on the cluster DMA (legality: the hop)
// CHECK:      {{^}}engine 'mchan' moves L2 <-> L1, the copy L3 -> L2 (run dma-decompose){{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: engine 'mchan' moves L2 <-> L1, the copy L3 -> L2 (run dma-decompose){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L3">, %b: memref<4x6xf32, "L2">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false> : memref<8x6xf32, "L3">, memref<4x6xf32, "L2">
  func.return
}

// -----

// a write-back names its hop in copy order (legality: the hop, the other way)
// CHECK:      {{^}}engine 'gap9-ram' moves L3 <-> L2, the copy L1 -> L2 (run dma-decompose){{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%b, %a, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: engine 'gap9-ram' moves L3 <-> L2, the copy L1 -> L2 (run dma-decompose){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %b[%i, %i] -> %a[%i, %i] sizes [4, 6] engine #dma.engine<"gap9-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = true> : memref<4x6xf32, "L1">, memref<8x6xf32, "L2">
  func.return
}

// -----

// transposing f32 (legality: the rank). Box dim 0 (4 rows): 24 bytes apart in
// L2, 4 in L1; box dim 1 (6): 4 bytes apart in L2, 16 in L1; then the 4 bytes
// of one element. Nothing merges: three dims
// CHECK:      {{^}}the copy has rank 3, engine 'mchan' takes 2 (run dma-decompose){{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: the copy has rank 3, engine 'mchan' takes 2 (run dma-decompose){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<6x4xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] perm [1, 0] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<6x4xf32, "L1">
  func.return
}

// -----

// rows of 3 of 6 columns on a rank-1 engine (legality: the rank): 4 rows of 12
// contiguous bytes, 24 bytes apart in L2, contiguous in L1 -- rank 2
// CHECK:      {{^}}the copy has rank 2, engine 'one-d' takes 1 (run dma-decompose){{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: the copy has rank 2, engine 'one-d' takes 1 (run dma-decompose){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x3xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 3] engine #dma.engine<"one-d", L2 -> L1, rank = 1, max_bytes = 65536, max_row = 65536, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x3xf32, "L1">
  func.return
}

// -----

// 4 x 6 x 4 = 96 contiguous bytes on an engine of 64 (legality: the bytes)
// CHECK:      {{^}}the copy moves 96 bytes, engine 'tiny' at most 64 (run dma-decompose){{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: the copy moves 96 bytes, engine 'tiny' at most 64 (run dma-decompose){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] engine #dma.engine<"tiny", L2 -> L1, rank = 2, max_bytes = 64, max_row = 64, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// rows 0..3, columns 0..2 of a memref<8x6xf32>: 4 rows of 12 contiguous bytes
// (48 in all) on an engine of 48 bytes whose rows are at most 8 (legality:
// the row, as mchan's 16-bit row length)
// CHECK:      {{^}}the copy moves rows of 12 bytes, engine 'short-rows' at most 8 contiguous bytes (run dma-decompose){{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: the copy moves rows of 12 bytes, engine 'short-rows' at most 8 contiguous bytes (run dma-decompose){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x3xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 3] engine #dma.engine<"short-rows", L2 -> L1, rank = 2, max_bytes = 48, max_row = 8, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x3xf32, "L1">
  func.return
}

// -----

// 4 whole rows of a memref<8x6xf32>: one contiguous run of 96 bytes, within
// max_bytes but not max_row (as mchan: 1-D at most 65535, 2-D up to 131071)
// CHECK:      {{^}}the copy moves one contiguous run of 96 bytes, engine 'runs' at most 64 contiguous bytes (run dma-decompose){{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: the copy moves one contiguous run of 96 bytes, engine 'runs' at most 64 contiguous bytes (run dma-decompose){{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] engine #dma.engine<"runs", L2 -> L1, rank = 2, max_bytes = 128, max_row = 64, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}

// -----

// rows of 3 f16 = 6 bytes on an engine aligned to 4 (alignment: the row size)
// CHECK:      {{^}}engine 'gap9-ram' needs sizes and strides aligned to 4 bytes, the copy has 6{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: engine 'gap9-ram' needs sizes and strides aligned to 4 bytes, the copy has 6{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x6xf16, "L3">, %b: memref<4x3xf16, "L2">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 3] engine #dma.engine<"gap9-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = true> : memref<8x6xf16, "L3">, memref<4x3xf16, "L2">
  func.return
}

// -----

// rows of 4 f16 = 8 bytes, aligned, but 10 bytes apart in L3 (alignment: a stride)
// CHECK:      {{^}}engine 'gap9-ram' needs sizes and strides aligned to 4 bytes, the copy has 10{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %t = "dma.copy"(%a, %b, %i, %i, %i, %i)
// CHECK:      | Operation does not verify: engine 'gap9-ram' needs sizes and strides aligned to 4 bytes, the copy has 10{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%a: memref<8x5xf16, "L3">, %b: memref<4x4xf16, "L2">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 4] engine #dma.engine<"gap9-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = true> : memref<8x5xf16, "L3">, memref<4x4xf16, "L2">
  func.return
}

// -----

// an empty request ring
// CHECK:      {{^}}count must be at least 1, got 0{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %r = "dma.request"()
// CHECK:      | Operation does not verify: count must be at least 1, got 0{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f() {
  %r = dma.request count 0
  func.return
}

// -----

// a negative request ring
// CHECK:      {{^}}count must be at least 1, got -1{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %r = "dma.request"()
// CHECK:      | Operation does not verify: count must be at least 1, got -1{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f() {
  %r = dma.request count -1
  func.return
}

// -----

// a slot of the wrong shape (only the generic form can write it)
// CHECK:      {{^}}a slot of memref<2x4xf32, "L1"> has shape [4], got [5]{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %s = "dma.slot"(%ring, %i)
// CHECK:      | Operation does not verify: a slot of memref<2x4xf32, "L1"> has shape [4], got [5]{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%ring: memref<2x4xf32, "L1">, %i: index) {
  %s = "dma.slot"(%ring, %i) : (memref<2x4xf32, "L1">, index) -> memref<5xf32, "L1">
  func.return
}

// -----

// a slot of another element type
// CHECK:      {{^}}a slot has the ring's element type and memory level{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %s = "dma.slot"(%ring, %i)
// CHECK:      | Operation does not verify: a slot has the ring's element type and memory level{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%ring: memref<2x4xf32, "L1">, %i: index) {
  %s = "dma.slot"(%ring, %i) : (memref<2x4xf32, "L1">, index) -> memref<4xi32, "L1">
  func.return
}

// -----

// a rank-0 "ring": no slot dim to index
// CHECK:      {{^}}the ring memref<f32, "L1"> has no slot dim: a ring has one more (leading) dim than its slots{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %s = "dma.slot"(%r, %i)
// CHECK:      | Operation does not verify: the ring memref<f32, "L1"> has no slot dim: a ring has one more (leading) dim than its slots{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%r: memref<f32, "L1">, %i: index) {
  %s = dma.slot %r[%i] : memref<f32, "L1"> -> memref<f32, "L1">
  func.return
}

// -----

// a slot in another level
// CHECK:      {{^}}a slot has the ring's element type and memory level{{$}}
// CHECK-NEXT: "builtin.module"() ({
// CHECK:      %s = "dma.slot"(%ring, %i)
// CHECK:      | Operation does not verify: a slot has the ring's element type and memory level{{$}}
// CHECK:      {{^}}// {{-----$}}
func.func @f(%ring: memref<2x4xf32, "L1">, %i: index) {
  %s = dma.slot %ring[%i] : memref<2x4xf32, "L1"> -> memref<4xf32, "L2">
  func.return
}

// -----

// a level that does not exist, first
// CHECK:      {{^}}engine 'x': levels must be L3, L2 or L1{{$}}
// CHECK-NEXT: {{^}}// {{-----$}}
func.func @f() attributes {e = #dma.engine<"x", L4 -> L1, rank = 2, max_bytes = 64, max_row = 64, align = 1, shared_request = false>} {
  func.return
}

// -----

// a level that does not exist, second
// CHECK:      {{^}}engine 'x': levels must be L3, L2 or L1{{$}}
// CHECK-NEXT: {{^}}// {{-----$}}
func.func @f() attributes {e = #dma.engine<"x", L2 -> L0, rank = 2, max_bytes = 64, max_row = 64, align = 1, shared_request = false>} {
  func.return
}

// -----

// the levels the wrong way round
// CHECK:      {{^}}engine 'x': the first level (L1) must be the larger, slower one (L3 -> L2 or L2 -> L1), got L1 -> L2{{$}}
// CHECK-NEXT: {{^}}// {{-----$}}
func.func @f() attributes {e = #dma.engine<"x", L1 -> L2, rank = 2, max_bytes = 64, max_row = 64, align = 1, shared_request = false>} {
  func.return
}

// -----

// one level twice
// CHECK:      {{^}}engine 'x': the first level (L2) must be the larger, slower one (L3 -> L2 or L2 -> L1), got L2 -> L2{{$}}
// CHECK-NEXT: {{^}}// {{-----$}}
func.func @f() attributes {e = #dma.engine<"x", L2 -> L2, rank = 2, max_bytes = 64, max_row = 64, align = 1, shared_request = false>} {
  func.return
}

// -----

// no engine takes rank 3
// CHECK:      {{^}}engine 'x': rank must be 1 or 2, got 3{{$}}
// CHECK-NEXT: {{^}}// {{-----$}}
func.func @f() attributes {e = #dma.engine<"x", L2 -> L1, rank = 3, max_bytes = 64, max_row = 64, align = 1, shared_request = false>} {
  func.return
}

// -----

// nor rank 0
// CHECK:      {{^}}engine 'x': rank must be 1 or 2, got 0{{$}}
// CHECK-NEXT: {{^}}// {{-----$}}
func.func @f() attributes {e = #dma.engine<"x", L2 -> L1, rank = 0, max_bytes = 64, max_row = 64, align = 1, shared_request = false>} {
  func.return
}

// -----

// an engine that moves nothing
// CHECK:      {{^}}engine 'x': max_bytes, max_row and align must be positive{{$}}
// CHECK-NEXT: {{^}}// {{-----$}}
func.func @f() attributes {e = #dma.engine<"x", L2 -> L1, rank = 2, max_bytes = 0, max_row = 0, align = 1, shared_request = false>} {
  func.return
}

// -----

// rows of at most 0 bytes
// CHECK:      {{^}}engine 'x': max_bytes, max_row and align must be positive{{$}}
// CHECK-NEXT: {{^}}// {{-----$}}
func.func @f() attributes {e = #dma.engine<"x", L2 -> L1, rank = 2, max_bytes = 64, max_row = 0, align = 1, shared_request = false>} {
  func.return
}

// -----

// a row longer than a whole copy may be
// CHECK:      {{^}}engine 'x': max_row (65) exceeds max_bytes (64): a row is part of one copy{{$}}
// CHECK-NEXT: {{^}}// {{-----$}}
func.func @f() attributes {e = #dma.engine<"x", L2 -> L1, rank = 2, max_bytes = 64, max_row = 65, align = 1, shared_request = false>} {
  func.return
}

// -----

// an alignment of 0
// CHECK:      {{^}}engine 'x': max_bytes, max_row and align must be positive{{$}}
// CHECK-NEXT: {{^}}// {{-----$}}
func.func @f() attributes {e = #dma.engine<"x", L2 -> L1, rank = 2, max_bytes = 64, max_row = 64, align = 0, shared_request = false>} {
  func.return
}

// -----

// an invalid engine on a copy: the attribute's message alone, before the copy
// is built (so nothing is annotated)
// CHECK:      {{^}}engine 'x': rank must be 1 or 2, got 3{{$}}
// CHECK-NOT:  {{.}}
func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {
  %t = dma.copy %a[%i, %i] -> %b[%i, %i] sizes [4, 6] engine #dma.engine<"x", L2 -> L1, rank = 3, max_bytes = 64, max_row = 64, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  func.return
}
