// RUN: alpa-opt %s --alpa-pipeline-schedule='schedule=inference num-micro-batches=3' | FileCheck %s

// A forward-only step (its own file: the training schedules reject it). Mesh 0 runs
// the three micro-batches back to back, each followed by its transfer; mesh 1 receives
// and runs each, accumulating the returned output. No apply, nothing step-level.
// CHECK-LABEL: module @forward_only
// CHECK:      func.func private @mesh0_schedule() attributes {{{.*}}alpa.num_micro_batches = 3 : i64, alpa.schedule = "inference", alpa.stage = 0 : i64}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage0_forward, micro_batch = 0 : i64}
// CHECK-NEXT:   "alpa.sched.send"() {micro_batch = 0 : i64, transfer = 0 : i64}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 0 : i64, values = ["stage0_forward#0"]}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage0_forward, micro_batch = 1 : i64}
// CHECK-NEXT:   "alpa.sched.send"() {micro_batch = 1 : i64, transfer = 0 : i64}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 1 : i64, values = ["stage0_forward#0"]}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage0_forward, micro_batch = 2 : i64}
// CHECK-NEXT:   "alpa.sched.send"() {micro_batch = 2 : i64, transfer = 0 : i64}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 2 : i64, values = ["stage0_forward#0"]}
// CHECK-NEXT:   return
// CHECK:      func.func private @mesh1_schedule() attributes {{{.*}}alpa.schedule = "inference", alpa.stage = 1 : i64}
// CHECK-NEXT:   "alpa.sched.recv"() {micro_batch = 0 : i64, transfer = 0 : i64}
// CHECK-NEXT:   "alpa.sched.run"() {callee = @stage1_forward, micro_batch = 0 : i64}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 0 : i64, values = ["transfer0"]}
// CHECK-NEXT:   "alpa.sched.accumulate"() {micro_batch = 0 : i64, values = ["stage1_forward#0"]}
// CHECK-NEXT:   "alpa.sched.free"() {micro_batch = 0 : i64, values = ["stage1_forward#0"]}
// CHECK-NEXT:   "alpa.sched.recv"() {micro_batch = 1 : i64, transfer = 0 : i64}
// CHECK-NOT:    alpa.sched.apply
// CHECK:        "alpa.sched.free"() {micro_batch = 2 : i64, values = ["stage1_forward#0"]}
// CHECK-NEXT:   return
module @forward_only {
  func.func private @stage0_forward(tensor<4x8xf32>) -> tensor<4x8xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1, 1>}, alpa.stage = 0 : i64}
  func.func private @stage1_forward(tensor<4x8xf32>) -> tensor<4x8xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1, 1>}, alpa.stage = 1 : i64}
  func.func public @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = call @stage0_forward(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "alpa.send"(%0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()
    %1 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>} : () -> tensor<4x8xf32>
    %2 = "alpa.assemble"(%1) {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1, 1>}, alpa.transfer = 0 : i64, devices = array<i64: 1>, mhlo.sharding = "{replicated}", tiles = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %3 = call @stage1_forward(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    return %3 : tensor<4x8xf32>
  }
}
