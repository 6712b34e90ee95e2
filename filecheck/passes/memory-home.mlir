// RUN: deeploy-opt %s -p 'memory-home{weights=L3}' | filecheck %s
// RUN: deeploy-opt %s -p 'memory-home{l2=170},arena-plan{level=L2}' | filecheck %s --check-prefix=L2-170
// RUN: deeploy-opt %s -p 'memory-home{l2=150},arena-plan{level=L2}' | filecheck %s --check-prefix=L2-150
// RUN: deeploy-opt %s -p 'memory-home{weights=L3 prefetch=true}' | filecheck %s --check-prefix=PREFETCH
// RUN: not deeploy-opt %s -p 'memory-home{l2=64}' 2>&1 | filecheck %s --check-prefix=ERR

// All in L2 the arguments live the whole step (x 24, w 48, y 32, lr 4, g 48 =
// 156 bytes) and the training step adds x2 (24) and h (32) at most.
func.func @training_step(%x: memref<2x3xf32, "L2"> {training.arg = #training.arg<input "x">},
                         %w: memref<4x3xf32, "L2"> {training.arg = #training.arg<param "w">},
                         %y: memref<2x4xf32, "L2"> {training.arg = #training.arg<output "y">}) {
  %h = memref.alloc() : memref<2x4xf32, "L2">
  %x2 = memref.alloc() : memref<2x3xf32, "L2">
  training.relu ins(%x : memref<2x3xf32, "L2">) outs(%x2 : memref<2x3xf32, "L2">)
  training.gemm ins(%x2, %w : memref<2x3xf32, "L2">, memref<4x3xf32, "L2">) outs(%h : memref<2x4xf32, "L2">) {trans_b}
  training.relu ins(%h : memref<2x4xf32, "L2">) outs(%y : memref<2x4xf32, "L2">)
  func.return
}
func.func @optimizer_step(%lr: memref<1xf32, "L2"> {training.arg = #training.arg<lr "lr">},
                          %w: memref<4x3xf32, "L2"> {training.arg = #training.arg<param "w">},
                          %g: memref<4x3xf32, "L2"> {training.arg = #training.arg<grad_accum "g">}) {
  training.sgd ins(%w, %g, %lr : memref<4x3xf32, "L2">, memref<4x3xf32, "L2">, memref<1xf32, "L2">) outs(%w : memref<4x3xf32, "L2">)
  func.return
}

// weights=L3: w lives in L3 in both functions; every op that reads it waits
// for a whole-tensor copy into an L2 stage buffer, and SGD, which writes it,
// is followed by the copy back.
// CHECK-LABEL: func.func @training_step
// CHECK-SAME:    %w: memref<4x3xf32, "L3">
// CHECK:         %[[S:.*]] = memref.alloc() : memref<4x3xf32, "L2">
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[F:.*]] = dma.copy %w[%[[Z]], %[[Z]]] -> %[[S]][%[[Z]], %[[Z]]] sizes [4, 3] : memref<4x3xf32, "L3">, memref<4x3xf32, "L2">
// CHECK-NEXT:    dma.wait %[[F]]
// CHECK-NEXT:    training.gemm ins(%x2, %[[S]] :
// CHECK-NOT:     dma.copy
// CHECK-LABEL: func.func @optimizer_step
// CHECK-SAME:    %w: memref<4x3xf32, "L3">
// CHECK:         dma.copy %w
// CHECK-NEXT:    dma.wait
// CHECK-NEXT:    training.sgd ins(%[[S2:.*]], %g, %lr : {{.*}}) outs(%[[S2]] :
// CHECK-NEXT:    %[[ST:.*]] = dma.copy %[[S2]][{{.*}}] -> %w[{{.*}}] sizes [4, 3]
// CHECK-NEXT:    dma.wait %[[ST]]

// l2=170: the largest argument goes first (g and w tie at 48 bytes; by name,
// g): then the arguments left in L2 take 108 bytes, the training step adds
// x2 + h (56) = 164 and the optimizer step g's stage (48) = 156: 164 fits.
// L2-170:       training.arena_L2 = #training.arena<size = 164,
// L2-170:       %w: memref<4x3xf32, "L2">
// L2-170:       func.func @optimizer_step
// L2-170-SAME:  %g: memref<4x3xf32, "L3">

// l2=150: after g the arena is 164 > 150, so w goes next: x, y and lr stay
// (60 bytes) and the gemm needs x2 + w's stage + h = 24 + 48 + 32 = 104, so
// 164 again; then y (32) goes: 28 + 104 = 132 fits (the optimizer step's two
// stages take 96, the relu's h + y's stage 64).
// L2-150:       training.arena_L2 = #training.arena<size = 132,
// L2-150-SAME:  {
// L2-150:       %w: memref<4x3xf32, "L3">
// L2-150-SAME:  %y: memref<2x4xf32, "L3">

// prefetch=true: w's fetch is issued before the relu that precedes the gemm,
// so it flies while the relu computes; its wait stays before the gemm.
// PREFETCH-LABEL: func.func @training_step
// PREFETCH:         %[[S:.*]] = memref.alloc() : memref<4x3xf32, "L2">
// PREFETCH-NEXT:    %{{.*}} = arith.constant 0 : index
// PREFETCH-NEXT:    %[[F:.*]] = dma.copy %w{{.*}} {dma.remark = "memory-home: L3 fetch issued one op early (overlaps its compute)"}
// PREFETCH-NEXT:    training.relu
// PREFETCH-NEXT:    dma.wait %[[F]]
// PREFETCH-NEXT:    training.gemm

// ERR: deeploy-opt: error: memory-home: the L2 budget of 64 bytes is too small: with every tensor that can live in L3 there the L2 arena still needs
