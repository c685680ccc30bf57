// RUN: alpa-opt %s --split-input-file --alpa-mark-apply-gradients | FileCheck %s

// jax.value_and_grad of sum(tanh(x @ w)), then w - 0.1 * g, without name stacks (the
// dataflow rule): the forward and backward ops are one segment, the update applies.
// CHECK-LABEL: func @main
// CHECK:       %[[SCALE:.*]] = stablehlo.constant {alpa.apply_grad, alpa.segment = 0 : i64} dense<1.000000e-01>
// CHECK:       stablehlo.dot_general %arg1, %arg0, {{.*}} {alpa.segment = 0 : i64}
// CHECK:       stablehlo.reduce{{.*}} {alpa.segment = 0 : i64}
// CHECK:       %[[G:.*]] = stablehlo.dot_general %{{.*}}, %arg1, {{.*}} {alpa.segment = 0 : i64}
// CHECK-NEXT:  %[[GT:.*]] = stablehlo.transpose %[[G]], dims = [1, 0] {alpa.segment = 0 : i64}
// CHECK-NEXT:  %[[S:.*]] = stablehlo.broadcast_in_dim %[[SCALE]], dims = [] {alpa.apply_grad, alpa.segment = 0 : i64}
// CHECK-NEXT:  %[[U:.*]] = stablehlo.multiply %[[S]], %[[GT]] {alpa.apply_grad, alpa.segment = 0 : i64}
// CHECK-NEXT:  stablehlo.subtract %arg0, %[[U]] {alpa.apply_grad, alpa.segment = 0 : i64}
func.func @main(%arg0: tensor<4x2xf32>, %arg1: tensor<8x4xf32>) -> (tensor<4x2xf32>, tensor<f32>) {
  %cst = stablehlo.constant dense<1.000000e-01> : tensor<f32>
  %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %1 = stablehlo.tanh %0 : tensor<8x2xf32>
  %2 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x2xf32>
  %3 = stablehlo.subtract %2, %1 : tensor<8x2xf32>
  %4 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x2xf32>, tensor<f32>) -> tensor<f32>
  %5 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x2xf32>
  %6 = stablehlo.multiply %5, %3 : tensor<8x2xf32>
  %7 = stablehlo.multiply %6, %1 : tensor<8x2xf32>
  %8 = stablehlo.add %6, %7 : tensor<8x2xf32>
  %9 = stablehlo.dot_general %8, %arg1, contracting_dims = [0] x [0] : (tensor<8x2xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %10 = stablehlo.transpose %9, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %11 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
  %12 = stablehlo.multiply %11, %10 : tensor<4x2xf32>
  %13 = stablehlo.subtract %arg0, %12 : tensor<4x2xf32>
  return %13, %4 : tensor<4x2xf32>, tensor<f32>
}

// -----

// Gradients marked by alpa_mlir.grad (alpa.segment present): left as they are.
// CHECK-LABEL: func @main
// CHECK:       stablehlo.negate %arg1 {alpa.segment = 0 : i64}
// CHECK-NEXT:  stablehlo.subtract %arg0, %{{.*}} {alpa.segment = 0 : i64}
// CHECK-NOT:   alpa.apply_grad
func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %arg1 {alpa.segment = 0 : i64} : tensor<4xf32>
  %1 = stablehlo.subtract %arg0, %0 {alpa.segment = 0 : i64} : tensor<4xf32>
  return %1 : tensor<4xf32>
}
