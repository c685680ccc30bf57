// Input of verify_diagnostics.mlir: diagnostics that do not match their
// designators. The line numbers are checked there, keep them.

func.func @mismatch_not_produced(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{this error is never reported}}
  return %arg0 : tensor<4xf32>
}

// -----

// An error without a designator.
func.func @mismatch_unexpected(%arg0: tensor<4xf32> {mhlo.sharding = "{manual}"}) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}

// -----

// The right text on the wrong line: unexpected, and not produced where expected.
// expected-error@+2 {{argument #0: sharding '{manual}'}}
func.func @mismatch_wrong_line(%arg0: tensor<4xf32> {mhlo.sharding = "{manual}"}) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}

// -----

// The right text with the wrong severity.
// expected-warning@+1 {{argument #0: sharding '{manual}'}}
func.func @mismatch_severity(%arg0: tensor<4xf32> {mhlo.sharding = "{manual}"}) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}
