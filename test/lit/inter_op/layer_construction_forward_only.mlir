// RUN: alpa-opt %s --alpa-layer-construction='layers=2 forward-only=true' | FileCheck %s
// RUN: alpa-opt %s --pass-pipeline='builtin.module(alpa-layer-construction{layers=2 forward-only=true}, alpa-stage-construction{cluster-shape=1,4 num-micro-batches=2 stage-mode=equal-layer num-stages=2})' | FileCheck %s --check-prefix=STAGES

// A forward-only step (inference: a 4-layer MLP's output and its mean, no gradients).
// Every op is a forward op; the clustering cuts the four matmuls two and two.
// CHECK-LABEL: func.func public @main
// CHECK:      stablehlo.dot_general %arg4, %arg0{{.*}}alpa.layer = 0 : i64, alpa.phase = "forward"
// CHECK:      stablehlo.tanh{{.*}}alpa.layer = 0 : i64, alpa.phase = "forward"
// CHECK:      stablehlo.dot_general %{{.*}}, %arg1{{.*}}alpa.layer = 0 : i64, alpa.phase = "forward"
// CHECK:      stablehlo.dot_general %{{.*}}, %arg2{{.*}}alpa.layer = 1 : i64, alpa.phase = "forward"
// CHECK:      stablehlo.dot_general %{{.*}}, %arg3{{.*}}alpa.layer = 1 : i64, alpa.phase = "forward"
// CHECK:      stablehlo.divide{{.*}}alpa.layer = 1 : i64, alpa.phase = "forward"
// CHECK-NOT:  alpa.phase = "backward"
// CHECK-NOT:  alpa.phase = "apply"

// Stage construction outlines forward parts only, one per stage, each on its own mesh.
// STAGES:     func.func private @stage0_forward({{.*}}alpa.mesh = {{{.*}}device_ids = array<i64: 0, 1>
// STAGES:     func.func private @stage1_forward({{.*}}alpa.mesh = {{{.*}}device_ids = array<i64: 2, 3>
// STAGES-NOT: _backward
// STAGES-NOT: _apply
// STAGES:     func.func public @main
// STAGES:       call @stage0_forward(%arg4, %arg0, %arg1)
// STAGES:       call @stage1_forward(%{{.*}}, %arg2, %arg3)
module @forward_only {
  func.func public @main(%arg0: tensor<64x64xf32>, %arg1: tensor<64x64xf32>, %arg2: tensor<64x64xf32>, %arg3: tensor<64x64xf32>, %arg4: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<f32>) {
    %0 = stablehlo.dot_general %arg4, %arg0, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    %1 = stablehlo.tanh %0 : tensor<16x64xf32>
    %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    %3 = stablehlo.tanh %2 : tensor<16x64xf32>
    %4 = stablehlo.dot_general %3, %arg2, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    %5 = stablehlo.tanh %4 : tensor<16x64xf32>
    %6 = stablehlo.dot_general %5, %arg3, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    %7 = stablehlo.tanh %6 : tensor<16x64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%7 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x64xf32>, tensor<f32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<1.024000e+03> : tensor<f32>
    %9 = stablehlo.divide %8, %cst_0 : tensor<f32>
    return %7, %9 : tensor<16x64xf32>, tensor<f32>
  }
}
