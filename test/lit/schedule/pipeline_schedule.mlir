// RUN: alpa-opt %s --split-input-file --alpa-pipeline-schedule='num-micro-batches=2' | FileCheck %s
// RUN: alpa-opt %s --split-input-file --alpa-pipeline-schedule='schedule=gpipe num-micro-batches=2' | FileCheck %s --check-prefix=GPIPE
// RUN: alpa-opt %s --split-input-file --alpa-pipeline-schedule='num-micro-batches=2 accumulate=sum' | FileCheck %s --check-prefix=SUM

// Two stages after cross-mesh resharding: transfer 0 carries the activation to mesh 1
// (two devices, which all-gather the halves they receive), transfer 1 the gradient
// back. Under 1F1B mesh 0 forwards micro-batch 1 before the first backward (one
// warm-up forward); mesh 1, the last stage, alternates. Gradients and the loss are
// accumulated right after the run that makes them; the apply runs once at the end and
// frees the accumulated gradient, while the returned loss is kept.
// CHECK-LABEL: module @two_stages
// CHECK:      func.func private @mesh0_schedule() attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1, 1>}, alpa.num_micro_batches = 2 : i64, alpa.schedule = "1f1b", alpa.stage = 0 : i64}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage0_forward, micro_batch = 0 : i64}
// CHECK-NEXT:   "alpa.sched.send"() {micro_batch = 0 : i64, transfer = 0 : i64}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 0 : i64, values = ["stage0_forward#0"]}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage0_forward, micro_batch = 1 : i64}
// CHECK-NEXT:   "alpa.sched.send"() {micro_batch = 1 : i64, transfer = 0 : i64}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 1 : i64, values = ["stage0_forward#0"]}
// CHECK-NEXT:   "alpa.sched.recv"() {micro_batch = 0 : i64, transfer = 1 : i64}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage0_backward, micro_batch = 0 : i64}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 0 : i64, values = ["transfer1"]}
// CHECK-NEXT:   "alpa.sched.accumulate"() {micro_batch = 0 : i64, values = ["stage0_backward#0"]}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 0 : i64, values = ["stage0_backward#0"]}
// CHECK-NEXT:   "alpa.sched.recv"() {micro_batch = 1 : i64, transfer = 1 : i64}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage0_backward, micro_batch = 1 : i64}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 1 : i64, values = ["transfer1"]}
// CHECK-NEXT:   "alpa.sched.accumulate"() {micro_batch = 1 : i64, values = ["stage0_backward#0"]}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 1 : i64, values = ["stage0_backward#0"]}
// CHECK-NEXT:   "alpa.sched.apply"() {callee = @stage0_apply}
// CHECK-NEXT:   "alpa.sched.free"() {values = ["stage0_backward#0"]}
// CHECK-NEXT:   return
// CHECK:      func.func private @mesh1_schedule() attributes {alpa.mesh = {device_ids = array<i64: 1, 2>, shape = array<i64: 1, 2>}, alpa.num_micro_batches = 2 : i64, alpa.schedule = "1f1b", alpa.stage = 1 : i64}
// CHECK-NEXT:   "alpa.sched.recv"() {micro_batch = 0 : i64, transfer = 0 : i64}
// CHECK-NEXT:   "alpa.sched.all_gather"() {micro_batch = 0 : i64, transfer = 0 : i64}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage1_forward, micro_batch = 0 : i64}
// CHECK-NEXT:   "alpa.sched.accumulate"() {micro_batch = 0 : i64, values = ["stage1_forward#0"]}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 0 : i64, values = ["stage1_forward#0"]}
// CHECK-NEXT:   "alpa.sched.recv"() {micro_batch = 1 : i64, transfer = 0 : i64}
// CHECK-NEXT:   "alpa.sched.all_gather"() {micro_batch = 1 : i64, transfer = 0 : i64}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage1_backward, micro_batch = 0 : i64}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 0 : i64, values = ["transfer0"]}
// CHECK-NEXT:   "alpa.sched.accumulate"() {micro_batch = 0 : i64, values = ["stage1_backward#0"]}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 0 : i64, values = ["stage1_backward#0"]}
// CHECK-NEXT:   "alpa.sched.send"() {micro_batch = 0 : i64, transfer = 1 : i64}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 0 : i64, values = ["stage1_backward#1"]}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage1_forward, micro_batch = 1 : i64}
// CHECK-NEXT:   "alpa.sched.accumulate"() {micro_batch = 1 : i64, values = ["stage1_forward#0"]}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 1 : i64, values = ["stage1_forward#0"]}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage1_backward, micro_batch = 1 : i64}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 1 : i64, values = ["transfer0"]}
// CHECK-NEXT:   "alpa.sched.accumulate"() {micro_batch = 1 : i64, values = ["stage1_backward#0"]}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 1 : i64, values = ["stage1_backward#0"]}
// CHECK-NEXT:   "alpa.sched.send"() {micro_batch = 1 : i64, transfer = 1 : i64}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 1 : i64, values = ["stage1_backward#1"]}
// CHECK-NEXT:   "alpa.sched.apply"() {callee = @stage1_apply}
// CHECK-NEXT:   "alpa.sched.free"() {values = ["stage1_backward#0"]}
// CHECK-NEXT:   return

// A loss summed over examples (accumulate=sum): every schedule says the runtime adds the
// micro-batches' values up rather than averaging them; the instructions are the same.
// SUM-LABEL: module @two_stages
// SUM:      func.func private @mesh0_schedule() attributes {alpa.accumulate = "sum", alpa.mesh =
// SUM:      func.func private @mesh1_schedule() attributes {alpa.accumulate = "sum", alpa.mesh =

// GPipe: mesh 1 runs both forwards, then both backwards.
// GPIPE-LABEL: module @two_stages
// GPIPE:      func.func private @mesh1_schedule() attributes {{{.*}}alpa.schedule = "gpipe"
// GPIPE:        "alpa.sched.run"() {callee = @stage1_forward, micro_batch = 0 : i64}
// GPIPE:        "alpa.sched.run"() {callee = @stage1_forward, micro_batch = 1 : i64}
// GPIPE:        "alpa.sched.run"() {callee = @stage1_backward, micro_batch = 0 : i64}
// GPIPE:        "alpa.sched.send"() {micro_batch = 0 : i64, transfer = 1 : i64}
// GPIPE:        "alpa.sched.run"() {callee = @stage1_backward, micro_batch = 1 : i64}
// GPIPE:        "alpa.sched.apply"() {callee = @stage1_apply}
module @two_stages {
  func.func private @stage0_forward(tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1, 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<f32> attributes {alpa.mesh = {device_ids = array<i64: 1, 2>, shape = array<i64: 1, 2>}, alpa.stage = 1 : i64}
  func.func private @stage1_backward(tensor<4x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<4x8xf32>) attributes {alpa.mesh = {device_ids = array<i64: 1, 2>, shape = array<i64: 1, 2>}, alpa.stage = 1 : i64}
  func.func private @stage0_backward(tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1, 1>}, alpa.stage = 0 : i64}
  func.func private @stage0_apply(tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1, 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_apply(tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> attributes {alpa.mesh = {device_ids = array<i64: 1, 2>, shape = array<i64: 1, 2>}, alpa.stage = 1 : i64}
  func.func public @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<4x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>) {
    %0 = call @stage0_forward(%arg2, %arg0) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    "alpa.send"(%0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 4>} : (tensor<4x8xf32>) -> ()
    "alpa.send"(%0) {alpa.transfer = 0 : i64, channel_id = 1 : i64, dst_device = 2 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 4, 8>} : (tensor<4x8xf32>) -> ()
    %1 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 4>} : () -> tensor<4x4xf32>
    %2 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 1 : i64, dst_device = 2 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 4, 8>} : () -> tensor<4x4xf32>
    %3 = "alpa.all_gather"(%1, %2) {all_gather_dim = 1 : i64, alpa.transfer = 0 : i64, devices = array<i64: 1, 2>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
    %4 = "alpa.assemble"(%3, %3) {alpa.mesh = {device_ids = array<i64: 1, 2>, shape = array<i64: 1, 2>}, alpa.transfer = 0 : i64, devices = array<i64: 1, 2>, mhlo.sharding = "{replicated}", tiles = array<i64: 0, 4, 0, 8, 0, 4, 0, 8>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %5 = call @stage1_forward(%4, %arg1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<f32>
    %6:2 = call @stage1_backward(%4, %arg1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<4x8xf32>)
    "alpa.send"(%6#1) {alpa.transfer = 1 : i64, channel_id = 2 : i64, dst_device = 0 : i64, src_device = 1 : i64, tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()
    %7 = "alpa.recv"() {alpa.transfer = 1 : i64, channel_id = 2 : i64, dst_device = 0 : i64, src_device = 1 : i64, tile = array<i64: 0, 4, 0, 8>} : () -> tensor<4x8xf32>
    %8 = "alpa.assemble"(%7) {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1, 1>}, alpa.transfer = 1 : i64, devices = array<i64: 0>, mhlo.sharding = "{replicated}", tiles = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %9 = call @stage0_backward(%8, %arg2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %10 = call @stage0_apply(%9, %arg0) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %11 = call @stage1_apply(%6#0, %arg1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    return %10, %11, %5 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  }
}

// -----

// Straight from alpa-stage-construction, without transfer ops: values read across
// meshes are moved whole, named by value and meshes instead of a transfer id.
// CHECK-LABEL: module @no_transfers
// CHECK:      func.func private @mesh0_schedule()
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage0_forward, micro_batch = 0 : i64}
// CHECK-NEXT:   "alpa.sched.send"() {dst_mesh = 1 : i64, micro_batch = 0 : i64, src_mesh = 0 : i64, value = "stage0_forward#0"}
// CHECK:      func.func private @mesh1_schedule()
// CHECK-NEXT:   "alpa.sched.recv"() {dst_mesh = 1 : i64, micro_batch = 0 : i64, src_mesh = 0 : i64, value = "stage0_forward#0"}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage1_forward, micro_batch = 0 : i64}
// GPIPE-LABEL: module @no_transfers
module @no_transfers {
  func.func private @stage0_forward(tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1, 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<f32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1, 1>}, alpa.stage = 1 : i64}
  func.func private @stage1_backward(tensor<4x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<4x8xf32>) attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1, 1>}, alpa.stage = 1 : i64}
  func.func private @stage0_backward(tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1, 1>}, alpa.stage = 0 : i64}
  func.func private @stage0_apply(tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1, 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_apply(tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1, 1>}, alpa.stage = 1 : i64}
  func.func public @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<4x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>) {
    %0 = call @stage0_forward(%arg2, %arg0) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %1 = call @stage1_forward(%0, %arg1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<f32>
    %2:2 = call @stage1_backward(%0, %arg1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<4x8xf32>)
    %3 = call @stage0_backward(%2#1, %arg2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %4 = call @stage0_apply(%3, %arg0) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %5 = call @stage1_apply(%2#0, %arg1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    return %4, %5, %1 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  }
}
