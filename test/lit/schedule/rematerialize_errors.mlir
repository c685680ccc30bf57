// Errors at a location.
// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-rematerialize='layers=0,3'
// Options, rejected before any module is read.
// RUN: not alpa-opt %s --alpa-rematerialize='layers=-1' 2>&1 | FileCheck %s --check-prefix=OPT-LAYERS
// OPT-LAYERS: alpa-opt: error: alpa-rematerialize: option 'layers' must list layer numbers (>= 0); got [-1]

// A step without layer marks.
// expected-error@+1 {{rematerialization: @main's ops carry no layers; run alpa-layer-construction first (ShardParallel: layer_option=AutoLayerOption(layer_num=...))}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.tanh %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A layer the step does not have.
// expected-error@+1 {{rematerialization: option 'layers' names layer(s) [3], but @main has layers [0]}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.tanh %x {alpa.layer = 0 : i64, alpa.phase = "forward"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
