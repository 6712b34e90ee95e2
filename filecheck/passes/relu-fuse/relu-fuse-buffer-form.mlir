// RUN: not deeploy-opt %s -p relu-fuse 2>&1 | filecheck %s

// relu-fuse rewrites values (tensor form): on buffers it stops, naming itself.
// CHECK: relu-fuse: expects tensor-form IR (run it before training-bufferize, once)
func.func @buffers(%x: memref<4xf32, "L2">, %y: memref<4xf32, "L2">) {
  training.relu ins(%x : memref<4xf32, "L2">) outs(%y : memref<4xf32, "L2">)
  func.return
}
