// RUN: alpa-opt %s --alpa-verify-sharding --split-input-file | FileCheck %s

// Valid shardings of every form are accepted and left unchanged.
// CHECK-LABEL: func @negative_all_forms
// CHECK-SAME: mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"
// CHECK-SAME: mhlo.sharding = "{maximal device=5}"
// CHECK: mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0)}"
// CHECK: mhlo.sharding = "{{[{][{]}}replicated}, {devices=[8]0,1,2,3,4,5,6,7}}"
module attributes {mhlo.num_partitions = 8 : i32, alpa.mesh = {shape = array<i64: 2, 4>, axes = ["x", "y"]}} {
  func.func @negative_all_forms(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}, %arg1: tensor<8xf32> {mhlo.sharding = "{maximal device=5}"}) -> tensor<8x8xf32> {
    %0 = stablehlo.negate %arg0 {mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0)}"} : tensor<8x8xf32>
    %1:2 = "stablehlo.sort"(%arg1, %arg1) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
      %p = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }) {dimension = 0 : i64, mhlo.sharding = "{{replicated}, {devices=[8]0,1,2,3,4,5,6,7}}"} : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
    return %0 : tensor<8x8xf32>
  }
}

// -----

// sdy shardings are checked against their sdy.mesh.
// CHECK-LABEL: func @negative_sdy
// CHECK-SAME: #sdy.sharding<@mesh, [{"y", "x"}]>
module {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @negative_sdy(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}]>}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// {replicated} needs no mesh, so a module without a device count may carry it.
// CHECK-LABEL: func @negative_replicated_without_mesh
// CHECK-SAME: mhlo.sharding = "{replicated}"
func.func @negative_replicated_without_mesh(%arg0: tensor<8xf32> {mhlo.sharding = "{replicated}"}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// -----

// One maximal sharding places a whole op on a device, whatever its results: a host
// callback with none, or with a token and a value (JAX's GSPMD form).
// CHECK-LABEL: func @negative_maximal_op
// CHECK: mhlo.sharding = "{maximal device=3}"} : (tensor<8xf32>) -> ()
// CHECK: mhlo.sharding = "{maximal device=0}"} : (!stablehlo.token, tensor<8xf32>) -> (!stablehlo.token, tensor<8xf32>)
module attributes {mhlo.num_partitions = 4 : i32} {
  func.func @negative_maximal_op(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {has_side_effect = true, mhlo.sharding = "{maximal device=3}"} : (tensor<8xf32>) -> ()
    %t = stablehlo.after_all : !stablehlo.token
    %0:2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%t, %arg0) {has_side_effect = true, mhlo.sharding = "{maximal device=0}"} : (!stablehlo.token, tensor<8xf32>) -> (!stablehlo.token, tensor<8xf32>)
    return %0#1 : tensor<8xf32>
  }
}
