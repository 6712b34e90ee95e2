// RUN: deeploy-opt %s -p arena-plan | filecheck %s
// RUN: deeploy-opt %s -p "arena-plan{level=L2 strategy=exact}" | filecheck %s --check-prefix=EXACT
// RUN: deeploy-opt %s -p "arena-plan{level=L1}" | filecheck %s --check-prefix=L1
// RUN: deeploy-opt %s -p "arena-plan{level=L2 strategy=exact rlimit=1}" | filecheck %s --check-prefix=STOPPED
// RUN: not deeploy-opt %s -p "arena-plan{rlimit=-1}" 2>&1 | filecheck %s --check-prefix=NEGATIVE

// Expected offsets, derived by hand from the greedy rule of
// deeploy_mlir/memory/planner.py (plan_greedy): buffers that live throughout
// first, then by aligned size (largest first), then by start time, then by
// name; each goes to the lowest offset, a multiple of its alignment, that no
// already-placed buffer *overlapping it in time* occupies. Sizes are rounded up
// to the alignment (f32: 4, i1: 4, i64: 8).
//
// Schedule (one position per op, the two functions one after the other):
//   @training_step   t0 %y alloc   t1 gemm      t2 %lp alloc  t3 sce
//                    t4 %li alloc  t5 copy      t6 %d alloc   t7 sce_grad
//                    t8 %r alloc   t9 reduce    t10 accumulate t11 return
//   @optimizer_step  t12 %t alloc  t13 sgd      t14 %c alloc (L1)
//                    t15 copy      t16 copy     t17 return
// Arguments live throughout, [0, 19); "w" of both functions is one buffer.
// An alloc lives from its position to its last use, inclusive:
//   %y [0,4) 60 B   %lp [2,8) 60 B   %li [4,8) 24 B (i64, align 8)
//   %d [6,10) 60 B  %r [8,11) 20 B   %t [12,16) 60 B
//
// Arguments (all overlap in time, so they stack up; sizes 60 60 36 24 20 4 4 4):
//   gw 60 -> 0       ("gw" < "w" at equal size)
//   w  60 -> 60
//   x  36 -> 120     (ends at 156)
//   labels 24, align 8 -> 160   (156 is no multiple of 8: a 4-byte gap at 156)
//   buf 20 -> 184
//   loss 4 -> 156    (the lowest free offset: the gap left by the alignment)
//   lr 4 -> 204
//   reset 1 (4 aligned) -> 208  -- the arguments end at 212
// Temporaries, largest first, then by start:
//   %y  60 [0,4)   meets only the arguments                         -> 212
//   %lp 60 [2,8)   meets %y [212,272)                                -> 272
//   %d  60 [6,10)  meets %lp [272,332), not %y (ended at 4)          -> 212
//   %t  60 [12,16) meets only the arguments                          -> 212
//   %li 24 [4,8)   meets %d [212,272) and %lp [272,332), not %y;
//                  332 rounds up to 336 for i64                      -> 336
//   %r  20 [8,11)  meets %d [212,272); %lp and %li ended at 8        -> 272
// Arena: max end = %li 336 + 24 = 360.
// Bound (peak of live bytes): arguments 212 + at t6..t7 %lp, %li, %d
// (60 + 24 + 60 = 144) = 356. Greedy loses the 4 bytes of the alignment gap
// at 332; the exact plan reaches the bound (and proves it).
// The L1 alloc %c is not planned here: it stays a memref.alloc.

// CHECK:      builtin.module attributes {training.arena_L2 = #training.arena<size = 360, bound = 356>} {
// CHECK-NEXT:   func.func @training_step(
// CHECK-SAME:     %x: memref<3x3xf32, "L2"> {training.arg = #training.arg<input "x" at 120>},
// CHECK-SAME:     %w: memref<5x3xf32, "L2"> {training.arg = #training.arg<param "w" at 60>},
// CHECK-SAME:     %labels: memref<3xi64, "L2"> {training.arg = #training.arg<input "labels" at 160>},
// CHECK-SAME:     %buf: memref<5xf32, "L2"> {training.arg = #training.arg<grad_accum "buf" at 184>},
// CHECK-SAME:     %reset: memref<1xi1, "L2"> {training.arg = #training.arg<reset_flag "reset" at 208>},
// CHECK-SAME:     %loss: memref<f32, "L2"> {training.arg = #training.arg<output "loss" at 156>}) {
// CHECK-NEXT:     %y = training.arena_view at 212 : memref<3x5xf32, "L2">
// CHECK-NEXT:     training.gemm ins(%x, %w : memref<3x3xf32, "L2">, memref<5x3xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {trans_b}
// CHECK-NEXT:     %lp = training.arena_view at 272 : memref<3x5xf32, "L2">
// CHECK-NEXT:     training.softmax_cross_entropy_loss
// CHECK-NEXT:     %li = training.arena_view at 336 : memref<3xi64, "L2">
// CHECK-NEXT:     training.copy
// CHECK-NEXT:     %d = training.arena_view at 212 : memref<3x5xf32, "L2">
// CHECK-NEXT:     training.softmax_cross_entropy_loss_grad
// CHECK-NEXT:     %r = training.arena_view at 272 : memref<5xf32, "L2">
// CHECK-NEXT:     training.reduce_sum
// CHECK-NEXT:     training.accumulate
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @optimizer_step(
// CHECK-SAME:     %w: memref<5x3xf32, "L2"> {training.arg = #training.arg<param "w" at 60>},
// CHECK-SAME:     %gw: memref<5x3xf32, "L2"> {training.arg = #training.arg<grad_accum "gw" at 0>},
// CHECK-SAME:     %lr: memref<1xf32, "L2"> {training.arg = #training.arg<lr "lr" at 204>}) {
// CHECK-NEXT:     %t = training.arena_view at 212 : memref<5x3xf32, "L2">
// CHECK-NEXT:     training.sgd
// CHECK-NEXT:     %c = memref.alloc() : memref<5x3xf32, "L1">
// CHECK-NEXT:     training.copy ins(%t : memref<5x3xf32, "L2">) outs(%c : memref<5x3xf32, "L1">)
// CHECK-NEXT:     training.copy ins(%c : memref<5x3xf32, "L1">) outs(%w : memref<5x3xf32, "L2">)
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }

// EXACT:      builtin.module attributes {training.arena_L2 = #training.arena<size = 356, bound = 356, proven = true>} {

// Z3's resource limit (a count of solver steps, not a time) of 1 stops the
// exact search before it finds a plan: the greedy plan (360) is kept, not
// proven.
// STOPPED:    builtin.module attributes {training.arena_L2 = #training.arena<size = 360, bound = 356, proven = false>} {
// NEGATIVE:   arena-plan: rlimit must not be negative, got -1

// With level=L1 only %c is planned, alone in its level ([14,17), 60 bytes) -> offset 0; the
// L2 arguments get no offset and the L2 allocs stay.
// L1:         builtin.module attributes {training.arena_L1 = #training.arena<size = 60, bound = 60>} {
// L1-NOT:     {{#training.arg<[a-z_]+ "[^"]*" at}}
// L1:         %y = memref.alloc() : memref<3x5xf32, "L2">
// L1-NOT:     {{#training.arg<[a-z_]+ "[^"]*" at}}
// L1:         %c = training.arena_view at 0 : memref<5x3xf32, "L1">
// L1-NOT:     {{#training.arg<[a-z_]+ "[^"]*" at}}

func.func @training_step(%x: memref<3x3xf32, "L2"> {training.arg = #training.arg<input "x">},
                         %w: memref<5x3xf32, "L2"> {training.arg = #training.arg<param "w">},
                         %labels: memref<3xi64, "L2"> {training.arg = #training.arg<input "labels">},
                         %buf: memref<5xf32, "L2"> {training.arg = #training.arg<grad_accum "buf">},
                         %reset: memref<1xi1, "L2"> {training.arg = #training.arg<reset_flag "reset">},
                         %loss: memref<f32, "L2"> {training.arg = #training.arg<output "loss">}) {
  %y = memref.alloc() : memref<3x5xf32, "L2">
  training.gemm ins(%x, %w : memref<3x3xf32, "L2">, memref<5x3xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {trans_b}
  %lp = memref.alloc() : memref<3x5xf32, "L2">
  training.softmax_cross_entropy_loss ins(%y, %labels : memref<3x5xf32, "L2">, memref<3xi64, "L2">) outs(%loss, %lp : memref<f32, "L2">, memref<3x5xf32, "L2">)
  %li = memref.alloc() : memref<3xi64, "L2">
  training.copy ins(%labels : memref<3xi64, "L2">) outs(%li : memref<3xi64, "L2">)
  %d = memref.alloc() : memref<3x5xf32, "L2">
  training.softmax_cross_entropy_loss_grad ins(%loss, %lp, %li : memref<f32, "L2">, memref<3x5xf32, "L2">, memref<3xi64, "L2">) outs(%d : memref<3x5xf32, "L2">)
  %r = memref.alloc() : memref<5xf32, "L2">
  training.reduce_sum ins(%d : memref<3x5xf32, "L2">) outs(%r : memref<5xf32, "L2">) {axes = array<i64: 0>}
  training.accumulate ins(%buf, %r, %reset : memref<5xf32, "L2">, memref<5xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<5xf32, "L2">)
  func.return
}

func.func @optimizer_step(%w: memref<5x3xf32, "L2"> {training.arg = #training.arg<param "w">},
                          %gw: memref<5x3xf32, "L2"> {training.arg = #training.arg<grad_accum "gw">},
                          %lr: memref<1xf32, "L2"> {training.arg = #training.arg<lr "lr">}) {
  %t = memref.alloc() : memref<5x3xf32, "L2">
  training.sgd ins(%w, %gw, %lr : memref<5x3xf32, "L2">, memref<5x3xf32, "L2">, memref<1xf32, "L2">) outs(%t : memref<5x3xf32, "L2">)
  %c = memref.alloc() : memref<5x3xf32, "L1">
  training.copy ins(%t : memref<5x3xf32, "L2">) outs(%c : memref<5x3xf32, "L1">)
  training.copy ins(%c : memref<5x3xf32, "L1">) outs(%w : memref<5x3xf32, "L2">)
  func.return
}
