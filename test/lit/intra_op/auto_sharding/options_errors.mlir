// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-auto-sharding='mesh-shape=1,4 batch-args=0 allow-all-gather=false allow-all-to-all=false'

// The batch comes in split and the result must leave whole, but neither an
// all-gather nor an all-to-all may bring it there (options.mlir's gather_at_return
// with both kinds forbidden): the error says which options closed the way.
// expected-error@+1 {{relax a pinned sharding, or turn on option 'allow-all-gather' or 'allow-all-to-all'}}
func.func @no_way_to_replicate(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> (tensor<64x256xf32> {mhlo.sharding = "{replicated}"}) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}
