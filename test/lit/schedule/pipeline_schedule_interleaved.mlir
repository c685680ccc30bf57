// RUN: alpa-opt %s --split-input-file --alpa-pipeline-schedule='schedule=interleaved-1f1b virtual-stages=2 num-micro-batches=2' | FileCheck %s

// Four stages on two meshes, stage k on mesh k mod 2 (two virtual stages per mesh): each
// mesh's stream interleaves its two chunks. Mesh 0 runs 2 (S-1) + (v-1) S = 4 warm-up
// forwards (all of them, with B = 2): both micro-batches through stage 0, then through
// stage 2, then the backwards from its last chunk back. Mesh 1 runs (v-1) S = 2 warm-up
// forwards of stage 1, then alternates on stage 3, then drains stage 1's backwards.
// Values cross meshes whole (no transfer ops here).
// CHECK-LABEL: module @two_meshes_two_chunks
// CHECK:      func.func private @mesh0_schedule() attributes {{{.*}}alpa.schedule = "interleaved-1f1b", alpa.stage = 0 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage0_forward, micro_batch = 0 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage0_forward, micro_batch = 1 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage2_forward, micro_batch = 0 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage2_forward, micro_batch = 1 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage2_backward, micro_batch = 0 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage2_backward, micro_batch = 1 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage0_backward, micro_batch = 0 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage0_backward, micro_batch = 1 : i64}
// CHECK:        return
// CHECK:      func.func private @mesh1_schedule() attributes {{{.*}}alpa.schedule = "interleaved-1f1b", alpa.stage = 1 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage1_forward, micro_batch = 0 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage1_forward, micro_batch = 1 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage3_forward, micro_batch = 0 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage3_backward, micro_batch = 0 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage3_forward, micro_batch = 1 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage3_backward, micro_batch = 1 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage1_backward, micro_batch = 0 : i64}
// CHECK:        "alpa.sched.run"() {callee = @stage1_backward, micro_batch = 1 : i64}
// CHECK:        return
module @two_meshes_two_chunks {
  func.func private @stage0_forward(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 1 : i64}
  func.func private @stage2_forward(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 2 : i64}
  func.func private @stage3_forward(tensor<4xf32>, tensor<4xf32>) -> tensor<f32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 3 : i64}
  func.func private @stage3_backward(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 3 : i64}
  func.func private @stage2_backward(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 2 : i64}
  func.func private @stage1_backward(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}, alpa.stage = 1 : i64}
  func.func private @stage0_backward(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}, alpa.stage = 0 : i64}
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<4xf32>, %arg4: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) {
    %0 = call @stage0_forward(%arg4, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = call @stage1_forward(%0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %2 = call @stage2_forward(%1, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %3 = call @stage3_forward(%2, %arg3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %4:2 = call @stage3_backward(%2, %arg3) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %5:2 = call @stage2_backward(%4#1, %1) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %6:2 = call @stage1_backward(%5#1, %0) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %7 = call @stage0_backward(%6#1, %arg4) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %7, %6#0, %5#0, %4#0, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>
  }
}
