// Errors at a location, with the options of the first RUN line.
// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-layer-construction
// Errors that depend on the options.
// RUN: not alpa-opt %s --split-input-file --alpa-layer-construction='layers=40' 2>&1 | FileCheck %s --check-prefix=TOO-MANY
// TOO-MANY: error: option 'layers' is 40 but the forward pass has 8 ops
// RUN: not alpa-opt %s --split-input-file --alpa-layer-construction='layers=2 delta=0' 2>&1 | FileCheck %s --check-prefix=DELTA
// DELTA: error: layer construction: operator clustering: no way to cut 8 ops into 2 layers with every layer's FLOPs <= (1 + delta) * average at delta = 0.0 (Sec. 5.2); it needs delta >= 0.01469
// RUN: not alpa-opt %s --split-input-file --alpa-layer-construction='layers=2 forward-only=true' 2>&1 | FileCheck %s --check-prefix=FORWARD-ONLY
// FORWARD-ONLY: error: layer construction: option 'forward-only' is for a step without gradients, but this one computes them (a backward pass): pipeline it with a training schedule (1f1b, gpipe), or drop the gradients
// RUN: not alpa-opt %s --alpa-layer-construction='layers=-1' 2>&1 | FileCheck %s --check-prefix=OPT-LAYERS
// OPT-LAYERS: alpa-opt: error: alpa-layer-construction: option 'layers' must be positive (0: one per user segment); got -1
// RUN: not alpa-opt %s --alpa-layer-construction='delta=-1' 2>&1 | FileCheck %s --check-prefix=OPT-DELTA
// OPT-DELTA: alpa-opt: error: alpa-layer-construction: option 'delta' must not be negative; got -1.0

// A training step without mark_pipeline_boundary segments needs the number of layers.
module @no_layers {
  // expected-error@+1 {{the step has no layers to pipeline: mark them with alpa_mlir.mark_pipeline_boundary() between layers, or have them cut automatically with option 'layers'}}
  func.func public @main(%arg0: tensor<16x16xf32>, %arg1: tensor<16x16xf32>, %arg2: tensor<4x16xf32>) -> (tensor<16x16xf32> {jax.result_info = "result[0]"}, tensor<16x16xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.dot_general %arg2, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %1 = stablehlo.tanh %0 : tensor<4x16xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %3 = stablehlo.subtract %2, %1 : tensor<4x16xf32>
    %4 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %7 = stablehlo.dot_general %6, %1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<16x16xf32>
    %8 = stablehlo.transpose %7, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %9 = stablehlo.dot_general %6, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %10 = stablehlo.multiply %9, %3 : tensor<4x16xf32>
    %11 = stablehlo.multiply %10, %1 : tensor<4x16xf32>
    %12 = stablehlo.add %10, %11 : tensor<4x16xf32>
    %13 = stablehlo.dot_general %12, %arg2, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<16x16xf32>
    %14 = stablehlo.transpose %13, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %cst_2 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %16 = stablehlo.multiply %15, %14 : tensor<16x16xf32>
    %17 = stablehlo.subtract %arg0, %16 : tensor<16x16xf32>
    %cst_3 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %19 = stablehlo.multiply %18, %8 : tensor<16x16xf32>
    %20 = stablehlo.subtract %arg1, %19 : tensor<16x16xf32>
    return %17, %20, %5 : tensor<16x16xf32>, tensor<16x16xf32>, tensor<f32>
  }
}

// -----

// A function without a scalar loss is no training step.
module @not_a_training_step {
  // expected-error@+1 {{layer construction: }}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
