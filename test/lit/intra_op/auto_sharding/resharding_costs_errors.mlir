// resharding-costs=xla compiles probes for the mesh: it needs as many local devices.
// RUN: env XLA_FLAGS=--xla_force_host_platform_device_count=4 alpa-opt %s --split-input-file --verify-diagnostics --alpa-auto-sharding='mesh-shape=2,4 resharding-costs=xla'
// RUN: not alpa-opt %s --alpa-auto-sharding='mesh-shape=2,4 resharding-costs=exact' 2>&1 | FileCheck %s --check-prefix=CHOICE
// CHOICE: alpa-opt: error: option 'resharding-costs' of alpa-auto-sharding must be one of model, xla; got 'exact'

// expected-error@+1 {{asking XLA for resharding costs on mesh [2, 4] needs 8 devices but 4 are available (on CPU, set XLA_FLAGS=--xla_force_host_platform_device_count=8 before importing jax)}}
module @too_few_devices {
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}
