// RUN: deeploy-opt %s -p kernel-select | filecheck %s

// kernel-select, normalization, softmax and loss (norm_loss_calls;
// runtime_c/include/dm_softmax.h, dm_layernorm.h, dm_loss.h), fields worked
// out by hand from the shapes and attributes.

// softmax over axis 0 of 2x3x4: outer = (empty product) 1, len = 2,
// inner = 3 * 4 = 12; its gradient over axis 2: outer = 2 * 3 = 6, len 4, inner 1
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:    kernel.call @dm_softmax_fp32 dm_softmax_args_t {X = %a, Y = %y, outer = 1, len = 2, inner = 12} note "training.softmax" : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_softmax_grad_fp32 dm_softmax_grad_args_t {dY = %a, Y = %y, dX = %y, outer = 6, len = 4, inner = 1} note "training.softmax_grad" : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">
func.func @softmax(%a: memref<2x3x4xf32, "L2">, %y: memref<2x3x4xf32, "L2">) {
  training.softmax ins(%a : memref<2x3x4xf32, "L2">) outs(%y : memref<2x3x4xf32, "L2">) {axis = 0 : i64}
  training.softmax_grad ins(%a, %y : memref<2x3x4xf32, "L2">, memref<2x3x4xf32, "L2">) outs(%y : memref<2x3x4xf32, "L2">) {axis = 2 : i64}
  func.return
}

// layer norm over axis 2 of 2x3x4: rows = 2 * 3 = 6, cols = 4; no bias
// (null), Y and Mean (no InvStdDev: null); epsilon default 1e-5 as f32;
// with a bias and both statistics, epsilon 0.25, axis 1: rows 2, cols 12
// CHECK-LABEL: func.func @layer_norm
// CHECK-NEXT:    kernel.call @dm_layernorm_fp32 dm_layernorm_args_t {X = %a, scale = %s, bias = null, Y = %y, mean = %m, inv_std = null, rows = 6, cols = 4, epsilon = 1.e-05} note "training.layer_norm" : memref<2x3x4xf32, "L2">, memref<4xf32, "L2">, memref<2x3x4xf32, "L2">, memref<2x3x1xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_layernorm_fp32 dm_layernorm_args_t {X = %a, scale = %s2, bias = %s2, Y = %y, mean = %r, inv_std = %r, rows = 2, cols = 12, epsilon = 2.5e-01} note "training.layer_norm"
func.func @layer_norm(%a: memref<2x3x4xf32, "L2">, %s: memref<4xf32, "L2">, %s2: memref<3x4xf32, "L2">, %y: memref<2x3x4xf32, "L2">, %m: memref<2x3x1xf32, "L2">, %r: memref<2x1x1xf32, "L2">) {
  training.layer_norm ins(%a, %s : memref<2x3x4xf32, "L2">, memref<4xf32, "L2">) outs(%y, %m : memref<2x3x4xf32, "L2">, memref<2x3x1xf32, "L2">) {axis = 2 : i64}
  training.layer_norm ins(%a, %s2, %s2 : memref<2x3x4xf32, "L2">, memref<3x4xf32, "L2">, memref<3x4xf32, "L2">) outs(%y, %r, %r : memref<2x3x4xf32, "L2">, memref<2x1x1xf32, "L2">, memref<2x1x1xf32, "L2">) {axis = 1 : i64, epsilon = 0.25 : f32}
  func.return
}

// layer norm gradient of dX, dScale and dBias with the saved statistics, a
// row tile after the first (dScale, dBias accumulate): the parameter
// gradients first (the dX kernel may overwrite dY), acc = 1; rows 4, cols 8
// CHECK-LABEL: func.func @layer_norm_grad
// CHECK-NEXT:    kernel.call @dm_layernorm_grad_params_fp32 dm_layernorm_grad_params_args_t {dY = %dy, X = %x, mean = %m, inv_std = %r, dScale = %ds, dBias = %db, acc = 1, rows = 4, cols = 8} note "training.layer_norm_grad (dScale, dBias)" : memref<4x8xf32, "L1">, memref<4x8xf32, "L1">, memref<4x1xf32, "L1">, memref<4x1xf32, "L1">, memref<8xf32, "L1">, memref<8xf32, "L1">
// CHECK-NEXT:    kernel.call @dm_layernorm_grad_fp32 dm_layernorm_grad_args_t {dY = %dy, X = %x, scale = %s, mean = %m, inv_std = %r, dX = %dx, rows = 4, cols = 8, epsilon = 1.e-05} note "training.layer_norm_grad" : memref<4x8xf32, "L1">, memref<4x8xf32, "L1">, memref<8xf32, "L1">, memref<4x1xf32, "L1">, memref<4x1xf32, "L1">, memref<4x8xf32, "L1">
func.func @layer_norm_grad(%dy: memref<4x8xf32, "L1">, %x: memref<4x8xf32, "L1">, %s: memref<8xf32, "L1">, %m: memref<4x1xf32, "L1">, %r: memref<4x1xf32, "L1">, %dx: memref<4x8xf32, "L1">, %ds: memref<8xf32, "L1">, %db: memref<8xf32, "L1">) {
  training.layer_norm_grad ins(%dy, %x, %s, %m, %r : memref<4x8xf32, "L1">, memref<4x8xf32, "L1">, memref<8xf32, "L1">, memref<4x1xf32, "L1">, memref<4x1xf32, "L1">) outs(%dx, %ds, %db : memref<4x8xf32, "L1">, memref<8xf32, "L1">, memref<8xf32, "L1">) {axis = 1 : i64, outputs = ["dX", "dScale", "dBias"], accumulate = array<i64: 1, 2>}
  func.return
}

// only dX, without saved statistics (3 inputs: mean and inv_std null)
// CHECK-LABEL: func.func @layer_norm_grad_dx
// CHECK-NEXT:    kernel.call @dm_layernorm_grad_fp32 dm_layernorm_grad_args_t {dY = %dy, X = %x, scale = %s, mean = null, inv_std = null, dX = %dx, rows = 4, cols = 8, epsilon = 1.e-05} note "training.layer_norm_grad"
// CHECK-NEXT:    func.return
func.func @layer_norm_grad_dx(%dy: memref<4x8xf32, "L1">, %x: memref<4x8xf32, "L1">, %s: memref<8xf32, "L1">, %dx: memref<4x8xf32, "L1">) {
  training.layer_norm_grad ins(%dy, %x, %s : memref<4x8xf32, "L1">, memref<4x8xf32, "L1">, memref<8xf32, "L1">) outs(%dx : memref<4x8xf32, "L1">) {axis = 1 : i64, outputs = ["dX"]}
  func.return
}

// softmax cross-entropy, 2 rows of 4 classes, mean reduction (the default):
// two calls on one struct (log-probabilities, then the reduction); no
// per-row loss (null). Its gradient: 3 rows of 5, sum reduction
// CHECK-LABEL: func.func @sce
// CHECK-NEXT:    kernel.call @dm_sce_logprob_fp32 dm_sce_args_t {logits = %s, labels = %l, log_prob = %lp, row_loss = null, loss = %loss, batch = 2, classes = 4, reduction = DM_REDUCTION_MEAN} note "training.softmax_cross_entropy_loss" : memref<2x4xf32, "L2">, memref<2xi64, "L2">, memref<2x4xf32, "L2">, memref<f32, "L2">
// CHECK-NEXT:    kernel.call @dm_sce_reduce_fp32 dm_sce_args_t {logits = %s, labels = %l, log_prob = %lp, row_loss = null, loss = %loss, batch = 2, classes = 4, reduction = DM_REDUCTION_MEAN} note "training.softmax_cross_entropy_loss (reduce)"
// CHECK-NEXT:    kernel.call @dm_sce_grad_fp32 dm_sce_grad_args_t {dY = %loss, log_prob = %x, labels = %l3, dX = %y, batch = 3, classes = 5, reduction = DM_REDUCTION_SUM} note "training.softmax_cross_entropy_loss_grad" : memref<f32, "L2">, memref<3x5xf32, "L2">, memref<3xi64, "L2">, memref<3x5xf32, "L2">
func.func @sce(%s: memref<2x4xf32, "L2">, %l: memref<2xi64, "L2">, %loss: memref<f32, "L2">, %lp: memref<2x4xf32, "L2">, %x: memref<3x5xf32, "L2">, %l3: memref<3xi64, "L2">, %y: memref<3x5xf32, "L2">) {
  training.softmax_cross_entropy_loss ins(%s, %l : memref<2x4xf32, "L2">, memref<2xi64, "L2">) outs(%loss, %lp : memref<f32, "L2">, memref<2x4xf32, "L2">)
  training.softmax_cross_entropy_loss_grad ins(%loss, %x, %l3 : memref<f32, "L2">, memref<3x5xf32, "L2">, memref<3xi64, "L2">) outs(%y : memref<3x5xf32, "L2">) {reduction = "sum"}
  func.return
}
