// RUN: not alpa-opt --split-input-file %s 2>&1 | FileCheck %s --check-prefix=REJECT
// RUN: alpa-opt --allow-unregistered-dialect --split-input-file %s | FileCheck %s

// An op of a dialect that jaxlib does not register is an error that says how to
// accept it; --allow-unregistered-dialect carries it through unchanged.

// REJECT-NOT: Traceback
// REJECT: {{.*}}unregistered_dialect.mlir:[[# @LINE + 6]]:3: error: unregistered operation 'foo.bar'{{.*}}(use --allow-unregistered-dialect to accept it)
// REJECT-NOT: error
// REJECT-NOT: module
// CHECK-LABEL: func @unregistered_op_kept
// CHECK-NEXT: "foo.bar"(%arg0) {foo.attr = 1 : i64} : (tensor<4xf32>) -> ()
func.func @unregistered_op_kept(%arg0: tensor<4xf32>) {
  "foo.bar"(%arg0) {foo.attr = 1 : i64} : (tensor<4xf32>) -> ()
  return
}
