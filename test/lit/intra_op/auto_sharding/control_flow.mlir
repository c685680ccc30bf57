// RUN: alpa-opt %s --split-input-file --alpa-auto-sharding='mesh-shape=1,4' | FileCheck %s

// Megatron's MLP as a loop body reading the weights from outside: the loop-carried
// activation is replicated on entry, in the body and on exit (the row-split matmul
// ends in an all-reduce), so the body yields it without resharding.
// CHECK-LABEL: func @while_megatron_body
// CHECK-SAME: %arg0: tensor<2x1024xf32> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: %arg1: tensor<1024x4096xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-SAME: %arg2: tensor<4096x1024xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}
// CHECK-SAME: -> (tensor<2x1024xf32> {mhlo.sharding = "{replicated}"})
// CHECK: stablehlo.while(%{{.*}} = %{{.*}}, %[[MEGATRON_H:.*]] = %arg0) : tensor<i32>, tensor<2x1024xf32> attributes {mhlo.sharding = "{{[{][{]}}replicated}, {replicated}}"}
// CHECK: } do {
// CHECK-NOT: custom_call @Sharding
// CHECK: stablehlo.dot_general %[[MEGATRON_H]], %arg1, {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: stablehlo.tanh {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: %[[BODY_OUT:.*]] = stablehlo.dot_general {{.*}}, %arg2, {{.*}} {mhlo.sharding = "{replicated}"}
// CHECK-NOT: custom_call @Sharding
// CHECK: stablehlo.return {{.*}}, %[[BODY_OUT]] :
func.func @while_megatron_body(%h0: tensor<2x1024xf32>, %w1: tensor<1024x4096xf32>, %w2: tensor<4096x1024xf32>) -> tensor<2x1024xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %h = %h0) : tensor<i32>, tensor<2x1024xf32>
  cond {
    %n = stablehlo.constant dense<10> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %a = stablehlo.dot_general %h, %w1, contracting_dims = [1] x [0] : (tensor<2x1024xf32>, tensor<1024x4096xf32>) -> tensor<2x4096xf32>
    %t = stablehlo.tanh %a : tensor<2x4096xf32>
    %b = stablehlo.dot_general %t, %w2, contracting_dims = [1] x [0] : (tensor<2x4096xf32>, tensor<4096x1024xf32>) -> tensor<2x1024xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %j, %b : tensor<i32>, tensor<2x1024xf32>
  }
  return %0#1 : tensor<2x1024xf32>
}

// -----

// A loop carrying its weight (as JAX's fori_loop does): the weight is column-split
// on entry, in the body and on exit; the carried activation is column-split too (it
// shares the mesh axis with the weight), so the body gathers it before the matmul
// and yields the column-split tanh, and nothing is gathered after the loop. The
// while operands, its body's uses and the yielded values agree with the while's
// tuple sharding.
// CHECK-LABEL: func @while_carried_weight
// CHECK-SAME: %arg0: tensor<2x1024xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-SAME: %arg1: tensor<1024x1024xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: stablehlo.while(%[[CARRIED_W:.*]] = %arg1, %[[CARRIED_I:.*]] = %{{.*}}, %[[CARRIED_H:.*]] = %arg0) : {{.*}} attributes {mhlo.sharding = "{{[{][{]}}devices=[1,4]<=[4]}, {replicated}, {devices=[1,4]<=[4]}}"}
// CHECK: } do {
// CHECK: %[[CARRIED_GATHER:.*]] = stablehlo.custom_call @Sharding(%[[CARRIED_H]]) {{.*}}mhlo.sharding = "{replicated}"
// CHECK: stablehlo.dot_general %[[CARRIED_GATHER]], %[[CARRIED_W]], {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: %[[CARRIED_TANH:.*]] = stablehlo.tanh {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-NOT: custom_call @Sharding
// CHECK: stablehlo.return %[[CARRIED_W]], {{.*}}, %[[CARRIED_TANH]] :
func.func @while_carried_weight(%arg0: tensor<2x1024xf32>, %arg1: tensor<1024x1024xf32>) -> tensor<2x1024xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:3 = stablehlo.while(%w = %arg1, %i = %c, %h = %arg0) : tensor<1024x1024xf32>, tensor<i32>, tensor<2x1024xf32>
  cond {
    %n = stablehlo.constant dense<10> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %d = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<2x1024xf32>, tensor<1024x1024xf32>) -> tensor<2x1024xf32>
    %t = stablehlo.tanh %d : tensor<2x1024xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %w, %j, %t : tensor<1024x1024xf32>, tensor<i32>, tensor<2x1024xf32>
  }
  return %0#2 : tensor<2x1024xf32>
}

// -----

// Both branches of a case compute a column-split matmul: the case result takes the
// sharding every branch yields, and the branch index stays replicated.
// CHECK-LABEL: func @case_branches
// CHECK-SAME: %arg0: tensor<i32> {mhlo.sharding = "{replicated}"}
// CHECK-SAME: %arg2: tensor<1024x4096xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-SAME: %arg3: tensor<1024x4096xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-SAME: -> (tensor<2x4096xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"})
// CHECK: "stablehlo.case"(%arg0)
// CHECK: stablehlo.dot_general %arg1, %arg3, {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: stablehlo.dot_general %arg1, %arg2, {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: }) {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-NOT: custom_call @Sharding
func.func @case_branches(%index: tensor<i32>, %x: tensor<2x1024xf32>, %w1: tensor<1024x4096xf32>, %w2: tensor<1024x4096xf32>) -> tensor<2x4096xf32> {
  %0 = "stablehlo.case"(%index) ({
    %1 = stablehlo.dot_general %x, %w2, contracting_dims = [1] x [0] : (tensor<2x1024xf32>, tensor<1024x4096xf32>) -> tensor<2x4096xf32>
    stablehlo.return %1 : tensor<2x4096xf32>
  }, {
    %1 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<2x1024xf32>, tensor<1024x4096xf32>) -> tensor<2x4096xf32>
    stablehlo.return %1 : tensor<2x4096xf32>
  }) : (tensor<i32>) -> tensor<2x4096xf32>
  return %0 : tensor<2x4096xf32>
}

// -----

// An if whose else branch yields a constant: the constant is produced with the
// split the then branch's matmul gives, so the two branches agree without resharding.
// CHECK-LABEL: func @if_branches
// CHECK-SAME: %arg0: tensor<i1> {mhlo.sharding = "{replicated}"}
// CHECK: "stablehlo.if"(%arg0)
// CHECK: stablehlo.dot_general {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: stablehlo.constant {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK: }) {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-NOT: custom_call @Sharding
func.func @if_branches(%p: tensor<i1>, %x: tensor<2x1024xf32>, %w: tensor<1024x4096xf32>) -> tensor<2x4096xf32> {
  %0 = "stablehlo.if"(%p) ({
    %1 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x1024xf32>, tensor<1024x4096xf32>) -> tensor<2x4096xf32>
    stablehlo.return %1 : tensor<2x4096xf32>
  }, {
    %1 = stablehlo.constant dense<0.0> : tensor<2x4096xf32>
    stablehlo.return %1 : tensor<2x4096xf32>
  }) : (tensor<i1>) -> tensor<2x4096xf32>
  return %0 : tensor<2x4096xf32>
}

// -----

// Two carried values pinned to the same split on entry stay split in the loop: each
// carried value takes its own sharding, so both use the mesh axis and nothing moves.
// CHECK-LABEL: func @while_two_carries_one_axis
// CHECK: stablehlo.while({{.*}}) : {{.*}} attributes {mhlo.sharding = "{{[{][{]}}replicated}, {devices=[4,1]<=[4]}, {devices=[4,1]<=[4]}}"}
// CHECK-NOT: custom_call @Sharding
func.func @while_two_carries_one_axis(%a0: tensor<1024x256xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}, %b0: tensor<1024x256xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> (tensor<1024x256xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}, tensor<1024x256xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:3 = stablehlo.while(%i = %c, %a = %a0, %b = %b0) : tensor<i32>, tensor<1024x256xf32>, tensor<1024x256xf32>
  cond {
    %n = stablehlo.constant dense<10> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %ta = stablehlo.tanh %a : tensor<1024x256xf32>
    %eb = stablehlo.exponential %b : tensor<1024x256xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %j, %ta, %eb : tensor<i32>, tensor<1024x256xf32>, tensor<1024x256xf32>
  }
  return %0#1, %0#2 : tensor<1024x256xf32>, tensor<1024x256xf32>
}

// -----

// jax.checkpoint's barrier around Megatron's two weights: each value passes it in
// its own sharding (columns and rows split), not all but one gathered.
// CHECK-LABEL: func @barrier_values_keep_their_own_shardings
// CHECK-NOT: custom_call @Sharding
// CHECK: stablehlo.optimization_barrier {mhlo.sharding = "{{[{][{]}}devices=[1,4]<=[4]}, {devices=[4,1]<=[4]}}"}
// CHECK-NOT: custom_call @Sharding
func.func @barrier_values_keep_their_own_shardings(%x: tensor<8x1024xf32>, %w1: tensor<1024x4096xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}, %w2: tensor<4096x1024xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> tensor<8x1024xf32> {
  %0:2 = stablehlo.optimization_barrier %w1, %w2 : tensor<1024x4096xf32>, tensor<4096x1024xf32>
  %1 = stablehlo.dot_general %x, %0#0, contracting_dims = [1] x [0] : (tensor<8x1024xf32>, tensor<1024x4096xf32>) -> tensor<8x4096xf32>
  %2 = stablehlo.dot_general %1, %0#1, contracting_dims = [1] x [0] : (tensor<8x4096xf32>, tensor<4096x1024xf32>) -> tensor<8x1024xf32>
  return %2 : tensor<8x1024xf32>
}
