// RUN: alpa-opt %s --split-input-file --alpa-accumulate-gradients='num-micro-batches=2 batch-args=1' | FileCheck %s
// RUN: alpa-opt %s --split-input-file --alpa-accumulate-gradients='num-micro-batches=1 batch-args=1' | FileCheck %s --check-prefix=ONE
// RUN: alpa-opt %s --split-input-file --alpa-accumulate-gradients='num-micro-batches=2 batch-args=1 accumulate=sum' | FileCheck %s --check-prefix=ADD-UP

// Data parallel: the weight gradient contracts the batch, split over "x", so each device
// holds a partial sum; it is accumulated unreduced and reduced once, after the loop. The
// momentum term reads no batch and runs once, before the loop.
// CHECK-LABEL: func @data_parallel_partial_sum
// CHECK-SAME:    %[[W:.*]]: tensor<4x4xf32> {{.*}}, %[[X:.*]]: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK:         %[[MOMENTUM:.*]] = stablehlo.multiply %{{.*}}, %[[W]]
// CHECK:         %[[ZERO:.*]] = sdy.sharding_constraint %{{.*}} <@mesh, [{}, {}], unreduced={"x"}>
// CHECK:         %[[LOOP:.*]]:2 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[ACC:.*]] = %[[ZERO]])
// CHECK:         dense<2> : tensor<i32>
// CHECK:         do {
// CHECK:           %[[VIEW:.*]] = stablehlo.reshape %[[X]] {{.*}}[{"x"}, {}, {}]{{.*}} -> tensor<8x2x4xf32>
// CHECK:           %[[SLICE:.*]] = stablehlo.dynamic_slice %[[VIEW]], %{{.*}}, %[[I]], %{{.*}}, sizes = [8, 1, 4]
// CHECK:           %[[MICRO:.*]] = stablehlo.reshape %[[SLICE]] {{.*}} -> tensor<8x4xf32>
// CHECK:           %[[PINNED:.*]] = sdy.sharding_constraint %[[MICRO]] <@mesh, [{"x"}, {}]>
// CHECK:           %[[GRAD:.*]] = stablehlo.dot_general %[[PINNED]], %{{.*}} {{.*}}unreduced={"x"}
// CHECK:           %[[PARTIAL:.*]] = sdy.sharding_constraint %[[GRAD]] <@mesh, [{}, {}], unreduced={"x"}>
// CHECK:           %[[SUM:.*]] = stablehlo.add %[[ACC]], %[[PARTIAL]]
// CHECK:           %[[SUM_MARKED:.*]] = sdy.sharding_constraint %[[SUM]] <@mesh, [{}, {}], unreduced={"x"}>
// CHECK:           stablehlo.return %{{.*}}, %[[SUM_MARKED]]
// CHECK:         %[[UNREDUCED:.*]] = sdy.sharding_constraint %[[LOOP]]#1 <@mesh, [{}, {}], unreduced={"x"}>
// CHECK:         %[[TOTAL:.*]] = sdy.sharding_constraint %[[UNREDUCED]] <@mesh, [{}, {}]>
// CHECK:         %[[MEAN:.*]] = stablehlo.divide %[[TOTAL]], %{{.*}}
// CHECK:         stablehlo.subtract %[[MOMENTUM]], %[[MEAN]] {alpa.apply_grad
// ONE-LABEL: func @data_parallel_partial_sum
// ONE-NOT:   stablehlo.while
// A loss summed over examples (accumulate=sum): the update reads the sum, undivided.
// ADD-UP-LABEL: func @data_parallel_partial_sum
// ADD-UP:       %[[LOOP:.*]]:2 = stablehlo.while
// ADD-UP:       %[[UNREDUCED:.*]] = sdy.sharding_constraint %[[LOOP]]#1 <@mesh, [{}, {}], unreduced={"x"}>
// ADD-UP-NEXT:  %[[TOTAL:.*]] = sdy.sharding_constraint %[[UNREDUCED]] <@mesh, [{}, {}]>
// ADD-UP-NOT:  stablehlo.divide
// ADD-UP:       stablehlo.subtract %{{.*}}, %[[TOTAL]] {alpa.apply_grad
sdy.mesh @mesh = <["x"=2]>
func.func @data_parallel_partial_sum(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %cst = stablehlo.constant {alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} dense<0.9> : tensor<4x4xf32>
  %0 = stablehlo.dot_general %arg1, %arg1, contracting_dims = [0] x [0] {alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = stablehlo.multiply %cst, %arg0 {alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<4x4xf32>
  %2 = stablehlo.subtract %1, %0 {alpa.apply_grad, alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}

// -----

// A replicated batch: every device computes the whole gradient, nothing is partial, so
// the accumulator keeps the planned sharding and nothing is marked unreduced. The loss
// that reaches the results is averaged over the micro-batches too.
// CHECK-LABEL: func @replicated_batch_no_partial_sum
// CHECK-NOT:     unreduced
// CHECK:         %[[LOOP2:.*]]:3 = stablehlo.while
// CHECK-NOT:     unreduced
// CHECK:         %[[GRAD_MEAN:.*]] = stablehlo.divide %[[LOOP2]]#1, %{{.*}}
// CHECK:         %[[LOSS_MEAN:.*]] = stablehlo.divide %[[LOOP2]]#2, %{{.*}}
// CHECK:         return %{{.*}}, %[[LOSS_MEAN]]
sdy.mesh @mesh = <["x"=2]>
func.func @replicated_batch_no_partial_sum(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<4x4xf32>, tensor<f32>) {
  %zero = stablehlo.constant {alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} dense<0.0> : tensor<f32>
  %0 = stablehlo.dot_general %arg1, %arg1, contracting_dims = [0] x [0] {alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = stablehlo.reduce(%arg1 init: %zero) applies stablehlo.add across dimensions = [0, 1] {alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} : (tensor<8x4xf32>, tensor<f32>) -> tensor<f32>
  %2 = stablehlo.subtract %arg0, %0 {alpa.apply_grad, alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<4x4xf32>
  return %2, %1 : tensor<4x4xf32>, tensor<f32>
}

// -----

// Host callbacks in the loop: jax.debug.print of a partial sum reads it reduced (Shardy
// cannot hand unreduced values to an op without results), and an io_callback's result,
// made on one device, is accumulated as its users read it: replicated.
// CHECK-LABEL: func @host_callbacks_in_the_loop
// CHECK:         %[[CALLBACK_LOOP:.*]]:3 = stablehlo.while
// CHECK-SAME:      <@mesh, [{}, {}], unreduced={"x"}>, <@mesh, []>]>
// CHECK:           %[[GRAD_PARTIAL:.*]] = sdy.sharding_constraint %{{.*}} <@mesh, [{}, {}], unreduced={"x"}>
// CHECK-NEXT:      %[[GRAD_REDUCED:.*]] = sdy.sharding_constraint %[[GRAD_PARTIAL]] <@mesh, [{}, {}]>
// CHECK:           stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[GRAD_REDUCED]])
// CHECK:         %[[CALLBACK_MEAN:.*]] = stablehlo.divide %[[CALLBACK_LOOP]]#2, {{.*}}<@mesh, []>
// CHECK:         return %{{.*}}, %[[CALLBACK_MEAN]]
// ONE-LABEL: func @host_callbacks_in_the_loop
sdy.mesh @mesh = <["x"=2]>
sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
func.func @host_callbacks_in_the_loop(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x4xf32>, tensor<f32>) {
  %0 = stablehlo.dot_general %arg1, %arg1, contracting_dims = [0] x [0] {alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  stablehlo.custom_call @xla_ffi_python_cpu_callback(%0) {alpa.segment = 0 : i64, has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<4x4xf32>) -> ()
  %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1) {alpa.segment = 0 : i64, has_side_effect = true, mhlo.backend_config = {index = 1 : ui64}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<8x4xf32>) -> tensor<f32>
  %2 = stablehlo.subtract %arg0, %0 {alpa.apply_grad, alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<4x4xf32>
  return %2, %1 : tensor<4x4xf32>, tensor<f32>
}

// -----

// A partial sum that meets a weight split over the same axis in a contraction stays as
// planned: it is reduced before the second dot_general, and nothing is unreduced (kept
// partial through it, Shardy aborted the process: HF Flax Llama with 2 micro-batches on
// a 2x4 mesh).
// CHECK-LABEL: func @partial_sum_meets_a_split_contraction
// CHECK-NOT:     unreduced
// CHECK:         stablehlo.while
// CHECK-NOT:     unreduced
// CHECK:         return
sdy.mesh @mesh = <["x"=2]>
func.func @partial_sum_meets_a_split_contraction(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %w: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> tensor<4x4xf32> {
  %0 = stablehlo.dot_general %arg1, %arg1, contracting_dims = [0] x [0] {alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = stablehlo.dot_general %0, %w, contracting_dims = [1] x [1] {alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = stablehlo.subtract %arg0, %1 {alpa.apply_grad, alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}
