// RUN: deeploy-opt %s -p training-inplace-alias | filecheck %s

// Views (AliasingInterface.VIEW: training.reshape): the result is its
// operand's bytes under another shape. training-inplace-alias writes
// `#training.inplace<0>` on a reshape whose result may be a view (bufferize
// then makes a training.view of it), and refuses only a result that is
// returned. The operand may stay live after the view, so the buffer, its
// views and what is written in place into them are one storage: an in-place
// write into any of them waits until none of the others is read again.

// =============================================================================
// Taken although the operand is read later (%y by the ReLU gradient): a view
// changes no element. The ReLU's own in-place write is refused: %x is an
// argument. The view of the gradient %dg is taken too (its operand dies).
// =============================================================================
// CHECK-LABEL: func.func @flatten_read_later
// CHECK:         %f = training.reshape ins(%y : tensor<2x4x3x3xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<2x36xf32>
// CHECK-NEXT:    %g = training.gemm
// CHECK-NEXT:    %u = training.reshape ins(%g : tensor<2x5xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<2x5x1xf32>
func.func @flatten_read_later(%x: tensor<2x4x3x3xf32> {training.arg = #training.arg<input "x">},
                              %w: tensor<5x36xf32> {training.arg = #training.arg<param "w">})
    -> (tensor<2x4x3x3xf32> {training.result = #training.result<"dx">},
        tensor<2x5x1xf32> {training.result = #training.result<"u">}) {
  %y = training.relu ins(%x : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %f = training.reshape ins(%y : tensor<2x4x3x3xf32>) -> tensor<2x36xf32>
  %g = training.gemm ins(%f, %w : tensor<2x36xf32>, tensor<5x36xf32>) {trans_b} -> tensor<2x5xf32>
  %u = training.reshape ins(%g : tensor<2x5xf32>) -> tensor<2x5x1xf32>
  %d = training.relu_grad ins(%y, %y : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %r = training.relu ins(%u : tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  func.return %d, %r : tensor<2x4x3x3xf32>, tensor<2x5x1xf32>
}

// =============================================================================
// Taken: a view of a function argument (Flatten of the graph input): read
// only. An in-place write into the view is refused like one into the argument.
// =============================================================================
// CHECK-LABEL: func.func @view_of_argument
// CHECK:         %f = training.reshape ins(%x : tensor<2x3x2xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<2x6xf32>
// CHECK-NEXT:    %r = training.relu ins(%f : tensor<2x6xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<2x6xf32>
func.func @view_of_argument(%x: tensor<2x3x2xf32> {training.arg = #training.arg<input "x">})
    -> (tensor<2x6xf32> {training.result = #training.result<"out">}) {
  %f = training.reshape ins(%x : tensor<2x3x2xf32>) -> tensor<2x6xf32>
  %r = training.relu ins(%f : tensor<2x6xf32>) -> tensor<2x6xf32>
  %s = training.relu ins(%r : tensor<2x6xf32>) -> tensor<2x6xf32>
  func.return %s : tensor<2x6xf32>
}

// =============================================================================
// Refused: the reshape's result is returned (it is written into its output
// argument: bufferize copies a view of the operand into it).
// =============================================================================
// CHECK-LABEL: func.func @returned
// CHECK:         %f = training.reshape ins(%y : tensor<2x3x2xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<2x6xf32>
// CHECK-NEXT:    func.return %f
func.func @returned(%x: tensor<2x3x2xf32> {training.arg = #training.arg<input "x">})
    -> (tensor<2x6xf32> {training.result = #training.result<"out">}) {
  %y = training.relu ins(%x : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  %f = training.reshape ins(%y : tensor<2x3x2xf32>) -> tensor<2x6xf32>
  func.return %f : tensor<2x6xf32>
}

// =============================================================================
// In place into a view, refused while the storage is read later under the
// other shape: %r would overwrite %y's elements, which the ReLU gradient
// reads after it. The gradient %d then writes in place into %y (neither %y
// nor its view %f is read after it), and %e into the view %g of %d (nothing
// reads %y, %f or %d again).
// =============================================================================
// CHECK-LABEL: func.func @storage_read_later
// CHECK:         %f = training.reshape ins(%y : tensor<2x3x2xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<2x6xf32>
// CHECK-NEXT:    %r = training.relu ins(%f : tensor<2x6xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<2x6xf32>
// CHECK-NEXT:    %d = training.relu_grad ins(%y, %y : tensor<2x3x2xf32>, tensor<2x3x2xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<2x3x2xf32>
// CHECK-NEXT:    %g = training.reshape ins(%d : tensor<2x3x2xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<2x6xf32>
// CHECK-NEXT:    %e = training.binary ins(%g, %r : tensor<2x6xf32>, tensor<2x6xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>, kind = "add"} -> tensor<2x6xf32>
func.func @storage_read_later(%x: tensor<2x3x2xf32> {training.arg = #training.arg<input "x">})
    -> (tensor<2x6xf32> {training.result = #training.result<"out">}) {
  %y = training.relu ins(%x : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  %f = training.reshape ins(%y : tensor<2x3x2xf32>) -> tensor<2x6xf32>
  %r = training.relu ins(%f : tensor<2x6xf32>) -> tensor<2x6xf32>
  %d = training.relu_grad ins(%y, %y : tensor<2x3x2xf32>, tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  %g = training.reshape ins(%d : tensor<2x3x2xf32>) -> tensor<2x6xf32>
  %e = training.binary ins(%g, %r : tensor<2x6xf32>, tensor<2x6xf32>) {kind = "add"} -> tensor<2x6xf32>
  %s = training.relu ins(%e : tensor<2x6xf32>) -> tensor<2x6xf32>
  func.return %s : tensor<2x6xf32>
}

// =============================================================================
// In place refused: another operand of the op is the same storage under
// another shape (%v, a view of %y). Tiling and dma-multibuffer recognize an
// operand written in place by its identity, so the write gets a buffer of
// its own; once %y and %v are dead the chain goes on in place (%t into %p).
// =============================================================================
// CHECK-LABEL: func.func @operand_is_a_view
// CHECK:         %v = training.reshape ins(%y : tensor<1x6xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<6xf32>
// CHECK-NEXT:    %p = training.binary ins(%y, %v : tensor<1x6xf32>, tensor<6xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<1x6xf32>
// CHECK-NEXT:    %t = training.relu ins(%p : tensor<1x6xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<1x6xf32>
func.func @operand_is_a_view(%x: tensor<1x6xf32> {training.arg = #training.arg<input "x">})
    -> (tensor<1x6xf32> {training.result = #training.result<"out">}) {
  %y = training.relu ins(%x : tensor<1x6xf32>) -> tensor<1x6xf32>
  %v = training.reshape ins(%y : tensor<1x6xf32>) -> tensor<6xf32>
  %p = training.binary ins(%y, %v : tensor<1x6xf32>, tensor<6xf32>) {kind = "mul"} -> tensor<1x6xf32>
  %t = training.relu ins(%p : tensor<1x6xf32>) -> tensor<1x6xf32>
  %s = training.relu ins(%t : tensor<1x6xf32>) -> tensor<1x6xf32>
  func.return %s : tensor<1x6xf32>
}
