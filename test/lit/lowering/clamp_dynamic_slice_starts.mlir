// RUN: alpa-opt %s --alpa-clamp-dynamic-slice-starts --split-input-file | FileCheck %s

// A computed start gets clamp(0, start, 24 - 20); the constant start stays.
// CHECK-LABEL: func @computed_start
// CHECK-DAG: %[[ZERO:.*]] = stablehlo.constant dense<0> : tensor<i32>
// CHECK-DAG: %[[LO:.*]] = stablehlo.constant dense<0> : tensor<i32>
// CHECK-DAG: %[[HI:.*]] = stablehlo.constant dense<4> : tensor<i32>
// CHECK: %[[START:.*]] = stablehlo.clamp %[[LO]], %arg1, %[[HI]] : tensor<i32>
// CHECK: stablehlo.dynamic_slice %arg0, %[[ZERO]], %[[START]], sizes = [3, 20] {mhlo.sharding = "{replicated}"}
func.func @computed_start(%arg0: tensor<3x24xf32>, %arg1: tensor<i32>) -> tensor<3x20xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_slice %arg0, %c, %arg1, sizes = [3, 20] {mhlo.sharding = "{replicated}"} : (tensor<3x24xf32>, tensor<i32>, tensor<i32>) -> tensor<3x20xf32>
  return %0 : tensor<3x20xf32>
}

// -----

// The clamp keeps the start's type (unsigned, 64-bit) and its place in a loop body.
// CHECK-LABEL: func @in_while_body
// CHECK: stablehlo.while
// CHECK: %[[UHI:.*]] = stablehlo.constant dense<6> : tensor<ui64>
// CHECK: %[[USTART:.*]] = stablehlo.clamp %{{.*}}, %iterArg, %[[UHI]] : tensor<ui64>
// CHECK: stablehlo.dynamic_slice %iterArg_0, %[[USTART]], sizes = [2]
func.func @in_while_body(%arg0: tensor<ui64>, %arg1: tensor<8xf32>) -> tensor<ui64> {
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<ui64>, tensor<8xf32>
   cond {
    %c = stablehlo.constant dense<3> : tensor<ui64>
    %1 = stablehlo.compare LT, %iterArg, %c : (tensor<ui64>, tensor<ui64>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = stablehlo.dynamic_slice %iterArg_0, %iterArg, sizes = [2] : (tensor<8xf32>, tensor<ui64>) -> tensor<2xf32>
    %c = stablehlo.constant dense<1> : tensor<ui64>
    %2 = stablehlo.add %iterArg, %c : tensor<ui64>
    stablehlo.return %2, %iterArg_0 : tensor<ui64>, tensor<8xf32>
  }
  return %0#0 : tensor<ui64>
}

// -----

// Constant starts are left to XLA, which folds them into a correctly clamped slice.
// CHECK-LABEL: func @negative_constant_start
// CHECK-NOT: stablehlo.clamp
func.func @negative_constant_start(%arg0: tensor<24xf32>) -> tensor<20xf32> {
  %c = stablehlo.constant dense<19> : tensor<i32>
  %0 = stablehlo.dynamic_slice %arg0, %c, sizes = [20] : (tensor<24xf32>, tensor<i32>) -> tensor<20xf32>
  return %0 : tensor<20xf32>
}
