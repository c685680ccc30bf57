// Every RUN line plans every case; each prefix checks the cases its options are for.
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4' | FileCheck %s
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4 force-data-parallel batch-args=0' | FileCheck %s --check-prefix=DP
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4 force-data-parallel batch-args=0 zero-stage=2 prefer-reduce-scatter report=%t.json' | FileCheck %s --check-prefix=ZERO2
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4 force-data-parallel batch-args=0 zero-stage=3' | FileCheck %s --check-prefix=ZERO3
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4 memory-budget=300000' | FileCheck %s --check-prefix=BUDGET
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 batch-args=0 force-batch-dim-to-mesh-dim=1' | FileCheck %s --check-prefix=BATCH-AXIS
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4 batch-args=0 force-batch-dim-to-mesh-dim=0' | FileCheck %s --check-prefix=BATCH-AXIS0
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2,2 allow-flattened-mesh' | FileCheck %s --check-prefix=FLAT
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2,2 allow-mixed-mesh-shape' | FileCheck %s --check-prefix=MIXED
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,4 batch-args=0' | FileCheck %s --check-prefix=MESH2X4
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,4 batch-args=0 allow-flattened-mesh' | FileCheck %s --check-prefix=FLAT2X4
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,4 batch-args=0 allow-mixed-mesh-shape' | FileCheck %s --check-prefix=FLAT2X4
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4 allow-replicated-parameters=false' | FileCheck %s --check-prefix=NO-REPLICATED
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4 batch-args=0' | FileCheck %s --check-prefix=BATCH
// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4 batch-args=0 allow-all-gather=false' | FileCheck %s --check-prefix=NO-GATHER

// An MLP whose 512 KiB of weights the plan replicates (data parallel) unless a
// 300 kB memory budget forbids it; then Megatron's column-row split keeps a quarter
// of each weight per device at the price of one all-reduce.
// allow-replicated-parameters=false forbids replicating the weights too: the plan
// splits them as the budget does.
// CHECK-LABEL: func @mlp_memory_budget
// CHECK-SAME: %arg0: tensor<64x128xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK-SAME: %arg1: tensor<128x512xf32> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: %arg2: tensor<512x128xf32> {mhlo.sharding = "{replicated}"}
// NO-REPLICATED-LABEL: func @mlp_memory_budget
// NO-REPLICATED-SAME: %arg1: tensor<128x512xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// NO-REPLICATED-SAME: %arg2: tensor<512x128xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// BUDGET-LABEL: func @mlp_memory_budget
// BUDGET-SAME: %arg0: tensor<64x128xf32> {mhlo.sharding = "{replicated}"}
// BUDGET-SAME: %arg1: tensor<128x512xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// BUDGET-SAME: %arg2: tensor<512x128xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// BUDGET-NOT: custom_call @Sharding
// BUDGET: stablehlo.dot_general {{.*}}, %arg2, {{.*}} {mhlo.sharding = "{replicated}"}
func.func @mlp_memory_budget(%x: tensor<64x128xf32>, %w1: tensor<128x512xf32>, %w2: tensor<512x128xf32>) -> tensor<64x128xf32> {
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<64x128xf32>, tensor<128x512xf32>) -> tensor<64x512xf32>
  %1 = stablehlo.tanh %0 : tensor<64x512xf32>
  %2 = stablehlo.dot_general %1, %w2, contracting_dims = [1] x [0] : (tensor<64x512xf32>, tensor<512x128xf32>) -> tensor<64x128xf32>
  return %2 : tensor<64x128xf32>
}

// -----

// force-batch-dim-to-mesh-dim=1 puts the batch of argument 0 on mesh axis 1 (by
// default this matmul splits only the weight's columns); axis 0 goes to the columns.
// On a 1x4 mesh, =0 names an axis of size 1: the batch stays whole (it is not split
// over axis 1 instead, as batch arguments otherwise are).
// CHECK-LABEL: func @batch_dim_to_mesh_dim
// CHECK-SAME: %arg0: tensor<64x256xf32> {mhlo.sharding = "{replicated}"}
// BATCH-AXIS-LABEL: func @batch_dim_to_mesh_dim
// BATCH-AXIS-SAME: %arg0: tensor<64x256xf32> {mhlo.sharding = "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}"}
// BATCH-AXIS-SAME: %arg1: tensor<256x256xf32> {mhlo.sharding = "{devices=[1,2,2]<=[4] last_tile_dim_replicate}"}
// BATCH-AXIS: stablehlo.dot_general {{.*}} {mhlo.sharding = "{devices=[2,2]<=[2,2]T(1,0)}"}
// BATCH-AXIS0-LABEL: func @batch_dim_to_mesh_dim
// BATCH-AXIS0-SAME: %arg0: tensor<64x256xf32> {mhlo.sharding = "{replicated}"}
// BATCH-AXIS0-SAME: %arg1: tensor<256x256xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}
func.func @batch_dim_to_mesh_dim(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> tensor<64x256xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}

// -----

// A 4x2 output on a 2x2x2 mesh: a loop takes one axis or (allow-flattened-mesh) all
// three, so one axis must split the contraction (an all-reduce); allow-mixed-mesh-shape
// lets the 4 rows take two axes and the 2 columns the third, with no communication.
// FLAT-LABEL: func @mixed_mesh_shape
// FLAT: stablehlo.dot_general {{.*}} {mhlo.sharding = "{devices=[2,2,2]{{.*}} last_tile_dim_replicate}"}
// MIXED-LABEL: func @mixed_mesh_shape
// MIXED: stablehlo.dot_general {{.*}} {mhlo.sharding = "{devices=[4,2]{{[^ ]*}}}"}
func.func @mixed_mesh_shape(%x: tensor<4x1024xf32>, %w: tensor<1024x2xf32>) -> tensor<4x2xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x1024xf32>, tensor<1024x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// A data-parallel MLP on a 2x4 mesh: by default a tensor dimension takes at most one
// mesh axis (XLA's allow_mixed_mesh_shape=false), so the batch is split 2 or 4 ways
// and the weights over the other axis; allow-flattened-mesh (or allow-mixed-mesh-shape)
// splits the batch over all 8 devices (S^{01}, 1-D data parallelism on the 2-D mesh)
// and replicates them.
// MESH2X4-LABEL: func @data_parallel_2d
// MESH2X4-NOT: devices=[8,1]
// MESH2X4: return
// FLAT2X4-LABEL: func @data_parallel_2d
// FLAT2X4-SAME: %arg0: tensor<1024x64xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}
// FLAT2X4-SAME: %arg1: tensor<64x64xf32> {mhlo.sharding = "{replicated}"}
func.func @data_parallel_2d(%x: tensor<1024x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>) -> tensor<1024x64xf32> {
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<1024x64xf32>, tensor<64x64xf32>) -> tensor<1024x64xf32>
  %1 = stablehlo.tanh %0 : tensor<1024x64xf32>
  %2 = stablehlo.dot_general %1, %w2, contracting_dims = [1] x [0] : (tensor<1024x64xf32>, tensor<64x64xf32>) -> tensor<1024x64xf32>
  return %2 : tensor<1024x64xf32>
}

// -----

// A batch-split matmul whose result must come back whole: by default the result is
// all-gathered; allow-all-gather=false makes the plan split the contraction instead
// (the batch is all-to-all'ed into column tiles and the product all-reduced).
// BATCH-LABEL: func @gather_at_return
// BATCH: %[[GATHERED:.*]] = stablehlo.custom_call @Sharding({{.*}}mhlo.sharding = "{replicated}"
// BATCH: return %[[GATHERED]]
// NO-GATHER-LABEL: func @gather_at_return
// NO-GATHER: %[[COLUMNS:.*]] = stablehlo.custom_call @Sharding(%arg0) {{.*}}mhlo.sharding = "{devices=[1,4]<=[4]}"
// NO-GATHER: stablehlo.dot_general %[[COLUMNS]], {{.*}} {mhlo.sharding = "{replicated}"}
func.func @gather_at_return(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> (tensor<64x256xf32> {mhlo.sharding = "{replicated}"}) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}

// -----

// force-data-parallel keeps a per-example result split over the batch (it is batch
// data, not a replicated parameter), so nothing is gathered at the end.
// DP-LABEL: func @predictions_stay_split
// DP-SAME: -> (tensor<64x256xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"})
// DP-NOT: custom_call @Sharding
func.func @predictions_stay_split(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> tensor<64x256xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %1 = stablehlo.tanh %0 : tensor<64x256xf32>
  return %1 : tensor<64x256xf32>
}

// -----

// One SGD step of tanh(x @ w) with the batch x as argument 0.
//  - free: the weight splits its columns and x is replicated (no collective but the
//    loss's all-reduce);
//  - force-data-parallel: x splits its batch, the weight and its update are
//    replicated and the gradient matmul ends in an all-reduce;
//  - zero-stage=2 with prefer-reduce-scatter: the gradient is reduce-scattered and
//    the weight update and the new weight are sharded;
//  - zero-stage=3: the weight argument itself is sharded and gathered for its matmul.
// CHECK-LABEL: func @train_step
// CHECK-SAME: %arg0: tensor<64x256xf32> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: %arg1: tensor<256x256xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: stablehlo.dot_general %arg0, {{.*}} contracting_dims = [0] x [0] {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// DP-LABEL: func @train_step
// DP-SAME: %arg0: tensor<64x256xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// DP-SAME: %arg1: tensor<256x256xf32> {mhlo.sharding = "{replicated}"}
// DP-SAME: -> (tensor<256x256xf32> {mhlo.sharding = "{replicated}"}, tensor<f32> {mhlo.sharding = "{replicated}"})
// DP: stablehlo.dot_general %arg0, %arg1, {{.*}} {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// DP: stablehlo.dot_general %arg0, {{.*}} contracting_dims = [0] x [0] {mhlo.sharding = "{replicated}"}
// DP: stablehlo.subtract %arg1, {{.*}} {mhlo.sharding = "{replicated}"}
// ZERO2-LABEL: func @train_step
// ZERO2-SAME: %arg0: tensor<64x256xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// ZERO2-SAME: %arg1: tensor<256x256xf32> {mhlo.sharding = "{replicated}"}
// ZERO2-SAME: -> (tensor<256x256xf32> {mhlo.sharding = "{devices={{\[4,1\]|\[1,4\]}}<=[4]}"}, tensor<f32> {mhlo.sharding = "{replicated}"})
// ZERO2: stablehlo.dot_general %arg0, {{.*}} contracting_dims = [0] x [0] {mhlo.sharding = "{devices={{\[4,1\]|\[1,4\]}}<=[4]}"}
// ZERO2: stablehlo.subtract {{.*}} {mhlo.sharding = "{devices={{\[4,1\]|\[1,4\]}}<=[4]}"}
// ZERO3-LABEL: func @train_step
// ZERO3-SAME: %arg0: tensor<64x256xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// ZERO3-SAME: %arg1: tensor<256x256xf32> {mhlo.sharding = "{devices={{\[4,1\]|\[1,4\]}}<=[4]}"}
// ZERO3: %[[ZERO3_GATHER:.*]] = stablehlo.custom_call @Sharding(%arg1) {{.*}}mhlo.sharding = "{replicated}"
// ZERO3: stablehlo.dot_general %arg0, %[[ZERO3_GATHER]], {{.*}} {mhlo.sharding = "{devices=[4,1]<=[4]}"}
func.func @train_step(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> (tensor<256x256xf32>, tensor<f32>) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %1 = stablehlo.tanh %0 : tensor<64x256xf32>
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %loss = stablehlo.reduce(%1 init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x256xf32>, tensor<f32>) -> tensor<f32>
  %one = stablehlo.constant dense<1.000000e+00> : tensor<64x256xf32>
  %sq = stablehlo.multiply %1, %1 : tensor<64x256xf32>
  %dt = stablehlo.subtract %one, %sq : tensor<64x256xf32>
  %g = stablehlo.dot_general %x, %dt, contracting_dims = [0] x [0] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
  %lr = stablehlo.constant dense<1.000000e-01> : tensor<256x256xf32>
  %u = stablehlo.multiply %lr, %g : tensor<256x256xf32>
  %nw = stablehlo.subtract %w, %u : tensor<256x256xf32>
  return %nw, %loss : tensor<256x256xf32>, tensor<f32>
}

// The report of the last case (the zero-stage=2 RUN line): the mesh, the arguments'
// shardings, and the gradient matmul's reduce-scatter over mesh axis 1.
// REPORT: "version": 1,
// REPORT: "mesh": {
// REPORT-NEXT: "shape": [
// REPORT-NEXT: 1,
// REPORT-NEXT: 4
// REPORT: "arguments": [
// REPORT: "sharding": "{devices=[4,1]<=[4]}"
// REPORT: "sharding": "{replicated}"
// REPORT: "results": [
// REPORT: "ops": [
// REPORT: "op": "stablehlo.dot_general",
// REPORT: "op": "stablehlo.dot_general",
// REPORT-NEXT: "location": "{{.*}}",
// REPORT-NEXT: "strategy": "l2->1 reduce-scatter(dim {{[01]}})",
// REPORT: "communication": [
// REPORT-NEXT: {
// REPORT-NEXT: "kind": "reduce-scatter",
// REPORT-NEXT: "mesh_axes": [
// REPORT-NEXT: 1
// REPORT-NEXT: ],
// REPORT-NEXT: "bytes": 262144.0,
// REPORT: "solver": {
// REPORT: "status": "{{optimal|trivial}}"

