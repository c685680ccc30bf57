// RUN: alpa-opt %s --alpa-squeeze-broadcast-operands --split-input-file | FileCheck %s

// A mask [b, 1, 1, s] broadcast over head-split scores: the size-1 dimensions go, the
// reshape takes the broadcast's sharding on the dimensions it keeps (here none split).
// CHECK-LABEL: func @mask_over_heads
// CHECK-NEXT: %[[R:.*]] = stablehlo.reshape %arg0 {mhlo.sharding = "{replicated}"} : (tensor<8x1x1x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[B:.*]] = stablehlo.broadcast_in_dim %[[R]], dims = [0, 3] {mhlo.sharding = "{devices=[1,4,1,1]<=[4]}"} : (tensor<8x8xf32>) -> tensor<8x8x8x8xf32>
// CHECK-NEXT: return %[[B]]
func.func @mask_over_heads(%arg0: tensor<8x1x1x8xf32>) -> tensor<8x8x8x8xf32> {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1, 2, 3] {mhlo.sharding = "{devices=[1,4,1,1]<=[4]}"} : (tensor<8x1x1x8xf32>) -> tensor<8x8x8x8xf32>
  return %0 : tensor<8x8x8x8xf32>
}

// -----

// Layer norm's mean [b, s, 1] over [b, s, h] split on b (2) and h (4): the reshape
// keeps b's split and replicates over h's devices (device order moved accordingly).
// CHECK-LABEL: func @mean_over_hidden
// CHECK-NEXT: %[[R:.*]] = stablehlo.reshape %arg0 {mhlo.sharding = "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}"} : (tensor<4x16x1xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: stablehlo.broadcast_in_dim %[[R]], dims = [0, 1] {mhlo.sharding = "{devices=[2,1,4]<=[8]}"} : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
func.func @mean_over_hidden(%arg0: tensor<4x16x1xf32>) -> tensor<4x16x32xf32> {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1, 2] {mhlo.sharding = "{devices=[2,1,4]<=[8]}"} : (tensor<4x16x1xf32>) -> tensor<4x16x32xf32>
  return %0 : tensor<4x16x32xf32>
}

// -----

// Devices transposed ([4, 2] from a [2, 4] iota): the kept dimension's devices lead,
// the widened one's become replicas. No sharding: none on the reshape.
// CHECK-LABEL: func @transposed_devices
// CHECK-NEXT: %[[R:.*]] = stablehlo.reshape %arg0 {mhlo.sharding = "{devices=[2,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}"} : (tensor<1x6xf32>) -> tensor<6xf32>
// CHECK-NEXT: stablehlo.broadcast_in_dim %[[R]], dims = [1]
// CHECK-NEXT: %[[S:.*]] = stablehlo.reshape %arg1 : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK-NEXT: stablehlo.broadcast_in_dim %[[S]], dims = [0] : (tensor<3xf32>) -> tensor<3x5xf32>
func.func @transposed_devices(%arg0: tensor<1x6xf32>, %arg1: tensor<3x1xf32>) -> (tensor<4x6xf32>, tensor<3x5xf32>) {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] {mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0)}"} : (tensor<1x6xf32>) -> tensor<4x6xf32>
  %1 = stablehlo.broadcast_in_dim %arg1, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x5xf32>
  return %0, %1 : tensor<4x6xf32>, tensor<3x5xf32>
}

// -----

// Size-1 dimensions that stay size 1, broadcasts from lower ranks, and shardings
// other than tiled or replicated ({manual}) stay.
// CHECK-LABEL: func @negative
// CHECK-NEXT: stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: stablehlo.broadcast_in_dim %arg0, dims = [0, 1] {mhlo.sharding = "{manual}"} : (tensor<1x4xf32>) -> tensor<3x4xf32>
func.func @negative(%arg0: tensor<1x4xf32>, %arg1: tensor<4xf32>) -> (tensor<1x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
  %2 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] {mhlo.sharding = "{manual}"} : (tensor<1x4xf32>) -> tensor<3x4xf32>
  return %0, %1, %2 : tensor<1x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
