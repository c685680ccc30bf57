// Errors at a location.
// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-stage-construction='cluster-shape=1,4'
// Memory that no plan fits (Eq. 5).
// RUN: not alpa-opt %s --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2}, alpa-stage-construction{cluster-shape=1,4 device-memory=16})' 2>&1 | FileCheck %s --check-prefix=MEMORY
// MEMORY: error: stage construction: no stage plan fits device memory
// A state pair @main does not have.
// RUN: not alpa-opt %s --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2}, alpa-stage-construction{cluster-shape=1,4 state=5:0})' 2>&1 | FileCheck %s --check-prefix=STATE
// STATE: error: option 'state' pair 5:0 is out of range: @main has 3 arguments and 3 results
// Three stages per mesh from two layers: no equal-layer slicing has them.
// RUN: not alpa-opt %s --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2}, alpa-stage-construction{cluster-shape=1,4 stage-mode=equal-layer virtual-stages=3})' 2>&1 | FileCheck %s --check-prefix=VIRTUAL
// VIRTUAL: error: option 'virtual-stages' 3 leaves no equal-layer slicing of the 2 layers into 3 stages per mesh on a number of meshes that divides the 1 micro-batches
// Manual submeshes that do not fit the cluster, or do not use all of it.
// RUN: not alpa-opt %s --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2}, alpa-stage-construction{cluster-shape=1,4 stage-mode=manual stage-layers=1,1 stage-submeshes=2,4,2,4})' 2>&1 | FileCheck %s --check-prefix=SUBMESH-HOSTS
// SUBMESH-HOSTS: error: option 'stage-submeshes': a 2x4 submesh (hosts x devices per host) does not fit the 1x4 cluster of option 'cluster-shape'
// RUN: not alpa-opt %s --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2}, alpa-stage-construction{cluster-shape=1,4 stage-mode=manual stage-layers=2 stage-submeshes=1,8})' 2>&1 | FileCheck %s --check-prefix=SUBMESH-DEVICES
// SUBMESH-DEVICES: error: option 'stage-submeshes': a 1x8 submesh (hosts x devices per host) does not fit the 1x4 cluster of option 'cluster-shape'
// RUN: not alpa-opt %s --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2}, alpa-stage-construction{cluster-shape=1,4 stage-mode=manual stage-layers=1,1 stage-submeshes=1,3,1,3})' 2>&1 | FileCheck %s --check-prefix=SUBMESH-TOTAL
// SUBMESH-TOTAL: error: option 'stage-submeshes': the submeshes hold 6 devices; the stages must use the 1x4 cluster's 4 devices once each
// Options, rejected before any module is read.
// RUN: not alpa-opt %s --alpa-stage-construction 2>&1 | FileCheck %s --check-prefix=OPT-CLUSTER
// OPT-CLUSTER: alpa-opt: error: alpa-stage-construction: option 'cluster-shape' must be two positive sizes: hosts, devices per host
// RUN: not alpa-opt %s --alpa-stage-construction='cluster-shape=1,4 num-stages=2' 2>&1 | FileCheck %s --check-prefix=OPT-STAGES
// OPT-STAGES: alpa-opt: error: alpa-stage-construction: option 'num-stages' is a positive number of stages for stage-mode=equal-layer
// RUN: not alpa-opt %s --alpa-stage-construction='cluster-shape=1,4 stage-mode=manual stage-layers=1,1 stage-submeshes=1,2' 2>&1 | FileCheck %s --check-prefix=OPT-MANUAL
// OPT-MANUAL: alpa-opt: error: alpa-stage-construction: option 'stage-mode=manual' needs 'stage-layers' and one hosts,devices pair per mesh in 'stage-submeshes' (a mesh per stage, or per 'virtual-stages' stages)
// RUN: not alpa-opt %s --alpa-stage-construction='cluster-shape=1,4 stage-mode=manual stage-layers=1,1,1 stage-submeshes=1,4 virtual-stages=2' 2>&1 | FileCheck %s --check-prefix=OPT-MANUAL-VIRTUAL
// OPT-MANUAL-VIRTUAL: alpa-opt: error: alpa-stage-construction: option 'stage-mode=manual' needs 'stage-layers' and one hosts,devices pair per mesh in 'stage-submeshes' (a mesh per stage, or per 'virtual-stages' stages)
// RUN: not alpa-opt %s --alpa-stage-construction='cluster-shape=1,4 virtual-stages=0' 2>&1 | FileCheck %s --check-prefix=OPT-VIRTUAL
// OPT-VIRTUAL: alpa-opt: error: alpa-stage-construction: option 'virtual-stages' must be positive; got 0
// RUN: not alpa-opt %s --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2}, alpa-stage-construction{cluster-shape=1,4 virtual-stages=3})' 2>&1 | FileCheck %s --check-prefix=VIRTUAL-AUTO
// VIRTUAL-AUTO: error: option 'virtual-stages' 3 does not divide the 2 layers: every mesh holds 3 stages of equally many layers
// RUN: not alpa-opt %s --alpa-stage-construction='cluster-shape=1,4 stage-mode=manual stage-layers=1,1,1,1 stage-submeshes=1,1,1,3 virtual-stages=2 num-micro-batches=3' 2>&1 | FileCheck %s --check-prefix=OPT-VIRTUAL-MICRO
// OPT-VIRTUAL-MICRO: alpa-opt: error: alpa-stage-construction: option 'num-micro-batches' 3 must be a multiple of the 2 meshes with 'virtual-stages' > 1: interleaved 1F1B takes them in such groups
// RUN: not alpa-opt %s --alpa-stage-construction='cluster-shape=1,4 stage-mode=equal-layer num-stages=3 virtual-stages=2' 2>&1 | FileCheck %s --check-prefix=OPT-VIRTUAL-STAGES
// OPT-VIRTUAL-STAGES: alpa-opt: error: alpa-stage-construction: option 'num-stages' 3 must be a multiple of option 'virtual-stages' 2: every mesh holds as many stages
// RUN: not alpa-opt %s --alpa-stage-construction='cluster-shape=1,4 cost-model=profile profile-repeats=0' 2>&1 | FileCheck %s --check-prefix=OPT-REPEATS
// OPT-REPEATS: alpa-opt: error: alpa-stage-construction: option 'profile-repeats' must be positive; got 0
// RUN: not alpa-opt %s --alpa-stage-construction='cluster-shape=1,4 mip-gap=-0.5' 2>&1 | FileCheck %s --check-prefix=OPT-GAP
// OPT-GAP: alpa-opt: error: alpa-stage-construction: option 'mip-gap' is a fraction in [0, 1); got -0.5
// RUN: not alpa-opt %s --alpa-stage-construction='cluster-shape=1,4 num-micro-batches=0' 2>&1 | FileCheck %s --check-prefix=OPT-MICRO
// OPT-MICRO: alpa-opt: error: alpa-stage-construction: option 'num-micro-batches' must be positive; got 0
// RUN: not alpa-opt %s --alpa-stage-construction='cluster-shape=1,4 device-profile=%t.missing.json' 2>&1 | FileCheck %s --check-prefix=OPT-PROFILE
// OPT-PROFILE: alpa-opt: error: alpa-stage-construction: option 'device-profile': cannot read a device profile from {{.*}}.missing.json: No such file or directory
// RUN: echo '{"version": 1, "platform": "cpu"}' > %t.profile.json
// RUN: not alpa-opt %s --alpa-stage-construction='cluster-shape=1,4 device-profile=%t.profile.json' 2>&1 | FileCheck %s --check-prefix=OPT-PROFILE-BAD
// OPT-PROFILE-BAD: alpa-opt: error: alpa-stage-construction: option 'device-profile': {{.*}}.profile.json: malformed device profile (KeyError: 'device_kind')

// Ops without alpa.layer: layer construction has not run.
module @no_layers {
  func.func public @main(%arg0: tensor<16x16xf32>, %arg1: tensor<16x16xf32>, %arg2: tensor<4x16xf32>) -> (tensor<16x16xf32> {jax.result_info = "result[0]"}, tensor<16x16xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}) {
    // expected-error@+1 {{stage construction needs alpa.layer and alpa.phase on every op of @main: run alpa-layer-construction first}}
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
