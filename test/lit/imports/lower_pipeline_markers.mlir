// RUN: alpa-opt %s --alpa-lower-pipeline-markers --split-input-file | FileCheck %s

// A train step as alpa_mlir.grad lowers it: a forward boundary, the backward boundary
// linked to it, the grad marker. Backward ops after the backward boundary share
// segment 0 with the forward ops before the boundary; the update reads the
// gradients and is apply-gradient.
// CHECK-LABEL: func @train_step
// CHECK-NOT: alpa.pipeline_marker
// CHECK: %[[TANH:.*]] = stablehlo.tanh %arg0 {alpa.segment = 0 : i64}
// CHECK: %[[SINE:.*]] = stablehlo.sine %[[TANH]] {alpa.segment = 1 : i64}
// CHECK: %[[BACK:.*]] = stablehlo.negate %[[SINE]] {alpa.segment = 1 : i64}
// CHECK: %[[GRAD:.*]] = stablehlo.multiply %[[BACK]], %[[TANH]] {alpa.segment = 0 : i64}
// CHECK: %[[UPDATE:.*]] = stablehlo.subtract %arg0, %[[GRAD]] {alpa.apply_grad, alpa.segment = 0 : i64}
// CHECK: return %[[UPDATE]], %[[SINE]]
func.func @train_step(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.tanh %arg0 : tensor<4xf32>
  %1 = stablehlo.custom_call @alpa.pipeline_marker(%0) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.sine %1 : tensor<4xf32>
  %3 = stablehlo.negate %2 : tensor<4xf32>
  %4 = stablehlo.custom_call @alpa.pipeline_marker(%3, %1) {alpa.marker = "backward_boundary", has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = stablehlo.multiply %4, %0 : tensor<4xf32>
  %6 = stablehlo.custom_call @alpa.pipeline_marker(%5) {alpa.marker = "grad", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %7 = stablehlo.subtract %arg0, %6 : tensor<4xf32>
  return %7, %2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// One marker carries every value crossing the boundary; each result is replaced by
// its own operand.
// CHECK-LABEL: func @several_values
// CHECK: %[[A:.*]] = stablehlo.tanh %arg0 {alpa.segment = 0 : i64}
// CHECK: %[[B:.*]] = stablehlo.sine %arg1 {alpa.segment = 0 : i64}
// CHECK: stablehlo.add %[[B]], %[[A]] {alpa.segment = 1 : i64}
func.func @several_values(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<4xf32>
  %1 = stablehlo.sine %arg1 : tensor<4xf32>
  %2:2 = stablehlo.custom_call @alpa.pipeline_marker(%0, %1) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %3 = stablehlo.add %2#1, %2#0 : tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// Three boundaries: each backward marker takes the number of the forward boundary it
// links to, so the backward pass counts the segments down from 3 to 0.
// CHECK-LABEL: func @three_boundaries
// CHECK: stablehlo.sine %arg0 {alpa.segment = 0 : i64}
// CHECK: stablehlo.sine %{{.*}} {alpa.segment = 1 : i64}
// CHECK: stablehlo.sine %{{.*}} {alpa.segment = 2 : i64}
// CHECK: stablehlo.sine %{{.*}} {alpa.segment = 3 : i64}
// CHECK: stablehlo.cosine %{{.*}} {alpa.segment = 3 : i64}
// CHECK: stablehlo.cosine %{{.*}} {alpa.segment = 2 : i64}
// CHECK: stablehlo.cosine %{{.*}} {alpa.segment = 1 : i64}
// CHECK: stablehlo.cosine %{{.*}} {alpa.segment = 0 : i64}
func.func @three_boundaries(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.sine %arg0 : tensor<4xf32>
  %1 = stablehlo.custom_call @alpa.pipeline_marker(%0) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.sine %1 : tensor<4xf32>
  %3 = stablehlo.custom_call @alpa.pipeline_marker(%2) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = stablehlo.sine %3 : tensor<4xf32>
  %5 = stablehlo.custom_call @alpa.pipeline_marker(%4) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %6 = stablehlo.sine %5 : tensor<4xf32>
  %7 = stablehlo.cosine %6 : tensor<4xf32>
  %8 = stablehlo.custom_call @alpa.pipeline_marker(%7, %5) {alpa.marker = "backward_boundary", has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %9 = stablehlo.cosine %8 : tensor<4xf32>
  %10 = stablehlo.custom_call @alpa.pipeline_marker(%9, %3) {alpa.marker = "backward_boundary", has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %11 = stablehlo.cosine %10 : tensor<4xf32>
  %12 = stablehlo.custom_call @alpa.pipeline_marker(%11, %1) {alpa.marker = "backward_boundary", has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %13 = stablehlo.cosine %12 : tensor<4xf32>
  return %13 : tensor<4xf32>
}

// -----

// Boundaries are numbered by dataflow, not by count. The first boundary marks data
// only and has no backward marker, so the first backward pass ends in segment 1; a
// second micro-batch's forward pass reads only %arg1, so its boundaries are 0 and 1
// again, and its first layer, after the backward pass in program order, is segment 0.
// CHECK-LABEL: func @second_micro_batch
// CHECK: stablehlo.sine %arg0 {alpa.segment = 0 : i64}
// CHECK: stablehlo.sine %{{.*}} {alpa.segment = 1 : i64}
// CHECK: stablehlo.cosine %{{.*}} {alpa.segment = 2 : i64}
// CHECK: stablehlo.cosine %{{.*}} {alpa.segment = 1 : i64}
// CHECK: stablehlo.exponential %arg1 {alpa.segment = 0 : i64}
// CHECK: stablehlo.exponential %{{.*}} {alpa.segment = 1 : i64}
// CHECK: stablehlo.log %{{.*}} {alpa.segment = 2 : i64}
func.func @second_micro_batch(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.sine %arg0 : tensor<4xf32>
  %1 = stablehlo.custom_call @alpa.pipeline_marker(%0) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.sine %1 : tensor<4xf32>
  %3 = stablehlo.custom_call @alpa.pipeline_marker(%2) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = stablehlo.cosine %3 : tensor<4xf32>
  %5 = stablehlo.custom_call @alpa.pipeline_marker(%4, %3) {alpa.marker = "backward_boundary", has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %6 = stablehlo.cosine %5 : tensor<4xf32>
  %7 = stablehlo.exponential %arg1 : tensor<4xf32>
  %8 = stablehlo.custom_call @alpa.pipeline_marker(%7) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %9 = stablehlo.exponential %8 : tensor<4xf32>
  %10 = stablehlo.custom_call @alpa.pipeline_marker(%9) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %11 = stablehlo.log %10 : tensor<4xf32>
  return %6, %11 : tensor<4xf32>, tensor<4xf32>
}

// -----

// jax.checkpoint recomputes a layer inside the backward pass, after the next layer's
// backward boundary, from inputs it bundles with that layer's cotangent in an
// optimization_barrier. The recomputed layer and its residuals (what the recomputed
// boundary reads, and what reads only that) are the layer's segment, 0; the next
// layer's backward ops keep segment 1.
// CHECK-LABEL: func @checkpointed_layer
// CHECK: %[[H:.*]] = stablehlo.sine %arg0 {alpa.segment = 0 : i64}
// CHECK: stablehlo.cosine %[[H]] {alpa.segment = 1 : i64}
// CHECK: %[[COT:.*]] = stablehlo.negate %{{.*}} {alpa.segment = 1 : i64}
// CHECK: stablehlo.optimization_barrier {alpa.segment = 0 : i64} %arg0, %[[COT]]
// CHECK: %[[AGAIN:.*]] = stablehlo.sine %{{.*}} {alpa.segment = 0 : i64}
// CHECK: stablehlo.cosine %{{.*}} {alpa.segment = 0 : i64}
// CHECK: stablehlo.multiply %{{.*}}, %{{.*}} {alpa.segment = 0 : i64}
func.func @checkpointed_layer(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.sine %arg0 : tensor<4xf32>
  %1 = stablehlo.custom_call @alpa.pipeline_marker(%0) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.cosine %1 : tensor<4xf32>
  %3 = stablehlo.negate %2 : tensor<4xf32>
  %4:2 = stablehlo.optimization_barrier %arg0, %3 : tensor<4xf32>, tensor<4xf32>
  %5 = stablehlo.sine %4#0 : tensor<4xf32>
  %6 = stablehlo.cosine %4#0 : tensor<4xf32>
  %7 = stablehlo.custom_call @alpa.pipeline_marker(%5) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %8 = stablehlo.custom_call @alpa.pipeline_marker(%4#1, %7) {alpa.marker = "backward_boundary", has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %9 = stablehlo.multiply %8, %6 : tensor<4xf32>
  return %9 : tensor<4xf32>
}

// -----

// Forward-mode AD puts a tangent marker, linked to its primal marker, beside it: the
// same boundary, which changes no segment.
// CHECK-LABEL: func @tangent_beside_primal
// CHECK-NOT: alpa.pipeline_marker
// CHECK: stablehlo.sine %arg0 {alpa.segment = 0 : i64}
// CHECK: stablehlo.cosine %arg1 {alpa.segment = 0 : i64}
// CHECK: stablehlo.sine %{{.*}} {alpa.segment = 1 : i64}
// CHECK: stablehlo.cosine %{{.*}} {alpa.segment = 1 : i64}
func.func @tangent_beside_primal(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.sine %arg0 : tensor<4xf32>
  %1 = stablehlo.cosine %arg1 : tensor<4xf32>
  %2 = stablehlo.custom_call @alpa.pipeline_marker(%0) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %3 = stablehlo.custom_call @alpa.pipeline_marker(%1, %2) {alpa.marker = "tangent_boundary", has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = stablehlo.sine %2 : tensor<4xf32>
  %5 = stablehlo.cosine %3 : tensor<4xf32>
  return %4, %5 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A backward marker of second-order AD links to another linked marker, not to a
// forward boundary; it changes no segment.
// CHECK-LABEL: func @second_order
// CHECK: stablehlo.exponential %{{.*}} {alpa.segment = 1 : i64}
// CHECK: stablehlo.log %{{.*}} {alpa.segment = 1 : i64}
func.func @second_order(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @alpa.pipeline_marker(%arg0) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = stablehlo.custom_call @alpa.pipeline_marker(%arg0, %0) {alpa.marker = "tangent_boundary", has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.exponential %1 : tensor<4xf32>
  %3 = stablehlo.custom_call @alpa.pipeline_marker(%2, %1) {alpa.marker = "backward_boundary", has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = stablehlo.log %3 : tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// Apply-gradient is dataflow: ops reading the gradients, transitively or from inside
// a region, are marked; an op after the grad marker that does not read them is not.
// Ops nested in regions get no attributes of their own.
// CHECK-LABEL: func @apply_grad_dataflow
// CHECK: %[[LR:.*]] = stablehlo.constant {alpa.segment = 0 : i64}
// CHECK: %[[STEP:.*]] = stablehlo.multiply %[[LR]], %arg1 {alpa.apply_grad, alpa.segment = 0 : i64}
// CHECK: stablehlo.subtract %arg0, %[[STEP]] {alpa.apply_grad, alpa.segment = 0 : i64}
// CHECK: stablehlo.abs %arg0 {alpa.segment = 0 : i64}
// CHECK: stablehlo.reduce(%[[STEP]] {{.*}} {alpa.apply_grad, alpa.segment = 0 : i64}
// CHECK: stablehlo.while{{.*}} attributes {alpa.apply_grad, alpa.segment = 0 : i64}
// CHECK: stablehlo.constant dense<false> : tensor<i1>
// CHECK: stablehlo.multiply %{{.*}}, %arg1 : tensor<4xf32>
func.func @apply_grad_dataflow(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) {
  %lr = stablehlo.constant dense<0.1> : tensor<4xf32>
  %g = stablehlo.custom_call @alpa.pipeline_marker(%arg1) {alpa.marker = "grad", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %step = stablehlo.multiply %lr, %g : tensor<4xf32>
  %new = stablehlo.subtract %arg0, %step : tensor<4xf32>
  %norm = stablehlo.abs %arg0 : tensor<4xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%step init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %loop = stablehlo.while(%v = %arg0) : tensor<4xf32>
  cond {
    %p = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %m = stablehlo.multiply %v, %g : tensor<4xf32>
    stablehlo.return %m : tensor<4xf32>
  }
  return %new, %norm, %sum, %loop : tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>
}

// -----

// Only functions that hold markers are annotated.
// CHECK-LABEL: func @negative_without_markers
// CHECK-NOT: alpa.segment
// CHECK-LABEL: func @with_marker
// CHECK: stablehlo.negate %arg0 {alpa.segment = 0 : i64}
func.func @negative_without_markers(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @with_marker(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %arg0 : tensor<4xf32>
  %1 = stablehlo.custom_call @alpa.pipeline_marker(%0) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Other custom calls are not markers and stay as they are.
// CHECK-LABEL: func @negative_other_custom_call
// CHECK: stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{replicated}"}
// CHECK-NOT: alpa.segment
func.func @negative_other_custom_call(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{replicated}"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
