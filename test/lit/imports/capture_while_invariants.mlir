// RUN: alpa-opt %s --alpa-capture-while-invariants --split-input-file | FileCheck %s

// A weight and a trip count carried unchanged (lax.scan's consts) become implicit
// captures: the body and the condition read the outer values, the while's results
// are the operands, and the while's tuple sharding loses their elements.
// CHECK-LABEL: func @scan_weight
// CHECK: %[[LOOP:.*]]:2 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[H:.*]] = %arg0) : tensor<i32>, tensor<2x8xf32> attributes {mhlo.sharding = "{{[{][{]}}replicated}, {devices=[1,4]<=[4]}}"}
// CHECK: stablehlo.compare LT, %[[I]], %arg2
// CHECK: } do {
// CHECK: stablehlo.dot_general %[[H]], %arg1,
// CHECK: stablehlo.return %{{.*}}, %{{.*}} : tensor<i32>, tensor<2x8xf32>
// CHECK: return %[[LOOP]]#1, %arg1
func.func @scan_weight(%h0: tensor<2x8xf32>, %w0: tensor<8x8xf32>, %n0: tensor<i32>) -> (tensor<2x8xf32>, tensor<8x8xf32>) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:4 = stablehlo.while(%i = %c, %n = %n0, %w = %w0, %h = %h0) : tensor<i32>, tensor<i32>, tensor<8x8xf32>, tensor<2x8xf32>
    attributes {mhlo.sharding = "{{replicated}, {replicated}, {devices=[4,1]<=[4]}, {devices=[1,4]<=[4]}}"}
  cond {
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %d = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %j, %n, %w, %d : tensor<i32>, tensor<i32>, tensor<8x8xf32>, tensor<2x8xf32>
  }
  return %0#3, %0#2 : tensor<2x8xf32>, tensor<8x8xf32>
}

// -----

// A body that yields the while's operand itself (defined outside) carries it
// unchanged as well.
// CHECK-LABEL: func @yields_operand
// CHECK: stablehlo.while(%[[I:.*]] = %{{.*}}) : tensor<i32>
// CHECK: stablehlo.add %arg0, %arg0
// CHECK: stablehlo.return %{{.*}} : tensor<i32>
// CHECK: return %arg0
func.func @yields_operand(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %v = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %s = stablehlo.add %v, %v : tensor<4xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %j, %x : tensor<i32>, tensor<4xf32>
  }
  return %0#1 : tensor<4xf32>
}

// -----

// Nested loops: the inner loop's invariant is the outer loop's carried value, which
// is itself invariant in the outer loop; both end up reading the function argument.
// CHECK-LABEL: func @nested
// CHECK: stablehlo.while(%[[OUTER_I:.*]] = %{{.*}}) : tensor<i32>
// CHECK: stablehlo.while(%[[INNER_I:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) : tensor<i32>, tensor<4xf32>
// CHECK: stablehlo.add %[[ACC]], %arg0
func.func @nested(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %v = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %1:3 = stablehlo.while(%k = %c, %u = %v, %acc = %v) : tensor<i32>, tensor<4xf32>, tensor<4xf32>
    cond {
      %n = stablehlo.constant dense<2> : tensor<i32>
      %p = stablehlo.compare LT, %k, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %s = stablehlo.add %acc, %u : tensor<4xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %k2 = stablehlo.add %k, %one : tensor<i32>
      stablehlo.return %k2, %u, %s : tensor<i32>, tensor<4xf32>, tensor<4xf32>
    }
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %j, %v : tensor<i32>, tensor<4xf32>
  }
  return %0#1 : tensor<4xf32>
}

// -----

// Every carried value changes in every trip: nothing to capture.
// CHECK-LABEL: func @negative_all_carried_change
// CHECK: stablehlo.while(%{{.*}} = %{{.*}}, %{{.*}} = %arg0) : tensor<i32>, tensor<4xf32>
// CHECK: stablehlo.return %{{.*}}, %{{.*}} : tensor<i32>, tensor<4xf32>
func.func @negative_all_carried_change(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %v = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %s = stablehlo.add %v, %v : tensor<4xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %j, %s : tensor<i32>, tensor<4xf32>
  }
  return %0#1 : tensor<4xf32>
}

// -----

// A loop whose every carried value is invariant is left alone (it would have no
// operands left).
// CHECK-LABEL: func @negative_all_invariant
// CHECK: stablehlo.while(%{{.*}} = %arg0) : tensor<i32>
func.func @negative_all_invariant(%x: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.while(%i = %x) : tensor<i32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    stablehlo.return %i : tensor<i32>
  }
  return %0 : tensor<i32>
}
