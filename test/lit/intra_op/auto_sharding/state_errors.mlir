// Option 'state' checked against @main: pairs in range, of one type, each value once.
// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-auto-sharding='mesh-shape=2 state=0:0,1:2'

// Malformed pairs are rejected by the driver before any module is read.
// RUN: not alpa-opt %s --alpa-auto-sharding='mesh-shape=2 state=0' 2>&1 | FileCheck %s --check-prefix=PAIR
// PAIR: alpa-opt: error: option 'state' of alpa-auto-sharding expects list of int:int; got '0'
// RUN: not alpa-opt %s --alpa-auto-sharding='mesh-shape=2 state=0:0,,1:1' 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: alpa-opt: error: option 'state' of alpa-auto-sharding has an empty list element; got '0:0,,1:1'
// One argument tied to two results (or two arguments to one result) cannot hold.
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2 state=0:0,0:1' 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: state_errors.mlir:[[# @LINE + 4]]:1: error: option 'state' ties argument 0 twice

// Result 2 does not exist.
// expected-error@+1 {{option 'state' pair 1:2 is out of range: @main has 2 arguments and 2 results}}
module @state_out_of_range {
  func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    return %arg0, %arg1 : tensor<8xf32>, tensor<8xf32>
  }
}

// -----

// A state value keeps its type from one step to the next.
// expected-error@+1 {{option 'state' pair 0:0 ties an argument of type tensor<8xf32> to a result of type tensor<4xf32>}}
module @state_type_mismatch {
  func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>, tensor<8xf32>) {
    %0 = stablehlo.slice %arg0 [0:4] : (tensor<8xf32>) -> tensor<4xf32>
    return %0, %arg1, %arg1 : tensor<4xf32>, tensor<8xf32>, tensor<8xf32>
  }
}
