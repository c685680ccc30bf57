// RUN: alpa-opt %S/../inter_op/stage_construction.mlir --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2}, alpa-stage-construction{cluster-shape=1,4 num-micro-batches=2}, alpa-cross-mesh-resharding, alpa-pipeline-schedule{num-micro-batches=2})' | FileCheck %s

// The whole compiler on the two-layer SGD step of ../inter_op/stage_construction.mlir:
// a stage per layer on devices {0,1} and {2,3}, the activation and its gradient moved
// between them with explicit transfers, and one 1F1B stream per mesh for 2 micro-batches.

// The activation leaves stage 0 split by columns and is wanted replicated on stage 1:
// each column quarter crosses once and is all-gathered on devices 2 and 3 (Sec. 6).
// CHECK-LABEL: func.func public @main
// CHECK: %[[F0:.*]]:2 = call @stage0_forward
// CHECK-COUNT-4: "alpa.send"(%[[F0]]#0) {alpa.transfer = 0 : i64
// CHECK-COUNT-2: "alpa.all_gather"
// CHECK: %[[A0:.*]] = "alpa.assemble"
// CHECK-SAME: device_ids = array<i64: 2, 3>
// CHECK: call @stage1_forward(%[[A0]], %arg1)
// CHECK: %[[B1:.*]]:2 = call @stage1_backward(%[[A0]], %arg1)
// CHECK: "alpa.send"(%[[B1]]#1) {alpa.transfer = 1 : i64
// CHECK: %[[A1:.*]] = "alpa.assemble"
// CHECK-SAME: device_ids = array<i64: 0, 1>
// CHECK: call @stage0_backward(%[[A1]],

// Mesh 0 (the first stage): one warm-up forward more than the last stage, then the
// backwards; its gradient is accumulated and applied once.
// CHECK-LABEL: func.func private @mesh0_schedule
// CHECK-SAME: alpa.num_micro_batches = 2 : i64, alpa.schedule = "1f1b", alpa.stage = 0 : i64
// CHECK-NEXT: "alpa.sched.run"() {callee = @stage0_forward, micro_batch = 0 : i64}
// CHECK-NEXT: "alpa.sched.send"() {micro_batch = 0 : i64, transfer = 0 : i64}
// CHECK-NEXT: "alpa.sched.run"() {callee = @stage0_forward, micro_batch = 1 : i64}
// CHECK-NEXT: "alpa.sched.send"() {micro_batch = 1 : i64, transfer = 0 : i64}
// CHECK-NEXT: "alpa.sched.recv"() {micro_batch = 0 : i64, transfer = 1 : i64}
// CHECK-NEXT: "alpa.sched.run"() {callee = @stage0_backward, micro_batch = 0 : i64}
// CHECK: "alpa.sched.accumulate"() {micro_batch = 1 : i64, values = ["stage0_backward#0"]}
// CHECK: "alpa.sched.apply"() {callee = @stage0_apply}

// Mesh 1 (the last stage): forward and backward alternate; the received activation is
// all-gathered after each recv; the loss is accumulated (the step returns its mean).
// CHECK-LABEL: func.func private @mesh1_schedule
// CHECK-NEXT: "alpa.sched.recv"() {micro_batch = 0 : i64, transfer = 0 : i64}
// CHECK-NEXT: "alpa.sched.all_gather"() {micro_batch = 0 : i64, transfer = 0 : i64}
// CHECK-NEXT: "alpa.sched.run"() {callee = @stage1_forward, micro_batch = 0 : i64}
// CHECK-NEXT: "alpa.sched.accumulate"() {micro_batch = 0 : i64, values = ["stage1_forward#0"]}
// CHECK: "alpa.sched.run"() {callee = @stage1_backward, micro_batch = 0 : i64}
// CHECK: "alpa.sched.send"() {micro_batch = 0 : i64, transfer = 1 : i64}
// CHECK: "alpa.sched.run"() {callee = @stage1_forward, micro_batch = 1 : i64}
// CHECK: "alpa.sched.apply"() {callee = @stage1_apply}
