// Errors at a location.
// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-pipeline-schedule='num-micro-batches=2'
// A training step under schedule=inference (the first case, which 1F1B accepts).
// RUN: not alpa-opt %s --split-input-file --alpa-pipeline-schedule='schedule=inference' 2>&1 | FileCheck %s --check-prefix=INFERENCE
// INFERENCE: pipeline_schedule_errors.mlir:24:10: error: pipeline schedule: schedule=inference runs forward parts only, but @stage0_backward is a backward part: use schedule=1f1b or schedule=gpipe
// Options, rejected before any module is read.
// RUN: not alpa-opt %s --alpa-pipeline-schedule='num-micro-batches=0' 2>&1 | FileCheck %s --check-prefix=OPT-MICRO
// OPT-MICRO: alpa-opt: error: alpa-pipeline-schedule: option 'num-micro-batches' must be between 1 and 16384; got 0
// RUN: not alpa-opt %s --alpa-pipeline-schedule='schedule=pipedream' 2>&1 | FileCheck %s --check-prefix=OPT-SCHEDULE
// RUN: not alpa-opt %s --alpa-pipeline-schedule='accumulate=max' 2>&1 | FileCheck %s --check-prefix=OPT-ACCUMULATE
// OPT-ACCUMULATE: alpa-opt: error: option 'accumulate' of alpa-pipeline-schedule must be one of mean, sum; got 'max'
// OPT-SCHEDULE: alpa-opt: error: option 'schedule' of alpa-pipeline-schedule must be one of gpipe, 1f1b, interleaved-1f1b, inference; got 'pipedream'
// RUN: not alpa-opt %s --alpa-pipeline-schedule='schedule=interleaved-1f1b virtual-stages=0' 2>&1 | FileCheck %s --check-prefix=OPT-VIRTUAL
// OPT-VIRTUAL: alpa-opt: error: alpa-pipeline-schedule: option 'virtual-stages' must be positive; got 0
// RUN: not alpa-opt %s --alpa-pipeline-schedule='virtual-stages=2' 2>&1 | FileCheck %s --check-prefix=OPT-VIRTUAL-1F1B
// OPT-VIRTUAL-1F1B: alpa-opt: error: alpa-pipeline-schedule: option 'virtual-stages' is for schedule=interleaved-1f1b; schedule=1f1b runs one stage per mesh

// A one-stage training step: valid for 1F1B (gradient accumulation), not for inference.
module @one_stage {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage0_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = call @stage0_backward(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

// A forward-only step needs schedule=inference.
module @forward_only {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  // expected-error@+1 {{pipeline schedule: schedule=1f1b needs backward parts and @main has none: use schedule=inference for a forward-only step}}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// A callee without alpa.stage and alpa.mesh: stage construction has not run.
module @not_staged {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32>
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{pipeline schedule: @stage0_forward is not a stage part (no alpa.stage and alpa.mesh): run alpa-stage-construction first}}
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// The part of a stage is read from the callee's name.
module @unnamed_part {
  func.func private @layer0(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{pipeline schedule: @layer0 is not named as a stage part: @stage<s>_forward, _backward, _apply or _apply<k>}}
    %0 = call @layer0(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// A malformed mesh on a stage part.
module @bad_mesh {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0, 1>}, alpa.stage = 0 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{pipeline schedule: @stage0_forward: alpa.mesh needs a 'shape' entry}}
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// The parts of one stage must share its mesh.
module @stage_on_two_meshes {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage0_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{pipeline schedule: @stage0_backward runs on devices [1], but other parts of stage 0 on [0]; a stage has one mesh}}
    %1 = call @stage0_backward(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

// Two stages on the same devices: 1F1B runs one stage per mesh (interleaved 1F1B runs several).
module @shared_mesh {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 2>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 2>}, alpa.stage = 1 : i64}
  func.func private @stage1_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 2>}, alpa.stage = 1 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{pipeline schedule: stages 0 and 1 share mesh 0; schedule=1f1b runs one stage per mesh: use schedule=interleaved-1f1b for several}}
    %1 = call @stage1_forward(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = call @stage1_backward(%1) : (tensor<4xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}

// -----

// Stages whose devices overlap without being equal would run their parts on some devices at once.
module @overlapping_meshes {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 2>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1, 2>, shape = array<i64: 2>}, alpa.stage = 1 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{pipeline schedule: stages 0 and 1 share devices [1]; each stage needs a mesh of its own, or the very mesh of the stages it shares it with}}
    %1 = call @stage1_forward(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

// Stage numbers name meshes 0, 1, ...: a gap leaves a mesh without a stage.
module @stage_gap {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage2_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 2 : i64}
  // expected-error@+1 {{pipeline schedule: stages are numbered 0, 1, ...; @main calls stages [0, 2]}}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = call @stage2_forward(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

// Ops other than calls, transfers and the return: stage construction has not run.
module @not_outlined {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{pipeline schedule: unexpected 'stablehlo.tanh' in @main: the pass expects stage calls, transfers and the return (run alpa-stage-construction first)}}
    %0 = stablehlo.tanh %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// A transfer without its alpa.assemble: the consumer would have no value to read.
module @transfer_without_assemble {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 1 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{pipeline schedule: transfer 0 needs alpa.send ops and one alpa.assemble; it has 1 and 0}}
    "alpa.send"(%0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : (tensor<4xf32>) -> ()
    %1 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : () -> tensor<4xf32>
    %2 = call @stage1_forward(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}

// -----

// A call reads what an alpa.recv gives a device, not the assembled value.
module @reads_recv {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 1 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    "alpa.send"(%0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : (tensor<4xf32>) -> ()
    %1 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : () -> tensor<4xf32>
    %2 = "alpa.assemble"(%1) {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.transfer = 0 : i64, devices = array<i64: 1>, mhlo.sharding = "{replicated}", tiles = array<i64: 0, 4>} : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{pipeline schedule: reads a value that is not an argument of @main, a stage call's result or an alpa.assemble's result}}
    %3 = call @stage1_forward(%1) : (tensor<4xf32>) -> tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}

// -----

// A transfer of an argument: the runtime places arguments on every mesh that reads them.
module @transfer_of_argument {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 1 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{pipeline schedule: transfer 0 must send one result of a stage call}}
    "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : (tensor<4xf32>) -> ()
    %1 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : () -> tensor<4xf32>
    %2 = "alpa.assemble"(%1) {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.transfer = 0 : i64, devices = array<i64: 1>, mhlo.sharding = "{replicated}", tiles = array<i64: 0, 4>} : (tensor<4xf32>) -> tensor<4xf32>
    %3 = call @stage1_forward(%2, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}

// -----

// A transfer to devices that hold no stage.
module @transfer_to_no_stage {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 1 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    "alpa.send"(%0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 2 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : (tensor<4xf32>) -> ()
    %1 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 2 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : () -> tensor<4xf32>
    // expected-error@+1 {{pipeline schedule: transfer 0 delivers to devices [2], which are no stage's mesh}}
    %2 = "alpa.assemble"(%1) {alpa.mesh = {device_ids = array<i64: 2>, shape = array<i64: 1>}, alpa.transfer = 0 : i64, devices = array<i64: 2>, mhlo.sharding = "{replicated}", tiles = array<i64: 0, 4>} : (tensor<4xf32>) -> tensor<4xf32>
    %3 = call @stage1_forward(%2) : (tensor<4xf32>) -> tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}

// -----

// A transfer that stays on its mesh is the SPMD partitioner's job, not a cross-mesh one.
module @transfer_within_mesh {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage0_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    "alpa.send"(%0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : (tensor<4xf32>) -> ()
    %1 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : () -> tensor<4xf32>
    // expected-error@+1 {{pipeline schedule: transfer 0 delivers to the mesh it starts from (mesh 0)}}
    %2 = "alpa.assemble"(%1) {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.transfer = 0 : i64, devices = array<i64: 0>, mhlo.sharding = "{replicated}", tiles = array<i64: 0, 4>} : (tensor<4xf32>) -> tensor<4xf32>
    %3 = call @stage0_backward(%2) : (tensor<4xf32>) -> tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}

// -----

// A stage part runs once per micro-batch: a second call would need its own results.
module @called_twice {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage0_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{pipeline schedule: @main calls @stage0_forward twice; a stage part runs once per micro-batch}}
    %1 = call @stage0_forward(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = call @stage0_backward(%1) : (tensor<4xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}

// -----

// Forward and backward parts run per micro-batch, before any apply part.
module @backward_reads_apply {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage0_apply(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage0_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = call @stage0_apply(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{pipeline schedule: @stage0_backward reads stage0_apply#0, a result of @stage0_apply: forward and backward parts run before the apply parts}}
    %2 = call @stage0_backward(%1) : (tensor<4xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}

// -----

// A transfer's value read on a mesh other than its destination.
module @transfer_read_elsewhere {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 1 : i64}
  func.func private @stage2_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 2>, shape = array<i64: 1>}, alpa.stage = 2 : i64}
  func.func private @stage2_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 2>, shape = array<i64: 1>}, alpa.stage = 2 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    "alpa.send"(%0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : (tensor<4xf32>) -> ()
    %1 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : () -> tensor<4xf32>
    %2 = "alpa.assemble"(%1) {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.transfer = 0 : i64, devices = array<i64: 1>, mhlo.sharding = "{replicated}", tiles = array<i64: 0, 4>} : (tensor<4xf32>) -> tensor<4xf32>
    %3 = call @stage1_forward(%2) : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{pipeline schedule: @stage2_forward on mesh 2 reads transfer0, which transfer 0 delivers to mesh 1}}
    %4 = call @stage2_forward(%2) : (tensor<4xf32>) -> tensor<4xf32>
    %5 = call @stage2_backward(%4) : (tensor<4xf32>) -> tensor<4xf32>
    return %5 : tensor<4xf32>
  }
}

// -----

// A stage that reads a later stage's forward: the schedule runs forwards in stage order.
module @reversed_stages {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage0_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 1 : i64}
  // expected-error@+1 {{pipeline schedule: the 1f1b order cannot run @main: mesh 0: run @stage0_forward (micro-batch 0) reads stage1_forward#0 (micro-batch 0), which is not on the mesh}}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage1_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = call @stage0_forward(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = call @stage0_backward(%1) : (tensor<4xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}

// -----

// The pass runs once.
module @scheduled_twice {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage0_backward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = call @stage0_backward(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
  // expected-error@+1 {{pipeline schedule: the module already has schedules; the pass runs once}}
  func.func private @mesh0_schedule() attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.num_micro_batches = 1 : i64, alpa.schedule = "1f1b", alpa.stage = 0 : i64} {
    "alpa.sched.run"() {callee = @stage0_forward, micro_batch = 0 : i64} : () -> ()
    return
  }
}

// -----

// Without a public @main there is no step to schedule.
// expected-error@+1 {{pipeline schedule: the module needs a public @main (found 0 public functions)}}
module @no_main {
  func.func private @stage0_forward(tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
}
