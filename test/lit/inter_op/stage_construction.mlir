// RUN: alpa-opt %s --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2}, alpa-stage-construction{cluster-shape=1,4 num-micro-batches=4})' | FileCheck %s
// RUN: alpa-opt %s --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2}, alpa-stage-construction{cluster-shape=1,4 stage-mode=manual stage-layers=1,1 stage-submeshes=1,1,1,3})' | FileCheck %s --check-prefix=MANUAL
// RUN: alpa-opt %s --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2}, alpa-stage-construction{cluster-shape=1,4 num-micro-batches=4 state=0:0,1:1})' | FileCheck %s --check-prefix=STATE

// Two matmul layers with SGD on one host of 4 devices, 4 micro-batches: a stage per
// layer on two devices each. Every stage's forward, backward and apply parts share its
// mesh; @main runs the forwards in order, the backwards in reverse, then the updates.
// Constants are recomputed in each part that reads them, never passed between meshes.
// CHECK-LABEL: func.func private @stage0_forward
// CHECK-SAME: alpa.mesh = {{{.*}}device_ids = array<i64: 0, 1>{{.*}}shape = array<i64: 1, 2>}, alpa.stage = 0 : i64
// CHECK: stablehlo.dot_general %arg0, %arg1, {{.*}} {alpa.layer = 0 : i64, alpa.phase = "forward", mhlo.sharding =
// CHECK-LABEL: func.func private @stage1_forward
// CHECK-SAME: device_ids = array<i64: 2, 3>
// CHECK-LABEL: func.func private @stage1_backward
// CHECK-SAME: device_ids = array<i64: 2, 3>
// CHECK-LABEL: func.func private @stage0_backward
// CHECK-SAME: device_ids = array<i64: 0, 1>
// CHECK-LABEL: func.func private @stage0_apply
// CHECK-SAME: device_ids = array<i64: 0, 1>
// CHECK: stablehlo.constant
// CHECK-LABEL: func.func private @stage1_apply
// CHECK-SAME: device_ids = array<i64: 2, 3>
// CHECK: stablehlo.constant
// CHECK-LABEL: func.func public @main
// CHECK-NEXT: %[[F0:.*]]:2 = call @stage0_forward(%arg2, %arg0)
// CHECK-NEXT: %[[LOSS:.*]] = call @stage1_forward(%[[F0]]#0, %arg1)
// CHECK-NEXT: %[[B1:.*]]:2 = call @stage1_backward(
// CHECK-NEXT: %[[G0:.*]] = call @stage0_backward(%[[B1]]#1,
// CHECK-NEXT: %[[W0:.*]] = call @stage0_apply(%[[G0]], %arg0)
// CHECK-NEXT: %[[W1:.*]] = call @stage1_apply(%[[B1]]#0, %arg1)
// CHECK-NEXT: return %[[W0]], %[[W1]], %[[LOSS]]

// With the weights as training state (argument i returns as result i), each apply part
// takes its weight (its second argument) in the sharding it returns the update in, so
// the update can be written in place and the next step reads the weight where it is.
// (Without, stage 1 takes its weight replicated and returns it split.)
// STATE-LABEL: func.func private @stage0_apply
// STATE-SAME: %arg1: tensor<16x16xf32> {mhlo.sharding = "[[S0:[^"]*]]"}) -> (tensor<16x16xf32> {mhlo.sharding = "[[S0]]"})
// STATE-LABEL: func.func private @stage1_apply
// STATE-SAME: %arg1: tensor<16x16xf32> {mhlo.sharding = "[[S1:[^"]*]]"}) -> (tensor<16x16xf32> {mhlo.sharding = "[[S1]]"})

// The manual plan: layer 0 on device 0, layer 1 on devices 1-3.
// MANUAL-LABEL: func.func private @stage0_forward
// MANUAL-SAME: device_ids = array<i64: 0>
// MANUAL-LABEL: func.func private @stage1_forward
// MANUAL-SAME: device_ids = array<i64: 1, 2, 3>
module @two_layer_sgd {
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
