// RUN: not deeploy-opt %s -p arena-plan 2>&1 | filecheck %s

// IR that still carries the unregistered keys the metadata used before it had
// registered attributes (training.kind, training.name, training.offset,
// training.updates) is refused where a pass reads it, with one line naming the
// argument or result and the new spelling -- not read as "no metadata".
// Here: an argument (arena-plan reads the arguments); meta-old-result.mlir: a result.

// CHECK:    {{^}}deeploy-opt: error: @training_step argument #1: 'training.kind' is the old spelling of the step-function metadata; write training.arg = #training.arg<...> instead{{$}}

func.func @training_step(%x: memref<4xf32, "L2"> {training.arg = #training.arg<input "x">},
                         %w: memref<4xf32, "L2"> {training.kind = "param", training.name = "w"}) {
  func.return
}
