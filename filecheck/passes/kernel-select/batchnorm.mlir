// RUN: deeploy-opt %s -p kernel-select | filecheck %s

// kernel-select, batch normalization in training mode (kernels/batchnorm.py;
// runtime_c/include/dm_batchnorm.h), fields worked out by hand from the
// shapes and attributes: X is seen as [N, C, S] with S the product of the
// spatial dims. Each op is two calls on one struct: the per-channel pass
// (statistics, or the sums dScale and dBias), then the elementwise pass.

// BatchNorm2d on 2x3x5x5: N = 2, C = 3, S = 5 * 5 = 25; the running
// statistics updated in place (running_mean_in = running_mean = %rm);
// epsilon 1e-3 and momentum 0.5 as given
// CHECK-LABEL: func.func @batch_norm_2d
// CHECK-NEXT:    kernel.call @dm_batchnorm_stats_fp32 dm_batchnorm_args_t {X = %x, scale = %c, bias = %b, running_mean_in = %rm, running_var_in = %rv, Y = %y, running_mean = %rm, running_var = %rv, mean = %m, inv_std = %s, N = 2, C = 3, S = 25, epsilon = 1.e-03, momentum = 5.e-01} note "training.batch_norm (stats)" : memref<2x3x5x5xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<2x3x5x5xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_batchnorm_apply_fp32 dm_batchnorm_args_t {X = %x, scale = %c, bias = %b, running_mean_in = %rm, running_var_in = %rv, Y = %y, running_mean = %rm, running_var = %rv, mean = %m, inv_std = %s, N = 2, C = 3, S = 25, epsilon = 1.e-03, momentum = 5.e-01} note "training.batch_norm"
// CHECK-NEXT:    func.return
func.func @batch_norm_2d(%x: memref<2x3x5x5xf32, "L2">, %c: memref<3xf32, "L2">, %b: memref<3xf32, "L2">, %rm: memref<3xf32, "L2">, %rv: memref<3xf32, "L2">, %y: memref<2x3x5x5xf32, "L2">, %m: memref<3xf32, "L2">, %s: memref<3xf32, "L2">) {
  training.batch_norm ins(%x, %c, %b, %rm, %rv : memref<2x3x5x5xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">) outs(%y, %rm, %rv, %m, %s : memref<2x3x5x5xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">, memref<3xf32, "L2">) {epsilon = 1.0e-03 : f32, momentum = 0.5 : f32}
  func.return
}

// BatchNorm1d on 4x16: N = 4, C = 16, S = 1 (the empty product); the default
// epsilon 1e-5 and momentum 0.9; new running statistics in their own buffers
// CHECK-LABEL: func.func @batch_norm_1d
// CHECK-NEXT:    kernel.call @dm_batchnorm_stats_fp32 dm_batchnorm_args_t {X = %x, scale = %c, bias = %c, running_mean_in = %c, running_var_in = %c, Y = %y, running_mean = %rm, running_var = %rv, mean = %m, inv_std = %s, N = 4, C = 16, S = 1, epsilon = 1.e-05, momentum = 9.e-01} note "training.batch_norm (stats)"
// CHECK-NEXT:    kernel.call @dm_batchnorm_apply_fp32 dm_batchnorm_args_t {X = %x, scale = %c, bias = %c, running_mean_in = %c, running_var_in = %c, Y = %y, running_mean = %rm, running_var = %rv, mean = %m, inv_std = %s, N = 4, C = 16, S = 1, epsilon = 1.e-05, momentum = 9.e-01} note "training.batch_norm"
func.func @batch_norm_1d(%x: memref<4x16xf32, "L2">, %c: memref<16xf32, "L2">, %y: memref<4x16xf32, "L2">, %rm: memref<16xf32, "L2">, %rv: memref<16xf32, "L2">, %m: memref<16xf32, "L2">, %s: memref<16xf32, "L2">) {
  training.batch_norm ins(%x, %c, %c, %c, %c : memref<4x16xf32, "L2">, memref<16xf32, "L2">, memref<16xf32, "L2">, memref<16xf32, "L2">, memref<16xf32, "L2">) outs(%y, %rm, %rv, %m, %s : memref<4x16xf32, "L2">, memref<16xf32, "L2">, memref<16xf32, "L2">, memref<16xf32, "L2">, memref<16xf32, "L2">)
  func.return
}

// the gradient on a channel tile in L1, 2x1x6x6 (one channel of a BatchNorm2d
// on 2x4x6x6): N = 2, C = 1, S = 36; dX in place of dY
// CHECK-LABEL: func.func @batch_norm_grad_tile
// CHECK-NEXT:    kernel.call @dm_batchnorm_grad_reduce_fp32 dm_batchnorm_grad_args_t {dY = %dy, X = %x, scale = %c, mean = %m, inv_std = %s, dX = %dy, dscale = %ds, dbias = %db, N = 2, C = 1, S = 36} note "training.batch_norm_grad (dScale, dBias)" : memref<2x1x6x6xf32, "L1">, memref<2x1x6x6xf32, "L1">, memref<1xf32, "L1">, memref<1xf32, "L1">, memref<1xf32, "L1">, memref<2x1x6x6xf32, "L1">, memref<1xf32, "L1">, memref<1xf32, "L1">
// CHECK-NEXT:    kernel.call @dm_batchnorm_grad_apply_fp32 dm_batchnorm_grad_args_t {dY = %dy, X = %x, scale = %c, mean = %m, inv_std = %s, dX = %dy, dscale = %ds, dbias = %db, N = 2, C = 1, S = 36} note "training.batch_norm_grad"
// CHECK-NEXT:    func.return
func.func @batch_norm_grad_tile(%dy: memref<2x1x6x6xf32, "L1">, %x: memref<2x1x6x6xf32, "L1">, %c: memref<1xf32, "L1">, %m: memref<1xf32, "L1">, %s: memref<1xf32, "L1">, %ds: memref<1xf32, "L1">, %db: memref<1xf32, "L1">) {
  training.batch_norm_grad ins(%dy, %x, %c, %m, %s : memref<2x1x6x6xf32, "L1">, memref<2x1x6x6xf32, "L1">, memref<1xf32, "L1">, memref<1xf32, "L1">, memref<1xf32, "L1">) outs(%dy, %ds, %db : memref<2x1x6x6xf32, "L1">, memref<1xf32, "L1">, memref<1xf32, "L1">)
  func.return
}
