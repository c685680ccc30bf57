// RUN: alpa-opt %s --alpa-import-sharding --split-input-file | FileCheck %s

// What jax.jit(...).lower() emits with Shardy: sdy shardings on arguments and a
// sharding constraint become canonical mhlo.sharding strings and @Sharding calls.
// CHECK-LABEL: module @sdy_from_jax
// CHECK-SAME: alpa.mesh = {{{.*}}axes = ["x", "y"]{{.*}}shape = array<i64: 2, 4>}
// CHECK-SAME: mhlo.num_partitions = 8
// CHECK-NOT: sdy.mesh
// CHECK: %arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}
// CHECK-SAME: %arg1: tensor<4x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}
// CHECK: %[[DOT:.*]] = stablehlo.dot_general
// CHECK: %[[CONSTRAINED:.*]] = stablehlo.custom_call @Sharding(%[[DOT]]) {backend_config = "", mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}
// CHECK: stablehlo.tanh %[[CONSTRAINED]]
module @sdy_from_jax attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg1: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4x16xf32> {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<4x16xf32>
    %2 = stablehlo.tanh %1 : tensor<4x16xf32>
    return %2 : tensor<4x16xf32>
  }
}

// -----

// Without a mesh anywhere, mhlo.num_partitions gives a 1-D mesh.
// CHECK-LABEL: module @num_partitions_1d
// CHECK-SAME: alpa.mesh = {{{.*}}axes = ["x"]{{.*}}shape = array<i64: 4>}
// CHECK: mhlo.sharding = "{devices=[4,1]<=[4]}"
module @num_partitions_1d attributes {mhlo.num_partitions = 4 : i32} {
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1]0,1,2,3}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// Fully open shardings ({?} on every dimension) pin nothing and disappear; sdy.reshard
// is a constraint like sharding_constraint.
// CHECK-LABEL: module @open_and_reshard
// CHECK: func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[RESHARD:.*]] = stablehlo.custom_call @Sharding(%arg0) {backend_config = "", mhlo.sharding = "{devices=[2,4]<=[8]}"}
// CHECK-NEXT: stablehlo.negate %[[RESHARD]] : tensor<8x8xf32>
// CHECK-NOT: sdy.
module @open_and_reshard {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}]>}) -> tensor<8x8xf32> {
    %0 = sdy.reshard %arg0 <@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
    %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}]>]>} : tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
}

// -----

// An op with several results gets a tuple sharding, one element per result.
// CHECK-LABEL: module @multi_result_tuple
// CHECK: stablehlo.sort
// CHECK: }) {mhlo.sharding = "{{[{][{]}}devices=[2,1,4]<=[8] last_tile_dim_replicate}, {devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}}"
module @multi_result_tuple {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xi32>) -> (tensor<8x8xf32>, tensor<8x8xi32>) {
    %0:2 = "stablehlo.sort"(%arg0, %arg1) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %p = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }) {dimension = 1 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {"y"}]>]>} : (tensor<8x8xf32>, tensor<8x8xi32>) -> (tensor<8x8xf32>, tensor<8x8xi32>)
    return %0#0, %0#1 : tensor<8x8xf32>, tensor<8x8xi32>
  }
}

// -----

// A value JAX placed on one device (a maximal sdy mesh) keeps that placement.
// CHECK-LABEL: module @maximal_mesh
// CHECK: %arg0: tensor<4xf32> {mhlo.sharding = "{maximal device=3}"}
// CHECK-SAME: %arg1: tensor<4xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}
module @maximal_mesh {
  sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}, %arg1: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}

// -----

// JAX puts scalar arguments on Shardy's empty mesh (no axes, no devices): replicated.
// CHECK-LABEL: module @empty_mesh
// CHECK: %arg0: tensor<4xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}
// CHECK-SAME: %arg1: tensor<i32> {mhlo.sharding = "{replicated}"}
module @empty_mesh {
  sdy.mesh @empty_mesh = <[]>
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg1: tensor<i32> {sdy.sharding = #sdy.sharding<@empty_mesh, []>}) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}

// -----

// A mesh whose devices are not in iota order keeps its device ids, in explicit lists.
// CHECK-LABEL: module @non_iota_devices
// CHECK-SAME: device_ids = array<i64: 3, 2, 1, 0>
// CHECK: mhlo.sharding = "{devices=[2,1,2]3,2,1,0 last_tile_dim_replicate}"
module @non_iota_devices {
  sdy.mesh @mesh = <["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>
  func.func @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4x4xf32> {
    return %arg0 : tensor<4x4xf32>
  }
}

// -----

// A module with no shardings and no device count is left alone.
// CHECK-LABEL: module @negative_no_shardings
// CHECK-NOT: alpa.mesh
// CHECK: func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32>
module @negative_no_shardings {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}

// -----

// jax.debug.print under jax.jit on several devices (Shardy): the callback runs once, on
// device 0 of a maximal mesh, with one sharding for an op without results; it becomes
// the canonical maximal mhlo.sharding and the maximal mesh goes.
// CHECK-LABEL: module @host_callback_from_shardy
// CHECK-NOT: sdy.
// CHECK: stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {{{.*}}mhlo.sharding = "{maximal device=0}"{{.*}}} : (tensor<8xf32>) -> ()
module @host_callback_from_shardy attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
    stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {backend_config = "", has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<8xf32>) -> ()
    return %arg0 : tensor<8xf32>
  }
}

// -----

// An ordered io_callback (token and value) keeps its device, one sharding per result; in
// JAX's GSPMD form one maximal sharding places the whole op, here on device 2.
// CHECK-LABEL: module @host_callback_results
// CHECK: stablehlo.custom_call @xla_ffi_python_cpu_callback({{.*}}mhlo.sharding = "{{[{][{]}}maximal device=0}, {maximal device=0}}"
// CHECK: stablehlo.custom_call @xla_ffi_python_cpu_callback({{.*}}mhlo.sharding = "{{[{][{]}}maximal device=2}, {maximal device=2}}"
module @host_callback_results attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %t = stablehlo.after_all : !stablehlo.token
    %0:2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%t, %arg0) {has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>, <@maximal_mesh_0, []>]>} : (!stablehlo.token, tensor<8xf32>) -> (!stablehlo.token, tensor<8xf32>)
    %1:2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%0#0, %0#1) {has_side_effect = true, mhlo.backend_config = {index = 1 : ui64}, mhlo.sharding = "{maximal device=2}"} : (!stablehlo.token, tensor<8xf32>) -> (!stablehlo.token, tensor<8xf32>)
    return %1#1 : tensor<8xf32>
  }
}

// -----

// A callback without a sharding (a module written by hand) runs where JAX runs it: device 0.
// CHECK-LABEL: module @host_callback_unplaced
// CHECK: stablehlo.custom_call @xla_python_cpu_callback(%arg0) {{{.*}}mhlo.sharding = "{maximal device=0}"
module @host_callback_unplaced attributes {mhlo.num_partitions = 4 : i32} {
  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @xla_python_cpu_callback(%arg0) {has_side_effect = true} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// An sdy.sharding and an mhlo.sharding that place a value alike become one mhlo.sharding
// (a disagreement is an error: import_sharding_errors.mlir).
// CHECK-LABEL: module @agreeing_shardings
// CHECK: func.func @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"})
// CHECK-NOT: sdy.sharding
module @agreeing_shardings attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>, mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> tensor<8x16xf32> {
    return %arg0 : tensor<8x16xf32>
  }
}
