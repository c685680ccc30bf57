// RUN: alpa-opt --split-input-file %s | alpa-opt --split-input-file | FileCheck %s

// The alpa ops are unregistered ops in generic form: printing and parsing them
// back must leave them unchanged, and they need no --allow-unregistered-dialect.

// A send keeps its operand, its four attributes and its empty result list.
// CHECK-LABEL: func @alpa_send_roundtrip
// CHECK-NEXT: "alpa.send"(%arg0) {channel_id = 3 : i64, dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()
// CHECK-NEXT: return
func.func @alpa_send_roundtrip(%arg0: tensor<4x8xf32>) {
  "alpa.send"(%arg0) {channel_id = 3 : i64, dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()
  return
}

// -----

// A recv of a sub-tile: the result shape is the tile's extents, not the global shape.
// CHECK-LABEL: func @alpa_recv_roundtrip
// CHECK-NEXT: %[[RECV:.*]] = "alpa.recv"() {channel_id = 7 : i64, dst_device = 1 : i64, src_device = 6 : i64, tile = array<i64: 2, 4, 0, 8>} : () -> tensor<2x8xf32>
// CHECK-NEXT: return %[[RECV]] : tensor<2x8xf32>
func.func @alpa_recv_roundtrip() -> tensor<2x8xf32> {
  %0 = "alpa.recv"() {channel_id = 7 : i64, dst_device = 1 : i64, src_device = 6 : i64, tile = array<i64: 2, 4, 0, 8>} : () -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// An all-gather keeps its 2-D replica_groups as a dense i64 tensor.
// CHECK-LABEL: func @alpa_all_gather_roundtrip
// CHECK-NEXT: %[[GATHER:.*]] = "alpa.all_gather"(%arg0) {all_gather_dim = 0 : i64, replica_groups = dense<{{\[\[}}4, 5], [6, 7]]> : tensor<2x2xi64>} : (tensor<4x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: return %[[GATHER]]
func.func @alpa_all_gather_roundtrip(%arg0: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %0 = "alpa.all_gather"(%arg0) {all_gather_dim = 0 : i64, replica_groups = dense<[[4, 5], [6, 7]]> : tensor<2x2xi64>} : (tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Gathering along the last dimension with one group of four devices.
// CHECK-LABEL: func @alpa_all_gather_last_dim
// CHECK-NEXT: "alpa.all_gather"(%arg0) {all_gather_dim = 1 : i64, replica_groups = dense<{{\[\[}}0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<4x2xf32>) -> tensor<4x8xf32>
func.func @alpa_all_gather_last_dim(%arg0: tensor<4x2xf32>) -> tensor<4x8xf32> {
  %0 = "alpa.all_gather"(%arg0) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<4x2xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The three ops chained as the cross-mesh resharding emits them: each keeps its
// place and the SSA edges between them survive the round trip.
// CHECK-LABEL: func @alpa_send_recv_gather_chain
// CHECK-NEXT: "alpa.send"(%arg0) {channel_id = 1 : i64, dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 2, 0, 8>}
// CHECK-NEXT: %[[TILE:.*]] = "alpa.recv"() {channel_id = 1 : i64, dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 2, 0, 8>}
// CHECK-NEXT: %[[FULL:.*]] = "alpa.all_gather"(%[[TILE]]) {all_gather_dim = 0 : i64, replica_groups = dense<{{\[\[}}4, 5]]> : tensor<1x2xi64>}
// CHECK-NEXT: return %[[FULL]]
func.func @alpa_send_recv_gather_chain(%arg0: tensor<2x8xf32>) -> tensor<4x8xf32> {
  "alpa.send"(%arg0) {channel_id = 1 : i64, dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 2, 0, 8>} : (tensor<2x8xf32>) -> ()
  %0 = "alpa.recv"() {channel_id = 1 : i64, dst_device = 4 : i64, src_device = 0 : i64, tile = array<i64: 0, 2, 0, 8>} : () -> tensor<2x8xf32>
  %1 = "alpa.all_gather"(%0) {all_gather_dim = 0 : i64, replica_groups = dense<[[4, 5]]> : tensor<1x2xi64>} : (tensor<2x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
