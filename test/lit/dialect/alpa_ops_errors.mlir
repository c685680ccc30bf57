// RUN: alpa-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// A well-formed op passes the verifier and is printed; every other part below
// fails verification and prints nothing.
// CHECK-LABEL: func @alpa_verifier_accepts_send
// CHECK-NEXT: "alpa.send"(%arg0)
// CHECK-NOT: func.func
func.func @alpa_verifier_accepts_send(%arg0: tensor<4x8xf32>) {
  "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()
  return
}

// -----

// A send without the tile it sends.
func.func @alpa_send_missing_tile(%arg0: tensor<4x8xf32>) {
  // expected-error@+1 {{'alpa.send' op requires attribute 'tile' (array<i64>)}}
  "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64} : (tensor<4x8xf32>) -> ()
  return
}

// -----

// A recv without a channel cannot be matched with its send.
func.func @alpa_recv_missing_channel_id() -> tensor<4x8xf32> {
  // expected-error@+1 {{'alpa.recv' op requires attribute 'channel_id' (i64)}}
  %0 = "alpa.recv"() {alpa.transfer = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>} : () -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Device ids are i64, as the lowering writes them; an i32 is rejected.
func.func @alpa_send_i32_channel_id(%arg0: tensor<4x8xf32>) {
  // expected-error@+1 {{'alpa.send' op attribute 'channel_id' must be i64, got 0 : i32}}
  "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 0 : i32, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()
  return
}

// -----

// The tile is a dense i64 array, not a tensor constant.
func.func @alpa_send_tile_as_tensor(%arg0: tensor<4x8xf32>) {
  // expected-error@+1 {{'alpa.send' op attribute 'tile' must be array<i64>}}
  "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = dense<[0, 4, 0, 8]> : tensor<4xi64>} : (tensor<4x8xf32>) -> ()
  return
}

// -----

// devices is a dense i64 array, like every list of device ids.
func.func @alpa_all_gather_devices_as_tensor(%arg0: tensor<4x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{'alpa.all_gather' op attribute 'devices' must be array<i64>}}
  %0 = "alpa.all_gather"(%arg0, %arg0) {all_gather_dim = 0 : i64, alpa.transfer = 0 : i64, devices = dense<[0, 1]> : tensor<2xi64>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// A send produces nothing.
func.func @alpa_send_with_result(%arg0: tensor<4x8xf32>) {
  // expected-error@+1 {{'alpa.send' op expects 1 operand(s) and 0 result(s), got 1 and 1}}
  %0 = "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// A recv takes no operands: the data comes from the channel.
func.func @alpa_recv_with_operand(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'alpa.recv' op expects 0 operand(s) and 1 result(s), got 1 and 1}}
  %0 = "alpa.recv"(%arg0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// An all-gather takes one piece per device.
func.func @alpa_all_gather_piece_count(%arg0: tensor<4x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{'alpa.all_gather' op has 2 operand(s) but 3 device(s); one piece per device}}
  %0 = "alpa.all_gather"(%arg0, %arg0) {all_gather_dim = 0 : i64, alpa.transfer = 0 : i64, devices = array<i64: 4, 5, 6>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// The received tile [0,2) x [0,8) is 2x8, so a 4x8 result cannot hold it.
func.func @alpa_recv_shape_not_tile(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'alpa.recv' op result shape [4, 8] does not match the tile's extents [2, 8]}}
  %0 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 2, 0, 8>} : () -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A tile has a (start, limit) pair per dimension of the tensor.
func.func @alpa_send_tile_wrong_rank(%arg0: tensor<4x8xf32>) {
  // expected-error@+1 {{'alpa.send' op tile has 2 entries; a rank-2 tensor needs 4}}
  "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4>} : (tensor<4x8xf32>) -> ()
  return
}

// -----

// A start beyond its limit is an empty, inverted tile.
func.func @alpa_send_tile_inverted(%arg0: tensor<4x8xf32>) {
  // expected-error@+1 {{'alpa.send' op tile [4, 0, 0, 8] has a negative start or a start beyond its limit}}
  "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 1 : i64, src_device = 0 : i64, tile = array<i64: 4, 0, 0, 8>} : (tensor<4x8xf32>) -> ()
  return
}

// -----

// Sending to oneself is not a transfer.
func.func @alpa_send_to_itself(%arg0: tensor<4x8xf32>) {
  // expected-error@+1 {{'alpa.send' op src_device and dst_device are the same device}}
  "alpa.send"(%arg0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 2 : i64, src_device = 2 : i64, tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()
  return
}

// -----

// The same check on the receiving side.
func.func @alpa_recv_from_itself() -> tensor<4x8xf32> {
  // expected-error@+1 {{'alpa.recv' op src_device and dst_device are the same device}}
  %0 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 5 : i64, src_device = 5 : i64, tile = array<i64: 0, 4, 0, 8>} : () -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Two devices gather 4 rows each into 8, not 16.
func.func @alpa_all_gather_bad_result_shape(%arg0: tensor<4x8xf32>) -> tensor<16x8xf32> {
  // expected-error@+1 {{'alpa.all_gather' op result type tensor<16x8xf32> should be [8, 8] of f32}}
  %0 = "alpa.all_gather"(%arg0, %arg0) {all_gather_dim = 0 : i64, alpa.transfer = 0 : i64, devices = array<i64: 4, 5>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// Gathering does not change the element type.
func.func @alpa_all_gather_bad_element_type(%arg0: tensor<4x8xf32>) -> tensor<8x8xf16> {
  // expected-error@+1 {{'alpa.all_gather' op result type tensor<8x8xf16> should be [8, 8] of f32}}
  %0 = "alpa.all_gather"(%arg0, %arg0) {all_gather_dim = 0 : i64, alpa.transfer = 0 : i64, devices = array<i64: 0, 1>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf16>
  return %0 : tensor<8x8xf16>
}

// -----

// A device listed twice would hold two pieces of one gather.
func.func @alpa_all_gather_duplicate_device(%arg0: tensor<4x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{'alpa.all_gather' op devices [5, 5] lists a device twice}}
  %0 = "alpa.all_gather"(%arg0, %arg0) {all_gather_dim = 0 : i64, alpa.transfer = 0 : i64, devices = array<i64: 5, 5>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Every op belongs to a cross-mesh transfer.
func.func @alpa_all_gather_missing_transfer(%arg0: tensor<4x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{'alpa.all_gather' op requires attribute 'alpa.transfer' (i64)}}
  %0 = "alpa.all_gather"(%arg0, %arg0) {all_gather_dim = 0 : i64, devices = array<i64: 0, 1>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// The gathered dimension must exist in the operand.
func.func @alpa_all_gather_dim_out_of_range(%arg0: tensor<4x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{'alpa.all_gather' op all_gather_dim 2 is out of range for a rank-2 operand}}
  %0 = "alpa.all_gather"(%arg0, %arg0) {all_gather_dim = 2 : i64, alpa.transfer = 0 : i64, devices = array<i64: 0, 1>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// The pieces of device 5 leave rows [3, 4) of its tile uncovered.
func.func @alpa_assemble_gap(%arg0: tensor<2x8xf32>, %arg1: tensor<1x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'alpa.assemble' op the pieces of device 5 [[2, 3, 0, 8]] do not partition its tile [2, 4, 0, 8] of {devices=[2,1]<=[2]}}}
  %0 = "alpa.assemble"(%arg0, %arg1) {alpa.mesh = {device_ids = array<i64: 4, 5>, shape = array<i64: 1, 2>}, alpa.transfer = 0 : i64, devices = array<i64: 4, 5>, mhlo.sharding = "{devices=[2,1]<=[2]}", tiles = array<i64: 0, 2, 0, 8, 2, 3, 0, 8>} : (tensor<2x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A piece's type is its tile's extents.
func.func @alpa_assemble_piece_shape(%arg0: tensor<2x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'alpa.assemble' op piece 1 has type tensor<2x8xf32>; its tile [2, 4, 0, 4] needs [2, 4] of f32}}
  %0 = "alpa.assemble"(%arg0, %arg0) {alpa.mesh = {device_ids = array<i64: 4, 5>, shape = array<i64: 1, 2>}, alpa.transfer = 0 : i64, devices = array<i64: 4, 5>, mhlo.sharding = "{devices=[2,1]<=[2]}", tiles = array<i64: 0, 2, 0, 8, 2, 4, 0, 4>} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The alpa namespace is closed: a misspelt op is an error, not an unknown op to
// carry along (other dialects need --allow-unregistered-dialect for that).
func.func @alpa_unknown_op(%arg0: tensor<4x8xf32>) {
  // expected-error@+1 {{unknown alpa op 'alpa.sendd'; alpa ops are alpa.all_gather, alpa.assemble, alpa.recv, alpa.send}}
  "alpa.sendd"(%arg0) : (tensor<4x8xf32>) -> ()
  return
}
