// RUN: alpa-opt %s --alpa-reshape-degenerate-transposes --split-input-file | FileCheck %s

// Moving a size-1 dimension moves no element: a reshape, with the transpose's sharding.
// CHECK-LABEL: func @size_one_moves
// CHECK-NEXT: %[[ROW:.*]] = stablehlo.reshape %arg0 {mhlo.sharding = "{replicated}"} : (tensor<12x1xf32>) -> tensor<1x12xf32>
// CHECK-NEXT: %[[MOVED:.*]] = stablehlo.reshape %arg1 {mhlo.sharding = "{devices=[2,1,1,1,4]<=[8] last_tile_dim_replicate}"} : (tensor<1x4x1x3xf32>) -> tensor<4x1x3x1xf32>
// CHECK-NEXT: return %[[ROW]], %[[MOVED]]
func.func @size_one_moves(%arg0: tensor<12x1xf32>, %arg1: tensor<1x4x1x3xf32>) -> (tensor<1x12xf32>, tensor<4x1x3x1xf32>) {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] {mhlo.sharding = "{replicated}"} : (tensor<12x1xf32>) -> tensor<1x12xf32>
  %1 = stablehlo.transpose %arg1, dims = [1, 2, 3, 0] {mhlo.sharding = "{devices=[2,1,1,1,4]<=[8] last_tile_dim_replicate}"} : (tensor<1x4x1x3xf32>) -> tensor<4x1x3x1xf32>
  return %0, %1 : tensor<1x12xf32>, tensor<4x1x3x1xf32>
}

// -----

// Transposes that reorder dimensions of size > 1 stay.
// CHECK-LABEL: func @negative_reorders
// CHECK-NEXT: stablehlo.transpose %arg0, dims = [1, 0]
// CHECK-NEXT: stablehlo.transpose %arg1, dims = [3, 0, 1, 2]
func.func @negative_reorders(%arg0: tensor<4x3xf32>, %arg1: tensor<1x4x1x3xf32>) -> (tensor<3x4xf32>, tensor<3x1x4x1xf32>) {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %1 = stablehlo.transpose %arg1, dims = [3, 0, 1, 2] : (tensor<1x4x1x3xf32>) -> tensor<3x1x4x1xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<3x1x4x1xf32>
}
