// RUN: not deeploy-opt %s -p training-inplace-alias 2>&1 | filecheck %s

// IR that still carries the unregistered keys the metadata used before it had
// registered attributes (training.kind, training.name, training.offset,
// training.updates) is refused where a pass reads it, with one line naming the
// argument or result and the new spelling -- not read as "no metadata".
// Here: a result (training-inplace-alias reads the results); meta-old-arg.mlir: an argument.

// CHECK:    {{^}}deeploy-opt: error: @optimizer_step result #0: 'training.name' is the old spelling of the step-function metadata; write training.result = #training.result<...> instead{{$}}

func.func @optimizer_step(%w: tensor<4xf32> {training.arg = #training.arg<param "w">},
                          %g: tensor<4xf32> {training.arg = #training.arg<grad_accum "g">},
                          %lr: tensor<1xf32> {training.arg = #training.arg<lr "lr">})
    -> (tensor<4xf32> {training.name = "w_new", training.updates = 0 : i64}) {
  %s = training.sgd ins(%w, %g, %lr : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
