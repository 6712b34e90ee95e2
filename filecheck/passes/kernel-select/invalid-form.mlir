// RUN: not deeploy-opt %s -p kernel-select 2>&1 | filecheck %s
// RUN: not deeploy-opt %s -p training-bufferize,tile-select{l1=64},kernel-select 2>&1 | filecheck %s --check-prefix=TILES

// kernel-select needs buffer-form IR with every tile choice materialized:
// tensor form (before training-bufferize), or tiling.tiled left by
// tile-select without tiling-materialize, is an error naming the pass.

// CHECK: {{^}}deeploy-opt: error: kernel-select: expects buffer-form IR (run training-bufferize first){{$}}
// TILES: {{^}}deeploy-opt: error: kernel-select: finds tile choices not yet materialized (run tiling-materialize first){{$}}
func.func @training_step(%x: tensor<64xf32>) -> tensor<64xf32> {
  %y = training.relu ins(%x : tensor<64xf32>) -> tensor<64xf32>
  func.return %y : tensor<64xf32>
}
