// RUN: not alpa-opt --split-input-file %s 2>&1 | FileCheck %s
// RUN: not alpa-opt --split-input-file - < %s 2>&1 | FileCheck %s --check-prefix=STDIN

// Input that does not parse or verify is reported as file:line:col: error:
// at the offending token, with no output and no traceback.

// CHECK-NOT: Traceback
// CHECK-NOT: module
// CHECK: {{.*}}malformed_ir.mlir:[[# @LINE + 4]]:10: error: use of undeclared SSA value name
// The file name of standard input is <stdin>, as in mlir-opt.
// STDIN: <stdin>:[[# @LINE + 2]]:10: error: use of undeclared SSA value name
func.func @malformed_undeclared_value(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  return %undeclared : tensor<4xf32>
}

// -----

// An op whose types do not verify: the error is at the op.
// CHECK: {{.*}}malformed_ir.mlir:[[# @LINE + 2]]:8: error: 'stablehlo.add' op requires the same shape for all operands and results
func.func @malformed_op_verifier(%arg0: tensor<4xf32>, %arg1: tensor<8xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg1 : (tensor<4xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Text that is not IR at all.
// CHECK: {{.*}}malformed_ir.mlir:[[# @LINE + 1]]:1: error: custom op 'this' is unknown
this is not mlir
// CHECK-NOT: module
// CHECK-NOT: Traceback
