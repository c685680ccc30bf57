// A textual pipeline mixes upstream passes with alpa passes and their options.
// RUN: alpa-opt --pass-pipeline='builtin.module(canonicalize,alpa-verify-sharding)' --split-input-file %s | FileCheck %s --check-prefix=CANON
// RUN: not alpa-opt --pass-pipeline='builtin.module(canonicalize,alpa-verify-sharding{mesh-shape=4})' --split-input-file %s 2>&1 | FileCheck %s --check-prefix=OPTION

// Upstream passes nest under func.func; alpa passes run on the module only.
// RUN: alpa-opt --pass-pipeline='builtin.module(func.func(cse))' --split-input-file %s | FileCheck %s --check-prefix=CSE
// RUN: not alpa-opt --pass-pipeline='builtin.module(func.func(cse,alpa-verify-sharding))' --split-input-file %s 2>&1 | FileCheck %s --check-prefix=NESTED

// A named pipeline expands to its passes, as a flag or inside a pipeline.
// RUN: alpa-opt --alpa-import-pipeline --split-input-file %s | FileCheck %s --check-prefix=IMPORT
// RUN: alpa-opt --pass-pipeline='builtin.module(alpa-import-pipeline{mesh-shape=2})' --split-input-file %s | FileCheck %s --check-prefix=IMPORT

// -o writes the output to a file and nothing to stdout; - reads stdin.
// RUN: alpa-opt --pass-pipeline='builtin.module(func.func(cse))' --split-input-file %s -o %t | FileCheck %s --allow-empty --check-prefix=NO-STDOUT
// RUN: FileCheck %s --check-prefix=CSE --input-file=%t
// RUN: alpa-opt --pass-pipeline='builtin.module(func.func(cse))' --split-input-file - < %s | FileCheck %s --check-prefix=CSE

// After --, nothing is a flag: an input whose name starts with a dash.
// RUN: rm -rf %t.dir && mkdir %t.dir && cp %s %t.dir/-input.mlir && cd %t.dir && alpa-opt --split-input-file --pass-pipeline='builtin.module(func.func(cse))' -- -input.mlir | FileCheck %s --check-prefix=CSE

// Single-dash flags work as in mlir-opt, pass flags included.
// RUN: alpa-opt -split-input-file -pass-pipeline='builtin.module(func.func(cse))' %s | FileCheck %s --check-prefix=CSE
// RUN: alpa-opt -split-input-file -alpa-import-pipeline %s | FileCheck %s --check-prefix=IMPORT

// NO-STDOUT-NOT: {{.}}

// canonicalize erases the dead tanh; alpa-verify-sharding accepts the sharding,
// and rejects it when the pipeline gives a 4-device mesh.
// CANON-LABEL: func @pipeline_dead_op
// CANON-NOT: stablehlo.tanh
// CANON: return %arg0
// OPTION-NOT: Traceback
// OPTION: {{.*}}pass_pipeline.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: argument #0: sharding '{devices=[2]<=[2]}' uses 2 devices but the mesh [4] has 4
// OPTION: note: reproduce with: alpa-opt {{.*}} --pass-pipeline='builtin.module(canonicalize,alpa-verify-sharding{mesh-shape=4})'
// CSE-LABEL: func @pipeline_dead_op
module attributes {mhlo.num_partitions = 2 : i32} {
  func.func @pipeline_dead_op(%arg0: tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<4xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<4xf32>
    return %arg0 : tensor<4xf32>
  }
}

// -----

// cse under func.func merges the two identical tanh ops; canonicalize does not.
// CSE-LABEL: func @pipeline_nested_cse
// CSE: %[[TANH:.*]] = stablehlo.tanh %arg0
// CSE-NOT: stablehlo.tanh
// CSE: stablehlo.add %[[TANH]], %[[TANH]]
// CANON-LABEL: func @pipeline_nested_cse
// CANON-COUNT-2: stablehlo.tanh %arg0
func.func @pipeline_nested_cse(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<4xf32>
  %1 = stablehlo.tanh %arg0 : tensor<4xf32>
  %2 = stablehlo.add %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// alpa-import-pipeline inlines the call and drops the callee (inline, symbol-dce).
// IMPORT-LABEL: func @pipeline_import_inlines
// IMPORT-NEXT: %[[INLINED:.*]] = stablehlo.tanh %arg0
// IMPORT-NEXT: return %[[INLINED]]
// IMPORT-NOT: @pipeline_import_callee
// CSE-LABEL: func @pipeline_import_inlines
// CSE-NEXT: call @pipeline_import_callee
func.func @pipeline_import_inlines(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @pipeline_import_callee(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @pipeline_import_callee(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// NESTED-NOT: Traceback
// NESTED: alpa-opt: error: 'func.func(cse,alpa-verify-sharding)': alpa passes run on the module; list them at the top level of builtin.module(...), not nested under an operation
