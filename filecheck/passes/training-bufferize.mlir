// RUN: deeploy-opt %s -p training-inplace-alias,training-bufferize | filecheck %s
// RUN: deeploy-opt %s -p training-bufferize | filecheck %s --check-prefix=NOALIAS
// RUN: deeploy-opt %s -p "training-bufferize{level=L1}" | filecheck %s --check-prefix=L1

// training-bufferize turns tensor-form functions into buffer form
// (destination-passing): tensor arguments become memrefs in "L2" (the `level`
// option); a plain result becomes an extra argument of kind "output" that its
// op writes directly; an update result (`updates I`) writes its argument;
// temporaries get a memref.alloc, or their operand's buffer where
// training-inplace-alias chose it (`training.inplace`, dropped here);
// constants become private memref.globals read by memref.get_global; a
// returned value not computed where it belongs is copied there at the end
// (training.copy). The first RUN has the alias analysis, the second (NOALIAS)
// does not: every temporary gets its own alloc and the accumulation is copied.

// Every constant of the module becomes one global, at the top of the module.
// CHECK:      builtin.module {
// CHECK-NEXT:   "memref.global"() <{sym_name = "[[G0:constant_[0-9]+]]", type = memref<f32, "L2">, initial_value = dense<2.000000e+00> : tensor<f32>, sym_visibility = "private", constant}> : () -> ()
// CHECK-NEXT:   "memref.global"() <{sym_name = "[[G1:constant_[0-9]+]]", type = memref<1xf32, "L2">, initial_value = dense<1.000000e-01> : tensor<1xf32>, sym_visibility = "private", constant}> : () -> ()
// CHECK-NEXT:   "memref.global"() <{sym_name = "[[G2:constant_[0-9]+]]", type = memref<2xi64, "L2">, initial_value = dense<[3, 4]> : tensor<2xi64>, sym_visibility = "private", constant}> : () -> ()

// The arguments become L2 memrefs with their attributes; the update of "buf"
// needs no argument of its own, the plain results "act" and "loss" get output
// arguments (named after the returned values).
// CHECK-NEXT:   func.func @training_step(
// CHECK-SAME:     %x: memref<3x4xf32, "L2"> {training.arg = #training.arg<input "x">},
// CHECK-SAME:     %w: memref<5x4xf32, "L2"> {training.arg = #training.arg<param "w">},
// CHECK-SAME:     %buf: memref<5xf32, "L2"> {training.arg = #training.arg<grad_accum "buf">},
// CHECK-SAME:     %reset: memref<1xi1, "L2"> {training.arg = #training.arg<reset_flag "reset">},
// CHECK-SAME:     %t: memref<3x5xf32, "L2"> {training.arg = #training.arg<output "act">},
// CHECK-SAME:     %l: memref<f32, "L2"> {training.arg = #training.arg<output "loss">}) {
// A temporary gets an alloc ...
// CHECK-NEXT:     %y = memref.alloc() : memref<3x5xf32, "L2">
// CHECK-NEXT:     training.gemm ins(%x, %w : memref<3x4xf32, "L2">, memref<5x4xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {trans_b}
// ... which the in-place ReLU and multiplication reuse (training.inplace = [0]) ...
// CHECK-NEXT:     training.relu ins(%y : memref<3x5xf32, "L2">) outs(%y : memref<3x5xf32, "L2">)
// CHECK-NEXT:     %[[K0:.*]] = memref.get_global @[[G0]] : memref<f32, "L2">
// CHECK-NEXT:     training.binary ins(%y, %[[K0]] : memref<3x5xf32, "L2">, memref<f32, "L2">) outs(%y : memref<3x5xf32, "L2">) {kind = "mul"}
// ... a returned result is written straight into its output argument ...
// CHECK-NEXT:     training.relu ins(%y : memref<3x5xf32, "L2">) outs(%t : memref<3x5xf32, "L2">)
// CHECK-NEXT:     %g = memref.alloc() : memref<5xf32, "L2">
// CHECK-NEXT:     training.reduce_sum ins(%t : memref<3x5xf32, "L2">) outs(%g : memref<5xf32, "L2">) {axes = array<i64: 0>}
// CHECK-NEXT:     training.reduce_sum ins(%g : memref<5xf32, "L2">) outs(%l : memref<f32, "L2">) {axes = array<i64: 0>}
// ... and the in-place accumulation writes its argument: nothing to copy.
// CHECK-NEXT:     training.accumulate ins(%buf, %g, %reset : memref<5xf32, "L2">, memref<5xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<5xf32, "L2">)
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }

// Without the alias analysis every temporary has its own buffer, and the
// accumulation writes a temporary that is copied into "buf" at the end.
// NOALIAS:      func.func @training_step(
// NOALIAS-NEXT:   %y = memref.alloc() : memref<3x5xf32, "L2">
// NOALIAS-NEXT:   training.gemm ins(%x, %w : memref<3x4xf32, "L2">, memref<5x4xf32, "L2">) outs(%y : memref<3x5xf32, "L2">) {trans_b}
// NOALIAS-NEXT:   %r = memref.alloc() : memref<3x5xf32, "L2">
// NOALIAS-NEXT:   training.relu ins(%y : memref<3x5xf32, "L2">) outs(%r : memref<3x5xf32, "L2">)
// NOALIAS-NEXT:   %[[K0:.*]] = memref.get_global @{{constant_[0-9]+}} : memref<f32, "L2">
// NOALIAS-NEXT:   %s = memref.alloc() : memref<3x5xf32, "L2">
// NOALIAS-NEXT:   training.binary ins(%r, %[[K0]] : memref<3x5xf32, "L2">, memref<f32, "L2">) outs(%s : memref<3x5xf32, "L2">) {kind = "mul"}
// NOALIAS-NEXT:   training.relu ins(%s : memref<3x5xf32, "L2">) outs(%t : memref<3x5xf32, "L2">)
// NOALIAS-NEXT:   %g = memref.alloc() : memref<5xf32, "L2">
// NOALIAS-NEXT:   training.reduce_sum ins(%t : memref<3x5xf32, "L2">) outs(%g : memref<5xf32, "L2">) {axes = array<i64: 0>}
// NOALIAS-NEXT:   training.reduce_sum ins(%g : memref<5xf32, "L2">) outs(%l : memref<f32, "L2">) {axes = array<i64: 0>}
// NOALIAS-NEXT:   %a = memref.alloc() : memref<5xf32, "L2">
// NOALIAS-NEXT:   training.accumulate ins(%buf, %g, %reset : memref<5xf32, "L2">, memref<5xf32, "L2">, memref<1xi1, "L2">) outs(%a : memref<5xf32, "L2">)
// NOALIAS-NEXT:   training.copy ins(%a : memref<5xf32, "L2">) outs(%buf : memref<5xf32, "L2">)
// NOALIAS-NEXT:   func.return
// NOALIAS-NEXT: }

func.func @training_step(%x: tensor<3x4xf32> {training.arg = #training.arg<input "x">},
                         %w: tensor<5x4xf32> {training.arg = #training.arg<param "w">},
                         %buf: tensor<5xf32> {training.arg = #training.arg<grad_accum "buf">},
                         %reset: tensor<1xi1> {training.arg = #training.arg<reset_flag "reset">})
    -> (tensor<5xf32> {training.result = #training.result<"buf" updates 2>},
        tensor<3x5xf32> {training.result = #training.result<"act">},
        tensor<f32> {training.result = #training.result<"loss">}) {
  %y = training.gemm ins(%x, %w : tensor<3x4xf32>, tensor<5x4xf32>) {trans_b} -> tensor<3x5xf32>
  %r = training.relu ins(%y : tensor<3x5xf32>) -> tensor<3x5xf32>
  %k = training.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %s = training.binary ins(%r, %k : tensor<3x5xf32>, tensor<f32>) {kind = "mul"} -> tensor<3x5xf32>
  %t = training.relu ins(%s : tensor<3x5xf32>) -> tensor<3x5xf32>
  %g = training.reduce_sum ins(%t : tensor<3x5xf32>) {axes = array<i64: 0>} -> tensor<5xf32>
  %l = training.reduce_sum ins(%g : tensor<5xf32>) {axes = array<i64: 0>} -> tensor<f32>
  %a = training.accumulate ins(%buf, %g, %reset : tensor<5xf32>, tensor<5xf32>, tensor<1xi1>) -> tensor<5xf32>
  func.return %a, %t, %l : tensor<5xf32>, tensor<3x5xf32>, tensor<f32>
}

// An update that cannot be in place even with the alias analysis: the old
// weight is read after the SGD (by the ReLU), so the SGD writes a temporary
// that is copied into "w" at the very end, after the last read of the old %w.
// CHECK-NEXT:   func.func @optimizer_step(
// CHECK-SAME:     %w: memref<5x4xf32, "L2"> {training.arg = #training.arg<param "w">},
// CHECK-SAME:     %gw: memref<5x4xf32, "L2"> {training.arg = #training.arg<grad_accum "gw">},
// CHECK-SAME:     %r: memref<5x4xf32, "L2"> {training.arg = #training.arg<output "w_relu">}) {
// CHECK-NEXT:     %[[LR:.*]] = memref.get_global @[[G1]] : memref<1xf32, "L2">
// CHECK-NEXT:     %s = memref.alloc() : memref<5x4xf32, "L2">
// CHECK-NEXT:     training.sgd ins(%w, %gw, %[[LR]] : memref<5x4xf32, "L2">, memref<5x4xf32, "L2">, memref<1xf32, "L2">) outs(%s : memref<5x4xf32, "L2">)
// CHECK-NEXT:     training.relu ins(%w : memref<5x4xf32, "L2">) outs(%r : memref<5x4xf32, "L2">)
// CHECK-NEXT:     training.copy ins(%s : memref<5x4xf32, "L2">) outs(%w : memref<5x4xf32, "L2">)
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
func.func @optimizer_step(%w: tensor<5x4xf32> {training.arg = #training.arg<param "w">},
                          %gw: tensor<5x4xf32> {training.arg = #training.arg<grad_accum "gw">})
    -> (tensor<5x4xf32> {training.result = #training.result<"w" updates 0>},
        tensor<5x4xf32> {training.result = #training.result<"w_relu">}) {
  %lr = training.constant {value = dense<1.0e-01> : tensor<1xf32>} : tensor<1xf32>
  %s = training.sgd ins(%w, %gw, %lr : tensor<5x4xf32>, tensor<5x4xf32>, tensor<1xf32>) -> tensor<5x4xf32>
  %r = training.relu ins(%w : tensor<5x4xf32>) -> tensor<5x4xf32>
  func.return %s, %r : tensor<5x4xf32>, tensor<5x4xf32>
}

// A returned argument or constant has no op to write the output argument: it
// is copied there. An update returned unchanged (%v) is already in place.
// CHECK-NEXT:   func.func @passthrough(
// CHECK-SAME:     %x: memref<4xf32, "L2"> {training.arg = #training.arg<input "x">},
// CHECK-SAME:     %v: memref<4xf32, "L2"> {training.arg = #training.arg<param "v">},
// CHECK-SAME:     %[[XO:[^:]*]]: memref<4xf32, "L2"> {training.arg = #training.arg<output "x_out">},
// CHECK-SAME:     %[[KO:[^:]*]]: memref<2xi64, "L2"> {training.arg = #training.arg<output "k_out">}) {
// CHECK-NEXT:     %[[K:.*]] = memref.get_global @[[G2]] : memref<2xi64, "L2">
// CHECK-NEXT:     training.copy ins(%x : memref<4xf32, "L2">) outs(%[[XO]] : memref<4xf32, "L2">)
// CHECK-NEXT:     training.copy ins(%[[K]] : memref<2xi64, "L2">) outs(%[[KO]] : memref<2xi64, "L2">)
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
func.func @passthrough(%x: tensor<4xf32> {training.arg = #training.arg<input "x">},
                       %v: tensor<4xf32> {training.arg = #training.arg<param "v">})
    -> (tensor<4xf32> {training.result = #training.result<"x_out">},
        tensor<4xf32> {training.result = #training.result<"v" updates 1>},
        tensor<2xi64> {training.result = #training.result<"k_out">}) {
  %k = training.constant {value = dense<[3, 4]> : tensor<2xi64>} : tensor<2xi64>
  func.return %x, %v, %k : tensor<4xf32>, tensor<4xf32>, tensor<2xi64>
}

// The level option: every argument, alloc and global in "L1" instead.
// L1:         "memref.global"() <{sym_name = "{{constant_[0-9]+}}", type = memref<f32, "L1">,
// L1:         func.func @training_step(%x: memref<3x4xf32, "L1"> {training.arg = #training.arg<input "x">},
// L1-NOT:     "L2"
// L1:         %y = memref.alloc() : memref<3x5xf32, "L1">
// L1-NOT:     "L2"
