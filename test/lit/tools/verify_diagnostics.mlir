// RUN: alpa-opt --alpa-verify-sharding --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: rm -f %t
// RUN: not alpa-opt --alpa-verify-sharding --split-input-file --verify-diagnostics %S/Inputs/verify_diagnostics_mismatch.mlir -o %t 2>&1 | FileCheck %s --check-prefix=MISMATCH
// A failed verification writes no output file, as mlir-opt.
// RUN: %PYTHON -c "import os, sys; sys.exit(os.path.exists(sys.argv[1]))" %t

// Every diagnostic below is expected by a designator, so alpa-opt succeeds; the
// part without errors is still printed and the failing parts print nothing.

// CHECK-LABEL: func @verify_clean_part_printed
// CHECK-NOT: func.func
module attributes {mhlo.num_partitions = 2 : i32} {
  func.func @verify_clean_part_printed(%arg0: tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}

// -----

// A designator on the line of the error itself.
module attributes {mhlo.num_partitions = 2 : i32} {
  func.func @verify_same_line(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.tanh %arg0 {mhlo.sharding = "{devices=[4]<=[4]}"} : tensor<4xf32> // expected-error {{result #0: sharding '{devices=[4]<=[4]}' uses 4 devices but the mesh [2] has 2}}
    return %0 : tensor<4xf32>
  }
}

// -----

// @+1 names the next line: here the argument, whose location is its own line.
func.func @verify_plus_offset(
    // expected-error@+1 {{argument #0: sharding '{devices=[3]0,1}' lists 2 devices for a tile shape of 3}}
    %arg0: tensor<4xf32> {mhlo.sharding = "{devices=[3]0,1}"}) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}

// -----

// @-1 names the previous line.
func.func @verify_minus_offset(%arg0: tensor<4xf32> {mhlo.sharding = "{manual}"}) -> tensor<4xf32> {
  // expected-error@-1 {{argument #0: sharding '{manual}' is {manual}, which alpa cannot plan around}}
  return %arg0 : tensor<4xf32>
}

// -----

// A parse error is verified like any other: the undeclared value's position.
func.func @verify_parse_error(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{use of undeclared SSA value name}}
  return %undeclared : tensor<4xf32>
}

// -----

// Stacked @below designators all name the first line below that is not one:
// two errors on the function's line.
// expected-error@below {{argument #0: sharding '{devices=[3]0,1}'}}
// expected-error@below {{argument #1: sharding '{manual}'}}
func.func @verify_below_stacked(%arg0: tensor<4xf32> {mhlo.sharding = "{devices=[3]0,1}"}, %arg1: tensor<4xf32> {mhlo.sharding = "{manual}"}) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}

// -----

// Stacked @above designators name the last line above that is not one.
module attributes {mhlo.num_partitions = 2 : i32} {
  func.func @verify_above_stacked(%arg0: tensor<4xf32> {mhlo.sharding = "{devices=[3]0,1}"}, %arg1: tensor<4xf32> {mhlo.sharding = "{maximal device=3}"}) -> tensor<4xf32> {
    // expected-error@above {{argument #0: sharding '{devices=[3]0,1}'}}
    // expected-error@above {{argument #1: sharding '{maximal device=3}' names device 3, which is not on mesh [2]}}
    return %arg0 : tensor<4xf32>
  }
}

// MISMATCH-NOT: Traceback
// MISMATCH: verify_diagnostics_mismatch.mlir:5:6: error: expected error "this error is never reported" was not produced
// MISMATCH-NEXT: verify_diagnostics_mismatch.mlir:12:32: error: unexpected error: argument #0: sharding '{manual}' is {manual}
// MISMATCH-NEXT: verify_diagnostics_mismatch.mlir:20:32: error: unexpected error: argument #0: sharding '{manual}' is {manual}
// MISMATCH-NEXT: verify_diagnostics_mismatch.mlir:19:4: error: expected error "argument #0: sharding '{manual}'" was not produced
// MISMATCH-NEXT: verify_diagnostics_mismatch.mlir:28:30: error: unexpected error: argument #0: sharding '{manual}' is {manual}
// MISMATCH-NEXT: verify_diagnostics_mismatch.mlir:27:4: error: expected warning "argument #0: sharding '{manual}'" was not produced
// MISMATCH-NOT: error
