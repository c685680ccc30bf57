// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-mark-apply-gradients

// A forward pass only: no gradients to accumulate.
// expected-error@+1 {{gradient accumulation needs a training step: no backward pass follows the loss (result #0): @main has no cotangent seed}}
func.func @main(%arg0: tensor<4x2xf32>, %arg1: tensor<8x4xf32>) -> tensor<f32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x2xf32>, tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// No loss: the dataflow rule has no result to start the backward pass from.
// expected-error@+1 {{gradient accumulation needs a training step}}
func.func @main(%arg0: tensor<4xi32>) -> tensor<4xi32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xi32>
  return %0 : tensor<4xi32>
}
