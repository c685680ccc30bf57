// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-squeeze-broadcast-operands

// The sharding of a broadcast to rewrite is no sharding.
func.func @main(%arg0: tensor<1x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{mhlo.sharding '{devices=[2,1]<=[3]}' is not a sharding: iota tile assignment of sharding '{devices=[2,1]<=[3]}' is inconsistent}}
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] {mhlo.sharding = "{devices=[2,1]<=[3]}"} : (tensor<1x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
