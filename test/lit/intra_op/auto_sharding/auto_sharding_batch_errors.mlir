// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-auto-sharding='batch-args=0,2 force-batch-dim-to-mesh-dim=1'

// Batch options checked against the module: its mesh and its @main.

// The batch is forced onto mesh axis 1, but the module's mesh has one axis.
// expected-error@+1 {{option 'force-batch-dim-to-mesh-dim' is 1 but the module's mesh has 1 axes}}
module @force_batch_axis_vs_module_mesh attributes {alpa.mesh = {shape = array<i64: 4>}} {
  func.func @main(%arg0: tensor<8x4xf32>, %arg1: tensor<4x4xf32>, %arg2: tensor<8x4xf32>) -> tensor<8x4xf32> {
    return %arg0 : tensor<8x4xf32>
  }
}

// -----

// Argument 2 is named as a batch, but @main has two arguments.
// expected-error@+1 {{option 'batch-args' names argument(s) [0, 2] but @main has 2 arguments}}
module @batch_args_vs_main attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  func.func @main(%arg0: tensor<8x4xf32>, %arg1: tensor<4x4xf32>) -> tensor<8x4xf32> {
    return %arg0 : tensor<8x4xf32>
  }
}
