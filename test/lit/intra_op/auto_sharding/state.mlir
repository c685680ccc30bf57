// Option state=argument:result ties the training state: the result comes back in the
// argument's sharding, so the next step takes it as this one returns it.
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=4 batch-args=1 state=0:0 report=%t.json' | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// Without the tie, the update comes out sharded although the weight came in replicated.
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=4 batch-args=1' | FileCheck %s --check-prefix=UNTIED

// An SGD step: w - 0.1 * x^T (x w). The batch x comes in split on its batch dimension.
// CHECK-LABEL: func @main
// CHECK-SAME: %arg0: tensor<256x256xf32> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: %arg1: tensor<4096x256xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK-SAME: -> (tensor<256x256xf32> {mhlo.sharding = "{replicated}"}
// CHECK-NOT: @Sharding
// CHECK: return
// REPORT: "tied": [
// REPORT-NEXT: [
// REPORT-NEXT: 0,
// REPORT-NEXT: 0
// UNTIED-LABEL: func @main
// UNTIED-SAME: %arg0: tensor<256x256xf32> {mhlo.sharding = "{replicated}"}
// UNTIED-SAME: -> (tensor<256x256xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
func.func @main(%w: tensor<256x256xf32>, %x: tensor<4096x256xf32>) -> (tensor<256x256xf32>, tensor<4096x256xf32>) {
  %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4096x256xf32>, tensor<256x256xf32>) -> tensor<4096x256xf32>
  %g = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] : (tensor<4096x256xf32>, tensor<4096x256xf32>) -> tensor<256x256xf32>
  %lr = stablehlo.constant dense<0.1> : tensor<256x256xf32>
  %s = stablehlo.multiply %g, %lr : tensor<256x256xf32>
  %new = stablehlo.subtract %w, %s : tensor<256x256xf32>
  return %new, %y : tensor<256x256xf32>, tensor<4096x256xf32>
}
