// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=4 batch-args=0 rematerialize=all' | FileCheck %s
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=4 batch-args=0' | FileCheck %s --check-prefix=NONE

// rematerialize=all on a step marked by alpa-layer-construction: alpa-rematerialize's
// rewrite (layer 0's tanh computed again before its backward reader), planned as a whole,
// every clone with a sharding of its own (the batch split, as its original's).
// CHECK-LABEL: func.func @main
// CHECK:         stablehlo.tanh %{{.*}} {alpa.layer = 0 : i64, alpa.phase = "forward", mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK:         stablehlo.dot_general {{.*}} {alpa.layer = 0 : i64, alpa.phase = "backward", alpa.recompute, mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK:         stablehlo.tanh {{.*}} {alpa.layer = 0 : i64, alpa.phase = "backward", alpa.recompute, mhlo.sharding = "{devices=[4,1]<=[4]}"}
// Without a budget (or with one the step meets), rematerialize=auto (and none) recomputes nothing.
// NONE-LABEL: func.func @main
// NONE-NOT:     alpa.recompute
func.func @main(%x: tensor<64x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %a0 = stablehlo.dot_general %x, %w0, contracting_dims = [1] x [0] {alpa.layer = 0 : i64, alpa.phase = "forward"} : (tensor<64x8xf32>, tensor<8x8xf32>) -> tensor<64x8xf32>
  %h0 = stablehlo.tanh %a0 {alpa.layer = 0 : i64, alpa.phase = "forward"} : tensor<64x8xf32>
  %o0 = stablehlo.multiply %h0, %h0 {alpa.layer = 0 : i64, alpa.phase = "forward"} : tensor<64x8xf32>
  %a1 = stablehlo.dot_general %o0, %w1, contracting_dims = [1] x [0] {alpa.layer = 1 : i64, alpa.phase = "forward"} : (tensor<64x8xf32>, tensor<8x8xf32>) -> tensor<64x8xf32>
  %h1 = stablehlo.tanh %a1 {alpa.layer = 1 : i64, alpa.phase = "forward"} : tensor<64x8xf32>
  %g1 = stablehlo.multiply %h1, %h1 {alpa.layer = 1 : i64, alpa.phase = "backward"} : tensor<64x8xf32>
  %gw1 = stablehlo.dot_general %o0, %g1, contracting_dims = [0] x [0] {alpa.layer = 1 : i64, alpa.phase = "backward"} : (tensor<64x8xf32>, tensor<64x8xf32>) -> tensor<8x8xf32>
  %ct0 = stablehlo.dot_general %g1, %w1, contracting_dims = [1] x [1] {alpa.layer = 1 : i64, alpa.phase = "backward"} : (tensor<64x8xf32>, tensor<8x8xf32>) -> tensor<64x8xf32>
  %d0 = stablehlo.multiply %ct0, %h0 {alpa.layer = 0 : i64, alpa.phase = "backward"} : tensor<64x8xf32>
  %gw0 = stablehlo.dot_general %x, %d0, contracting_dims = [0] x [0] {alpa.layer = 0 : i64, alpa.phase = "backward"} : (tensor<64x8xf32>, tensor<64x8xf32>) -> tensor<8x8xf32>
  return %gw0, %gw1 : tensor<8x8xf32>, tensor<8x8xf32>
}
