// RUN: deeploy-opt %s | filecheck %s
// RUN: deeploy-opt %s | deeploy-opt | filecheck %s
// RUN: deeploy-opt %s --print-op-generic | deeploy-opt | filecheck %s

// The metadata attributes of the training dialect (dialects/training/meta.py)
// print as they are written and parse back from their own output and from the
// generic form: #training.arg (kind, ONNX name, optional arena offset; every
// kind once), #training.result (name, optional updated argument; a name with
// a quote), #training.inplace (one entry per result, -1 = own buffer),
// #training.arena (size, bound, optional proven = true / false) and
// #training.regime (regime and footprint).

// CHECK:      builtin.module attributes {training.regime = #training.regime<spill, {weights = 48, gradients = 48, activations = 0}>,
// CHECK-SAME:   training.arena_L2 = #training.arena<size = 360, bound = 356>,
// CHECK-SAME:   training.arena_L3 = #training.arena<size = 8, bound = 0, proven = false>,
// CHECK-SAME:   training.arena_L1 = #training.arena<size = 4, bound = 4, proven = true>} {
// CHECK-NEXT:   func.func @training_step(
// CHECK-SAME:     %x: tensor<4xf32> {training.arg = #training.arg<input "x">},
// CHECK-SAME:     %w: tensor<4xf32> {training.arg = #training.arg<param "fc1.weight" at 64>},
// CHECK-SAME:     %g: tensor<4xf32> {training.arg = #training.arg<grad_accum "g \22quoted\22" at 0>},
// CHECK-SAME:     %r: tensor<1xi1> {training.arg = #training.arg<reset_flag "lazy_reset_grad">},
// CHECK-SAME:     %lr: tensor<1xf32> {training.arg = #training.arg<lr "learning_rate" at 16>},
// CHECK-SAME:     %o: tensor<4xf32> {training.arg = #training.arg<output "onnx::loss::2">})
// CHECK-SAME:     -> (tensor<4xf32> {training.result = #training.result<"y">},
// CHECK-SAME:         tensor<4xf32> {training.result = #training.result<"fc1.weight" updates 1>}) {
// CHECK-NEXT:     %y = training.relu ins(%x : tensor<4xf32>) {training.inplace = #training.inplace<0>} -> tensor<4xf32>
// CHECK-NEXT:     %s = training.sgd ins(%w, %g, %lr : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) {training.inplace = #training.inplace<-1>} -> tensor<4xf32>
// CHECK-NEXT:     func.return %y, %s : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

builtin.module attributes {training.regime = #training.regime<spill, {weights = 48, gradients = 48, activations = 0}>, training.arena_L2 = #training.arena<size = 360, bound = 356>, training.arena_L3 = #training.arena<size = 8, bound = 0, proven = false>, training.arena_L1 = #training.arena<size = 4, bound = 4, proven = true>} {
  func.func @training_step(%x: tensor<4xf32> {training.arg = #training.arg<input "x">},
                           %w: tensor<4xf32> {training.arg = #training.arg<param "fc1.weight" at 64>},
                           %g: tensor<4xf32> {training.arg = #training.arg<grad_accum "g \"quoted\"" at 0>},
                           %r: tensor<1xi1> {training.arg = #training.arg<reset_flag "lazy_reset_grad">},
                           %lr: tensor<1xf32> {training.arg = #training.arg<lr "learning_rate" at 16>},
                           %o: tensor<4xf32> {training.arg = #training.arg<output "onnx::loss::2">})
      -> (tensor<4xf32> {training.result = #training.result<"y">},
          tensor<4xf32> {training.result = #training.result<"fc1.weight" updates 1>}) {
    %y = training.relu ins(%x : tensor<4xf32>) {training.inplace = #training.inplace<0>} -> tensor<4xf32>
    %s = training.sgd ins(%w, %g, %lr : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) {training.inplace = #training.inplace<-1>} -> tensor<4xf32>
    func.return %y, %s : tensor<4xf32>, tensor<4xf32>
  }
}
