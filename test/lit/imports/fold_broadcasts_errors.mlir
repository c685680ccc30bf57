// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-fold-broadcasts

// The sharding of a broadcast to fold is no sharding.
func.func @main(%arg0: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
  // expected-error@+1 {{mhlo.sharding 'garbage' is not a sharding: sharding 'garbage' must be enclosed in braces}}
  %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] {mhlo.sharding = "garbage"} : (tensor<1x4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// -----

// The inner broadcast's sharding, which would keep it, is none either.
func.func @main(%arg0: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{mhlo.sharding '{unknown}' is not a sharding}}
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] {mhlo.sharding = "{unknown}"} : (tensor<4xf32>) -> tensor<1x4xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}
