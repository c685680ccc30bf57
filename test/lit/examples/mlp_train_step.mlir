// RUN: alpa-opt %S/../../../examples/mlp_train_step.mlir --alpa-sdy-roundtrip-pipeline | FileCheck %s

// The README's first command: the bundled MLP training step (lowered by jax.jit with
// user shardings on a 2x4 mesh) goes through import, verification and export; the
// exported shardings are the ones the user pinned.
// CHECK-LABEL: module @jit_train_step
// CHECK: sdy.mesh @mesh = <["x"=2, "y"=4]>
// CHECK: %arg0: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK-SAME: %arg1: tensor<256x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}
// CHECK-SAME: %arg2: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}

// RUN: alpa-opt %S/../../../examples/mlp_train_step.mlir --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-auto-sharding)' | FileCheck %s --check-prefix=AUTO

// The README's first command: auto-sharding keeps the pinned arguments (keep-user-shardings=all),
// splits the first matmul over both mesh axes (batch on x, columns on y: Megatron + data
// parallelism) and the second on x only, after the all-reduce over y of its row split.
// AUTO: mhlo.num_partitions = 8
// AUTO: func.func public @main(%arg0: tensor<64x256xf32> {mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}, %arg1: tensor<256x64xf32> {mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}
// AUTO: stablehlo.dot_general %arg2, %arg0{{.*}}mhlo.sharding = "{devices=[2,4]<=[8]}"
// AUTO: stablehlo.dot_general %{{[0-9]+}}, %arg1{{.*}}mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"
