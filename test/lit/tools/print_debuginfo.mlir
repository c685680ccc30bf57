// RUN: alpa-opt --mlir-print-debuginfo --split-input-file %s | FileCheck %s
// RUN: alpa-opt --mlir-print-debuginfo --split-input-file - < %s | FileCheck %s --check-prefix=STDIN
// RUN: alpa-opt --split-input-file %s | FileCheck %s --check-prefix=NO-LOC

// Locations name this file (not the parser's "-") with the true line of every
// part, so an op can be traced back to its source line.

// NO-LOC-NOT: loc(
// CHECK-LABEL: func @debuginfo_first
// CHECK-DAG: #loc{{[0-9]*}} = loc("{{.*}}print_debuginfo.mlir":[[# @LINE + 4]]:1)
// CHECK-DAG: #loc{{[0-9]*}} = loc("{{.*}}print_debuginfo.mlir":[[# @LINE + 4]]:8)
// STDIN-LABEL: func @debuginfo_first
// STDIN: loc("<stdin>":[[# @LINE + 2]]:8)
func.func @debuginfo_first(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A part after a split keeps its true line numbers; a location in another file
// is left as it is.
// CHECK-LABEL: func @debuginfo_second
// CHECK-DAG: loc("other.py":7:3)
// CHECK-DAG: #loc{{[0-9]*}} = loc("{{.*}}print_debuginfo.mlir":[[# @LINE + 4]]:3)
// NO-LOC-LABEL: func @debuginfo_second
func.func @debuginfo_second(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.tanh %arg0 : tensor<4xf32> loc("other.py":7:3)
  return %0 : tensor<4xf32>
}
// NO-LOC-NOT: loc(
