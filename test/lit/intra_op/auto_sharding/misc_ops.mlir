// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-auto-sharding='mesh-shape=1,4' | FileCheck %s

// concatenate keeps a loop on every dimension but the concatenated one, so two
// column-split matmul results stack along rows without resharding; iota computes
// its own tile of the column split.
// CHECK-LABEL: func @concatenate_iota
// CHECK-SAME: -> (tensor<4x4096xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}, tensor<2x4096xi32> {mhlo.sharding = "{devices=[1,4]<=[4]}"})
// CHECK-NOT: custom_call @Sharding
// CHECK: stablehlo.concatenate {{.*}}, dim = 0 {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: stablehlo.iota dim = 1 {mhlo.sharding = "{devices=[1,4]<=[4]}"}
func.func @concatenate_iota(%x: tensor<2x1024xf32>, %w: tensor<1024x4096xf32>, %v: tensor<1024x4096xf32>) -> (tensor<4x4096xf32>, tensor<2x4096xi32>) {
  %a = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x1024xf32>, tensor<1024x4096xf32>) -> tensor<2x4096xf32>
  %b = stablehlo.dot_general %x, %v, contracting_dims = [1] x [0] : (tensor<2x1024xf32>, tensor<1024x4096xf32>) -> tensor<2x4096xf32>
  %c = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2x4096xf32>, tensor<2x4096xf32>) -> tensor<4x4096xf32>
  %i = stablehlo.iota dim = 1 : tensor<2x4096xi32>
  return %c, %i : tensor<4x4096xf32>, tensor<2x4096xi32>
}

// -----

// pad and slice keep loops on the dimensions they leave alone: padding the rows keeps
// the column split, slicing the columns gathers them; a dense constant is produced
// already split for the multiply that reads it.
// CHECK-LABEL: func @pad_slice_constant
// CHECK: %[[PAD_DOT:.*]] = stablehlo.dot_general {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-NEXT: %[[PAD_GATHER:.*]] = stablehlo.custom_call @Sharding(%[[PAD_DOT]]) {{.*}}mhlo.sharding = "{replicated}"
// CHECK: stablehlo.constant {mhlo.sharding = "{replicated}"} dense<0.000000e+00> : tensor<f32>
// CHECK: stablehlo.pad %[[PAD_DOT]], {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: stablehlo.slice %[[PAD_GATHER]] [0:2, 0:1024] {mhlo.sharding = "{replicated}"}
// CHECK: stablehlo.constant {mhlo.sharding = "{devices=[1,4]<=[4]}"} dense<1.000000e+00> : tensor<2x4096xf32>
// CHECK: stablehlo.multiply %[[PAD_DOT]], {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
func.func @pad_slice_constant(%x: tensor<2x1024xf32>, %w: tensor<1024x4096xf32>) -> (tensor<4x4096xf32>, tensor<2x1024xf32>, tensor<2x4096xf32>) {
  %a = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x1024xf32>, tensor<1024x4096xf32>) -> tensor<2x4096xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.pad %a, %z, low = [1, 0], high = [1, 0], interior = [0, 0] : (tensor<2x4096xf32>, tensor<f32>) -> tensor<4x4096xf32>
  %s = stablehlo.slice %a [0:2, 0:1024] : (tensor<2x4096xf32>) -> tensor<2x1024xf32>
  %k = stablehlo.constant dense<1.0> : tensor<2x4096xf32>
  %m = stablehlo.multiply %a, %k : tensor<2x4096xf32>
  return %p, %s, %m : tensor<4x4096xf32>, tensor<2x1024xf32>, tensor<2x4096xf32>
}

// -----

// A KV-cache update: dynamic_update_slice writes one whole row, dynamic_slice reads
// one, so both keep the column split and the cache argument comes in split; the
// rank-0 offsets stay replicated.
// CHECK-LABEL: func @dynamic_update_slice_dynamic_slice
// CHECK-SAME: %arg0: tensor<16x4096xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-SAME: %arg3: tensor<i32> {mhlo.sharding = "{replicated}"}
// CHECK-NOT: custom_call @Sharding
// CHECK: stablehlo.dynamic_update_slice %arg0, {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: stablehlo.dynamic_slice {{.*}} sizes = [1, 4096] {mhlo.sharding = "{devices=[1,4]<=[4]}"}
func.func @dynamic_update_slice_dynamic_slice(%cache: tensor<16x4096xf32>, %x: tensor<1x1024xf32>, %w: tensor<1024x4096xf32>, %i: tensor<i32>) -> (tensor<16x4096xf32>, tensor<1x4096xf32>) {
  %a = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<1x1024xf32>, tensor<1024x4096xf32>) -> tensor<1x4096xf32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %u = stablehlo.dynamic_update_slice %cache, %a, %i, %z : (tensor<16x4096xf32>, tensor<1x4096xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4096xf32>
  %d = stablehlo.dynamic_slice %u, %i, %z, sizes = [1, 4096] : (tensor<16x4096xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4096xf32>
  return %u, %d : tensor<16x4096xf32>, tensor<1x4096xf32>
}

// -----

// rng numbers would change with the sharding, so rng runs replicated (by its rule:
// no warning).
// CHECK-LABEL: func @rng_replicated
// CHECK: stablehlo.rng {{.*}} {mhlo.sharding = "{replicated}"}
func.func @rng_replicated(%x: tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<1.0> : tensor<f32>
  %shape = stablehlo.constant dense<[8, 1024]> : tensor<2xi64>
  %r = stablehlo.rng %lo, %hi, %shape, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<8x1024xf32>
  %y = stablehlo.add %x, %r : tensor<8x1024xf32>
  return %y : tensor<8x1024xf32>
}

// -----

// A custom_call other than @Sharding has no rule: its operands and results stay
// whole, with a warning; the matmul before it still splits and is gathered for it.
// CHECK-LABEL: func @custom_call_without_rule
// CHECK: %[[KERNEL_DOT:.*]] = stablehlo.dot_general {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: %[[KERNEL_GATHER:.*]] = stablehlo.custom_call @Sharding(%[[KERNEL_DOT]]) {{.*}}mhlo.sharding = "{replicated}"
// CHECK: stablehlo.custom_call @my_kernel(%[[KERNEL_GATHER]]) {mhlo.sharding = "{replicated}"}
func.func @custom_call_without_rule(%x: tensor<2x1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<2x1024xf32> {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x1024xf32>, tensor<1024x1024xf32>) -> tensor<2x1024xf32>
  // expected-warning@+1 {{no sharding rule for 'stablehlo.custom_call'; it runs replicated}}
  %r = stablehlo.custom_call @my_kernel(%d) : (tensor<2x1024xf32>) -> tensor<2x1024xf32>
  return %r : tensor<2x1024xf32>
}
