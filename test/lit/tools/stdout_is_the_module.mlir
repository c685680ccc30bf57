// alpa-opt's stdout is the output module and nothing else, even when a pass runs a
// native solver that prints a banner (HiGHS): the output pipes into another alpa-opt.
// RUN: alpa-opt %S/../../../examples/mlp_train_step.mlir --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-auto-sharding)' 2>/dev/null | alpa-opt - --alpa-verify-sharding | FileCheck %s
// RUN: alpa-opt %S/../../../examples/mlp_train_step.mlir --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-auto-sharding)' 2>/dev/null | FileCheck %s --check-prefix=FIRST

// The solver's own log is on stderr with --solver-log only; stdout is the module either way.
// RUN: alpa-opt %S/../../../examples/mlp_train_step.mlir --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-auto-sharding)' 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: alpa-opt %S/../../../examples/mlp_train_step.mlir --solver-log --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-auto-sharding)' 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG
// RUN: alpa-opt %S/../../../examples/mlp_train_step.mlir --solver-log --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-auto-sharding)' 2>/dev/null | FileCheck %s --check-prefix=FIRST

// QUIET-NOT: HiGHS
// LOG: Running HiGHS
// LOG: Model status        : Optimal
// FIRST-NOT: Running HiGHS
// FIRST: module @jit_train_step
// CHECK: module @jit_train_step
// CHECK: stablehlo.dot_general {{.*}}mhlo.sharding
