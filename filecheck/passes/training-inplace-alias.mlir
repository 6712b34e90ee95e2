// RUN: deeploy-opt %s -p training-inplace-alias | filecheck %s

// training-inplace-alias writes `training.inplace = #training.inplace<k>` on an op
// whose result 0 takes the storage of its operand k (read from the op's
// AliasingInterface), and nothing when every candidate is refused. Each
// function below shows one rule; a refusal is checked with CHECK-NOT between
// the op's operands and its result type (where the attribute would print).

// =============================================================================
// Taken: the operand dies at the op (no later reader, not returned).
// The chain %y -> %r -> %t lives in one buffer, the Gemm's.
// =============================================================================
// CHECK-LABEL: func.func @operand_dies
// CHECK:         %y = training.gemm ins(%x, %w : tensor<3x4xf32>, tensor<5x4xf32>) {trans_b} -> tensor<3x5xf32>
// CHECK-NEXT:    %r = training.relu ins(%y : tensor<3x5xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<3x5xf32>
// CHECK-NEXT:    %t = training.binary ins(%r, %r : tensor<3x5xf32>, tensor<3x5xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>, kind = "add"} -> tensor<3x5xf32>
// %s is returned: it is written straight into its output argument instead.
// CHECK-NEXT:    %s = training.relu ins(%t : tensor<3x5xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<3x5xf32>
// CHECK-NEXT:    func.return %s : tensor<3x5xf32>
func.func @operand_dies(%x: tensor<3x4xf32> {training.arg = #training.arg<input "x">},
                        %w: tensor<5x4xf32> {training.arg = #training.arg<param "w">})
    -> (tensor<3x5xf32> {training.result = #training.result<"out">}) {
  %y = training.gemm ins(%x, %w : tensor<3x4xf32>, tensor<5x4xf32>) {trans_b} -> tensor<3x5xf32>
  %r = training.relu ins(%y : tensor<3x5xf32>) -> tensor<3x5xf32>
  %t = training.binary ins(%r, %r : tensor<3x5xf32>, tensor<3x5xf32>) {kind = "add"} -> tensor<3x5xf32>
  %s = training.relu ins(%t : tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %s : tensor<3x5xf32>
}

// =============================================================================
// Refused: the operand is read later. The ReLU's input %y is read again by the
// ReLU gradient, so the ReLU gets its own buffer; the gradient then takes its
// first operand %r, which dies there (the second, %y, dies there too, but one
// result takes one operand: the first candidate wins).
// =============================================================================
// CHECK-LABEL: func.func @read_later
// CHECK:         %r = training.relu ins(%y : tensor<3x5xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<3x5xf32>
// CHECK-NEXT:    %d = training.relu_grad ins(%r, %y : tensor<3x5xf32>, tensor<3x5xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<3x5xf32>
func.func @read_later(%x: tensor<3x4xf32> {training.arg = #training.arg<input "x">},
                      %w: tensor<5x4xf32> {training.arg = #training.arg<param "w">})
    -> (tensor<3x5xf32> {training.result = #training.result<"o">}) {
  %y = training.gemm ins(%x, %w : tensor<3x4xf32>, tensor<5x4xf32>) {trans_b} -> tensor<3x5xf32>
  %r = training.relu ins(%y : tensor<3x5xf32>) -> tensor<3x5xf32>
  %d = training.relu_grad ins(%r, %y : tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %e = training.binary ins(%d, %d : tensor<3x5xf32>, tensor<3x5xf32>) {kind = "mul"} -> tensor<3x5xf32>
  func.return %e : tensor<3x5xf32>
}

// =============================================================================
// Refused: the operand is a function argument and the op is not the update
// target of that argument. %x dies at the ReLU but is an input; %w's ReLU is
// even returned as the new value of %w, but a ReLU is no state update; the SGD
// on %v is a state update but its result is not returned as %v's new value
// (it feeds another op). The binary then takes operand 1, %sv, which dies
// there (operand 0 is the argument %g).
// =============================================================================
// CHECK-LABEL: func.func @argument_not_target
// CHECK:         %rx = training.relu ins(%x : tensor<4xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<4xf32>
// CHECK-NEXT:    %rw = training.relu ins(%w : tensor<4xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<4xf32>
// CHECK-NEXT:    %sv = training.sgd ins(%v, %g, %lr : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<4xf32>
// CHECK-NEXT:    %o = training.binary ins(%g, %sv : tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<1>, kind = "sub"} -> tensor<4xf32>
func.func @argument_not_target(%x: tensor<4xf32> {training.arg = #training.arg<input "x">},
                               %w: tensor<4xf32> {training.arg = #training.arg<param "w">},
                               %v: tensor<4xf32> {training.arg = #training.arg<param "v">},
                               %g: tensor<4xf32> {training.arg = #training.arg<grad_accum "g">},
                               %lr: tensor<1xf32> {training.arg = #training.arg<lr "lr">})
    -> (tensor<4xf32> {training.result = #training.result<"rx">},
        tensor<4xf32> {training.result = #training.result<"w" updates 1>},
        tensor<4xf32> {training.result = #training.result<"o">}) {
  %rx = training.relu ins(%x : tensor<4xf32>) -> tensor<4xf32>
  %rw = training.relu ins(%w : tensor<4xf32>) -> tensor<4xf32>
  %sv = training.sgd ins(%v, %g, %lr : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %o = training.binary ins(%g, %sv : tensor<4xf32>, tensor<4xf32>) {kind = "sub"} -> tensor<4xf32>
  %o2 = training.binary ins(%o, %o : tensor<4xf32>, tensor<4xf32>) {kind = "add"} -> tensor<4xf32>
  func.return %rx, %rw, %o2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// =============================================================================
// Taken: accumulation and SGD write their own argument when their result is
// returned as that argument's new value (`#training.result<... updates I>`). A
// read of the argument before the update (the ReLU of %w) does not matter.
// =============================================================================
// CHECK-LABEL: func.func @state_updates
// CHECK:         %r = training.relu ins(%w : tensor<4xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<4xf32>
// CHECK-NEXT:    %a = training.accumulate ins(%buf, %grad, %reset : tensor<4xf32>, tensor<4xf32>, tensor<1xi1>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<4xf32>
// CHECK-NEXT:    %s = training.sgd ins(%w, %a, %lr : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<4xf32>
// CHECK-NEXT:    func.return %a, %s, %r : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @state_updates(%w: tensor<4xf32> {training.arg = #training.arg<param "w">},
                         %buf: tensor<4xf32> {training.arg = #training.arg<grad_accum "buf">},
                         %grad: tensor<4xf32> {training.arg = #training.arg<grad_accum "grad">},
                         %reset: tensor<1xi1> {training.arg = #training.arg<reset_flag "reset">},
                         %lr: tensor<1xf32> {training.arg = #training.arg<lr "lr">})
    -> (tensor<4xf32> {training.result = #training.result<"buf" updates 1>},
        tensor<4xf32> {training.result = #training.result<"w" updates 0>},
        tensor<4xf32> {training.result = #training.result<"r">}) {
  %r = training.relu ins(%w : tensor<4xf32>) -> tensor<4xf32>
  %a = training.accumulate ins(%buf, %grad, %reset : tensor<4xf32>, tensor<4xf32>, tensor<1xi1>) -> tensor<4xf32>
  %s = training.sgd ins(%w, %a, %lr : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  func.return %a, %s, %r : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// =============================================================================
// Refused: the updated argument is read later by another op (the ReLU needs the
// old weight after the SGD); the same accumulation with a later reader of %buf.
// =============================================================================
// CHECK-LABEL: func.func @update_read_later
// CHECK:         %s = training.sgd ins(%w, %grad, %lr : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<4xf32>
// CHECK-NEXT:    %a = training.accumulate ins(%buf, %grad, %reset : tensor<4xf32>, tensor<4xf32>, tensor<1xi1>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<4xf32>
// CHECK-NEXT:    %y = training.binary ins(%w, %buf : tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<4xf32>
func.func @update_read_later(%w: tensor<4xf32> {training.arg = #training.arg<param "w">},
                             %buf: tensor<4xf32> {training.arg = #training.arg<grad_accum "buf">},
                             %grad: tensor<4xf32> {training.arg = #training.arg<grad_accum "grad">},
                             %reset: tensor<1xi1> {training.arg = #training.arg<reset_flag "reset">},
                             %lr: tensor<1xf32> {training.arg = #training.arg<lr "lr">})
    -> (tensor<4xf32> {training.result = #training.result<"w" updates 0>},
        tensor<4xf32> {training.result = #training.result<"buf" updates 1>},
        tensor<4xf32> {training.result = #training.result<"y">}) {
  %s = training.sgd ins(%w, %grad, %lr : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %a = training.accumulate ins(%buf, %grad, %reset : tensor<4xf32>, tensor<4xf32>, tensor<1xi1>) -> tensor<4xf32>
  %y = training.binary ins(%w, %buf : tensor<4xf32>, tensor<4xf32>) {kind = "add"} -> tensor<4xf32>
  func.return %s, %a, %y : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// =============================================================================
// Refused: a constant is never written, even where it dies (%k at the ReLU).
// The binary passes over operand 0 (the constant %k2, which dies there too)
// and takes operand 1 (%t, a temporary that dies there).
// =============================================================================
// CHECK-LABEL: func.func @constant_operand
// CHECK:         %k = training.constant {value = dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>} : tensor<2xf32>
// CHECK-NEXT:    %k2 = training.constant {value = dense<2.000000e+00> : tensor<2xf32>} : tensor<2xf32>
// CHECK-NEXT:    %r = training.relu ins(%k : tensor<2xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<2xf32>
// CHECK-NEXT:    %t = training.relu ins(%x : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %m = training.binary ins(%k2, %t : tensor<2xf32>, tensor<2xf32>)
// CHECK-SAME:      {training.inplace = #training.inplace<1>, kind = "mul"} -> tensor<2xf32>
func.func @constant_operand(%x: tensor<2xf32> {training.arg = #training.arg<input "x">})
    -> (tensor<2xf32> {training.result = #training.result<"r">}, tensor<2xf32> {training.result = #training.result<"m2">}) {
  %k = training.constant {value = dense<[1.0, -1.0]> : tensor<2xf32>} : tensor<2xf32>
  %k2 = training.constant {value = dense<2.0> : tensor<2xf32>} : tensor<2xf32>
  %r = training.relu ins(%k : tensor<2xf32>) -> tensor<2xf32>
  %t = training.relu ins(%x : tensor<2xf32>) -> tensor<2xf32>
  %m = training.binary ins(%k2, %t : tensor<2xf32>, tensor<2xf32>) {kind = "mul"} -> tensor<2xf32>
  %m2 = training.binary ins(%m, %m : tensor<2xf32>, tensor<2xf32>) {kind = "add"} -> tensor<2xf32>
  func.return %r, %m2 : tensor<2xf32>, tensor<2xf32>
}

// =============================================================================
// Refused: the result is returned as the update of a different argument (the
// SGD reads %w but its result is %v's new value), and a temporary's op whose
// result is an argument's new value keeps its own buffer too (the update is
// copied into the argument by training-bufferize).
// =============================================================================
// CHECK-LABEL: func.func @other_argument
// CHECK:         %s = training.sgd ins(%w, %grad, %lr : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<4xf32>
// CHECK-NEXT:    %y = training.binary ins(%grad, %grad : tensor<4xf32>, tensor<4xf32>) {kind = "add"} -> tensor<4xf32>
// CHECK-NEXT:    %u = training.relu ins(%y : tensor<4xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<4xf32>
func.func @other_argument(%w: tensor<4xf32> {training.arg = #training.arg<param "w">},
                          %v: tensor<4xf32> {training.arg = #training.arg<param "v">},
                          %u0: tensor<4xf32> {training.arg = #training.arg<param "u">},
                          %grad: tensor<4xf32> {training.arg = #training.arg<grad_accum "grad">},
                          %lr: tensor<1xf32> {training.arg = #training.arg<lr "lr">})
    -> (tensor<4xf32> {training.result = #training.result<"v" updates 1>},
        tensor<4xf32> {training.result = #training.result<"u" updates 2>}) {
  %s = training.sgd ins(%w, %grad, %lr : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %y = training.binary ins(%grad, %grad : tensor<4xf32>, tensor<4xf32>) {kind = "add"} -> tensor<4xf32>
  %u = training.relu ins(%y : tensor<4xf32>) -> tensor<4xf32>
  func.return %s, %u : tensor<4xf32>, tensor<4xf32>
}

// =============================================================================
// Refused: the operand is returned. %y is a plain output, so %z = relu(%y)
// keeps its own buffer. %a was accumulated in place into the argument %buf and
// is returned as %buf's new value, so the ReLU of %a may not write over it
// either (that would clobber %buf's new value). Note: the pass also follows
// in-place chains to their root (`root` in the pass), but a value living in an
// argument is always the returned result of a state update, so this refusal
// is reached first.
// =============================================================================
// CHECK-LABEL: func.func @returned_or_aliased
// CHECK:         %y = training.binary ins(%g, %g : tensor<4xf32>, tensor<4xf32>) {kind = "add"} -> tensor<4xf32>
// CHECK-NEXT:    %z = training.relu ins(%y : tensor<4xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<4xf32>
// CHECK-NEXT:    %a = training.accumulate ins(%buf, %z, %reset : tensor<4xf32>, tensor<4xf32>, tensor<1xi1>)
// CHECK-SAME:      {training.inplace = #training.inplace<0>} -> tensor<4xf32>
// CHECK-NEXT:    %r = training.relu ins(%a : tensor<4xf32>)
// CHECK-NOT:       training.inplace
// CHECK-SAME:      -> tensor<4xf32>
func.func @returned_or_aliased(%buf: tensor<4xf32> {training.arg = #training.arg<grad_accum "buf">},
                               %g: tensor<4xf32> {training.arg = #training.arg<grad_accum "g">},
                               %reset: tensor<1xi1> {training.arg = #training.arg<reset_flag "reset">})
    -> (tensor<4xf32> {training.result = #training.result<"y">},
        tensor<4xf32> {training.result = #training.result<"buf" updates 0>},
        tensor<4xf32> {training.result = #training.result<"s">}) {
  %y = training.binary ins(%g, %g : tensor<4xf32>, tensor<4xf32>) {kind = "add"} -> tensor<4xf32>
  %z = training.relu ins(%y : tensor<4xf32>) -> tensor<4xf32>
  %a = training.accumulate ins(%buf, %z, %reset : tensor<4xf32>, tensor<4xf32>, tensor<1xi1>) -> tensor<4xf32>
  %r = training.relu ins(%a : tensor<4xf32>) -> tensor<4xf32>
  %s = training.binary ins(%r, %r : tensor<4xf32>, tensor<4xf32>) {kind = "add"} -> tensor<4xf32>
  func.return %y, %a, %s : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
