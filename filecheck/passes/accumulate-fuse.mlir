// RUN: deeploy-opt %s -p 'accumulate-fuse{remarks=true}' | filecheck %s

// A transpose writes the gradient %g, which only the accumulation reads
// (InPlaceAccumulatorV2: buf = reset ? g : buf + g): the transpose writes
// buf itself. It gets onto = [0] (its output #0 is a buffer), and at the end
// of its ins the buffer (output #0 itself: it is read when reset is false)
// and the reset flag. %g's buffer and the accumulation are gone.
// CHECK-LABEL: func.func @fused
// CHECK-NOT:     memref.alloc
// CHECK:         training.transpose ins(%x, %buf, %reset : memref<2x3xf32, "L2">, memref<3x2xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<3x2xf32, "L2">) {perm = array<i64: 1, 0>, onto = array<i64: 0>}
// CHECK-NOT:     training.accumulate
// CHECK:         func.return
func.func @fused(%x: memref<2x3xf32, "L2">, %buf: memref<3x2xf32, "L2">, %reset: memref<1xi1, "L2">) {
  %g = memref.alloc() : memref<3x2xf32, "L2">
  training.transpose ins(%x : memref<2x3xf32, "L2">) outs(%g : memref<3x2xf32, "L2">) {perm = array<i64: 1, 0>}
  training.relu ins(%x : memref<2x3xf32, "L2">) outs(%x : memref<2x3xf32, "L2">)
  training.accumulate ins(%buf, %g, %reset : memref<3x2xf32, "L2">, memref<3x2xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<3x2xf32, "L2">)
  func.return
}

// Left alone, each for its reason (accfuse.left):
// - %g is also read by the relu: fused, the transpose would not write it;
// CHECK-LABEL: func.func @read_twice
// CHECK:         training.transpose ins(%x : {{.*}}) outs(%g : {{.*}}) {perm = array<i64: 1, 0>}{{$}}
// CHECK:         training.accumulate {{.*}} {accfuse.left = "the gradient has other readers (or none writes it)"}
func.func @read_twice(%x: memref<2x2xf32, "L2">, %y: memref<2x2xf32, "L2">, %buf: memref<2x2xf32, "L2">, %reset: memref<1xi1, "L2">) {
  %g = memref.alloc() : memref<2x2xf32, "L2">
  training.transpose ins(%x : memref<2x2xf32, "L2">) outs(%g : memref<2x2xf32, "L2">) {perm = array<i64: 1, 0>}
  training.relu ins(%g : memref<2x2xf32, "L2">) outs(%y : memref<2x2xf32, "L2">)
  training.accumulate ins(%buf, %g, %reset : memref<2x2xf32, "L2">, memref<2x2xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<2x2xf32, "L2">)
  func.return
}

// - the buffer is read by the relu between the producer and the
//   accumulation: writing it early would change what the relu reads;
// CHECK-LABEL: func.func @buffer_read
// CHECK:         training.transpose ins(%x : {{.*}}) outs(%g : {{.*}}) {perm = array<i64: 1, 0>}{{$}}
// CHECK:         training.accumulate {{.*}} {accfuse.left = "the buffer has other readers or writers in the step"}
func.func @buffer_read(%x: memref<2x2xf32, "L2">, %y: memref<2x2xf32, "L2">, %buf: memref<2x2xf32, "L2">, %reset: memref<1xi1, "L2">) {
  %g = memref.alloc() : memref<2x2xf32, "L2">
  training.transpose ins(%x : memref<2x2xf32, "L2">) outs(%g : memref<2x2xf32, "L2">) {perm = array<i64: 1, 0>}
  training.relu ins(%buf : memref<2x2xf32, "L2">) outs(%y : memref<2x2xf32, "L2">)
  training.accumulate ins(%buf, %g, %reset : memref<2x2xf32, "L2">, memref<2x2xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<2x2xf32, "L2">)
  func.return
}

// - the relu's kernel has no store that adds (not ontoable);
// CHECK-LABEL: func.func @not_ontoable
// CHECK:         training.accumulate {{.*}} {accfuse.left = "training.relu cannot accumulate onto its output #0"}
func.func @not_ontoable(%x: memref<4xf32, "L2">, %buf: memref<4xf32, "L2">, %reset: memref<1xi1, "L2">) {
  %g = memref.alloc() : memref<4xf32, "L2">
  training.relu ins(%x : memref<4xf32, "L2">) outs(%g : memref<4xf32, "L2">)
  training.accumulate ins(%buf, %g, %reset : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<4xf32, "L2">)
  func.return
}

// - the gradient is an argument, not a buffer the step owns;
// CHECK-LABEL: func.func @grad_argument
// CHECK:         training.accumulate {{.*}} {accfuse.left = "the gradient is not a buffer of its own in the step (an argument or a view)"}
func.func @grad_argument(%g: memref<4xf32, "L2">, %buf: memref<4xf32, "L2">, %reset: memref<1xi1, "L2">) {
  training.accumulate ins(%buf, %g, %reset : memref<4xf32, "L2">, memref<4xf32, "L2">, memref<1xi1, "L2">) outs(%buf : memref<4xf32, "L2">)
  func.return
}

// - the sum goes to %out, not back into %buf (the fused op would read %buf
//   and write %out: not what its kernel does).
// CHECK-LABEL: func.func @not_in_place
// CHECK:         training.accumulate {{.*}} {accfuse.left = "the sum goes to another buffer than the one it reads (not in place)"}
func.func @not_in_place(%x: memref<2x2xf32, "L2">, %buf: memref<2x2xf32, "L2">, %out: memref<2x2xf32, "L2">, %reset: memref<1xi1, "L2">) {
  %g = memref.alloc() : memref<2x2xf32, "L2">
  training.transpose ins(%x : memref<2x2xf32, "L2">) outs(%g : memref<2x2xf32, "L2">) {perm = array<i64: 1, 0>}
  training.accumulate ins(%buf, %g, %reset : memref<2x2xf32, "L2">, memref<2x2xf32, "L2">, memref<1xi1, "L2">) outs(%out : memref<2x2xf32, "L2">)
  func.return
}
