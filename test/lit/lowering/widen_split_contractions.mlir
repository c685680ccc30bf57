// RUN: alpa-opt %s --alpa-widen-split-contractions --split-input-file | FileCheck %s

// A bf16 contraction split 8 ways (both operands split along it): the dot computes in
// f32 and one convert, with the dot's sharding, rounds after XLA sums the partials.
// CHECK-LABEL: func @split_contraction
// CHECK-NEXT: %[[D:.*]] = stablehlo.dot_general %arg0, %arg1, contracting_dims = [2] x [0] {mhlo.sharding = "{replicated}"} : (tensor<4x6x1024xbf16>, tensor<1024x9xbf16>) -> tensor<4x6x9xf32>
// CHECK-NEXT: %[[C:.*]] = stablehlo.convert %[[D]] {mhlo.sharding = "{replicated}"} : (tensor<4x6x9xf32>) -> tensor<4x6x9xbf16>
// CHECK-NEXT: %[[N:.*]] = stablehlo.negate %[[C]]
// CHECK-NEXT: return %[[C]], %[[N]]
func.func @split_contraction(%arg0: tensor<4x6x1024xbf16> {mhlo.sharding = "{devices=[1,1,8]<=[8]}"},
                             %arg1: tensor<1024x9xbf16> {mhlo.sharding = "{devices=[8,1]<=[8]}"})
    -> (tensor<4x6x9xbf16>, tensor<4x6x9xbf16>) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [2] x [0] {mhlo.sharding = "{replicated}"} : (tensor<4x6x1024xbf16>, tensor<1024x9xbf16>) -> tensor<4x6x9xbf16>
  %1 = stablehlo.negate %0 {mhlo.sharding = "{replicated}"} : tensor<4x6x9xbf16>
  return %0, %1 : tensor<4x6x9xbf16>, tensor<4x6x9xbf16>
}

// -----

// f16 too; the split is read from the operand's producer (an explicit resharding), here
// of one operand only, with the other replicated (XLA slices it).
// CHECK-LABEL: func @split_by_producer
// CHECK: stablehlo.dot_general {{.*}} -> tensor<8x8xf32>
// CHECK-NEXT: stablehlo.convert {{.*}} {mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
func.func @split_by_producer(%arg0: tensor<8x16xf16>, %arg1: tensor<16x8xf16>) -> tensor<8x8xf16> {
  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2,2]<=[4]}"} : (tensor<8x16xf16>) -> tensor<8x16xf16>
  %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] {mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"} : (tensor<8x16xf16>, tensor<16x8xf16>) -> tensor<8x8xf16>
  return %1 : tensor<8x8xf16>
}

// -----

// Left as they are: an f32 dot, a bf16 dot split only along free dimensions, one whose
// operands carry no sharding, and one without a sharding of its own.
// CHECK-LABEL: func @unchanged
// CHECK-NOT: stablehlo.convert
// CHECK: return
func.func @unchanged(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}, %arg1: tensor<16x8xf32>,
                     %arg2: tensor<8x16xbf16> {mhlo.sharding = "{devices=[4,1]<=[4]}"}, %arg3: tensor<16x8xbf16>,
                     %arg4: tensor<8x16xbf16> {mhlo.sharding = "{devices=[1,4]<=[4]}"})
    -> (tensor<8x8xf32>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {mhlo.sharding = "{replicated}"} : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.dot_general %arg2, %arg3, contracting_dims = [1] x [0] {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<8x16xbf16>, tensor<16x8xbf16>) -> tensor<8x8xbf16>
  %2 = stablehlo.dot_general %arg3, %arg3, contracting_dims = [0] x [0] {mhlo.sharding = "{replicated}"} : (tensor<16x8xbf16>, tensor<16x8xbf16>) -> tensor<8x8xbf16>
  %3 = stablehlo.dot_general %arg4, %arg3, contracting_dims = [1] x [0] : (tensor<8x16xbf16>, tensor<16x8xbf16>) -> tensor<8x8xbf16>
  return %0, %1, %2, %3 : tensor<8x8xf32>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>
}

// -----

// A module planned with alpa-auto-sharding{partial-sums=result} (alpa.partial_sums): its
// split contractions all-reduce partials of their own type, as priced, and stay as they are.
// CHECK-LABEL: module attributes {alpa.partial_sums = "result"}
// CHECK-NOT: stablehlo.convert
// CHECK: return
module attributes {alpa.partial_sums = "result"} {
  func.func @planned_in_bf16(%arg0: tensor<4x1024xbf16> {mhlo.sharding = "{devices=[1,8]<=[8]}"},
                             %arg1: tensor<1024x9xbf16> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> tensor<4x9xbf16> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {mhlo.sharding = "{replicated}"} : (tensor<4x1024xbf16>, tensor<1024x9xbf16>) -> tensor<4x9xbf16>
    return %0 : tensor<4x9xbf16>
  }
}
