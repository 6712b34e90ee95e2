// RUN: deeploy-opt %s -p training-inplace-alias,training-bufferize | filecheck %s

// The copies at the end of a function write returned values into arguments.
// The returned values are tensors taken before any update, so every copy must
// read the *old* contents: copies are ordered so that no argument is read after
// it has been written, and a cycle (a swap) goes through a temporary.

// The "w_old" output is written from %w before %w gets the new weight.
// CHECK-LABEL: func.func @old_and_new
// CHECK-SAME:    %[[OLD:[0-9a-z_]+]]: memref<4xf32, "L2"> {training.arg = #training.arg<output "w_old">}
// CHECK:         training.sgd ins(%w, %g, %lr : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<1xf32, "L2">) outs(%s : memref<4xf32, "L2">)
// CHECK-NEXT:    training.copy ins(%w : memref<4xf32, "L2">) outs(%[[OLD]] : memref<4xf32, "L2">)
// CHECK-NEXT:    training.copy ins(%s : memref<4xf32, "L2">) outs(%w : memref<4xf32, "L2">)
// CHECK-NOT:     ins(%w :
// CHECK:         func.return
func.func @old_and_new(%w: tensor<4xf32> {training.arg = #training.arg<param "w">},
                       %g: tensor<4xf32> {training.arg = #training.arg<grad_accum "g">},
                       %lr: tensor<1xf32> {training.arg = #training.arg<lr "lr">})
    -> (tensor<4xf32> {training.result = #training.result<"w" updates 0>},
        tensor<4xf32> {training.result = #training.result<"w_old">}) {
  %s = training.sgd ins(%w, %g, %lr : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  func.return %s, %w : tensor<4xf32>, tensor<4xf32>
}

// A swap: the old %a is saved in a temporary, %a is not read once written.
// CHECK-LABEL: func.func @swap
// CHECK:         %[[T:[0-9a-z_]+]] = memref.alloc() : memref<4xf32, "L2">
// CHECK-NEXT:    training.copy ins(%a : memref<4xf32, "L2">) outs(%[[T]] : memref<4xf32, "L2">)
// CHECK-NEXT:    training.copy ins(%b : memref<4xf32, "L2">) outs(%a : memref<4xf32, "L2">)
// CHECK-NEXT:    training.copy ins(%[[T]] : memref<4xf32, "L2">) outs(%b : memref<4xf32, "L2">)
// CHECK-NOT:     ins(%a :
// CHECK:         func.return
func.func @swap(%a: tensor<4xf32> {training.arg = #training.arg<param "a">},
                %b: tensor<4xf32> {training.arg = #training.arg<param "b">})
    -> (tensor<4xf32> {training.result = #training.result<"a" updates 0>},
        tensor<4xf32> {training.result = #training.result<"b" updates 1>}) {
  func.return %b, %a : tensor<4xf32>, tensor<4xf32>
}
