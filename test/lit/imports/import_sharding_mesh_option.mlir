// RUN: alpa-opt %s --alpa-import-sharding='mesh-shape=2,4' --split-input-file | FileCheck %s

// Explicit device lists become the iota form XLA and JAX print.
// CHECK-LABEL: module @mhlo_explicit_to_iota
// CHECK: %arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"}
// CHECK-SAME: -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0)}"})
module @mhlo_explicit_to_iota attributes {mhlo.num_partitions = 8 : i32} {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]0,1,2,3,4,5,6,7}"}) -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[4,2]0,4,1,5,2,6,3,7}"}) {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// The mesh-shape option names a 2-D mesh that mhlo strings alone do not.
// CHECK-LABEL: module @mhlo_with_mesh_option
// CHECK-SAME: shape = array<i64: 2, 4>
// CHECK: stablehlo.custom_call @Sharding(%arg0) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}
module @mhlo_with_mesh_option attributes {mhlo.num_partitions = 8 : i32} {
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
