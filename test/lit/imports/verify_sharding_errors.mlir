// RUN: alpa-opt %s --alpa-verify-sharding --split-input-file --verify-diagnostics

// The tiled rank must equal the value's rank.
module attributes {mhlo.num_partitions = 4 : i32} {
  func.func @rank_mismatch(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{result #0: sharding '{devices=[2,2]<=[4]}' has 2 tiled dimensions but the value has rank 1}}
    %0 = stablehlo.negate %arg0 {mhlo.sharding = "{devices=[2,2]<=[4]}"} : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// The sharding must use exactly the mesh's devices.
module attributes {mhlo.num_partitions = 8 : i32} {
  // expected-error@+1 {{argument #0: sharding '{devices=[4]<=[4]}' uses 4 devices but the mesh [8] has 8}}
  func.func @device_count(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// Malformed strings are reported with the string.
module attributes {mhlo.num_partitions = 2 : i32} {
  func.func @unparsable(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{cannot parse sharding '{devices=[2]zero,one}'}}
    %0 = stablehlo.negate %arg0 {mhlo.sharding = "{devices=[2]zero,one}"} : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// A tuple sharding needs one element per result.
module attributes {mhlo.num_partitions = 2 : i32} {
  func.func @tuple_arity(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{has 2 elements but the op has 1 results}}
    %0 = stablehlo.negate %arg0 {mhlo.sharding = "{{replicated}, {replicated}}"} : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// A maximal device must be on the mesh.
module attributes {mhlo.num_partitions = 2 : i32} {
  // expected-error@+1 {{result #0: sharding '{maximal device=7}' names device 7, which is not on mesh [2]}}
  func.func @maximal_off_mesh(%arg0: tensor<8xf32>) -> (tensor<8xf32> {mhlo.sharding = "{maximal device=7}"}) {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// A device order the module's mesh cannot produce.
module attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  // expected-error@+1 {{argument #0: sharding '{devices=[4]0,3,1,2}' is not expressible on mesh [2, 2]}}
  func.func @not_expressible(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[4]0,3,1,2}"}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// Tiled shardings need a device count from somewhere.
module {
  // expected-error@+1 {{needs a device mesh: set mhlo.num_partitions or alpa.mesh on the module, or pass mesh-shape}}
  func.func @no_mesh(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// Unknown shardings are rejected at the op.
module attributes {mhlo.num_partitions = 2 : i32} {
  func.func @unknown(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{sharding '{unknown}' is {unknown}, which alpa cannot plan around}}
    %0 = stablehlo.negate %arg0 {mhlo.sharding = "{unknown}"} : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// sdy sub-axes are rejected too.
module {
  sdy.mesh @mesh = <["x"=4]>
  // expected-error@+1 {{uses a sub-axis}}
  func.func @sdy_sub_axis(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}]>}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// A malformed alpa.mesh is reported at the module.
// expected-error@+1 {{alpa.mesh needs a 'shape' entry}}
module attributes {alpa.mesh = {axes = ["x"]}} {
  func.func @bad_mesh_attr(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// Uneven shards are legal (XLA pads them) but worth a warning.
module attributes {mhlo.num_partitions = 4 : i32} {
  // expected-warning@+1 {{argument #0: sharding '{devices=[4]<=[4]}' splits dimension 0 of size 6 into 4 uneven shards; XLA pads the last ones}}
  func.func @uneven(%arg0: tensor<6xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}) -> tensor<6xf32> {
    return %arg0 : tensor<6xf32>
  }
}

// -----

// A maximal op (a host callback without results) on a device the mesh does not have.
module attributes {mhlo.num_partitions = 4 : i32} {
  func.func @maximal_op_off_mesh(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{sharding '{maximal device=4}' names device 4, which is not on mesh [4]}}
    stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {has_side_effect = true, mhlo.sharding = "{maximal device=4}"} : (tensor<8xf32>) -> ()
    return %arg0 : tensor<8xf32>
  }
}

// -----

// An mhlo.sharding that is not a string is an error at the op, not an internal error.
module attributes {mhlo.num_partitions = 8 : i32} {
  func.func @not_a_string(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{mhlo.sharding must be a string such as "{replicated}"; got 5 : i32}}
    %0 = stablehlo.negate %arg0 {mhlo.sharding = 5 : i32} : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// A nested module is not read: its {manual} sharding would pass unreported.
module @outer {
  // expected-error@+1 {{a nested builtin.module: alpa's passes read the top-level module's functions only, so its shardings would be neither verified nor planned; give its functions to alpa as a module of their own}}
  module @inner {
    func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{manual}"}) -> tensor<8xf32> {
      return %arg0 : tensor<8xf32>
    }
  }
}
