// RUN: alpa-opt %s --split-input-file --alpa-cross-mesh-resharding | FileCheck %s
// RUN: alpa-opt %s --split-input-file --alpa-cross-mesh-resharding='local-all-gather=false' | FileCheck %s --check-prefix=DIRECT
// RUN: alpa-opt %s --split-input-file --alpa-cross-mesh-resharding | alpa-opt - --split-input-file --alpa-cross-mesh-resharding | FileCheck %s

// Inputs are in alpa-stage-construction's output form: private stage functions with
// alpa.mesh and annotated signatures, and a @main that only calls them.

// Fig. 6a, Megatron's equal meshes: the columns split on devices 0, 1 are wanted
// replicated on devices 2, 3. Each half crosses once, in two pieces, and is
// all-gathered on the destination mesh; without the rewrite each half crosses twice.
// CHECK-LABEL: func.func public @megatron_equal_meshes
// CHECK-NEXT: %[[X:.*]] = call @producer(%arg0)
// CHECK-NEXT: "alpa.send"(%[[X]]) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 2 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 4>}
// CHECK-NEXT: "alpa.send"(%[[X]]) {alpa.transfer = 0 : i64, channel_id = 1 : i64, dst_device = 3 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 4, 8>}
// CHECK-NEXT: "alpa.send"(%[[X]]) {alpa.transfer = 0 : i64, channel_id = 2 : i64, dst_device = 2 : i64, src_device = 1 : i64, tile = array<i64: 0, 4, 8, 12>}
// CHECK-NEXT: "alpa.send"(%[[X]]) {alpa.transfer = 0 : i64, channel_id = 3 : i64, dst_device = 3 : i64, src_device = 1 : i64, tile = array<i64: 0, 4, 12, 16>}
// CHECK-NEXT: %[[R0:.*]] = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 2 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 4>} : () -> tensor<4x4xf32>
// CHECK-NEXT: %[[R1:.*]] = "alpa.recv"() {{.*}}channel_id = 1
// CHECK-NEXT: %[[R2:.*]] = "alpa.recv"() {{.*}}channel_id = 2
// CHECK-NEXT: %[[R3:.*]] = "alpa.recv"() {{.*}}channel_id = 3
// CHECK-NEXT: %[[G0:.*]] = "alpa.all_gather"(%[[R0]], %[[R1]]) {all_gather_dim = 1 : i64, alpa.transfer = 0 : i64, devices = array<i64: 2, 3>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[G1:.*]] = "alpa.all_gather"(%[[R2]], %[[R3]]) {all_gather_dim = 1 : i64, alpa.transfer = 0 : i64, devices = array<i64: 2, 3>}
// CHECK-NEXT: %[[W:.*]] = "alpa.assemble"(%[[G0]], %[[G1]], %[[G0]], %[[G1]]) {alpa.mesh = {device_ids = array<i64: 2, 3>, shape = array<i64: 1, 2>}, alpa.transfer = 0 : i64, devices = array<i64: 2, 2, 3, 3>, mhlo.sharding = "{replicated}", tiles = array<i64: 0, 4, 0, 8, 0, 4, 8, 16, 0, 4, 0, 8, 0, 4, 8, 16>} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[Y:.*]] = call @consumer(%[[W]])
// CHECK-NEXT: return %[[Y]]
// DIRECT-LABEL: func.func public @megatron_equal_meshes
// DIRECT-NEXT: %[[DX:.*]] = call @producer(%arg0)
// DIRECT-NEXT: "alpa.send"(%[[DX]]) {{.*}}dst_device = 2 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>}
// DIRECT-NEXT: "alpa.send"(%[[DX]]) {{.*}}dst_device = 3 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>}
// DIRECT-NEXT: "alpa.send"(%[[DX]]) {{.*}}dst_device = 2 : i64, src_device = 1 : i64, tile = array<i64: 0, 4, 8, 16>}
// DIRECT-NEXT: "alpa.send"(%[[DX]]) {{.*}}dst_device = 3 : i64, src_device = 1 : i64, tile = array<i64: 0, 4, 8, 16>}
// DIRECT-NEXT: %[[DR0:.*]] = "alpa.recv"() {{.*}} -> tensor<4x8xf32>
// DIRECT-NEXT: %[[DR1:.*]] = "alpa.recv"()
// DIRECT-NEXT: %[[DR2:.*]] = "alpa.recv"()
// DIRECT-NEXT: %[[DR3:.*]] = "alpa.recv"()
// DIRECT-NOT: alpa.all_gather
// DIRECT-NEXT: %[[DW:.*]] = "alpa.assemble"(%[[DR0]], %[[DR2]], %[[DR1]], %[[DR3]]) {{.*}}devices = array<i64: 2, 2, 3, 3>
// DIRECT-NEXT: call @consumer(%[[DW]])
module @megatron {
  func.func private @producer(%arg0: tensor<4x16xf32>) -> (tensor<4x16xf32> {mhlo.sharding = "{devices=[1,2]<=[2]}"}) attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 1, 2>}, alpa.stage = 0 : i64} {
    return %arg0 : tensor<4x16xf32>
  }
  func.func private @consumer(%arg0: tensor<4x16xf32> {mhlo.sharding = "{replicated}"}) -> tensor<4x16xf32> attributes {alpa.mesh = {device_ids = array<i64: 2, 3>, shape = array<i64: 1, 2>}, alpa.stage = 1 : i64} {
    return %arg0 : tensor<4x16xf32>
  }
  func.func public @megatron_equal_meshes(%arg0: tensor<4x16xf32>) -> tensor<4x16xf32> {
    %0 = call @producer(%arg0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %1 = call @consumer(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    return %1 : tensor<4x16xf32>
  }
}

// -----

// Unequal mesh shapes, Fig. 6b: rows split on (1, 2) to columns split on (1, 4).
// Every destination device needs a quarter of the columns from both source rows:
// eight sends, nothing replicated, so nothing to all-gather.
// CHECK-LABEL: func.func public @unequal_mesh_shapes
// CHECK-NEXT: %[[X2:.*]] = call @rows
// CHECK-NEXT: "alpa.send"(%[[X2]]) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 2 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 4>}
// CHECK-NEXT: "alpa.send"(%[[X2]]) {alpa.transfer = 0 : i64, channel_id = 1 : i64, dst_device = 2 : i64, src_device = 1 : i64, tile = array<i64: 4, 8, 0, 4>}
// CHECK-COUNT-6: "alpa.send"
// CHECK-COUNT-8: "alpa.recv"
// CHECK-NOT: alpa.all_gather
// CHECK: %[[W2:.*]] = "alpa.assemble"({{.*}}) {{{.*}}device_ids = array<i64: 2, 3, 4, 5>, shape = array<i64: 1, 4>}, alpa.transfer = 0 : i64, devices = array<i64: 2, 2, 3, 3, 4, 4, 5, 5>, mhlo.sharding = "{devices=[1,4]<=[4]}", tiles = array<i64: 0, 4, 0, 4, 4, 8, 0, 4, 0, 4, 4, 8, 4, 8, 4, 8,
// CHECK-SAME: -> tensor<8x16xf32>
// CHECK-NEXT: call @columns(%[[W2]])
module @unequal {
  func.func private @rows(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 1, 2>}, alpa.stage = 0 : i64} {
    return %arg0 : tensor<8x16xf32>
  }
  func.func private @columns(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}) -> tensor<8x16xf32> attributes {alpa.mesh = {device_ids = array<i64: 2, 3, 4, 5>, shape = array<i64: 1, 4>}, alpa.stage = 1 : i64} {
    return %arg0 : tensor<8x16xf32>
  }
  func.func public @unequal_mesh_shapes(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %0 = call @rows(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %1 = call @columns(%0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %1 : tensor<8x16xf32>
  }
}

// -----

// Replicated on both sides: the value crosses once, half from each source device
// (the senders are balanced), and is all-gathered along its larger dimension.
// Signatures without mhlo.sharding count as replicated.
// CHECK-LABEL: func.func public @replicated_destination
// CHECK-NEXT: %[[X3:.*]] = call @everywhere
// CHECK-NEXT: "alpa.send"(%[[X3]]) {{.*}}dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 2, 0, 3>}
// CHECK-NEXT: "alpa.send"(%[[X3]]) {{.*}}dst_device = 5 : i64, src_device = 1 : i64, tile = array<i64: 2, 4, 0, 3>}
// CHECK-NEXT: %[[R30:.*]] = "alpa.recv"()
// CHECK-NEXT: %[[R31:.*]] = "alpa.recv"()
// CHECK-NEXT: %[[G3:.*]] = "alpa.all_gather"(%[[R30]], %[[R31]]) {all_gather_dim = 0 : i64, alpa.transfer = 0 : i64, devices = array<i64: 4, 5>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[W3:.*]] = "alpa.assemble"(%[[G3]], %[[G3]]) {{.*}}devices = array<i64: 4, 5>, mhlo.sharding = "{replicated}", tiles = array<i64: 0, 4, 0, 3, 0, 4, 0, 3>}
// CHECK-NEXT: call @replicas(%[[W3]])
// DIRECT-LABEL: func.func public @replicated_destination
// DIRECT: "alpa.send"({{.*}}dst_device = 4 : i64, src_device = 0 : i64
// DIRECT-NEXT: "alpa.send"({{.*}}dst_device = 5 : i64, src_device = 1 : i64
module @replicated {
  func.func private @everywhere(%arg0: tensor<4x3xf32>) -> tensor<4x3xf32> attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 2>}, alpa.stage = 0 : i64} {
    return %arg0 : tensor<4x3xf32>
  }
  func.func private @replicas(%arg0: tensor<4x3xf32>) -> tensor<4x3xf32> attributes {alpa.mesh = {device_ids = array<i64: 4, 5>, shape = array<i64: 1, 2>}, alpa.stage = 1 : i64} {
    return %arg0 : tensor<4x3xf32>
  }
  func.func public @replicated_destination(%arg0: tensor<4x3xf32>) -> tensor<4x3xf32> {
    %0 = call @everywhere(%arg0) : (tensor<4x3xf32>) -> tensor<4x3xf32>
    %1 = call @replicas(%0) : (tensor<4x3xf32>) -> tensor<4x3xf32>
    return %1 : tensor<4x3xf32>
  }
}

// -----

// A (1, 4) mesh to a (2, 2) one, Fig. 6c: rows in quarters on the source, in halves
// on the destination's first axis and replicated on its second. Each source quarter
// goes in two pieces to the pair holding its half, which all-gathers it.
// CHECK-LABEL: func.func public @one_by_four_to_two_by_two
// CHECK-COUNT-8: "alpa.send"
// CHECK-COUNT-8: "alpa.recv"
// CHECK-NEXT: "alpa.all_gather"({{.*}}) {all_gather_dim = 1 : i64, alpa.transfer = 0 : i64, devices = array<i64: 4, 5>} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: "alpa.all_gather"({{.*}}devices = array<i64: 4, 5>}
// CHECK-NEXT: "alpa.all_gather"({{.*}}devices = array<i64: 6, 7>}
// CHECK-NEXT: "alpa.all_gather"({{.*}}devices = array<i64: 6, 7>}
// CHECK-NEXT: %[[W4:.*]] = "alpa.assemble"({{.*}}) {{{.*}}shape = array<i64: 2, 2>}, alpa.transfer = 0 : i64, devices = array<i64: 4, 4, 5, 5, 6, 6, 7, 7>, mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"
// CHECK-NEXT: call @two_by_two(%[[W4]])
module @mesh_views {
  func.func private @one_by_four(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) attributes {alpa.mesh = {device_ids = array<i64: 0, 1, 2, 3>, shape = array<i64: 1, 4>}, alpa.stage = 0 : i64} {
    return %arg0 : tensor<8x8xf32>
  }
  func.func private @two_by_two(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"}) -> tensor<8x8xf32> attributes {alpa.mesh = {device_ids = array<i64: 4, 5, 6, 7>, shape = array<i64: 2, 2>}, alpa.stage = 1 : i64} {
    return %arg0 : tensor<8x8xf32>
  }
  func.func public @one_by_four_to_two_by_two(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = call @one_by_four(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = call @two_by_two(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
}

// -----

// Two consumers on one mesh that want the same sharding share one transfer (the
// second one writes it in explicit form); a third wants another sharding and gets
// its own transfer, with the next transfer id and fresh channel ids.
// CHECK-LABEL: func.func public @shared_transfer
// CHECK-NEXT: %[[X5:.*]] = call @make
// CHECK-COUNT-2: "alpa.send"(%[[X5]]) {alpa.transfer = 0 : i64
// CHECK-COUNT-2: "alpa.recv"() {alpa.transfer = 0 : i64
// CHECK-NEXT: %[[W5:.*]] = "alpa.assemble"({{.*}}alpa.transfer = 0 : i64{{.*}}mhlo.sharding = "{devices=[2,1]<=[2]}"
// CHECK-NEXT: %[[A5:.*]] = call @use_rows(%[[W5]])
// CHECK-NEXT: %[[B5:.*]] = call @use_rows_again(%[[W5]])
// CHECK-NEXT: "alpa.send"(%[[X5]]) {alpa.transfer = 1 : i64, channel_id = 2 : i64
// CHECK-COUNT-3: "alpa.send"(%[[X5]]) {alpa.transfer = 1 : i64
// CHECK-NEXT: "alpa.recv"() {alpa.transfer = 1 : i64, channel_id = 2 : i64
// CHECK-COUNT-3: "alpa.recv"() {alpa.transfer = 1 : i64
// CHECK-NEXT: "alpa.all_gather"
// CHECK-NEXT: "alpa.all_gather"
// CHECK-NEXT: %[[V5:.*]] = "alpa.assemble"({{.*}}alpa.transfer = 1 : i64{{.*}}mhlo.sharding = "{replicated}"
// CHECK-NEXT: call @use_whole(%[[V5]])
module @shared {
  func.func private @make(%arg0: tensor<4x4xf32>) -> (tensor<4x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 2>}, alpa.stage = 0 : i64} {
    return %arg0 : tensor<4x4xf32>
  }
  func.func private @use_rows(%arg0: tensor<4x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> tensor<4x4xf32> attributes {alpa.mesh = {device_ids = array<i64: 2, 3>, shape = array<i64: 2>}, alpa.stage = 1 : i64} {
    return %arg0 : tensor<4x4xf32>
  }
  func.func private @use_rows_again(%arg0: tensor<4x4xf32> {mhlo.sharding = "{devices=[2,1]0,1}"}) -> tensor<4x4xf32> attributes {alpa.mesh = {device_ids = array<i64: 2, 3>, shape = array<i64: 2>}, alpa.stage = 1 : i64} {
    return %arg0 : tensor<4x4xf32>
  }
  func.func private @use_whole(%arg0: tensor<4x4xf32> {mhlo.sharding = "{replicated}"}) -> tensor<4x4xf32> attributes {alpa.mesh = {device_ids = array<i64: 2, 3>, shape = array<i64: 2>}, alpa.stage = 1 : i64} {
    return %arg0 : tensor<4x4xf32>
  }
  func.func public @shared_transfer(%arg0: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
    %0 = call @make(%arg0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %1 = call @use_rows(%0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = call @use_rows_again(%0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %3 = call @use_whole(%0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return %1, %2, %3 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
  }
}

// -----

// A scalar has no dimension to split: each replica gets it whole, one from each
// source device.
// CHECK-LABEL: func.func public @scalar
// CHECK-NEXT: %[[X6:.*]] = call @loss
// CHECK-NEXT: "alpa.send"(%[[X6]]) {{.*}}dst_device = 2 : i64, src_device = 0 : i64, tile = array<i64>} : (tensor<f32>) -> ()
// CHECK-NEXT: "alpa.send"(%[[X6]]) {{.*}}dst_device = 3 : i64, src_device = 1 : i64, tile = array<i64>} : (tensor<f32>) -> ()
// CHECK-NEXT: %[[R60:.*]] = "alpa.recv"() {{.*}} -> tensor<f32>
// CHECK-NEXT: %[[R61:.*]] = "alpa.recv"() {{.*}} -> tensor<f32>
// CHECK-NEXT: "alpa.assemble"(%[[R60]], %[[R61]]) {{.*}}tiles = array<i64>} : (tensor<f32>, tensor<f32>) -> tensor<f32>
module @scalar_value {
  func.func private @loss(%arg0: tensor<f32>) -> (tensor<f32> {mhlo.sharding = "{replicated}"}) attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 2>}, alpa.stage = 0 : i64} {
    return %arg0 : tensor<f32>
  }
  func.func private @report(%arg0: tensor<f32> {mhlo.sharding = "{replicated}"}) -> tensor<f32> attributes {alpa.mesh = {device_ids = array<i64: 2, 3>, shape = array<i64: 2>}, alpa.stage = 1 : i64} {
    return %arg0 : tensor<f32>
  }
  func.func public @scalar(%arg0: tensor<f32>) -> tensor<f32> {
    %0 = call @loss(%arg0) : (tensor<f32>) -> tensor<f32>
    %1 = call @report(%0) : (tensor<f32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// -----

// Stages on the same devices, even with another sharding, and @main's arguments
// (placed by the runtime) need no cross-mesh transfer.
// CHECK-LABEL: func.func public @negative_same_mesh
// CHECK-NEXT: %[[X7:.*]] = call @forward(%arg0)
// CHECK-NEXT: call @backward(%[[X7]], %arg0)
// CHECK-NEXT: return
module @same_mesh {
  func.func private @forward(%arg0: tensor<4x4xf32>) -> (tensor<4x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 2>}, alpa.stage = 0 : i64} {
    return %arg0 : tensor<4x4xf32>
  }
  func.func private @backward(%arg0: tensor<4x4xf32> {mhlo.sharding = "{devices=[1,2]<=[2]}"}, %arg1: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 2>}, alpa.stage = 0 : i64} {
    return %arg0 : tensor<4x4xf32>
  }
  func.func public @negative_same_mesh(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = call @forward(%arg0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %1 = call @backward(%0, %arg0) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    return %1 : tensor<4x4xf32>
  }
}
