// Errors at a location.
// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-accumulate-gradients='num-micro-batches=2 batch-args=1'
// Options, rejected before any module is read.
// RUN: not alpa-opt %s --alpa-accumulate-gradients='num-micro-batches=0' 2>&1 | FileCheck %s --check-prefix=OPT-MICRO
// OPT-MICRO: alpa-opt: error: alpa-accumulate-gradients: option 'num-micro-batches' must be positive; got 0
// RUN: not alpa-opt %s --alpa-accumulate-gradients='accumulate=max' 2>&1 | FileCheck %s --check-prefix=OPT-ACCUMULATE
// OPT-ACCUMULATE: alpa-opt: error: option 'accumulate' of alpa-accumulate-gradients must be one of mean, sum; got 'max'
// RUN: not alpa-opt %s --alpa-accumulate-gradients='num-micro-batches=2 batch-args=1,1' 2>&1 | FileCheck %s --check-prefix=OPT-TWICE
// OPT-TWICE: alpa-opt: error: alpa-accumulate-gradients: option 'batch-args' lists 1 more than once
// RUN: not alpa-opt %s --split-input-file --alpa-accumulate-gradients='num-micro-batches=2 batch-args=7' 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: error: gradient accumulation: batch arguments [7] are out of range: @main has 2
// RUN: not alpa-opt %s --split-input-file --alpa-accumulate-gradients='num-micro-batches=2 batch-args=1 concat-results=5' 2>&1 | FileCheck %s --check-prefix=CONCAT-RANGE
// CONCAT-RANGE: error: gradient accumulation: concatenated results [5] are out of range: @main has 1

// A step whose gradients were taken with jax.grad: no part is marked as computing them.
sdy.mesh @mesh = <["x"=2]>
// expected-error@+1 {{gradient accumulation: the step marks no gradients; compute them with alpa_mlir.grad (or alpa_mlir.value_and_grad), or run alpa-mark-apply-gradients before planning}}
func.func @unmarked_gradients(%arg0: tensor<4x4xf32>, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4x4xf32> {
  %0 = stablehlo.dot_general %arg1, %arg1, contracting_dims = [0] x [0] : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = stablehlo.subtract %arg0, %0 : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// -----

// The update reads the batch itself: it cannot run once for all micro-batches.
sdy.mesh @mesh = <["x"=2]>
func.func @apply_reads_batch(%arg0: tensor<8x4xf32>, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.negate %arg1 {alpa.segment = 0 : i64} : tensor<8x4xf32>
  // expected-error@+1 {{gradient accumulation: the apply-gradient part reads a batch argument itself}}
  %1 = stablehlo.subtract %arg1, %0 {alpa.apply_grad, alpa.segment = 0 : i64} : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// An integer computed from the batch reaches the results: it cannot be averaged.
sdy.mesh @mesh = <["x"=2]>
func.func @integer_result(%arg0: tensor<4x4xf32>, %arg1: tensor<8x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x4xf32>, tensor<8x4xi32>) {
  // expected-error@+1 {{gradient accumulation: a tensor<8x4xi32> computed from the batch reaches the apply-gradient part or the results; only floating-point values can be averaged over micro-batches}}
  %0 = stablehlo.negate %arg1 {alpa.segment = 0 : i64} : tensor<8x4xi32>
  %1 = stablehlo.negate %arg0 {alpa.apply_grad, alpa.segment = 0 : i64} : tensor<4x4xf32>
  return %1, %0 : tensor<4x4xf32>, tensor<8x4xi32>
}

// -----

// The module has no Shardy mesh: alpa-export-sdy has not run.
// expected-error@+1 {{gradient accumulation: the batch arguments have no Shardy sharding to read the mesh from; run alpa-export-sdy first}}
func.func @no_mesh(%arg0: tensor<4x4xf32>, %arg1: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.dot_general %arg1, %arg1, contracting_dims = [0] x [0] {alpa.segment = 0 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = stablehlo.subtract %arg0, %0 {alpa.apply_grad, alpa.segment = 0 : i64} : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// -----

// The only batch argument is a scalar: there is nothing to split into micro-batches.
sdy.mesh @mesh = <["x"=2]>
// expected-error@+1 {{gradient accumulation: no batch argument has a leading dimension to split into micro-batches}}
func.func @scalar_batch(%arg0: tensor<4x4xf32>, %arg1: tensor<f32>) -> tensor<4x4xf32> {
  %0 = stablehlo.negate %arg0 {alpa.apply_grad, alpa.segment = 0 : i64} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// A dynamic batch: no micro-batch size to slice.
sdy.mesh @mesh = <["x"=2]>
// expected-error@+1 {{gradient accumulation: batch arguments [1] have dynamic shapes; micro-batches need static ones}}
func.func @dynamic_batch(%arg0: tensor<4x4xf32>, %arg1: tensor<?x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4x4xf32> {
  %0 = stablehlo.dot_general %arg1, %arg1, contracting_dims = [0] x [0] {alpa.segment = 0 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<4x4xf32>
  %1 = stablehlo.subtract %arg0, %0 {alpa.apply_grad, alpa.segment = 0 : i64} : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
