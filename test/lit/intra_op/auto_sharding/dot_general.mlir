// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4' | FileCheck %s
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,4 allow-flattened-mesh' | FileCheck %s --check-prefix=MESH2X4

// Small batch, big weights: Megatron's MLP. The first matmul splits its columns, the
// second its rows (the contracting dimension) and ends in the one all-reduce; the
// activation between them stays split, so nothing is resharded.
// CHECK-LABEL: func @mlp_megatron_column_row
// CHECK-SAME: %arg0: tensor<2x1024xf32> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: %arg1: tensor<1024x4096xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-SAME: %arg2: tensor<4096x1024xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK-SAME: -> (tensor<2x1024xf32> {mhlo.sharding = "{replicated}"})
// CHECK-NOT: custom_call @Sharding
// CHECK: stablehlo.dot_general %arg0, %arg1, {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: stablehlo.tanh {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-NOT: custom_call @Sharding
// CHECK: stablehlo.dot_general {{.*}}, %arg2, {{.*}} {mhlo.sharding = "{replicated}"}
// CHECK-NOT: custom_call @Sharding
// On 2x4 the batch of 2 takes the first axis, Megatron the second (Table 3's 2-D plan).
// MESH2X4-LABEL: func @mlp_megatron_column_row
// MESH2X4-SAME: %arg0: tensor<2x1024xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}
// MESH2X4-SAME: %arg1: tensor<1024x4096xf32> {mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}
// MESH2X4-SAME: %arg2: tensor<4096x1024xf32> {mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}
// MESH2X4-NOT: custom_call @Sharding
// MESH2X4: stablehlo.dot_general %arg0, %arg1, {{.*}} {mhlo.sharding = "{devices=[2,4]<=[8]}"}
// MESH2X4-NOT: custom_call @Sharding
// MESH2X4: stablehlo.dot_general {{.*}}, %arg2, {{.*}} {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}
func.func @mlp_megatron_column_row(%x: tensor<2x1024xf32>, %w1: tensor<1024x4096xf32>, %w2: tensor<4096x1024xf32>) -> tensor<2x1024xf32> {
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<2x1024xf32>, tensor<1024x4096xf32>) -> tensor<2x4096xf32>
  %1 = stablehlo.tanh %0 : tensor<2x4096xf32>
  %2 = stablehlo.dot_general %1, %w2, contracting_dims = [1] x [0] : (tensor<2x4096xf32>, tensor<4096x1024xf32>) -> tensor<2x1024xf32>
  return %2 : tensor<2x1024xf32>
}

// -----

// Big batch, small weights: the same MLP is data parallel on every device.
// CHECK-LABEL: func @mlp_data_parallel
// CHECK-SAME: %arg0: tensor<4096x256xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK-SAME: %arg1: tensor<256x256xf32> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: %arg2: tensor<256x256xf32> {mhlo.sharding = "{replicated}"}
// CHECK: stablehlo.dot_general %arg0, %arg1, {{.*}} {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK: stablehlo.dot_general {{.*}}, %arg2, {{.*}} {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// MESH2X4-LABEL: func @mlp_data_parallel
// MESH2X4-SAME: %arg0: tensor<4096x256xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}
// MESH2X4: stablehlo.dot_general {{.*}}, %arg2, {{.*}} {mhlo.sharding = "{devices=[8,1]<=[8]}"}
func.func @mlp_data_parallel(%x: tensor<4096x256xf32>, %w1: tensor<256x256xf32>, %w2: tensor<256x256xf32>) -> tensor<4096x256xf32> {
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<4096x256xf32>, tensor<256x256xf32>) -> tensor<4096x256xf32>
  %1 = stablehlo.tanh %0 : tensor<4096x256xf32>
  %2 = stablehlo.dot_general %1, %w2, contracting_dims = [1] x [0] : (tensor<4096x256xf32>, tensor<256x256xf32>) -> tensor<4096x256xf32>
  return %2 : tensor<4096x256xf32>
}

// -----

// A batched matmul splits its batching dimension: both operands and the result keep
// one slice of the batch, and no collective is needed.
// CHECK-LABEL: func @batch_matmul_batching_dims
// CHECK-SAME: %arg0: tensor<8x128x64xf32> {mhlo.sharding = "{devices=[4,1,1]<=[4]}"}
// CHECK-SAME: %arg1: tensor<8x64x128xf32> {mhlo.sharding = "{devices=[4,1,1]<=[4]}"}
// CHECK: stablehlo.dot_general {{.*}} batching_dims = [0] x [0]{{.*}} {mhlo.sharding = "{devices=[4,1,1]<=[4]}"}
// MESH2X4-LABEL: func @batch_matmul_batching_dims
// MESH2X4: stablehlo.dot_general {{.*}} {mhlo.sharding = "{devices=[8,1,1]<=[8]}"}
func.func @batch_matmul_batching_dims(%x: tensor<8x128x64xf32>, %y: tensor<8x64x128xf32>) -> tensor<8x128x128xf32> {
  %0 = stablehlo.dot_general %x, %y, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x128x64xf32>, tensor<8x64x128xf32>) -> tensor<8x128x128xf32>
  return %0 : tensor<8x128x128xf32>
}

// -----

// Attention heads as einsums: the q and k projections (bsh,hnd->bsnd) split the head
// dimension n of their weights, and the scores (bsnd,btnd->bnst, heads as a batching
// dimension) keep it split; splitting the head size d instead would need an all-reduce.
// CHECK-LABEL: func @einsum_heads
// CHECK-SAME: %arg0: tensor<1x2x1024xf32> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: %arg1: tensor<1024x16x64xf32> {mhlo.sharding = "{devices=[1,4,1]<=[4]}"}
// CHECK-SAME: %arg2: tensor<1024x16x64xf32> {mhlo.sharding = "{devices=[1,4,1]<=[4]}"}
// CHECK-SAME: -> (tensor<1x16x2x2xf32> {mhlo.sharding = "{devices=[1,4,1,1]<=[4]}"})
// CHECK-NOT: custom_call @Sharding
// CHECK: stablehlo.dot_general %arg0, %arg1, {{.*}} {mhlo.sharding = "{devices=[1,1,4,1]<=[4]}"}
// CHECK: stablehlo.dot_general %arg0, %arg2, {{.*}} {mhlo.sharding = "{devices=[1,1,4,1]<=[4]}"}
// CHECK-NOT: custom_call @Sharding
// CHECK: stablehlo.dot_general {{.*}} batching_dims = [0, 2] x [0, 2]{{.*}} {mhlo.sharding = "{devices=[1,4,1,1]<=[4]}"}
// MESH2X4-LABEL: func @einsum_heads
// MESH2X4: stablehlo.dot_general {{.*}} batching_dims = [0, 2] x [0, 2]{{.*}} {mhlo.sharding = "{devices=[1,8,1,1]<=[8]}"}
func.func @einsum_heads(%x: tensor<1x2x1024xf32>, %wq: tensor<1024x16x64xf32>, %wk: tensor<1024x16x64xf32>) -> tensor<1x16x2x2xf32> {
  %q = stablehlo.dot_general %x, %wq, contracting_dims = [2] x [0] : (tensor<1x2x1024xf32>, tensor<1024x16x64xf32>) -> tensor<1x2x16x64xf32>
  %k = stablehlo.dot_general %x, %wk, contracting_dims = [2] x [0] : (tensor<1x2x1024xf32>, tensor<1024x16x64xf32>) -> tensor<1x2x16x64xf32>
  %s = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) -> tensor<1x16x2x2xf32>
  return %s : tensor<1x16x2x2xf32>
}

// -----

// Only the contracting dimension divides by 4: both operands split it and the 2x2
// partial sums meet in an all-reduce, leaving the result replicated.
// CHECK-LABEL: func @contracting_split
// CHECK-SAME: %arg0: tensor<2x4096xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-SAME: %arg1: tensor<4096x2xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK: stablehlo.dot_general {{.*}} {mhlo.sharding = "{replicated}"}
func.func @contracting_split(%x: tensor<2x4096xf32>, %w: tensor<4096x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4096xf32>, tensor<4096x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// No loop of this matmul divides by 4, so it may run replicated (Sec. 4.2 forbids
// replicated matmuls only when a full split exists).
// CHECK-LABEL: func @negative_indivisible_dot
// CHECK-SAME: %arg0: tensor<2x6xf32> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: %arg1: tensor<6x2xf32> {mhlo.sharding = "{replicated}"}
// CHECK: stablehlo.dot_general {{.*}} {mhlo.sharding = "{replicated}"}
func.func @negative_indivisible_dot(%x: tensor<2x6xf32>, %w: tensor<6x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x6xf32>, tensor<6x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
