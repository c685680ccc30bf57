// RUN: alpa-opt %S/../../../examples/mlp_train_step.mlir --alpa-sdy-roundtrip-pipeline | FileCheck %s

// The README's first command: the bundled MLP training step (lowered by jax.jit with
// user shardings on a 2x4 mesh) goes through import, verification and export; the
// exported shardings are the ones the user pinned.
// CHECK-LABEL: module @jit_train_step
// CHECK: sdy.mesh @mesh = <["x"=2, "y"=4]>
// CHECK: %arg0: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK-SAME: %arg1: tensor<256x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}
// CHECK-SAME: %arg2: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
