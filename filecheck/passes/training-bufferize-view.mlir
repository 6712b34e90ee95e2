// RUN: deeploy-opt %s -p training-bufferize | filecheck %s

// training-bufferize and reshapes (AliasingInterface.VIEW). With the decision
// #training.inplace<0> (training-inplace-alias: the result may share its
// operand's storage) the reshape becomes a training.view of the operand's
// buffer: no op, no buffer, no kernel. Without it (here %l, returned: it
// lives in its output argument) the result gets its buffer as usual and the
// reshape becomes a training.copy from a view of the operand under the
// result's shape, an elementwise copy (it tiles over every dim).

// CHECK-LABEL: func.func @views
// CHECK-SAME:    %g: memref<2x4xf32, "L2"> {training.arg = #training.arg<output "out">}
// CHECK-SAME:    %l: memref<12xf32, "L2"> {training.arg = #training.arg<output "flat">}
// CHECK-NEXT:    %y = memref.alloc() : memref<2x3x2xf32, "L2">
// CHECK-NEXT:    training.relu ins(%x : memref<2x3x2xf32, "L2">) outs(%y : memref<2x3x2xf32, "L2">)
// CHECK-NEXT:    %f = training.view %y : memref<2x3x2xf32, "L2"> to memref<2x6xf32, "L2">
// CHECK-NEXT:    training.gemm ins(%f, %w : memref<2x6xf32, "L2">, memref<4x6xf32, "L2">) outs(%g : memref<2x4xf32, "L2">) {trans_b}
// CHECK-NEXT:    %y_as_l = training.view %y : memref<2x3x2xf32, "L2"> to memref<12xf32, "L2">
// CHECK-NEXT:    training.copy ins(%y_as_l : memref<12xf32, "L2">) outs(%l : memref<12xf32, "L2">)
// CHECK-NEXT:    func.return
func.func @views(%x: tensor<2x3x2xf32> {training.arg = #training.arg<input "x">},
                 %w: tensor<4x6xf32> {training.arg = #training.arg<param "w">})
    -> (tensor<2x4xf32> {training.result = #training.result<"out">},
        tensor<12xf32> {training.result = #training.result<"flat">}) {
  %y = training.relu ins(%x : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  %f = training.reshape ins(%y : tensor<2x3x2xf32>) {training.inplace = #training.inplace<0>} -> tensor<2x6xf32>
  %g = training.gemm ins(%f, %w : tensor<2x6xf32>, tensor<4x6xf32>) {trans_b} -> tensor<2x4xf32>
  %l = training.reshape ins(%y : tensor<2x3x2xf32>) -> tensor<12xf32>
  func.return %g, %l : tensor<2x4xf32>, tensor<12xf32>
}

// A view of an argument, a view of a view (Unsqueeze after Flatten), and a
// reshape without a decision into a temporary (a copy into its own buffer).
// CHECK-LABEL: func.func @chains
// CHECK-NEXT:    %f = training.view %x : memref<2x3x2xf32, "L2"> to memref<2x6xf32, "L2">
// CHECK-NEXT:    %u = training.view %f : memref<2x6xf32, "L2"> to memref<2x1x6xf32, "L2">
// CHECK-NEXT:    %x_as_c = training.view %x : memref<2x3x2xf32, "L2"> to memref<12xf32, "L2">
// CHECK-NEXT:    %c = memref.alloc() : memref<12xf32, "L2">
// CHECK-NEXT:    training.copy ins(%x_as_c : memref<12xf32, "L2">) outs(%c : memref<12xf32, "L2">)
// CHECK-NEXT:    training.relu ins(%u : memref<2x1x6xf32, "L2">) outs(%r : memref<2x1x6xf32, "L2">)
// CHECK-NEXT:    training.relu ins(%c : memref<12xf32, "L2">) outs(%s : memref<12xf32, "L2">)
func.func @chains(%x: tensor<2x3x2xf32> {training.arg = #training.arg<input "x">})
    -> (tensor<2x1x6xf32> {training.result = #training.result<"r">},
        tensor<12xf32> {training.result = #training.result<"s">}) {
  %f = training.reshape ins(%x : tensor<2x3x2xf32>) {training.inplace = #training.inplace<0>} -> tensor<2x6xf32>
  %u = training.reshape ins(%f : tensor<2x6xf32>) {training.inplace = #training.inplace<0>} -> tensor<2x1x6xf32>
  %c = training.reshape ins(%x : tensor<2x3x2xf32>) -> tensor<12xf32>
  %r = training.relu ins(%u : tensor<2x1x6xf32>) -> tensor<2x1x6xf32>
  %s = training.relu ins(%c : tensor<12xf32>) -> tensor<12xf32>
  func.return %r, %s : tensor<2x1x6xf32>, tensor<12xf32>
}
