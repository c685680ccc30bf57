// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4' | FileCheck %s

// A big batch of small images: the NHWC convolution and the max pooling after it
// split the batch; the kernel is replicated and the windowed H, W stay whole.
// CHECK-LABEL: func @conv_pool_batch_split
// CHECK-SAME: %arg0: tensor<32x16x16x8xf32> {mhlo.sharding = "{devices=[4,1,1,1]<=[4]}"}
// CHECK-SAME: %arg1: tensor<3x3x8x16xf32> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: -> (tensor<32x8x8x16xf32> {mhlo.sharding = "{devices=[4,1,1,1]<=[4]}"})
// CHECK: stablehlo.convolution(%arg0, %arg1) {{.*}}mhlo.sharding = "{devices=[4,1,1,1]<=[4]}"
// CHECK-NOT: custom_call @Sharding
// CHECK: "stablehlo.reduce_window"
// CHECK: }) {mhlo.sharding = "{devices=[4,1,1,1]<=[4]}"}
func.func @conv_pool_batch_split(%x: tensor<32x16x16x8xf32>, %k: tensor<3x3x8x16xf32>) -> tensor<32x8x8x16xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<32x16x16x8xf32>, tensor<3x3x8x16xf32>) -> tensor<32x16x16x16xf32>
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %1 = "stablehlo.reduce_window"(%0, %cst) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %2 = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }) : (tensor<32x16x16x16xf32>, tensor<f32>) -> tensor<32x8x8x16xf32>
  return %1 : tensor<32x8x8x16xf32>
}

// -----

// A depthwise convolution (feature_group_count = channels) is one loop over the
// channel groups: image, kernel and output all split the 64 channels.
// CHECK-LABEL: func @depthwise_conv_channels
// CHECK-SAME: %arg0: tensor<1x16x16x64xf32> {mhlo.sharding = "{devices=[1,1,1,4]<=[4]}"}
// CHECK-SAME: %arg1: tensor<3x3x1x64xf32> {mhlo.sharding = "{devices=[1,1,1,4]<=[4]}"}
// CHECK-SAME: -> (tensor<1x16x16x64xf32> {mhlo.sharding = "{devices=[1,1,1,4]<=[4]}"})
// CHECK: stablehlo.convolution(%arg0, %arg1) {{.*}}feature_group_count = 64 : i64, mhlo.sharding = "{devices=[1,1,1,4]<=[4]}"
func.func @depthwise_conv_channels(%x: tensor<1x16x16x64xf32>, %k: tensor<3x3x1x64xf32>) -> tensor<1x16x16x64xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 64 : i64} : (tensor<1x16x16x64xf32>, tensor<3x3x1x64xf32>) -> tensor<1x16x16x64xf32>
  return %0 : tensor<1x16x16x64xf32>
}

// -----

// A pointwise (1x1, stride 1, unpadded) depthwise convolution splits the batch, not
// the channel groups: XLA's partitioner aborts on a split of such a conv's groups.
// CHECK-LABEL: func @pointwise_depthwise_conv_batch
// CHECK-SAME: %arg0: tensor<8x4x4x64xf32> {mhlo.sharding = "{devices=[4,1,1,1]<=[4]}"}
// CHECK-SAME: %arg1: tensor<1x1x1x64xf32> {mhlo.sharding = "{replicated}"}
// CHECK: stablehlo.convolution(%arg0, %arg1) {{.*}}feature_group_count = 64 : i64, mhlo.sharding = "{devices=[4,1,1,1]<=[4]}"
func.func @pointwise_depthwise_conv_batch(%x: tensor<8x4x4x64xf32>, %k: tensor<1x1x1x64xf32>) -> tensor<8x4x4x64xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 64 : i64} : (tensor<8x4x4x64xf32>, tensor<1x1x1x64xf32>) -> tensor<8x4x4x64xf32>
  return %0 : tensor<8x4x4x64xf32>
}

// -----

// One image through a wide strided convolution: the output features split (the
// kernel's columns, as Megatron's first matmul) and the strided H, W stay whole.
// CHECK-LABEL: func @strided_conv_out_features
// CHECK-SAME: %arg0: tensor<1x16x16x256xf32> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: %arg1: tensor<3x3x256x512xf32> {mhlo.sharding = "{devices=[1,1,1,4]<=[4]}"}
// CHECK-SAME: -> (tensor<1x7x7x512xf32> {mhlo.sharding = "{devices=[1,1,1,4]<=[4]}"})
// CHECK: stablehlo.convolution(%arg0, %arg1) {{.*}}stride = [2, 2]{{.*}}mhlo.sharding = "{devices=[1,1,1,4]<=[4]}"
func.func @strided_conv_out_features(%x: tensor<1x16x16x256xf32>, %k: tensor<3x3x256x512xf32>) -> tensor<1x7x7x512xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x16x16x256xf32>, tensor<3x3x256x512xf32>) -> tensor<1x7x7x512xf32>
  return %0 : tensor<1x7x7x512xf32>
}

// -----

// Two output features from 512 input features: only the input-feature (reduction)
// loop divides by 4, so image and kernel split it and the output is all-reduced.
// CHECK-LABEL: func @conv_in_features_reduction
// CHECK-SAME: %arg0: tensor<1x16x16x512xf32> {mhlo.sharding = "{devices=[1,1,1,4]<=[4]}"}
// CHECK-SAME: %arg1: tensor<3x3x512x2xf32> {mhlo.sharding = "{devices=[1,1,4,1]<=[4]}"}
// CHECK: stablehlo.convolution(%arg0, %arg1) {{.*}}mhlo.sharding = "{replicated}"
func.func @conv_in_features_reduction(%x: tensor<1x16x16x512xf32>, %k: tensor<3x3x512x2xf32>) -> tensor<1x16x16x2xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x16x16x512xf32>, tensor<3x3x512x2xf32>) -> tensor<1x16x16x2xf32>
  return %0 : tensor<1x16x16x2xf32>
}

// -----

// Average pooling of one 3-channel image: only the windowed H and W divide by 4, and
// windowed dimensions never split (halos are not modelled), so nothing is split.
// CHECK-LABEL: func @negative_pool_spatial_whole
// CHECK-SAME: %arg0: tensor<1x16x16x3xf32> {mhlo.sharding = "{replicated}"}
// CHECK: "stablehlo.reduce_window"
// CHECK: }) {mhlo.sharding = "{replicated}"}
func.func @negative_pool_spatial_whole(%x: tensor<1x16x16x3xf32>) -> tensor<1x8x8x3xf32> {
  %cst = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %cst) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) : (tensor<1x16x16x3xf32>, tensor<f32>) -> tensor<1x8x8x3xf32>
  return %0 : tensor<1x8x8x3xf32>
}
