// RUN: alpa-opt %s --alpa-import-sharding='mesh-shape=2,2' --split-input-file --verify-diagnostics

// The mesh-shape option disagrees with the module's own mesh.
// expected-error@+1 {{option 'mesh-shape' [2, 2] has 4 devices but the module's sdy mesh has 8}}
module @option_mismatch {
  sdy.mesh @mesh = <["x"=8]>
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}
