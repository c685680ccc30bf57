// RUN: alpa-opt %s --alpa-export-sdy --split-input-file --verify-diagnostics

// The mesh symbol name is taken already.
// expected-error@+1 {{the module already has sdy.mesh @mesh; choose another with option 'mesh-name'}}
module attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @name_taken(%arg0: tensor<4xf32> {mhlo.sharding = "{replicated}"}) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}

// -----

// Shardings the mesh cannot express cannot be exported.
module attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  // expected-error@+1 {{argument #0: sharding '{devices=[4]0,3,1,2}' is not expressible on mesh [2, 2]}}
  func.func @not_expressible(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[4]0,3,1,2}"}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// Shardy cannot annotate tokens.
module attributes {mhlo.num_partitions = 2 : i32} {
  // expected-error@+1 {{is on a non-tensor value, which sdy cannot annotate}}
  func.func @token(%arg0: !stablehlo.token {mhlo.sharding = "{replicated}"}) -> !stablehlo.token {
    return %arg0 : !stablehlo.token
  }
}

// -----

// Tiled shardings need a mesh.
module {
  // expected-error@+1 {{needs a device mesh: pass mesh-shape or set mhlo.num_partitions}}
  func.func @no_mesh(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}
