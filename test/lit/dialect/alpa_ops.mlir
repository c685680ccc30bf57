// RUN: alpa-opt %s --split-input-file | alpa-opt - --split-input-file | FileCheck %s

// The alpa ops are unregistered ops in generic form: printing and parsing them
// back must leave them unchanged, and they need no --allow-unregistered-dialect.

// A send keeps its operand, its attributes and its empty result list.
// CHECK-LABEL: func @alpa_send_roundtrip
// CHECK-NEXT: "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 3 : i64, dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()
// CHECK-NEXT: return
func.func @alpa_send_roundtrip(%arg0: tensor<4x8xf32>) {
  "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 3 : i64, dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()
  return
}

// -----

// A recv of a sub-tile: the result shape is the tile's extents, not the global shape.
// CHECK-LABEL: func @alpa_recv_roundtrip
// CHECK-NEXT: %[[RECV:.*]] = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 7 : i64, dst_device = 1 : i64, src_device = 6 : i64, tile = array<i64: 2, 4, 0, 8>} : () -> tensor<2x8xf32>
// CHECK-NEXT: return %[[RECV]] : tensor<2x8xf32>
func.func @alpa_recv_roundtrip() -> tensor<2x8xf32> {
  %0 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 7 : i64, dst_device = 1 : i64, src_device = 6 : i64, tile = array<i64: 2, 4, 0, 8>} : () -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// An all-gather takes one piece per device, in the order of its devices.
// CHECK-LABEL: func @alpa_all_gather_roundtrip
// CHECK-NEXT: %[[GATHER:.*]] = "alpa.all_gather"(%arg0, %arg1) {all_gather_dim = 0 : i64, alpa.transfer = 2 : i64, devices = array<i64: 4, 5>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: return %[[GATHER]]
func.func @alpa_all_gather_roundtrip(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %0 = "alpa.all_gather"(%arg0, %arg1) {all_gather_dim = 0 : i64, alpa.transfer = 2 : i64, devices = array<i64: 4, 5>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// An assemble keeps its pieces, tiles, sharding and mesh: device 5 holds two pieces.
// CHECK-LABEL: func @alpa_assemble_roundtrip
// CHECK-NEXT: %[[WHOLE:.*]] = "alpa.assemble"(%arg0, %arg1, %arg1) {alpa.mesh = {device_ids = array<i64: 4, 5>, shape = array<i64: 1, 2>}, alpa.transfer = 0 : i64, devices = array<i64: 4, 5, 5>, mhlo.sharding = "{devices=[2,1]<=[2]}", tiles = array<i64: 0, 2, 0, 8, 2, 3, 0, 8, 3, 4, 0, 8>} : (tensor<2x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[WHOLE]]
func.func @alpa_assemble_roundtrip(%arg0: tensor<2x8xf32>, %arg1: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %0 = "alpa.assemble"(%arg0, %arg1, %arg1) {alpa.mesh = {device_ids = array<i64: 4, 5>, shape = array<i64: 1, 2>}, alpa.transfer = 0 : i64, devices = array<i64: 4, 5, 5>, mhlo.sharding = "{devices=[2,1]<=[2]}", tiles = array<i64: 0, 2, 0, 8, 2, 3, 0, 8, 3, 4, 0, 8>} : (tensor<2x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The four ops chained as the cross-mesh resharding emits them (Sec. 6's Megatron
// case): the halves of %arg0 cross once, are all-gathered and assembled replicated.
// CHECK-LABEL: func @alpa_send_recv_gather_chain
// CHECK-NEXT: "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 8, 0, 4>}
// CHECK-NEXT: "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 1 : i64, dst_device = 5 : i64, src_device = 1 : i64, tile = array<i64: 0, 8, 4, 8>}
// CHECK-NEXT: %[[LEFT:.*]] = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 8, 0, 4>}
// CHECK-NEXT: %[[RIGHT:.*]] = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 1 : i64, dst_device = 5 : i64, src_device = 1 : i64, tile = array<i64: 0, 8, 4, 8>}
// CHECK-NEXT: %[[FULL:.*]] = "alpa.all_gather"(%[[LEFT]], %[[RIGHT]]) {all_gather_dim = 1 : i64, alpa.transfer = 0 : i64, devices = array<i64: 4, 5>}
// CHECK-NEXT: %[[OUT:.*]] = "alpa.assemble"(%[[FULL]], %[[FULL]])
// CHECK-NEXT: return %[[OUT]]
func.func @alpa_send_recv_gather_chain(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 8, 0, 4>} : (tensor<8x8xf32>) -> ()
  "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 1 : i64, dst_device = 5 : i64, src_device = 1 : i64, tile = array<i64: 0, 8, 4, 8>} : (tensor<8x8xf32>) -> ()
  %0 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 8, 0, 4>} : () -> tensor<8x4xf32>
  %1 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 1 : i64, dst_device = 5 : i64, src_device = 1 : i64, tile = array<i64: 0, 8, 4, 8>} : () -> tensor<8x4xf32>
  %2 = "alpa.all_gather"(%0, %1) {all_gather_dim = 1 : i64, alpa.transfer = 0 : i64, devices = array<i64: 4, 5>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %3 = "alpa.assemble"(%2, %2) {alpa.mesh = {device_ids = array<i64: 4, 5>, shape = array<i64: 1, 2>}, alpa.transfer = 0 : i64, devices = array<i64: 4, 5>, mhlo.sharding = "{replicated}", tiles = array<i64: 0, 8, 0, 8, 0, 8, 0, 8>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}
