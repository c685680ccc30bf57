// Errors at a location. Every case carries its own mesh (or none); the options hold for
// all of them: mesh-alpha=1,1 for the axis-count check, memory-budget for the infeasible plan.
// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-auto-sharding='mesh-alpha=1,1 memory-budget=4096'

// Invalid options are rejected by the driver before any module is read.
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 mesh-alpha=1' 2>&1 | FileCheck %s --check-prefix=OPT-ALPHA
// OPT-ALPHA-NOT: Traceback
// OPT-ALPHA: alpa-opt: error: alpa-auto-sharding: option 'mesh-alpha' has 1 values but 'mesh-shape' has 2 axes
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 mesh-beta=1,2,3' 2>&1 | FileCheck %s --check-prefix=OPT-BETA
// OPT-BETA: alpa-opt: error: alpa-auto-sharding: option 'mesh-beta' has 3 values but 'mesh-shape' has 2 axes
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-alpha=-1' 2>&1 | FileCheck %s --check-prefix=OPT-NEGATIVE-ALPHA
// OPT-NEGATIVE-ALPHA: alpa-opt: error: alpa-auto-sharding: option 'mesh-alpha' has a negative value
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 memory-budget=-1' 2>&1 | FileCheck %s --check-prefix=OPT-BUDGET
// OPT-BUDGET: alpa-opt: error: alpa-auto-sharding: option 'memory-budget' must be positive (0 turns it off)
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 zero-stage=1' 2>&1 | FileCheck %s --check-prefix=OPT-ZERO
// OPT-ZERO: alpa-opt: error: alpa-auto-sharding: option 'zero-stage' shapes data parallelism: it needs 'force-data-parallel'
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 force-data-parallel batch-args=0 zero-stage=4' 2>&1 | FileCheck %s --check-prefix=OPT-ZERO-STAGE
// OPT-ZERO-STAGE: alpa-opt: error: alpa-auto-sharding: option 'zero-stage' must be 0, 1, 2 or 3; got 4
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 force-data-parallel' 2>&1 | FileCheck %s --check-prefix=OPT-DP-BATCH
// OPT-DP-BATCH: alpa-opt: error: alpa-auto-sharding: options 'force-data-parallel' and 'force-batch-dim-to-mesh-dim' need 'batch-args' (the arguments whose leading dimension is the batch)
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 force-batch-dim-to-mesh-dim=0' 2>&1 | FileCheck %s --check-prefix=OPT-FORCE-BATCH
// OPT-FORCE-BATCH: alpa-opt: error: alpa-auto-sharding: options 'force-data-parallel' and 'force-batch-dim-to-mesh-dim' need 'batch-args'
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 batch-args=0 force-batch-dim-to-mesh-dim=2' 2>&1 | FileCheck %s --check-prefix=OPT-FORCE-AXIS
// OPT-FORCE-AXIS: alpa-opt: error: alpa-auto-sharding: option 'force-batch-dim-to-mesh-dim' is 2 but the mesh has 2 axes
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 solver-time-limit=-1' 2>&1 | FileCheck %s --check-prefix=OPT-TIME-LIMIT
// OPT-TIME-LIMIT: alpa-opt: error: alpa-auto-sharding: option 'solver-time-limit' must not be negative
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 mip-gap=1' 2>&1 | FileCheck %s --check-prefix=OPT-GAP
// OPT-GAP: alpa-opt: error: alpa-auto-sharding: option 'mip-gap' is a fraction in [0, 1); got 1.0
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 keep-user-shardings=some' 2>&1 | FileCheck %s --check-prefix=OPT-KEEP
// OPT-KEEP: alpa-opt: error: option 'keep-user-shardings' of alpa-auto-sharding must be one of all, io, none; got 'some'
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 partial-sums=bf16' 2>&1 | FileCheck %s --check-prefix=OPT-PARTIAL
// OPT-PARTIAL: alpa-opt: error: option 'partial-sums' of alpa-auto-sharding must be one of float32, result; got 'bf16'

// Errors that depend on the machine, not on the IR: an unknown solver, a report that cannot be written.
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 solver=NO_SUCH_SOLVER' 2>&1 | FileCheck %s --check-prefix=SOLVER
// SOLVER-NOT: Traceback
// SOLVER: error: auto-sharding: solver 'NO_SUCH_SOLVER' is not an installed CVXPY MILP solver; installed ones: {{.*}}HIGHS
// RUN: not alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=2,2 report=%t.no-such-dir/plan.json' 2>&1 | FileCheck %s --check-prefix=REPORT
// REPORT-NOT: Traceback
// REPORT: error: option 'report': cannot write {{.*}}.no-such-dir/plan.json: No such file or directory

// Without mesh-shape and without a mesh on the module there is nothing to plan for.
// expected-error@+1 {{auto-sharding needs a device mesh: pass option 'mesh-shape' (e.g. mesh-shape=2,4)}}
module @missing_mesh {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// jax.jit lowers for one device; that count is no mesh either.
// expected-error@+1 {{auto-sharding needs a device mesh}}
module @missing_mesh_one_partition attributes {mhlo.num_partitions = 1 : i32} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// An alpa.mesh without its shape.
// expected-error@+1 {{alpa.mesh needs a 'shape' entry}}
module @malformed_mesh attributes {alpa.mesh = {axes = ["x", "y"]}} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// mesh-alpha=1,1 names two axes; the module's mesh has one.
// expected-error@+1 {{option 'mesh-alpha' has 2 values but the mesh has 1 axes}}
module @mesh_alpha_length attributes {alpa.mesh = {shape = array<i64: 8>}} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// Two public functions, neither named main: which one to plan is unclear.
// expected-error@+1 {{auto-sharding plans one function: the module needs a public @main (found 2 public functions)}}
module @no_public_main attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  func.func @first(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
  func.func @second(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// The argument and the result, each split four ways, need 128 KiB per device; nothing
// scales with a batch (no batch-args), so the error offers more devices and remat.
module @infeasible_memory_budget attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  // expected-error@+1 {{auto-sharding: no sharding plan fits the memory budget of 4 KiB per device: the step needs at least 128 KiB per device. It would need at least: on twice the devices (8), about 64 KiB; less with the layers' activations recomputed: cut the step into layers (alpa-layer-construction before this pass, or ShardParallel's layer_option) and let the plan recompute them (rematerialize=auto). Or raise the budget}}
  func.func @main(%arg0: tensor<256x256xf32>) -> tensor<256x256xf32> {
    %0 = stablehlo.negate %arg0 : tensor<256x256xf32>
    return %0 : tensor<256x256xf32>
  }
}

// -----

// A pinned argument sharding over 8 devices on a 4-device mesh.
module @pinned_argument_device_count attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  // expected-error@+1 {{argument #0: pinned sharding: sharding '{devices=[8,1]<=[8]}' uses 8 devices but the mesh [2, 2] has 4}}
  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// A pinned result whose device order no assignment of mesh axes produces.
module @pinned_result_device_order attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  // expected-error@+1 {{result #0: pinned sharding: sharding '{devices=[4,1]0,2,3,1}' is not expressible on mesh [2, 2]}}
  func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1]0,2,3,1}"}) {
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// A pinned op sharding on one device is not a mesh sharding.
module @pinned_op_maximal attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-error@+1 {{stablehlo.negate: pinned sharding: sharding '{maximal device=1}' places the value on one device; a mesh sharding spec cannot express it}}
    %0 = stablehlo.negate %arg0 {mhlo.sharding = "{maximal device=1}"} : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}

// -----

// A host callback placed on a device the mesh does not have.
module @host_callback_off_mesh attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-error@+1 {{the host callback runs on device 7, but the mesh has 4 devices; place it on one of 0..3}}
    stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {has_side_effect = true, mhlo.sharding = "{maximal device=7}"} : (tensor<8x8xf32>) -> ()
    return %arg0 : tensor<8x8xf32>
  }
}

// -----

// A host callback runs once, on one device, never split.
module @host_callback_split attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    // expected-error@+1 {{a host callback runs once, on one device, but its sharding is '{devices=[2,2]<=[4]}'}}
    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {has_side_effect = true, mhlo.sharding = "{devices=[2,2]<=[4]}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}

// -----

// A dynamic dimension: no tile size to plan with (it was planned as -2^63 elements).
module @dynamic_argument attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  // expected-error@+1 {{auto-sharding needs static shapes; tensor<?x4xf32> has a dynamic dimension: trace the function with concrete shapes}}
  func.func @main(%arg0: tensor<?x4xf32>, %arg1: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
}

// -----

module @dynamic_result attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<1xi32>) -> tensor<?xf32> {
    // expected-error@+1 {{auto-sharding needs static shapes; tensor<?xf32> has a dynamic dimension}}
    %0 = stablehlo.dynamic_broadcast_in_dim %arg0, %arg1, dims = [0] : (tensor<4xf32>, tensor<1xi32>) -> tensor<?xf32>
    return %0 : tensor<?xf32>
  }
}

// -----

// Calls the inliner leaves behind are neither planned nor compiled: recursion ...
module @self_recursive attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{@main calls @main, which is recursive (@main -> @main): XLA cannot compile recursion; write it as a loop (lax.while_loop, lax.scan)}}
    %0 = func.call @main(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

module @call_cycle attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{@main calls @f, which is recursive (@f -> @g -> @f)}}
    %0 = func.call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = func.call @g(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @g(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = func.call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// ... and calls to a declaration.
module @call_to_declaration attributes {alpa.mesh = {shape = array<i64: 2, 2>}} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{@main calls @external, a declaration with no body: there is nothing to plan or compile; define it in the module}}
    %0 = func.call @external(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @external(tensor<8xf32>) -> tensor<8xf32>
}
