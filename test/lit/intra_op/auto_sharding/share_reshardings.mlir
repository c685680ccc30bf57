// RUN: alpa-opt %s --alpa-auto-sharding='mesh-shape=1,4' | FileCheck %s --check-prefix=PER-USER
// RUN: alpa-opt %s --alpa-auto-sharding='mesh-shape=1,4 share-reshardings' | FileCheck %s --check-prefix=SHARED

// x (96x256, row-split) is read by two matmuls whose weights (256x64 each) come
// column-split: one of the two has to be gathered. Eq. 1 per user charges gathering x
// twice (2 x 96x256 > 2 x 256x64), so it gathers both weights; XLA gathers x once for
// both readers (96x256 < 2 x 256x64), which share-reshardings prices.

// PER-USER-LABEL: func.func @main
// PER-USER-DAG: stablehlo.custom_call @Sharding(%arg1) {{.*}}mhlo.sharding = "{replicated}"
// PER-USER-DAG: stablehlo.custom_call @Sharding(%arg2) {{.*}}mhlo.sharding = "{replicated}"
// PER-USER-NOT: @Sharding(%arg0)

// SHARED-LABEL: func.func @main
// SHARED-NEXT: %[[X:.*]] = stablehlo.custom_call @Sharding(%arg0) {{.*}}mhlo.sharding = "{replicated}"
// SHARED-NEXT: stablehlo.dot_general %[[X]], %arg1, {{.*}}mhlo.sharding = "{devices=[1,4]<=[4]}"
// SHARED-NEXT: stablehlo.dot_general %[[X]], %arg2, {{.*}}mhlo.sharding = "{devices=[1,4]<=[4]}"
// SHARED-NOT: @Sharding
func.func @main(%x: tensor<96x256xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"},
                %w1: tensor<256x64xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"},
                %w2: tensor<256x64xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"})
    -> (tensor<96x64xf32>, tensor<96x64xf32>) {
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<96x256xf32>, tensor<256x64xf32>) -> tensor<96x64xf32>
  %1 = stablehlo.dot_general %x, %w2, contracting_dims = [1] x [0] : (tensor<96x256xf32>, tensor<256x64xf32>) -> tensor<96x64xf32>
  return %0, %1 : tensor<96x64xf32>, tensor<96x64xf32>
}
