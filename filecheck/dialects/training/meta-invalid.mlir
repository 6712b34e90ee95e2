// RUN: deeploy-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

// Every message of the training dialect's metadata attributes
// (dialects/training/meta.py): each `raise VerifyException(...)` of their
// verifiers, and the parser's own messages where our parse_parameters names
// what it expected. The verifier runs while the attribute is parsed, and its
// message is reported at the attribute's place in the text: each case checks
// the location line, the caret under the attribute and the message (exact).
//
// Not reachable from text, so not tested here: #training.inplace's "expects
// i64 operand indices" (the parser builds an i64 array) and a footprint entry
// that is not an integer (the parser reads integers only).

// an argument kind that is not one of ArgKind
// CHECK:      {{^}}{{.*}}meta-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}{{$}}
// CHECK-NEXT: {{^}}func.func @case0(
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}#training.arg: kind must be one of input, param, grad_accum, reset_flag, lr, output, running_stat, optimizer_state, got 'weights'{{$}}
func.func @case0(%x: tensor<4xf32> {t = #training.arg<weights "x">}) { func.return }

// -----

// a negative arena offset
// CHECK:      {{^}}{{.*}}meta-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}{{$}}
// CHECK-NEXT: {{^}}func.func @case1(
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}#training.arg: offset must be non-negative, got -4{{$}}
func.func @case1(%x: tensor<4xf32> {t = #training.arg<param "x" at -4>}) { func.return }

// -----

// the ONNX name is a string literal
// CHECK:      {{^}}{{.*}}meta-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}{{$}}
// CHECK-NEXT: {{^}}func.func @case2(
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}string literal expected (the argument's ONNX name){{$}}
func.func @case2(%x: tensor<4xf32> {t = #training.arg<param x>}) { func.return }

// -----

// an updated argument index below 0
// CHECK:      {{^}}{{.*}}meta-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}{{$}}
// CHECK-NEXT: {{^}}func.func @case3(
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}#training.result: updates must name an argument index (>= 0), got -1{{$}}
func.func @case3(%x: tensor<4xf32> {t = #training.result<"y" updates -1>}) { func.return }

// -----

// an in-place entry below -1
// CHECK:      {{^}}{{.*}}meta-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}{{$}}
// CHECK-NEXT: {{^}}func.func @case4(
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}#training.inplace: each entry must be an operand index or -1 (own buffer), got -2{{$}}
func.func @case4(%x: tensor<4xf32> {t = #training.inplace<0, -2>}) { func.return }

// -----

// an in-place entry that is not an integer
// CHECK:      {{^}}{{.*}}meta-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}{{$}}
// CHECK-NEXT: {{^}}func.func @case5(
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}Expected integer literal (an operand index){{$}}
func.func @case5(%x: tensor<4xf32> {t = #training.inplace<x>}) { func.return }

// -----

// a negative arena size
// CHECK:      {{^}}{{.*}}meta-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}{{$}}
// CHECK-NEXT: {{^}}func.func @case6(
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}#training.arena: size and bound must be non-negative, got -4 and 0{{$}}
func.func @case6(%x: tensor<4xf32> {t = #training.arena<size = -4, bound = 0>}) { func.return }

// -----

// a lower bound above the size
// CHECK:      {{^}}{{.*}}meta-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}{{$}}
// CHECK-NEXT: {{^}}func.func @case7(
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}#training.arena: the lower bound 8 exceeds the size 4{{$}}
func.func @case7(%x: tensor<4xf32> {t = #training.arena<size = 4, bound = 8>}) { func.return }

// -----

// proven is true or false
// CHECK:      {{^}}{{.*}}meta-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}{{$}}
// CHECK-NEXT: {{^}}func.func @case8(
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}Expected one of 'false', 'true' for proven{{$}}
func.func @case8(%x: tensor<4xf32> {t = #training.arena<size = 4, bound = 4, proven = maybe>}) { func.return }

// -----

// a regime that memory-regime does not know
// CHECK:      {{^}}{{.*}}meta-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}{{$}}
// CHECK-NEXT: {{^}}func.func @case9(
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}#training.regime: regime must be one of resident, spill, stream, got 'roaming'{{$}}
func.func @case9(%x: tensor<4xf32> {t = #training.regime<roaming, {weights = 1}>}) { func.return }

// -----

// a negative footprint
// CHECK:      {{^}}{{.*}}meta-invalid.mlir:{{[0-9]+}}:{{[0-9]+}}{{$}}
// CHECK-NEXT: {{^}}func.func @case10(
// CHECK-NEXT: {{^ +\^+$}}
// CHECK-NEXT: {{^ +}}#training.regime: footprint 'weights' must be a non-negative byte count, got -1 : i64{{$}}
func.func @case10(%x: tensor<4xf32> {t = #training.regime<spill, {weights = -1}>}) { func.return }
