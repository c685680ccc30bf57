// RUN: alpa-opt %s --alpa-strip-sharding --split-input-file | FileCheck %s
// RUN: alpa-opt %s --alpa-strip-sharding=keep-mesh --split-input-file | FileCheck %s --check-prefix=KEEP

// Every annotation and constraint goes, in both dialects, with the mesh.
// CHECK-LABEL: module @strip_all
// CHECK-NOT: alpa.mesh
// CHECK-NOT: mhlo.num_partitions
// CHECK-NOT: sdy.mesh
// CHECK: func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: %[[NEG:.*]] = stablehlo.negate %arg0 : tensor<8xf32>
// CHECK-NEXT: %[[ADD:.*]] = stablehlo.add %[[NEG]], %arg1 : tensor<8xf32>
// CHECK-NEXT: return %[[ADD]] : tensor<8xf32>
// KEEP-LABEL: module @strip_all
// KEEP-SAME: alpa.mesh
// KEEP: sdy.mesh @mesh
// KEEP-NOT: sharding
module @strip_all attributes {alpa.mesh = {shape = array<i64: 2>}, mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<8xf32>) -> tensor<8xf32>
    %1 = stablehlo.negate %0 {mhlo.sharding = "{replicated}"} : tensor<8xf32>
    %2 = sdy.sharding_constraint %arg1 <@mesh, [{}]> : tensor<8xf32>
    %3 = stablehlo.add %1, %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : tensor<8xf32>
    return %3 : tensor<8xf32>
  }
}

// -----

// Other custom calls stay.
// CHECK-LABEL: module @negative_other_custom_call
// CHECK: stablehlo.custom_call @foo(%arg0)
// KEEP-LABEL: module @negative_other_custom_call
module @negative_other_custom_call {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @foo(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
