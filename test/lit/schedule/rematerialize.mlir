// RUN: alpa-opt %s --split-input-file --alpa-rematerialize | FileCheck %s
// RUN: alpa-opt %s --split-input-file --alpa-rematerialize='layers=1' | FileCheck %s --check-prefix=LAST

// Two layers of dot + tanh. Layer 0's tanh is read by its backward op (%d0) and by
// nothing outside the layer: it is recomputed, from the layer's inputs made to follow
// the cotangent that reaches the layer (%ct0's dot: x + 0 * max(finite(ct0), 0)), just
// before %d0, which reads the clone; the layer's later backward ops read its inputs as the
// clones do (the weight gradient reads x + 0 * ...). Layer 0's output %o0, which layer 1 reads, is kept,
// as a division by one (a buffer XLA neither folds nor fuses into its readers). Layer 1
// is the last: its backward pass starts as its forward pass ends, and it is left as it is.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[W0:.*]]: tensor<8x8xf32>, %[[W1:.*]]: tensor<8x8xf32>)
// CHECK:         %[[A0:.*]] = stablehlo.dot_general %[[X]], %[[W0]]
// CHECK:         %[[H0:.*]] = stablehlo.tanh %[[A0]] {alpa.layer = 0 : i64, alpa.phase = "forward"}
// CHECK:         %[[O0:.*]] = stablehlo.multiply %[[H0]], %[[H0]]
// CHECK:         %[[FINITE:.*]] = stablehlo.is_finite %[[O0]]
// CHECK:         %[[LARGEST:.*]] = stablehlo.reduce({{.*}}) applies stablehlo.maximum
// CHECK:         %[[NIL:.*]] = stablehlo.multiply %[[LARGEST]], %{{.*}} {alpa.layer = 0 : i64, alpa.phase = "forward"}
// CHECK:         %[[ONE:.*]] = stablehlo.add %[[NIL]], %{{.*}}
// CHECK:         %[[ONES:.*]] = stablehlo.broadcast_in_dim %[[ONE]]
// CHECK:         %[[KEPT:.*]] = stablehlo.divide %[[O0]], %[[ONES]] {alpa.layer = 0 : i64, alpa.phase = "forward"}
// CHECK:         %[[A1:.*]] = stablehlo.dot_general %[[KEPT]], %[[W1]]
// CHECK:         %[[H1:.*]] = stablehlo.tanh %[[A1]]
// CHECK:         %[[G1:.*]] = stablehlo.multiply %[[H1]], %[[H1]]
// CHECK:         stablehlo.dot_general %[[KEPT]], %[[G1]]
// CHECK:         %[[CT0:.*]] = stablehlo.dot_general %[[G1]], %[[W1]]
// CHECK:         stablehlo.is_finite %[[CT0]] {alpa.layer = 0 : i64, alpa.phase = "backward"}
// CHECK:         %[[ZERO:.*]] = stablehlo.multiply
// CHECK:         %[[ZEROS:.*]] = stablehlo.broadcast_in_dim %[[ZERO]]
// CHECK:         %[[X2:.*]] = stablehlo.add %[[X]], %[[ZEROS]]
// CHECK:         %[[ZEROS_W:.*]] = stablehlo.broadcast_in_dim %[[ZERO]]
// CHECK:         %[[W02:.*]] = stablehlo.add %[[W0]], %[[ZEROS_W]]
// CHECK:         %[[A02:.*]] = stablehlo.dot_general %[[X2]], %[[W02]], {{.*}} {alpa.layer = 0 : i64, alpa.phase = "backward", alpa.recompute}
// CHECK:         %[[H02:.*]] = stablehlo.tanh %[[A02]] {alpa.layer = 0 : i64, alpa.phase = "backward", alpa.recompute}
// CHECK:         %[[D0:.*]] = stablehlo.multiply %[[CT0]], %[[H02]]
// CHECK:         stablehlo.dot_general %[[X2]], %[[D0]]
// CHECK-NOT:     alpa.recompute
// Asked for the last layer alone: nothing to gain, nothing recomputed; layer 1's input is kept.
// LAST-LABEL: func.func @main
// LAST:         stablehlo.divide
// LAST-NOT:     alpa.recompute
func.func @main(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %a0 = stablehlo.dot_general %x, %w0, contracting_dims = [1] x [0] {alpa.layer = 0 : i64, alpa.phase = "forward"} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h0 = stablehlo.tanh %a0 {alpa.layer = 0 : i64, alpa.phase = "forward"} : tensor<4x8xf32>
  %o0 = stablehlo.multiply %h0, %h0 {alpa.layer = 0 : i64, alpa.phase = "forward"} : tensor<4x8xf32>
  %a1 = stablehlo.dot_general %o0, %w1, contracting_dims = [1] x [0] {alpa.layer = 1 : i64, alpa.phase = "forward"} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h1 = stablehlo.tanh %a1 {alpa.layer = 1 : i64, alpa.phase = "forward"} : tensor<4x8xf32>
  %g1 = stablehlo.multiply %h1, %h1 {alpa.layer = 1 : i64, alpa.phase = "backward"} : tensor<4x8xf32>
  %gw1 = stablehlo.dot_general %o0, %g1, contracting_dims = [0] x [0] {alpa.layer = 1 : i64, alpa.phase = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %ct0 = stablehlo.dot_general %g1, %w1, contracting_dims = [1] x [1] {alpa.layer = 1 : i64, alpa.phase = "backward"} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %d0 = stablehlo.multiply %ct0, %h0 {alpa.layer = 0 : i64, alpa.phase = "backward"} : tensor<4x8xf32>
  %gw0 = stablehlo.dot_general %x, %d0, contracting_dims = [0] x [0] {alpa.layer = 0 : i64, alpa.phase = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %gw0, %gw1 : tensor<8x8xf32>, tensor<8x8xf32>
}
