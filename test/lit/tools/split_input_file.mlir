// RUN: not alpa-opt --split-input-file %s 2> %t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR --input-file=%t.err

// Each part is parsed and printed as a module of its own, the outputs joined by
// '// -----'. A part that fails prints nothing but keeps its place, so output
// part i is input part i; the error names its real line in this file and the
// exit code is non-zero.

// The same symbol in two parts is no redefinition: the parts never meet.
// CHECK:      module {
// CHECK-NEXT:   func.func @split_same_symbol(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     return %arg0
// CHECK:      }
// CHECK-NEXT: }
// CHECK-NEXT: // -----
func.func @split_same_symbol(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}

// -----

// CHECK-NEXT: module {
// CHECK-NEXT:   func.func @split_same_symbol(%arg0: tensor<8xf32>) -> tensor<8xf32> {
// CHECK:      }
// CHECK-NEXT: }
// CHECK-NEXT: // -----
func.func @split_same_symbol(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// -----

// The third part does not parse: no output, only its separator.
// CHECK-NEXT: // -----
// ERR-NOT: Traceback
// ERR: {{.*}}split_input_file.mlir:[[# @LINE + 3]]:10: error: use of undeclared SSA value name
// ERR-NOT: error
func.func @split_undeclared_value(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  return %undeclared : tensor<4xf32>
}

// -----

// Parts after the failing one still run.
// CHECK-NEXT: module {
// CHECK-NEXT:   func.func @split_after_error
// CHECK-NOT:  // -----
func.func @split_after_error() {
  return
}
