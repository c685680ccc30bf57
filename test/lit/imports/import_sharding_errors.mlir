// RUN: alpa-opt %s --alpa-import-sharding --split-input-file --verify-diagnostics

// Two different meshes in one module: alpa plans one mesh per module.
// expected-error@+1 {{the module uses several device meshes (@a, @b)}}
module @several_meshes {
  sdy.mesh @a = <["x"=2]>
  sdy.mesh @b = <["x"=4]>
  func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@a, [{"x"}]>}) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}

// -----

// Sub-axes have no sharding-spec equivalent.
module @sub_axis {
  sdy.mesh @mesh = <["x"=4]>
  // expected-error@+1 {{argument #0: sharding #sdy.sharding<@mesh, [{"x":(1)2}]> uses a sub-axis}}
  func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}]>}) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}

// -----

// An open dimension that is already sharded would let propagation add axes later.
module @open_sharded_dim {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  // expected-error@+1 {{has an open dimension that is already sharded}}
  func.func @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {}]>}) -> tensor<4x4xf32> {
    return %arg0 : tensor<4x4xf32>
  }
}

// -----

// shard_map regions are manual: there is no global shape to plan.
module @manual_region attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<2xf32> {
    // expected-error@+1 {{puts values under manual sharding (shard_map)}}
    %0 = stablehlo.custom_call @SPMDFullToShardShape(%arg0) {mhlo.sharding = "{manual}"} : (tensor<4xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----

// {manual} on an ordinary op cannot be planned around.
module @manual_sharding attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{sharding '{manual}' is {manual}, which alpa cannot plan around}}
    %0 = stablehlo.negate %arg0 {mhlo.sharding = "{manual}"} : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// A 2-D tiling on a device count alone: the error says how to name the mesh.
module @needs_mesh_shape attributes {mhlo.num_partitions = 8 : i32} {
  // expected-error@+1 {{is not expressible on mesh [8] with devices [0, 1, 2, 3, 4, 5, 6, 7]: no assignment of mesh axes to tensor dimensions gives its device order; name the device mesh with option 'mesh-shape'}}
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// A sharding that needs a mesh while the module names no device count.
module @no_device_count {
  // expected-error@+1 {{needs a device mesh: pass mesh-shape or set mhlo.num_partitions}}
  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// Open results next to pinned ones on a multi-result op cannot be one tuple sharding.
module @mixed_open_results {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
    // expected-error@+1 {{some results have open shardings and others pinned ones}}
    %0:2 = "stablehlo.sort"(%arg0, %arg1) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %p = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }) {dimension = 0 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{?}]>]>} : (tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>)
    return %0#0, %0#1 : tensor<4xf32>, tensor<4xi32>
  }
}

// -----

// A host callback runs once, on one device; a split or replicated one would run per device.
module @host_callback_split attributes {mhlo.num_partitions = 4 : i32} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{a host callback runs once, on one device, but its sharding is '{devices=[4]<=[4]}'; give it '{maximal device=N}'}}
    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {has_side_effect = true, mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

module @host_callback_on_mesh attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{a host callback runs once, on one device, but its sharding #sdy.sharding<@mesh, [{"x"}]> is on a device mesh}}
    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {has_side_effect = true, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// An sdy.sharding and an mhlo.sharding on one value must agree (the sdy one used to win
// silently) ...
module @conflicting_argument attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  // expected-error@+1 {{argument #0: sdy.sharding #sdy.sharding<@mesh, [{"x"}, {}]> and mhlo.sharding '{devices=[1,8]<=[8]}' place the value differently ('{devices=[2,1,4]<=[8] last_tile_dim_replicate}' against '{devices=[1,8]<=[8]}'); keep one of them}}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>, mhlo.sharding = "{devices=[1,8]<=[8]}"}) -> tensor<8x16xf32> {
    return %arg0 : tensor<8x16xf32>
  }
}

// -----

module @conflicting_op attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
    // expected-error@+1 {{place the value differently ('{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}' against '{replicated}')}}
    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>, mhlo.sharding = "{replicated}"} : tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}

// -----

// ... and so must the module's alpa.mesh and its sdy.mesh.
// expected-error@+1 {{the module's alpa.mesh (shape [4, 2], devices [0, 1, 2, 3, 4, 5, 6, 7]) and its sdy.mesh (shape [2, 4], devices [0, 1, 2, 3, 4, 5, 6, 7]) disagree; keep one of them, or choose with option 'mesh-shape'}}
module @conflicting_meshes attributes {alpa.mesh = {shape = array<i64: 4, 2>}, mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
    return %arg0 : tensor<8x16xf32>
  }
}
