// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4' | FileCheck %s

// A sum over the split dimension is a split reduction loop: each device sums its
// columns and an all-reduce combines them, so the split input is not gathered.
// CHECK-LABEL: func @sum_over_split_dim
// CHECK-SAME: -> (tensor<2xf32> {mhlo.sharding = "{replicated}"})
// CHECK: %[[SUM_DOT:.*]] = stablehlo.dot_general {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-NOT: custom_call @Sharding
// CHECK: stablehlo.reduce(%[[SUM_DOT]] init: {{.*}}) applies stablehlo.add across dimensions = [1] {mhlo.sharding = "{replicated}"}
func.func @sum_over_split_dim(%x: tensor<2x1024xf32>, %w: tensor<1024x4096xf32>) -> tensor<2xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x1024xf32>, tensor<1024x4096xf32>) -> tensor<2x4096xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x4096xf32>, tensor<f32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// Softmax over attention scores splits the 16 heads: max and sum reduce the
// unsplit key dimension locally, the broadcasts and divide follow.
// CHECK-LABEL: func @softmax_heads
// CHECK-SAME: %arg0: tensor<1x16x2x512xf32> {mhlo.sharding = "{devices=[1,4,1,1]<=[4]}"}
// CHECK-SAME: -> (tensor<1x16x2x512xf32> {mhlo.sharding = "{devices=[1,4,1,1]<=[4]}"})
// CHECK: stablehlo.reduce({{.*}}) applies stablehlo.maximum across dimensions = [3] {mhlo.sharding = "{devices=[1,4,1]<=[4]}"}
// CHECK: stablehlo.broadcast_in_dim {{.*}} {mhlo.sharding = "{devices=[1,4,1,1]<=[4]}"}
// CHECK: stablehlo.exponential {{.*}} {mhlo.sharding = "{devices=[1,4,1,1]<=[4]}"}
// CHECK: stablehlo.reduce({{.*}}) applies stablehlo.add across dimensions = [3] {mhlo.sharding = "{devices=[1,4,1]<=[4]}"}
// CHECK: stablehlo.divide {{.*}} {mhlo.sharding = "{devices=[1,4,1,1]<=[4]}"}
// CHECK-NOT: custom_call @Sharding
func.func @softmax_heads(%s: tensor<1x16x2x512xf32>) -> tensor<1x16x2x512xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<1x16x2x512xf32>, tensor<f32>) -> tensor<1x16x2xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<1x16x2xf32>) -> tensor<1x16x2x512xf32>
  %d = stablehlo.subtract %s, %mb : tensor<1x16x2x512xf32>
  %e = stablehlo.exponential %d : tensor<1x16x2x512xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [3] : (tensor<1x16x2x512xf32>, tensor<f32>) -> tensor<1x16x2xf32>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0, 1, 2] : (tensor<1x16x2xf32>) -> tensor<1x16x2x512xf32>
  %p = stablehlo.divide %e, %sb : tensor<1x16x2x512xf32>
  return %p : tensor<1x16x2x512xf32>
}

// -----

// Layer norm splits the batch: mean and variance reduce the whole hidden dimension
// on each device, and scale and bias are broadcast from replicated arguments.
// CHECK-LABEL: func @layer_norm_batch
// CHECK-SAME: %arg0: tensor<8x1024xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK-SAME: %arg1: tensor<1024xf32> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: %arg2: tensor<1024xf32> {mhlo.sharding = "{replicated}"}
// CHECK: stablehlo.reduce(%arg0 init: {{.*}}) applies stablehlo.add across dimensions = [1] {mhlo.sharding = "{devices=[4]<=[4]}"}
// CHECK: stablehlo.rsqrt {{.*}} {mhlo.sharding = "{devices=[4]<=[4]}"}
// CHECK: stablehlo.broadcast_in_dim %arg1, dims = [1] {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK: stablehlo.add {{.*}} {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK-NOT: custom_call @Sharding
func.func @layer_norm_batch(%x: tensor<8x1024xf32>, %g: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<8x1024xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<1024.0> : tensor<8xf32>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x1024xf32>, tensor<f32>) -> tensor<8xf32>
  %mean = stablehlo.divide %s, %n : tensor<8xf32>
  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<8xf32>) -> tensor<8x1024xf32>
  %c = stablehlo.subtract %x, %mb : tensor<8x1024xf32>
  %sq = stablehlo.multiply %c, %c : tensor<8x1024xf32>
  %v = stablehlo.reduce(%sq init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x1024xf32>, tensor<f32>) -> tensor<8xf32>
  %var = stablehlo.divide %v, %n : tensor<8xf32>
  %r = stablehlo.rsqrt %var : tensor<8xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<8xf32>) -> tensor<8x1024xf32>
  %y = stablehlo.multiply %c, %rb : tensor<8x1024xf32>
  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<1024xf32>) -> tensor<8x1024xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<1024xf32>) -> tensor<8x1024xf32>
  %y1 = stablehlo.multiply %y, %gb : tensor<8x1024xf32>
  %y2 = stablehlo.add %y1, %bb : tensor<8x1024xf32>
  return %y2 : tensor<8x1024xf32>
}

// -----

// argmax is a variadic reduce whose compare/select body no all-reduce can combine:
// the reduced dimension stays whole, so the column-split matmul result is gathered
// first and the reduce runs replicated.
// CHECK-LABEL: func @argmax_reduced_dim_whole
// CHECK: %[[ARGMAX_DOT:.*]] = stablehlo.dot_general {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-NEXT: %[[ARGMAX_GATHER:.*]] = stablehlo.custom_call @Sharding(%[[ARGMAX_DOT]]) {{.*}}mhlo.sharding = "{replicated}"
// CHECK: stablehlo.iota dim = 1 {mhlo.sharding = "{replicated}"}
// CHECK: stablehlo.reduce(%[[ARGMAX_GATHER]] init: {{.*}}), ({{.*}}) across dimensions = [1] {mhlo.sharding = "{{[{][{]}}replicated}, {replicated}}"}
func.func @argmax_reduced_dim_whole(%x: tensor<2x1024xf32>, %w: tensor<1024x4096xf32>) -> (tensor<2xf32>, tensor<2xi32>) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x1024xf32>, tensor<1024x4096xf32>) -> tensor<2x4096xf32>
  %i = stablehlo.iota dim = 1 : tensor<2x4096xi32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.reduce(%0 init: %ninf), (%i init: %zero) across dimensions = [1] : (tensor<2x4096xf32>, tensor<2x4096xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
   reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>) {
    %gt = stablehlo.compare GT, %a, %c : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %v = stablehlo.select %gt, %a, %c : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %k = stablehlo.select %gt, %b, %d : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    stablehlo.return %v, %k : tensor<f32>, tensor<i32>
  }
  return %r#0, %r#1 : tensor<2xf32>, tensor<2xi32>
}

// -----

// The same argmax over a batch that divides by 4 splits the kept dimension only.
// CHECK-LABEL: func @argmax_batch_split
// CHECK-SAME: %arg0: tensor<8x1024xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK: stablehlo.iota dim = 1 {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK: stablehlo.reduce(%arg0 init: {{.*}}), ({{.*}}) across dimensions = [1] {mhlo.sharding = "{{[{][{]}}devices=[4]<=[4]}, {devices=[4]<=[4]}}"}
func.func @argmax_batch_split(%x: tensor<8x1024xf32>) -> (tensor<8xf32>, tensor<8xi32>) {
  %i = stablehlo.iota dim = 1 : tensor<8x1024xi32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.reduce(%x init: %ninf), (%i init: %zero) across dimensions = [1] : (tensor<8x1024xf32>, tensor<8x1024xi32>, tensor<f32>, tensor<i32>) -> (tensor<8xf32>, tensor<8xi32>)
   reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>) {
    %gt = stablehlo.compare GT, %a, %c : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %v = stablehlo.select %gt, %a, %c : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %k = stablehlo.select %gt, %b, %d : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    stablehlo.return %v, %k : tensor<f32>, tensor<i32>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xi32>
}
