// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Round trip of everything in the dma dialect (deeploy_mlir/dialects/dma.py):
// the !dma.token type, the #dma.engine attribute (the three engines of our
// targets and one with every field changed), dma.request, dma.copy in every
// form (with and without perm, engine, `on %r` and `on %r[%s]`, rank 0, all
// three hops both ways), dma.wait with and without a slot, and dma.slot.
// The custom form prints back as it was written, except an identity perm,
// which is the default and not printed. The GENERIC lines check the
// properties the custom form hides (sizes, perm, engine and the operand
// segments of the optional `on` and slot).

// CHECK-LABEL: builtin.module {

// =============================================================================
// The token type and the engine attribute
// =============================================================================

func.func @engines(%tok: !dma.token) -> !dma.token attributes {
    mchan = #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false>,
    pulp = #dma.engine<"pulp-open-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = false>,
    gap9 = #dma.engine<"gap9-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = true>,
    other = #dma.engine<"one-d", L3 -> L1, rank = 1, max_bytes = 7, max_row = 7, align = 8, shared_request = true>} {
  func.return %tok : !dma.token
}

// CHECK-NEXT:  func.func @engines(%tok: !dma.token) -> !dma.token attributes {mchan = #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false>, pulp = #dma.engine<"pulp-open-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = false>, gap9 = #dma.engine<"gap9-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = true>, other = #dma.engine<"one-d", L3 -> L1, rank = 1, max_bytes = 7, max_row = 7, align = 8, shared_request = true>} {
// CHECK-NEXT:    func.return %tok : !dma.token
// CHECK-NEXT:  }

// GENERIC:      "func.func"() <{sym_name = "engines", function_type = (!dma.token) -> !dma.token}> ({
// GENERIC-NEXT: ^bb0(%tok: !dma.token):
// GENERIC-NEXT:   "func.return"(%tok) : (!dma.token) -> ()
// GENERIC-NEXT: }) {mchan = #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false>, pulp = #dma.engine<"pulp-open-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = false>, gap9 = #dma.engine<"gap9-ram", L3 -> L2, rank = 2, max_bytes = 1048576, max_row = 1048576, align = 4, shared_request = true>, other = #dma.engine<"one-d", L3 -> L1, rank = 1, max_bytes = 7, max_row = 7, align = 8, shared_request = true>} : () -> ()

// =============================================================================
// Requests and waits
// =============================================================================

func.func @requests(%tok: !dma.token, %i: index) {
  %r1 = dma.request count 1
  %r4 = dma.request count 4 {note = "ring"}
  dma.wait %r1
  dma.wait %r4[%i]
  dma.wait %tok
  dma.wait %tok[%i] {note = "slot"}
  func.return
}

// CHECK-NEXT:  func.func @requests(%tok: !dma.token, %i: index) {
// CHECK-NEXT:    %r1 = dma.request count 1
// CHECK-NEXT:    %r4 = dma.request count 4 {note = "ring"}
// CHECK-NEXT:    dma.wait %r1
// CHECK-NEXT:    dma.wait %r4[%i]
// CHECK-NEXT:    dma.wait %tok
// CHECK-NEXT:    dma.wait %tok[%i] {note = "slot"}
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// GENERIC:      %r1 = "dma.request"() <{count = 1 : i64}> : () -> !dma.token
// GENERIC-NEXT: %r4 = "dma.request"() <{count = 4 : i64}> {note = "ring"} : () -> !dma.token
// GENERIC-NEXT: "dma.wait"(%r1) <{operandSegmentSizes = array<i32: 1, 0>}> : (!dma.token) -> ()
// GENERIC-NEXT: "dma.wait"(%r4, %i) <{operandSegmentSizes = array<i32: 1, 1>}> : (!dma.token, index) -> ()
// GENERIC-NEXT: "dma.wait"(%tok) <{operandSegmentSizes = array<i32: 1, 0>}> : (!dma.token) -> ()
// GENERIC-NEXT: "dma.wait"(%tok, %i) <{operandSegmentSizes = array<i32: 1, 1>}> {note = "slot"} : (!dma.token, index) -> ()

// =============================================================================
// Slots of a ring of buffers
// =============================================================================

func.func @slots(%ring: memref<2x4x6xf32, "L1">, %ring1: memref<3x8xi8, "L2">, %ring0: memref<2xf32, "L1">, %i: index) {
  %s = dma.slot %ring[%i] : memref<2x4x6xf32, "L1"> -> memref<4x6xf32, "L1">
  %s1 = dma.slot %ring1[%i] {note = "bytes"} : memref<3x8xi8, "L2"> -> memref<8xi8, "L2">
  %s0 = dma.slot %ring0[%i] : memref<2xf32, "L1"> -> memref<f32, "L1">
  func.return
}

// CHECK-NEXT:  func.func @slots(%ring: memref<2x4x6xf32, "L1">, %ring1: memref<3x8xi8, "L2">, %ring0: memref<2xf32, "L1">, %i: index) {
// CHECK-NEXT:    %s = dma.slot %ring[%i] : memref<2x4x6xf32, "L1"> -> memref<4x6xf32, "L1">
// CHECK-NEXT:    %s1 = dma.slot %ring1[%i] {note = "bytes"} : memref<3x8xi8, "L2"> -> memref<8xi8, "L2">
// CHECK-NEXT:    %s0 = dma.slot %ring0[%i] : memref<2xf32, "L1"> -> memref<f32, "L1">
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// GENERIC:      %s = "dma.slot"(%ring, %i) : (memref<2x4x6xf32, "L1">, index) -> memref<4x6xf32, "L1">
// GENERIC-NEXT: %s1 = "dma.slot"(%ring1, %i) {note = "bytes"} : (memref<3x8xi8, "L2">, index) -> memref<8xi8, "L2">
// GENERIC-NEXT: %s0 = "dma.slot"(%ring0, %i) : (memref<2xf32, "L1">, index) -> memref<f32, "L1">

// =============================================================================
// Copies
// =============================================================================

func.func @copies(%big: memref<8x6xf32, "L2">, %tile: memref<4x6xf32, "L1">, %tt: memref<6x4xf32, "L1">, %row: memref<1x4xf32, "L1">,
                  %l3: memref<8x6xf32, "L3">, %cube: memref<2x3x4xf32, "L3">, %tcube: memref<4x3x2xf32, "L2">,
                  %s: memref<f32, "L2">, %t: memref<f32, "L1">, %ring: memref<2x4x6xf32, "L1">, %i: index, %z: index) {
  // plain, L2 -> L1
  %a = dma.copy %big[%i, %z] -> %tile[%z, %z] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  // an identity perm written out is the default: not printed
  %a2 = dma.copy %big[%i, %z] -> %tile[%z, %z] sizes [4, 6] perm [0, 1] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  // transposing, 2-D and 3-D
  %b = dma.copy %big[%i, %z] -> %tt[%z, %z] sizes [4, 6] perm [1, 0] : memref<8x6xf32, "L2">, memref<6x4xf32, "L1">
  %b3 = dma.copy %cube[%z, %z, %z] -> %tcube[%z, %z, %z] sizes [2, 3, 4] perm [2, 1, 0] : memref<2x3x4xf32, "L3">, memref<4x3x2xf32, "L2">
  // with its engine
  %c = dma.copy %big[%i, %z] -> %tile[%z, %z] sizes [4, 6] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
  // on a request (slot 0) and on a slot of a ring, L1 -> L2 and L2 -> L3
  %r = dma.request count 2
  %d = dma.copy %l3[%z, %z] -> %big[%z, %z] sizes [8, 6] on %r : memref<8x6xf32, "L3">, memref<8x6xf32, "L2">
  %slot = dma.slot %ring[%i] : memref<2x4x6xf32, "L1"> -> memref<4x6xf32, "L1">
  %e = dma.copy %slot[%z, %z] -> %big[%i, %z] sizes [4, 6] on %r[%i] : memref<4x6xf32, "L1">, memref<8x6xf32, "L2">
  %e3 = dma.copy %big[%z, %z] -> %l3[%z, %z] sizes [8, 6] on %r[%z] : memref<8x6xf32, "L2">, memref<8x6xf32, "L3">
  // everything at once, and a discardable attribute
  // (a column of 4 into a row: rows of one element, 24 bytes apart in L2,
  // contiguous in L1 -- rank 2, 16 bytes, legal on this engine)
  %f = dma.copy %big[%i, %z] -> %row[%z, %z] sizes [4, 1] perm [1, 0] engine #dma.engine<"slow", L2 -> L1, rank = 2, max_bytes = 16, max_row = 16, align = 4, shared_request = true> on %r[%i] {note = "all"} : memref<8x6xf32, "L2">, memref<1x4xf32, "L1">
  // rank 0: one element, no offsets, no sizes
  %g = dma.copy %s[] -> %t[] sizes [] : memref<f32, "L2">, memref<f32, "L1">
  // L3 -> L1 is a hop of its own (no engine of our targets takes it)
  %h = dma.copy %l3[%i, %z] -> %tile[%z, %z] sizes [4, 6] : memref<8x6xf32, "L3">, memref<4x6xf32, "L1">
  dma.wait %a
  dma.wait %g
  func.return
}

// CHECK-NEXT:  func.func @copies(%big: memref<8x6xf32, "L2">, %tile: memref<4x6xf32, "L1">, %tt: memref<6x4xf32, "L1">, %row: memref<1x4xf32, "L1">, %l3: memref<8x6xf32, "L3">, %cube: memref<2x3x4xf32, "L3">, %tcube: memref<4x3x2xf32, "L2">, %s: memref<f32, "L2">, %t: memref<f32, "L1">, %ring: memref<2x4x6xf32, "L1">, %i: index, %z: index) {
// CHECK-NEXT:    %a = dma.copy %big[%i, %z] -> %tile[%z, %z] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
// CHECK-NEXT:    %a2 = dma.copy %big[%i, %z] -> %tile[%z, %z] sizes [4, 6] : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
// CHECK-NEXT:    %b = dma.copy %big[%i, %z] -> %tt[%z, %z] sizes [4, 6] perm [1, 0] : memref<8x6xf32, "L2">, memref<6x4xf32, "L1">
// CHECK-NEXT:    %b3 = dma.copy %cube[%z, %z, %z] -> %tcube[%z, %z, %z] sizes [2, 3, 4] perm [2, 1, 0] : memref<2x3x4xf32, "L3">, memref<4x3x2xf32, "L2">
// CHECK-NEXT:    %c = dma.copy %big[%i, %z] -> %tile[%z, %z] sizes [4, 6] engine #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false> : memref<8x6xf32, "L2">, memref<4x6xf32, "L1">
// CHECK-NEXT:    %r = dma.request count 2
// CHECK-NEXT:    %d = dma.copy %l3[%z, %z] -> %big[%z, %z] sizes [8, 6] on %r : memref<8x6xf32, "L3">, memref<8x6xf32, "L2">
// CHECK-NEXT:    %slot = dma.slot %ring[%i] : memref<2x4x6xf32, "L1"> -> memref<4x6xf32, "L1">
// CHECK-NEXT:    %e = dma.copy %slot[%z, %z] -> %big[%i, %z] sizes [4, 6] on %r[%i] : memref<4x6xf32, "L1">, memref<8x6xf32, "L2">
// CHECK-NEXT:    %e3 = dma.copy %big[%z, %z] -> %l3[%z, %z] sizes [8, 6] on %r[%z] : memref<8x6xf32, "L2">, memref<8x6xf32, "L3">
// CHECK-NEXT:    %f = dma.copy %big[%i, %z] -> %row[%z, %z] sizes [4, 1] perm [1, 0] engine #dma.engine<"slow", L2 -> L1, rank = 2, max_bytes = 16, max_row = 16, align = 4, shared_request = true> on %r[%i] {note = "all"} : memref<8x6xf32, "L2">, memref<1x4xf32, "L1">
// CHECK-NEXT:    %g = dma.copy %s[] -> %t[] sizes [] : memref<f32, "L2">, memref<f32, "L1">
// CHECK-NEXT:    %h = dma.copy %l3[%i, %z] -> %tile[%z, %z] sizes [4, 6] : memref<8x6xf32, "L3">, memref<4x6xf32, "L1">
// CHECK-NEXT:    dma.wait %a
// CHECK-NEXT:    dma.wait %g
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// Operands: src, dst, src offsets, dst offsets, `on`, slot -- in that order.
// GENERIC:      %a = "dma.copy"(%big, %tile, %i, %z, %z, %z) <{sizes = array<i64: 4, 6>, perm = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 1, 2, 2, 0, 0>}> : (memref<8x6xf32, "L2">, memref<4x6xf32, "L1">, index, index, index, index) -> !dma.token
// GENERIC-NEXT: %a2 = "dma.copy"(%big, %tile, %i, %z, %z, %z) <{sizes = array<i64: 4, 6>, perm = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 1, 2, 2, 0, 0>}>
// GENERIC-NEXT: %b = "dma.copy"(%big, %tt, %i, %z, %z, %z) <{sizes = array<i64: 4, 6>, perm = array<i64: 1, 0>, operandSegmentSizes = array<i32: 1, 1, 2, 2, 0, 0>}>
// GENERIC-NEXT: %b3 = "dma.copy"(%cube, %tcube, %z, %z, %z, %z, %z, %z) <{sizes = array<i64: 2, 3, 4>, perm = array<i64: 2, 1, 0>, operandSegmentSizes = array<i32: 1, 1, 3, 3, 0, 0>}>
// GENERIC-NEXT: %c = "dma.copy"(%big, %tile, %i, %z, %z, %z) <{sizes = array<i64: 4, 6>, perm = array<i64: 0, 1>, engine = #dma.engine<"mchan", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535, align = 1, shared_request = false>, operandSegmentSizes = array<i32: 1, 1, 2, 2, 0, 0>}>
// GENERIC-NEXT: %r = "dma.request"() <{count = 2 : i64}> : () -> !dma.token
// GENERIC-NEXT: %d = "dma.copy"(%l3, %big, %z, %z, %z, %z, %r) <{sizes = array<i64: 8, 6>, perm = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 1, 2, 2, 1, 0>}> : (memref<8x6xf32, "L3">, memref<8x6xf32, "L2">, index, index, index, index, !dma.token) -> !dma.token
// GENERIC-NEXT: %slot = "dma.slot"(%ring, %i)
// GENERIC-NEXT: %e = "dma.copy"(%slot, %big, %z, %z, %i, %z, %r, %i) <{sizes = array<i64: 4, 6>, perm = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 1, 2, 2, 1, 1>}> : (memref<4x6xf32, "L1">, memref<8x6xf32, "L2">, index, index, index, index, !dma.token, index) -> !dma.token
// GENERIC-NEXT: %e3 = "dma.copy"(%big, %l3, %z, %z, %z, %z, %r, %z) <{sizes = array<i64: 8, 6>, perm = array<i64: 0, 1>, operandSegmentSizes = array<i32: 1, 1, 2, 2, 1, 1>}>
// GENERIC-NEXT: %f = "dma.copy"(%big, %row, %i, %z, %z, %z, %r, %i) <{sizes = array<i64: 4, 1>, perm = array<i64: 1, 0>, engine = #dma.engine<"slow", L2 -> L1, rank = 2, max_bytes = 16, max_row = 16, align = 4, shared_request = true>, operandSegmentSizes = array<i32: 1, 1, 2, 2, 1, 1>}> {note = "all"}
// GENERIC-NEXT: %g = "dma.copy"(%s, %t) <{sizes = array<i64>, perm = array<i64>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>}> : (memref<f32, "L2">, memref<f32, "L1">) -> !dma.token
// GENERIC-NEXT: %h = "dma.copy"(%l3, %tile, %i, %z, %z, %z)
