// RUN: deeploy-opt %s -p training-inplace-alias,training-bufferize | filecheck %s

// The copies at the end of a function write returned values into arguments.
// The returned values are tensors taken before any update, so every copy must
// read the *old* contents: copies are ordered so that no argument is read after
// it has been written, and a cycle (a swap) goes through a temporary.

// The "w_old" output is written from %w before %w gets the new weight.
// CHECK-LABEL: func.func @old_and_new
// CHECK-SAME:    %[[OLD:[0-9a-z_]+]]: memref<4xf32, "L2"> {training.name = "w_old", training.kind = "output"}
// CHECK:         training.sgd ins(%w, %g, %lr : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<1xf32, "L2">) outs(%s : memref<4xf32, "L2">)
// CHECK-NEXT:    training.copy ins(%w : memref<4xf32, "L2">) outs(%[[OLD]] : memref<4xf32, "L2">)
// CHECK-NEXT:    training.copy ins(%s : memref<4xf32, "L2">) outs(%w : memref<4xf32, "L2">)
// CHECK-NOT:     ins(%w :
// CHECK:         func.return
func.func @old_and_new(%w: tensor<4xf32> {training.name = "w", training.kind = "param"},
                       %g: tensor<4xf32> {training.name = "g", training.kind = "grad"},
                       %lr: tensor<1xf32> {training.name = "lr", training.kind = "lr"})
    -> (tensor<4xf32> {training.name = "w", training.updates = 0 : i64},
        tensor<4xf32> {training.name = "w_old"}) {
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
func.func @swap(%a: tensor<4xf32> {training.name = "a", training.kind = "param"},
                %b: tensor<4xf32> {training.name = "b", training.kind = "param"})
    -> (tensor<4xf32> {training.name = "a", training.updates = 0 : i64},
        tensor<4xf32> {training.name = "b", training.updates = 1 : i64}) {
  func.return %b, %a : tensor<4xf32>, tensor<4xf32>
}
