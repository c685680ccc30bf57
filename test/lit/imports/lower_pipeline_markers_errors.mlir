// RUN: alpa-opt %s --alpa-lower-pipeline-markers --split-input-file --verify-diagnostics

// A marker must say what it marks.
func.func @missing_kind(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{malformed pipeline marker: no 'alpa.marker' attribute; expected alpa.marker = one of "boundary", "backward_boundary", "tangent_boundary", "grad"}}
  %0 = stablehlo.custom_call @alpa.pipeline_marker(%arg0) {has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Kinds are a closed set.
func.func @unknown_kind(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{malformed pipeline marker: alpa.marker = "layer"; expected alpa.marker = one of}}
  %0 = stablehlo.custom_call @alpa.pipeline_marker(%arg0) {alpa.marker = "layer", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The kind is a string, not a number.
func.func @kind_not_a_string(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{malformed pipeline marker: alpa.marker = 1 : i64; expected alpa.marker = one of}}
  %0 = stablehlo.custom_call @alpa.pipeline_marker(%arg0) {alpa.marker = 1 : i64, has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A marker is an identity: one result per operand, of the same type.
func.func @not_an_identity(%arg0: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{malformed pipeline marker: its results must have its operands' types (an identity), got (tensor<4xf32>) -> (tensor<2xf32>)}}
  %0 = stablehlo.custom_call @alpa.pipeline_marker(%arg0) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A boundary inside a loop body would cut every iteration the same way; unsupported.
func.func @inside_while(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.while(%v = %arg0) : tensor<4xf32>
  cond {
    %p = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    // expected-error@+1 {{pipeline marker inside 'stablehlo.while' is not supported}}
    %m = stablehlo.custom_call @alpa.pipeline_marker(%v) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
    stablehlo.return %m : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Program order is only defined after inlining: a called function may run anywhere.
func.func @caller(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @layer(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @layer(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{pipeline marker in @layer, which is called from another function; run 'inline' before alpa-lower-pipeline-markers}}
  %0 = stablehlo.custom_call @alpa.pipeline_marker(%arg0) {alpa.marker = "boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A backward marker's last operand is its link; one without it is malformed.
func.func @backward_without_link(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{malformed pipeline marker: a backward_boundary marker has one operand more than results (the last links to its forward marker), got 1 operands and 1 results}}
  %0 = stablehlo.custom_call @alpa.pipeline_marker(%arg0) {alpa.marker = "backward_boundary", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The link must be a marker's result: a backward pass lowered without its forward
// pass (its residuals arrive as arguments) has no forward boundary to number it by.
func.func @link_to_an_argument(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{backward_boundary marker whose last operand is not a result of a pipeline marker in this function}}
  %0 = stablehlo.custom_call @alpa.pipeline_marker(%arg0, %arg1) {alpa.marker = "backward_boundary", has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
