// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-cross-mesh-resharding

// A stage function without alpa.mesh: stage construction has not run.
module @no_mesh {
  // expected-error@+1 {{@producer is called from @main but has no alpa.mesh: cross-mesh resharding needs every stage's mesh (run alpa-stage-construction first)}}
  func.func private @producer(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @producer(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// An alpa.mesh without its shape cannot be read.
module @malformed_mesh {
  // expected-error@+1 {{@producer: alpa.mesh needs a 'shape' entry, got {device_ids = array<i64: 0, 1>}}}
  func.func private @producer(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0, 1>}} {
    return %arg0 : tensor<4xf32>
  }
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @producer(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// @main still holds the model's ops: stage construction has not outlined them.
module @not_staged {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{cross-mesh resharding expects @main to hold only calls of stage functions; found 'stablehlo.tanh': run alpa-stage-construction first}}
    %0 = stablehlo.tanh %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// Devices 1 and 2 are on both meshes: neither one mesh nor a transfer between two.
module @overlapping_meshes {
  func.func private @producer(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0, 1, 2>, shape = array<i64: 3>}} {
    return %arg0 : tensor<4xf32>
  }
  func.func private @consumer(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1, 2>, shape = array<i64: 2>}} {
    return %arg0 : tensor<4xf32>
  }
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @producer(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{operand #0 of the call of @consumer comes from devices [0, 1, 2] and goes to devices [1, 2], which share [1, 2]: stages must be on the same mesh or on disjoint meshes}}
    %1 = call @consumer(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

// The producer's result sharding names four devices; its mesh has two.
module @bad_source_sharding {
  func.func private @producer(%arg0: tensor<4xf32>) -> (tensor<4xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}) attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 2>}} {
    return %arg0 : tensor<4xf32>
  }
  func.func private @consumer(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 2, 3>, shape = array<i64: 2>}} {
    return %arg0 : tensor<4xf32>
  }
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @producer(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{operand #0 of the call of @consumer: the sharding of result #0 of @producer: sharding '{devices=[4]<=[4]}' uses 4 devices but the mesh [2] has 2}}
    %1 = call @consumer(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

// The consumer's argument sharding has the wrong rank for the value.
module @bad_destination_sharding {
  func.func private @producer(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 2>}} {
    return %arg0 : tensor<4xf32>
  }
  func.func private @consumer(%arg0: tensor<4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 2, 3>, shape = array<i64: 2>}} {
    return %arg0 : tensor<4xf32>
  }
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @producer(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    // expected-error@+1 {{operand #0 of the call of @consumer: the sharding of argument #0 of @consumer: sharding '{devices=[2,1]<=[2]}' has 2 tiled dimensions but the value has rank 1}}
    %1 = call @consumer(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

// A dynamic dimension has no tiles to plan.
module @dynamic_shape {
  func.func private @producer(%arg0: tensor<?xf32>) -> tensor<?xf32> attributes {alpa.mesh = {device_ids = array<i64: 0>, shape = array<i64: 1>}} {
    return %arg0 : tensor<?xf32>
  }
  func.func private @consumer(%arg0: tensor<?xf32>) -> tensor<?xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}} {
    return %arg0 : tensor<?xf32>
  }
  func.func public @main(%arg0: tensor<?xf32>) -> tensor<?xf32> {
    %0 = call @producer(%arg0) : (tensor<?xf32>) -> tensor<?xf32>
    // expected-error@+1 {{operand #0 of the call of @consumer has type tensor<?xf32>; only statically shaped tensors can move between meshes}}
    %1 = call @consumer(%0) : (tensor<?xf32>) -> tensor<?xf32>
    return %1 : tensor<?xf32>
  }
}

// -----

// A stage reads a received tile directly instead of an assembled value.
module @raw_recv {
  func.func private @consumer(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {alpa.mesh = {device_ids = array<i64: 1>, shape = array<i64: 1>}} {
    return %arg0 : tensor<4xf32>
  }
  func.func public @main() -> tensor<4xf32> {
    %0 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : () -> tensor<4xf32>
    // expected-error@+1 {{operand #0 of the call of @consumer: it is produced by 'alpa.recv', which is not a stage call}}
    %1 = call @consumer(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// -----

// Two public functions, neither named main: which one to read is unclear.
// expected-error@+1 {{cross-mesh resharding: the module needs a public @main (found 2 public functions)}}
module @no_main {
  func.func public @first(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
  func.func public @second(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}
