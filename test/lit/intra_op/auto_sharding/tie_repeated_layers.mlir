// RUN: alpa-opt %s --alpa-auto-sharding='mesh-shape=2,4 batch-args=12' > %t.untied
// RUN: alpa-opt %s --alpa-auto-sharding='mesh-shape=2,4 batch-args=12 tie-repeated-layers' > %t.tied
// RUN: diff %t.untied %t.tied
// RUN: FileCheck %s < %t.tied

// A training step (SGD) of 12 identical tanh(x @ w) layers, 256 wide, batch 64, as
// jax.jit lowers it. Tied, the ILP solves the repeated layers once (every second
// layer shares a choice) and gives the untied plan: Megatron's alternating pairs,
// a column-split weight, then a row-split one.

// CHECK-LABEL: func.func public @main
// CHECK-SAME: %arg0: tensor<256x256xf32> {mhlo.sharding = "{devices=[1,2,4]<=[8] last_tile_dim_replicate}"}
// CHECK-SAME: %arg1: tensor<256x256xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}
// CHECK-SAME: %arg2: tensor<256x256xf32> {mhlo.sharding = "{devices=[1,2,4]<=[8] last_tile_dim_replicate}"}
// CHECK-SAME: %arg3: tensor<256x256xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}
module @jit_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<256x256xf32>, %arg1: tensor<256x256xf32>, %arg2: tensor<256x256xf32>, %arg3: tensor<256x256xf32>, %arg4: tensor<256x256xf32>, %arg5: tensor<256x256xf32>, %arg6: tensor<256x256xf32>, %arg7: tensor<256x256xf32>, %arg8: tensor<256x256xf32>, %arg9: tensor<256x256xf32>, %arg10: tensor<256x256xf32>, %arg11: tensor<256x256xf32>, %arg12: tensor<64x256xf32>) -> (tensor<256x256xf32> {jax.result_info = "result[0]"}, tensor<256x256xf32> {jax.result_info = "result[1]"}, tensor<256x256xf32> {jax.result_info = "result[2]"}, tensor<256x256xf32> {jax.result_info = "result[3]"}, tensor<256x256xf32> {jax.result_info = "result[4]"}, tensor<256x256xf32> {jax.result_info = "result[5]"}, tensor<256x256xf32> {jax.result_info = "result[6]"}, tensor<256x256xf32> {jax.result_info = "result[7]"}, tensor<256x256xf32> {jax.result_info = "result[8]"}, tensor<256x256xf32> {jax.result_info = "result[9]"}, tensor<256x256xf32> {jax.result_info = "result[10]"}, tensor<256x256xf32> {jax.result_info = "result[11]"}) {
    %0 = stablehlo.dot_general %arg12, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %1 = stablehlo.tanh %0 : tensor<64x256xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %3 = stablehlo.subtract %2, %1 : tensor<64x256xf32>
    %4 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %5 = stablehlo.tanh %4 : tensor<64x256xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %7 = stablehlo.subtract %6, %5 : tensor<64x256xf32>
    %8 = stablehlo.dot_general %5, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %9 = stablehlo.tanh %8 : tensor<64x256xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %11 = stablehlo.subtract %10, %9 : tensor<64x256xf32>
    %12 = stablehlo.dot_general %9, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %13 = stablehlo.tanh %12 : tensor<64x256xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %15 = stablehlo.subtract %14, %13 : tensor<64x256xf32>
    %16 = stablehlo.dot_general %13, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %17 = stablehlo.tanh %16 : tensor<64x256xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %19 = stablehlo.subtract %18, %17 : tensor<64x256xf32>
    %20 = stablehlo.dot_general %17, %arg5, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %21 = stablehlo.tanh %20 : tensor<64x256xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %23 = stablehlo.subtract %22, %21 : tensor<64x256xf32>
    %24 = stablehlo.dot_general %21, %arg6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %25 = stablehlo.tanh %24 : tensor<64x256xf32>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %27 = stablehlo.subtract %26, %25 : tensor<64x256xf32>
    %28 = stablehlo.dot_general %25, %arg7, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %29 = stablehlo.tanh %28 : tensor<64x256xf32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %31 = stablehlo.subtract %30, %29 : tensor<64x256xf32>
    %32 = stablehlo.dot_general %29, %arg8, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %33 = stablehlo.tanh %32 : tensor<64x256xf32>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %35 = stablehlo.subtract %34, %33 : tensor<64x256xf32>
    %36 = stablehlo.dot_general %33, %arg9, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %37 = stablehlo.tanh %36 : tensor<64x256xf32>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %38 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %39 = stablehlo.subtract %38, %37 : tensor<64x256xf32>
    %40 = stablehlo.dot_general %37, %arg10, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %41 = stablehlo.tanh %40 : tensor<64x256xf32>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %42 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %43 = stablehlo.subtract %42, %41 : tensor<64x256xf32>
    %44 = stablehlo.dot_general %41, %arg11, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %45 = stablehlo.tanh %44 : tensor<64x256xf32>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %46 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %47 = stablehlo.subtract %46, %45 : tensor<64x256xf32>
    %cst_11 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_12 = stablehlo.constant dense<1.638400e+04> : tensor<f32>
    %48 = stablehlo.divide %cst_11, %cst_12 : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %50 = stablehlo.multiply %45, %49 : tensor<64x256xf32>
    %51 = stablehlo.multiply %49, %45 : tensor<64x256xf32>
    %52 = stablehlo.add %50, %51 : tensor<64x256xf32>
    %53 = stablehlo.multiply %52, %47 : tensor<64x256xf32>
    %54 = stablehlo.multiply %53, %45 : tensor<64x256xf32>
    %55 = stablehlo.add %53, %54 : tensor<64x256xf32>
    %56 = stablehlo.dot_general %55, %41, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %57 = stablehlo.transpose %56, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %58 = stablehlo.dot_general %55, %arg11, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %59 = stablehlo.multiply %58, %43 : tensor<64x256xf32>
    %60 = stablehlo.multiply %59, %41 : tensor<64x256xf32>
    %61 = stablehlo.add %59, %60 : tensor<64x256xf32>
    %62 = stablehlo.dot_general %61, %37, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %63 = stablehlo.transpose %62, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %64 = stablehlo.dot_general %61, %arg10, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %65 = stablehlo.multiply %64, %39 : tensor<64x256xf32>
    %66 = stablehlo.multiply %65, %37 : tensor<64x256xf32>
    %67 = stablehlo.add %65, %66 : tensor<64x256xf32>
    %68 = stablehlo.dot_general %67, %33, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %69 = stablehlo.transpose %68, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %70 = stablehlo.dot_general %67, %arg9, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %71 = stablehlo.multiply %70, %35 : tensor<64x256xf32>
    %72 = stablehlo.multiply %71, %33 : tensor<64x256xf32>
    %73 = stablehlo.add %71, %72 : tensor<64x256xf32>
    %74 = stablehlo.dot_general %73, %29, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %75 = stablehlo.transpose %74, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %76 = stablehlo.dot_general %73, %arg8, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %77 = stablehlo.multiply %76, %31 : tensor<64x256xf32>
    %78 = stablehlo.multiply %77, %29 : tensor<64x256xf32>
    %79 = stablehlo.add %77, %78 : tensor<64x256xf32>
    %80 = stablehlo.dot_general %79, %25, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %81 = stablehlo.transpose %80, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %82 = stablehlo.dot_general %79, %arg7, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %83 = stablehlo.multiply %82, %27 : tensor<64x256xf32>
    %84 = stablehlo.multiply %83, %25 : tensor<64x256xf32>
    %85 = stablehlo.add %83, %84 : tensor<64x256xf32>
    %86 = stablehlo.dot_general %85, %21, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %87 = stablehlo.transpose %86, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %88 = stablehlo.dot_general %85, %arg6, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %89 = stablehlo.multiply %88, %23 : tensor<64x256xf32>
    %90 = stablehlo.multiply %89, %21 : tensor<64x256xf32>
    %91 = stablehlo.add %89, %90 : tensor<64x256xf32>
    %92 = stablehlo.dot_general %91, %17, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %93 = stablehlo.transpose %92, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %94 = stablehlo.dot_general %91, %arg5, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %95 = stablehlo.multiply %94, %19 : tensor<64x256xf32>
    %96 = stablehlo.multiply %95, %17 : tensor<64x256xf32>
    %97 = stablehlo.add %95, %96 : tensor<64x256xf32>
    %98 = stablehlo.dot_general %97, %13, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %99 = stablehlo.transpose %98, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %100 = stablehlo.dot_general %97, %arg4, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %101 = stablehlo.multiply %100, %15 : tensor<64x256xf32>
    %102 = stablehlo.multiply %101, %13 : tensor<64x256xf32>
    %103 = stablehlo.add %101, %102 : tensor<64x256xf32>
    %104 = stablehlo.dot_general %103, %9, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %105 = stablehlo.transpose %104, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %106 = stablehlo.dot_general %103, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %107 = stablehlo.multiply %106, %11 : tensor<64x256xf32>
    %108 = stablehlo.multiply %107, %9 : tensor<64x256xf32>
    %109 = stablehlo.add %107, %108 : tensor<64x256xf32>
    %110 = stablehlo.dot_general %109, %5, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %111 = stablehlo.transpose %110, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %112 = stablehlo.dot_general %109, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %113 = stablehlo.multiply %112, %7 : tensor<64x256xf32>
    %114 = stablehlo.multiply %113, %5 : tensor<64x256xf32>
    %115 = stablehlo.add %113, %114 : tensor<64x256xf32>
    %116 = stablehlo.dot_general %115, %1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %117 = stablehlo.transpose %116, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %118 = stablehlo.dot_general %115, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %119 = stablehlo.multiply %118, %3 : tensor<64x256xf32>
    %120 = stablehlo.multiply %119, %1 : tensor<64x256xf32>
    %121 = stablehlo.add %119, %120 : tensor<64x256xf32>
    %122 = stablehlo.dot_general %121, %arg12, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %123 = stablehlo.transpose %122, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %cst_13 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %124 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
    %125 = stablehlo.multiply %124, %123 : tensor<256x256xf32>
    %126 = stablehlo.subtract %arg0, %125 : tensor<256x256xf32>
    %cst_14 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %127 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
    %128 = stablehlo.multiply %127, %117 : tensor<256x256xf32>
    %129 = stablehlo.subtract %arg1, %128 : tensor<256x256xf32>
    %cst_15 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %130 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
    %131 = stablehlo.multiply %130, %111 : tensor<256x256xf32>
    %132 = stablehlo.subtract %arg2, %131 : tensor<256x256xf32>
    %cst_16 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %133 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
    %134 = stablehlo.multiply %133, %105 : tensor<256x256xf32>
    %135 = stablehlo.subtract %arg3, %134 : tensor<256x256xf32>
    %cst_17 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %136 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
    %137 = stablehlo.multiply %136, %99 : tensor<256x256xf32>
    %138 = stablehlo.subtract %arg4, %137 : tensor<256x256xf32>
    %cst_18 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %139 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
    %140 = stablehlo.multiply %139, %93 : tensor<256x256xf32>
    %141 = stablehlo.subtract %arg5, %140 : tensor<256x256xf32>
    %cst_19 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %142 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
    %143 = stablehlo.multiply %142, %87 : tensor<256x256xf32>
    %144 = stablehlo.subtract %arg6, %143 : tensor<256x256xf32>
    %cst_20 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %145 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
    %146 = stablehlo.multiply %145, %81 : tensor<256x256xf32>
    %147 = stablehlo.subtract %arg7, %146 : tensor<256x256xf32>
    %cst_21 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %148 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
    %149 = stablehlo.multiply %148, %75 : tensor<256x256xf32>
    %150 = stablehlo.subtract %arg8, %149 : tensor<256x256xf32>
    %cst_22 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %151 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
    %152 = stablehlo.multiply %151, %69 : tensor<256x256xf32>
    %153 = stablehlo.subtract %arg9, %152 : tensor<256x256xf32>
    %cst_23 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %154 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
    %155 = stablehlo.multiply %154, %63 : tensor<256x256xf32>
    %156 = stablehlo.subtract %arg10, %155 : tensor<256x256xf32>
    %cst_24 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %157 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<256x256xf32>
    %158 = stablehlo.multiply %157, %57 : tensor<256x256xf32>
    %159 = stablehlo.subtract %arg11, %158 : tensor<256x256xf32>
    return %126, %129, %132, %135, %138, %141, %144, %147, %150, %153, %156, %159 : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>
  }
}

