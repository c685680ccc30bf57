// Errors at a location, under interleaved 1F1B with two virtual stages per mesh.
// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-pipeline-schedule='schedule=interleaved-1f1b virtual-stages=2 num-micro-batches=2'
// Micro-batches in groups of one per mesh: B = 3 on two meshes does not make whole groups.
// RUN: not alpa-opt %S/pipeline_schedule_interleaved.mlir --alpa-pipeline-schedule='schedule=interleaved-1f1b virtual-stages=2 num-micro-batches=3' 2>&1 | FileCheck %s --check-prefix=MICRO
// MICRO: pipeline_schedule_interleaved.mlir:{{[0-9]+}}:3: error: pipeline schedule: option 'num-micro-batches' (3) must be a multiple of the 2 meshes under schedule=interleaved-1f1b, which takes the micro-batches in groups of one per mesh

// One stage per mesh while the option asks for two.
module @one_stage_per_mesh {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4xf32>) -> tensor<f32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 1 : i64}
  func.func private @stage1_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 1 : i64}
  func.func private @stage0_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  // expected-error@+1 {{pipeline schedule: option 'virtual-stages' is 2, but @main has 2 stages on 2 meshes: build 2 stages per mesh (alpa-stage-construction{virtual-stages=2}) or set the option to match}}
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = call @stage1_forward(%0) : (tensor<4xf32>) -> tensor<f32>
    %2 = call @stage1_backward(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = call @stage0_backward(%2) : (tensor<4xf32>) -> tensor<4xf32>
    return %3, %1 : tensor<4xf32>, tensor<f32>
  }
}

// -----

// Consecutive stages on one mesh: interleaving puts stage k on mesh k mod S, so that every
// mesh holds chunks spread over the model.
module @consecutive_stages_on_one_mesh {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 1 : i64}
  func.func private @stage2_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 2 : i64}
  func.func private @stage3_forward(tensor<4xf32>) -> tensor<f32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 3 : i64}
  func.func private @stage3_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 3 : i64}
  func.func private @stage2_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 2 : i64}
  func.func private @stage1_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 1 : i64}
  func.func private @stage0_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{pipeline schedule: schedule=interleaved-1f1b runs stage k on mesh k mod 2, but stage 1 is on mesh 0}}
    %1 = call @stage1_forward(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = call @stage2_forward(%1) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = call @stage3_forward(%2) : (tensor<4xf32>) -> tensor<f32>
    %4 = call @stage3_backward(%2) : (tensor<4xf32>) -> tensor<4xf32>
    %5 = call @stage2_backward(%4) : (tensor<4xf32>) -> tensor<4xf32>
    %6 = call @stage1_backward(%5) : (tensor<4xf32>) -> tensor<4xf32>
    %7 = call @stage0_backward(%6) : (tensor<4xf32>) -> tensor<4xf32>
    return %7, %3 : tensor<4xf32>, tensor<f32>
  }
}
