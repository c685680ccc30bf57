// RUN: alpa-opt %s --alpa-accumulate-gradients='num-micro-batches=2 batch-args=1 concat-results=1' | FileCheck %s

// A per-example result (concat-results=1, the activation the step returns beside its
// update): micro-batch i's rows go to [:, i] of a [4, 2, 4] buffer the loop carries, and
// the buffer comes back as the whole [8, 4], rows in the batch's order (micro-batch i
// holds rows i, i + 2, ...). Only the gradient is averaged.
// CHECK-LABEL: func @per_example_result
// CHECK-SAME:    -> (tensor<4x4xf32>, tensor<8x4xf32>)
// CHECK:         %[[LOOP:.*]]:3 = stablehlo.while
// CHECK:           %[[TANH:.*]] = stablehlo.tanh
// CHECK:           %[[ROWS:.*]] = stablehlo.reshape %[[TANH]] {{.*}} : (tensor<4x4xf32>) -> tensor<4x1x4xf32>
// CHECK:           %[[PUT:.*]] = stablehlo.dynamic_update_slice %{{.*}}, %[[ROWS]], %{{.*}}, %{{.*}}, %{{.*}} {{.*}}<@mesh, [{"x"}, {}, {}]>{{.*}} : (tensor<4x2x4xf32>, tensor<4x1x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x2x4xf32>
// CHECK:           stablehlo.return %{{.*}}, %{{.*}}, %[[PUT]]
// CHECK:         stablehlo.divide
// CHECK:         %[[WHOLE:.*]] = stablehlo.reshape %[[LOOP]]#2 {{.*}}<@mesh, [{"x"}, {}]>{{.*}} : (tensor<4x2x4xf32>) -> tensor<8x4xf32>
// CHECK:         return %{{.*}}, %[[WHOLE]]
sdy.mesh @mesh = <["x"=2]>
func.func @per_example_result(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = stablehlo.tanh %arg1 {alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<4x4xf32>
  %1 = stablehlo.dot_general %0, %0, contracting_dims = [0] x [0] {alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = stablehlo.subtract %arg0, %1 {alpa.apply_grad, alpa.segment = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<4x4xf32>
  return %2, %0 : tensor<4x4xf32>, tensor<4x4xf32>
}
