// RUN: alpa-opt %s --alpa-export-sdy --split-input-file | FileCheck %s
// RUN: alpa-opt %s --alpa-export-sdy=constrain-results --split-input-file | FileCheck %s --check-prefix=PIN

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

// -----

// constrain-results (what compile_module asks for): XLA's Shardy import keeps no
// sdy.sharding of an ordinary op, so each result and each loop-carried value is also
// routed through a constraint of its sharding; a maximal one is left to the attribute.
// Without the option there are no constraints.
// CHECK-LABEL: module @constrain_results
// CHECK-NOT: sdy.sharding_constraint
// PIN-LABEL: module @constrain_results
// PIN: %[[ADD:.*]] = stablehlo.add {{.*}} {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}
// PIN-NEXT: %[[PINNED:.*]] = sdy.sharding_constraint %[[ADD]] <@mesh, [{"x"}]>
// PIN: stablehlo.while(%[[I:.*]] = %[[PINNED]])
// PIN: do {
// PIN-NEXT: %[[CARRIED:.*]] = sdy.sharding_constraint %[[I]] <@mesh, [{"x"}]>
// PIN-NEXT: stablehlo.negate %[[CARRIED]]
// PIN: stablehlo.custom_call @host_callback({{.*}}) {{{.*}}sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>}
// PIN-NOT: sdy.sharding_constraint
// PIN: return
module @constrain_results attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%arg0: tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg0 {mhlo.sharding = "{devices=[2]<=[2]}"} : tensor<4xf32>
    %1 = stablehlo.while(%i = %0) : tensor<4xf32> attributes {mhlo.sharding = "{devices=[2]<=[2]}"}
    cond {
      %c = stablehlo.constant {mhlo.sharding = "{replicated}"} dense<true> : tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %n = stablehlo.negate %i {mhlo.sharding = "{devices=[2]<=[2]}"} : tensor<4xf32>
      stablehlo.return %n : tensor<4xf32>
    }
    %2 = stablehlo.custom_call @host_callback(%1) {mhlo.sharding = "{maximal device=0}"} : (tensor<4xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}

// -----

// A sort's comparator reads the outside constant itself, not its constraint: XLA sinks
// constants into the bodies it outlines, and cannot translate a body reading anything else.
// PIN-LABEL: module @constrain_results_outside_bodies
// PIN: %[[NAN:.*]] = stablehlo.constant
// PIN-NEXT: sdy.sharding_constraint %[[NAN]] <@mesh, []>
// PIN: "stablehlo.sort"
// PIN: stablehlo.compare GT, %{{.*}}, %[[NAN]]
module @constrain_results_outside_bodies attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%arg0: tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<4xf32> {
    %nan = stablehlo.constant {mhlo.sharding = "{replicated}"} dense<0x7FC00000> : tensor<f32>
    %0 = "stablehlo.sort"(%arg0) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %p = stablehlo.compare GT, %a, %nan : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }) {dimension = 0 : i64, mhlo.sharding = "{replicated}"} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.broadcast_in_dim %nan, dims = [] {mhlo.sharding = "{replicated}"} : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.add %0, %1 {mhlo.sharding = "{replicated}"} : tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}
