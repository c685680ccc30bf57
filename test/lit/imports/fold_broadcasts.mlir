// RUN: alpa-opt %s --split-input-file --alpa-fold-broadcasts | FileCheck %s

// A bias add as JAX lowers it: [n] -> [1, n] -> [B, n] becomes one broadcast from [n].
// CHECK-LABEL: func @bias
// CHECK-NEXT: %[[B:.*]] = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: stablehlo.add %arg1, %[[B]]
func.func @bias(%b: tensor<8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
  %2 = stablehlo.add %x, %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Three in a row fold into one; the dimensions compose (a transposing outer broadcast).
// CHECK-LABEL: func @chain
// CHECK-NEXT: %[[C:.*]] = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<8xf32>) -> tensor<3x4x8xf32>
// CHECK-NEXT: return %[[C]]
func.func @chain(%b: tensor<8xf32>) -> tensor<3x4x8xf32> {
  %0 = stablehlo.broadcast_in_dim %b, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [1, 0] : (tensor<8x1xf32>) -> tensor<4x8xf32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [1, 2] : (tensor<4x8xf32>) -> tensor<3x4x8xf32>
  return %2 : tensor<3x4x8xf32>
}

// -----

// The inner broadcast stays for its other user.
// CHECK-LABEL: func @shared_inner
// CHECK-NEXT: %[[ROW:.*]] = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
// CHECK-NEXT: %[[FULL:.*]] = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[ROW]], %[[FULL]]
func.func @shared_inner(%b: tensor<8xf32>) -> (tensor<1x8xf32>, tensor<4x8xf32>) {
  %0 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<1x8xf32>, tensor<4x8xf32>
}

// -----

// negative: a sharding pinned on the inner broadcast is the user's; nothing folds.
// CHECK-LABEL: func @negative_pinned_inner
// CHECK-NEXT: stablehlo.broadcast_in_dim %arg0, dims = [1] {mhlo.sharding = "{replicated}"}
// CHECK-NEXT: stablehlo.broadcast_in_dim %0, dims = [0, 1]
func.func @negative_pinned_inner(%b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.broadcast_in_dim %b, dims = [1] {mhlo.sharding = "{replicated}"} : (tensor<8xf32>) -> tensor<1x8xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
