// RUN: alpa-opt --alpa-export-sdy --split-input-file %s | FileCheck %s

// The canonical form JAX's GSPMD path emits becomes what its Shardy path emits.
// CHECK-LABEL: module @from_gspmd
// CHECK-NOT: alpa.mesh
// CHECK: sdy.mesh @mesh = <["x"=2, "y"=4]>
// CHECK: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK-SAME: %arg1: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}, {}]>})
// CHECK: %[[DOT:.*]] = stablehlo.dot_general {{.*}} {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}
// CHECK: sdy.sharding_constraint %[[DOT]] <@mesh, [{"x"}, {}]> : tensor<4x16xf32>
module @from_gspmd attributes {alpa.mesh = {shape = array<i64: 2, 4>, axes = ["x", "y"]}, mhlo.num_partitions = 8 : i32} {
  func.func public @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}, %arg1: tensor<4x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}) -> (tensor<4x16xf32> {mhlo.sharding = "{devices=[8,1]<=[2,4]T(1,0)}"}) {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0] {mhlo.sharding = "{devices=[2,4]<=[8]}"} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "", mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"} : (tensor<4x16xf32>) -> tensor<4x16xf32>
    return %1 : tensor<4x16xf32>
  }
}

// -----

// Values on one device go to a maximal mesh; a tuple sharding to one entry per result.
// CHECK-LABEL: module @maximal_and_tuple
// CHECK: sdy.mesh @mesh = <["x"=2]>
// CHECK: sdy.mesh @maximal_mesh_1 = <[], device_ids=[1]>
// CHECK: %arg0: tensor<f32> {sdy.sharding = #sdy.sharding<@maximal_mesh_1, []>}
// CHECK: "stablehlo.sort"
// CHECK: sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{}]>]>
module @maximal_and_tuple attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%arg0: tensor<f32> {mhlo.sharding = "{maximal device=1}"}, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0:2 = "stablehlo.sort"(%arg1, %arg1) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
      %p = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }) {dimension = 0 : i64, mhlo.sharding = "{{devices=[2]<=[2]}, {replicated}}"} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    return %0#0 : tensor<4xf32>
  }
}

// -----

// Host callbacks as JAX's Shardy path writes them: one maximal sharding for a callback
// without results, one per result (a token too) for an ordered one.
// CHECK-LABEL: module @host_callbacks
// CHECK: sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
// CHECK: @xla_ffi_python_cpu_callback(%arg0) {{{.*}}sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<4xf32>) -> ()
// CHECK: @xla_ffi_python_cpu_callback({{.*}}sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>, <@maximal_mesh_0, []>]>}
module @host_callbacks attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {has_side_effect = true, mhlo.sharding = "{maximal device=0}"} : (tensor<4xf32>) -> ()
    %t = stablehlo.after_all : !stablehlo.token
    %0:2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%t, %arg0) {has_side_effect = true, mhlo.sharding = "{{maximal device=0}, {maximal device=0}}"} : (!stablehlo.token, tensor<4xf32>) -> (!stablehlo.token, tensor<4xf32>)
    return %0#1 : tensor<4xf32>
  }
}

// -----

// A module without shardings gets no mesh.
// CHECK-LABEL: module @negative_unsharded
// CHECK-NOT: sdy.mesh
module @negative_unsharded attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}
