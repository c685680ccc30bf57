// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-auto-sharding='mesh-shape=4 rematerialize=all'

// Recompute needs layers, which alpa-layer-construction marks.
// expected-error@+1 {{option 'rematerialize=all' needs @main's layers: run alpa-layer-construction first}}
module {
  func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.tanh %x : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
