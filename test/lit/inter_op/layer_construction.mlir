// RUN: alpa-opt %s --split-input-file --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2})' | FileCheck %s
// RUN: alpa-opt %s --split-input-file --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2 clustering=equal-operator})' | FileCheck %s --check-prefix=EQOP
// RUN: alpa-opt %s --split-input-file --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=2 delta=0 relax-delta})' 2>&1 | FileCheck %s --check-prefix=RELAX

// At delta=0 no clustering of the first step into 2 layers exists (its layers' FLOPs
// differ); relax-delta clusters it at the least delta that admits one, with a warning
// rather than an error: the same layers as at the default delta.
// RELAX: layer_construction.mlir:{{[0-9]+}}:3: warning: layer construction: no clustering of 8 forward ops into 2 layers keeps every layer's FLOPs <= (1 + delta) * average at delta = 0.0 (Sec. 5.2); clustered at delta = 0.01469, the least that does
// RELAX-LABEL: func.func public @main
// RELAX: stablehlo.dot_general %arg2, %arg0, {{.*}} {alpa.layer = 0 : i64, alpa.phase = "forward"}
// RELAX: stablehlo.dot_general {{.*}}, %arg1, {{.*}} {alpa.layer = 1 : i64, alpa.phase = "forward"}

// Two matmul layers with SGD, as jax.jit lowers them without locations (the dataflow
// rule finds the parts): each forward matmul is a layer; the backward matmuls join
// the layer of the forward matmul they differentiate (the weight gradient of w2 and
// the input gradient through w2 in layer 1, the weight gradient of w1 in layer 0);
// each update joins its weight's layer.
// CHECK-LABEL: func.func public @main
// CHECK: stablehlo.dot_general %arg2, %arg0, {{.*}} {alpa.layer = 0 : i64, alpa.phase = "forward"}
// CHECK: stablehlo.tanh {{.*}} {alpa.layer = 0 : i64, alpa.phase = "forward"}
// CHECK: stablehlo.subtract {{.*}} {alpa.layer = 0 : i64, alpa.phase = "forward"}
// CHECK: stablehlo.dot_general {{.*}}, %arg1, {{.*}} {alpa.layer = 1 : i64, alpa.phase = "forward"}
// CHECK: stablehlo.dot_general {{.*}} {alpa.layer = 1 : i64, alpa.phase = "backward"}
// CHECK: stablehlo.dot_general {{.*}}, %arg1, {{.*}} {alpa.layer = 1 : i64, alpa.phase = "backward"}
// CHECK: stablehlo.dot_general {{.*}}, %arg2, {{.*}} {alpa.layer = 0 : i64, alpa.phase = "backward"}
// CHECK: stablehlo.subtract %arg0, {{.*}} {alpa.layer = 0 : i64, alpa.phase = "apply"}
// CHECK: stablehlo.subtract %arg1, {{.*}} {alpa.layer = 1 : i64, alpa.phase = "apply"}
// Equal-operator clustering (Sec. 8.3's baseline) cuts the 8 forward ops 4 and 4:
// 1 - tanh, which only layer 0's backward reads, lands in layer 1.
// EQOP-LABEL: func.func public @main
// EQOP: stablehlo.dot_general %arg2, %arg0, {{.*}} {alpa.layer = 0 : i64, alpa.phase = "forward"}
// EQOP: stablehlo.subtract {{.*}} {alpa.layer = 1 : i64, alpa.phase = "forward"}
// EQOP: stablehlo.dot_general {{.*}}, %arg1, {{.*}} {alpa.layer = 1 : i64, alpa.phase = "forward"}
module @two_layer_sgd {
  func.func public @main(%arg0: tensor<16x16xf32>, %arg1: tensor<16x16xf32>, %arg2: tensor<4x16xf32>) -> (tensor<16x16xf32> {jax.result_info = "result[0]"}, tensor<16x16xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.dot_general %arg2, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %1 = stablehlo.tanh %0 : tensor<4x16xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %3 = stablehlo.subtract %2, %1 : tensor<4x16xf32>
    %4 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %7 = stablehlo.dot_general %6, %1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<16x16xf32>
    %8 = stablehlo.transpose %7, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %9 = stablehlo.dot_general %6, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %10 = stablehlo.multiply %9, %3 : tensor<4x16xf32>
    %11 = stablehlo.multiply %10, %1 : tensor<4x16xf32>
    %12 = stablehlo.add %10, %11 : tensor<4x16xf32>
    %13 = stablehlo.dot_general %12, %arg2, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<16x16xf32>
    %14 = stablehlo.transpose %13, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %cst_2 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %16 = stablehlo.multiply %15, %14 : tensor<16x16xf32>
    %17 = stablehlo.subtract %arg0, %16 : tensor<16x16xf32>
    %cst_3 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %19 = stablehlo.multiply %18, %8 : tensor<16x16xf32>
    %20 = stablehlo.subtract %arg1, %19 : tensor<16x16xf32>
    return %17, %20, %5 : tensor<16x16xf32>, tensor<16x16xf32>, tensor<f32>
  }
}
