// RUN: deeploy-opt %s -p 'memory-regime{board=siracusa}' | filecheck %s --check-prefix=AUTO
// RUN: deeploy-opt %s -p 'memory-regime{board=siracusa l2=212}' | filecheck %s --check-prefix=AUTO
// RUN: deeploy-opt %s -p 'memory-regime{board=siracusa regime=spill}' | filecheck %s --check-prefix=SPILL
// RUN: deeploy-opt %s -p 'memory-regime{board=siracusa regime=stream}' | filecheck %s --check-prefix=STREAM
// RUN: deeploy-opt %s -p 'memory-regime{board=siracusa l2=211}' | filecheck %s --check-prefix=STREAM
// RUN: deeploy-opt %s -p 'memory-regime{board=siracusa regime=stream},arena-plan{level=L2},arena-plan{level=L3}' | filecheck %s --check-prefix=PLAN
// RUN: not deeploy-opt %s -p 'memory-regime{board=siracusa regime=resident l2=200}' 2>&1 | filecheck %s --check-prefix=ERR-RESIDENT
// RUN: not deeploy-opt %s -p 'memory-regime{board=siracusa l2=163}' 2>&1 | filecheck %s --check-prefix=ERR-NONE
// RUN: not deeploy-opt %s -p 'memory-regime{board=siracusa regime=stream l3=100}' 2>&1 | filecheck %s --check-prefix=ERR-L3
// RUN: not deeploy-opt %s -p 'memory-regime{board=siracusa regime=fast}' 2>&1 | filecheck %s --check-prefix=ERR-REGIME
// RUN: not deeploy-opt %s -p 'memory-regime{board=sirakusa}' 2>&1 | filecheck %s --check-prefix=ERR-BOARD
// RUN: not deeploy-opt %s -p 'memory-home{weights=L3},memory-regime' 2>&1 | filecheck %s --check-prefix=ERR-ORDER

// Footprint by kind: weights w 48, gradients g 48, optimizer state lr 4,
// activations x2 24 + h 32 = 56, inputs x 24, outputs y 32.
//
// The needs, by hand:
// - resident: the arguments (x 24, w 48, y 32, lr 4, g 48 = 156 bytes) live the
//   whole step; x2 and h are both live at the gemm: L2 = 156 + 56 = 212.
// - spill: x2 and h in L3 (56, both live at the gemm), but the gemm stages
//   both whole through L2 (24 + 32): L2 = 156 + 56 = 212 still, L3 = 56.
// - stream: w and g in L3 too. L2: x, y, lr (60) + the most any op stages: the
//   gemm x2 + w + h = 24 + 48 + 32 = 104 (SGD: w + g = 96) = 164. L3: w + g
//   (96, the whole step) + x2 + h (56) = 152.
// So with l2=212 everything stays resident, with l2=211 neither resident nor
// spill fits and auto streams, and with l2=163 nothing fits.
func.func @training_step(%x: memref<2x3xf32, "L2"> {training.arg = #training.arg<input "x">},
                         %w: memref<4x3xf32, "L2"> {training.arg = #training.arg<param "w">},
                         %y: memref<2x4xf32, "L2"> {training.arg = #training.arg<output "y">}) {
  %x2 = memref.alloc() : memref<2x3xf32, "L2">
  training.relu ins(%x : memref<2x3xf32, "L2">) outs(%x2 : memref<2x3xf32, "L2">)
  %h = memref.alloc() : memref<2x4xf32, "L2">
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

// AUTO:      builtin.module attributes {training.regime = #training.regime<resident, {weights = 48, gradients = 48, optimizer_state = 4, activations = 56, inputs = 24, outputs = 32, control = 0}>}
// AUTO-NOT:  "L3"
// AUTO-NOT:  dma.copy

// spill: the temporaries live in L3, each staged whole through L2 around every
// op that uses it; the arguments stay in L2.
// SPILL:       training.regime = #training.regime<spill,
// SPILL-LABEL: func.func @training_step
// SPILL-SAME:    %w: memref<4x3xf32, "L2">
// SPILL:         %x2 = memref.alloc() : memref<2x3xf32, "L3">
// SPILL-NEXT:    %[[S1:.*]] = memref.alloc() : memref<2x3xf32, "L2">
// SPILL:         training.relu ins(%x : {{.*}}) outs(%[[S1]] :
// SPILL-NEXT:    %[[ST1:.*]] = dma.copy %[[S1]][{{.*}}] -> %x2[{{.*}}] sizes [2, 3]
// SPILL-NEXT:    dma.wait %[[ST1]]
// SPILL-NEXT:    %h = memref.alloc() : memref<2x4xf32, "L3">
// SPILL-NEXT:    %[[S2:.*]] = memref.alloc() : memref<2x3xf32, "L2">
// SPILL:         %[[F2:.*]] = dma.copy %x2[{{.*}}] -> %[[S2]][{{.*}}] sizes [2, 3]
// SPILL-NEXT:    dma.wait %[[F2]]
// SPILL-NEXT:    %[[S3:.*]] = memref.alloc() : memref<2x4xf32, "L2">
// SPILL:         training.gemm ins(%[[S2]], %w : {{.*}}) outs(%[[S3]] :
// SPILL-NEXT:    %[[ST3:.*]] = dma.copy %[[S3]][{{.*}}] -> %h[{{.*}}] sizes [2, 4]
// SPILL-NEXT:    dma.wait %[[ST3]]
// SPILL:         %[[F4:.*]] = dma.copy %h[{{.*}}] -> %[[S4:.*]][{{.*}}] sizes [2, 4]
// SPILL-NEXT:    dma.wait %[[F4]]
// SPILL-NEXT:    training.relu ins(%[[S4]] : {{.*}}) outs(%y :
// SPILL-LABEL: func.func @optimizer_step
// SPILL-NOT:     "L3"
// SPILL:         training.sgd ins(%w, %g, %lr

// stream: w and g (the parameter and its gradient) live in L3 in both
// functions, fetched before every op that reads them; SGD stores w back.
// STREAM:       training.regime = #training.regime<stream,
// STREAM-LABEL: func.func @training_step
// STREAM-SAME:    %x: memref<2x3xf32, "L2">
// STREAM-SAME:    %w: memref<4x3xf32, "L3">
// STREAM-SAME:    %y: memref<2x4xf32, "L2">
// STREAM:         %x2 = memref.alloc() : memref<2x3xf32, "L3">
// STREAM:         %[[WF:.*]] = dma.copy %w[{{.*}}] -> %[[WS:.*]][{{.*}}] sizes [4, 3] : memref<4x3xf32, "L3">, memref<4x3xf32, "L2">
// STREAM-NEXT:    dma.wait %[[WF]]
// STREAM-NEXT:    training.gemm ins(%{{.*}}, %[[WS]] :
// STREAM-LABEL: func.func @optimizer_step
// STREAM-SAME:    %lr: memref<1xf32, "L2">
// STREAM-SAME:    %w: memref<4x3xf32, "L3">
// STREAM-SAME:    %g: memref<4x3xf32, "L3">
// STREAM:         dma.copy %w
// STREAM:         dma.copy %g
// STREAM:         training.sgd ins(%[[W2:.*]], %[[G2:.*]], %lr : {{.*}}) outs(%[[W2]] :
// STREAM-NEXT:    %[[WB:.*]] = dma.copy %[[W2]][{{.*}}] -> %w[{{.*}}] sizes [4, 3]
// STREAM-NEXT:    dma.wait %[[WB]]

// PLAN: training.arena_L2 = #training.arena<size = 164,
// PLAN: training.arena_L3 = #training.arena<size = 152,

// ERR-RESIDENT: memory-regime: regime 'resident' needs 212 bytes of L2 but the L2 capacity is 200 bytes (l2=200)
// ERR-NONE:     memory-regime: no regime fits: regime 'stream' needs 164 bytes of L2 but the L2 capacity is 163 bytes (l2=163)
// ERR-L3:       memory-regime: regime 'stream' needs 152 bytes of L3 but the L3 capacity is 100 bytes (l3=100)
// ERR-REGIME:   memory-regime: regime must be one of auto, resident, spill, stream, got 'fast'
// ERR-BOARD:    unknown board 'sirakusa' (available: gap9_evk, pulp_slowram, siracusa, siracusa_zfinx)
// ERR-ORDER:    memory-regime: expects every tensor in L2 (run it right after training-bufferize, instead of memory-home)
