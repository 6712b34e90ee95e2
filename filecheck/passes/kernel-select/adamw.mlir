// RUN: deeploy-opt %s -p kernel-select | filecheck %s

// kernel-select, the AdamW family (kernels/adamw.py; runtime_c/include/
// dm_kernels_ext.h), fields worked out by hand:
// - step_count: count and out are the same buffer (in place); no
//   update_signal operand -> update_signal = null, else the operand;
// - adamw: weight, grad, m1, m2, lr, step in operand order, written in place
//   (outs are the weight and the moments themselves); size = 5 * 4 = 20
//   elements; the float attributes as the op holds them, defaults where
//   it prints none (alpha 0.9, beta 0.999, epsilon 1e-8, weight_decay 0,
//   correct_bias 1, adam_mode 0).
// CHECK-LABEL: func.func @adamw
// CHECK-NEXT:    kernel.call @dm_step_count_i64 dm_step_count_args_t {count = %count, update_signal = null, out = %count} note "training.step_count" : memref<1xi64, "L2">, memref<1xi64, "L2">
// CHECK-NEXT:    kernel.call @dm_adamw_fp32 dm_adamw_args_t {weight = %w, grad = %g, m1 = %m1, m2 = %m2, lr = %lr, step = %count, update_signal = null, size = 20, alpha = 9.e-01, beta = 9.99e-01, epsilon = 1.e-06, weight_decay = 0.e+00, correct_bias = 1, adam_mode = 1} note "training.adamw" : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<1xf32, "L2">, memref<1xi64, "L2">
// CHECK-NEXT:    kernel.call @dm_step_count_i64 dm_step_count_args_t {count = %count, update_signal = %sig, out = %count} note "training.step_count" : memref<1xi64, "L2">, memref<1xi1, "L2">, memref<1xi64, "L2">
// CHECK-NEXT:    kernel.call @dm_adamw_fp32 dm_adamw_args_t {weight = %w, grad = %g, m1 = %m1, m2 = %m2, lr = %lr, step = %count, update_signal = %sig, size = 20, alpha = 8.e-01, beta = 9.9e-01, epsilon = 1.e-08, weight_decay = 1.e-02, correct_bias = 0, adam_mode = 0} note "training.adamw" : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<1xf32, "L2">, memref<1xi64, "L2">, memref<1xi1, "L2">
// CHECK-NEXT:    func.return

// not in place (in-place reuse off): the new count into its own buffer
// (dm_step_count_i64 takes any out); the new m2 has its own buffer %n2, so
// dm_copy first gives it m2's 4 * 4 = 16 bytes, and the kernel updates %n2
// (weight and m1 stay in place)
// CHECK-LABEL: func.func @not_in_place
// CHECK-NEXT:    kernel.call @dm_step_count_i64 dm_step_count_args_t {count = %count, update_signal = null, out = %next} note "training.step_count" : memref<1xi64, "L2">, memref<1xi64, "L2">
// CHECK-NEXT:    kernel.call @dm_copy dm_copy_args_t {src = %m2, dst = %n2, bytes = 16} note "training.adamw" : memref<4xf32, "L2">, memref<4xf32, "L2">
// CHECK-NEXT:    kernel.call @dm_adamw_fp32 dm_adamw_args_t {weight = %w, grad = %g, m1 = %m1, m2 = %n2, lr = %lr, step = %next, update_signal = null, size = 4, alpha = 9.e-01, beta = 9.99e-01, epsilon = 1.e-08, weight_decay = 0.e+00, correct_bias = 1, adam_mode = 0} note "training.adamw" : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<4xf32, "L2">, memref<4xf32, "L2">, memref<1xf32, "L2">, memref<1xi64, "L2">
// CHECK-NEXT:    func.return
func.func @adamw(%w: memref<5x4xf32, "L2">, %g: memref<5x4xf32, "L2">, %m1: memref<5x4xf32, "L2">, %m2: memref<5x4xf32, "L2">, %lr: memref<1xf32, "L2">, %count: memref<1xi64, "L2">, %sig: memref<1xi1, "L2">) {
  training.step_count ins(%count : memref<1xi64, "L2">) outs(%count : memref<1xi64, "L2">)
  training.adamw ins(%w, %g, %m1, %m2, %lr, %count : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<1xf32, "L2">, memref<1xi64, "L2">) outs(%w, %m1, %m2 : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<5x4xf32, "L2">) {epsilon = 1.000000e-06 : f32, adam_mode = 1 : i64}
  training.step_count ins(%count, %sig : memref<1xi64, "L2">, memref<1xi1, "L2">) outs(%count : memref<1xi64, "L2">)
  training.adamw ins(%w, %g, %m1, %m2, %lr, %count, %sig : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<1xf32, "L2">, memref<1xi64, "L2">, memref<1xi1, "L2">) outs(%w, %m1, %m2 : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<5x4xf32, "L2">) {alpha = 8.000000e-01 : f32, beta = 9.900000e-01 : f32, weight_decay = 1.000000e-02 : f32, correct_bias = 0 : i64}
  func.return
}

func.func @not_in_place(%w: memref<4xf32, "L2">, %g: memref<4xf32, "L2">, %m1: memref<4xf32, "L2">, %m2: memref<4xf32, "L2">, %n2: memref<4xf32, "L2">, %lr: memref<1xf32, "L2">, %count: memref<1xi64, "L2">, %next: memref<1xi64, "L2">) {
  training.step_count ins(%count : memref<1xi64, "L2">) outs(%next : memref<1xi64, "L2">)
  training.adamw ins(%w, %g, %m1, %m2, %lr, %next : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<4xf32, "L2">, memref<4xf32, "L2">, memref<1xf32, "L2">, memref<1xi64, "L2">) outs(%w, %m1, %n2 : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<4xf32, "L2">)
  func.return
}
