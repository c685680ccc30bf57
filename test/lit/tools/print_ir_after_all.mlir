// RUN: alpa-opt --mlir-print-ir-after-all --canonicalize --alpa-verify-sharding --split-input-file %s -o %t 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUT --input-file=%t
// RUN: not alpa-opt --mlir-print-ir-after-all --alpa-verify-sharding=mesh-shape=4 --split-input-file %s -o %t.failed 2>&1 | FileCheck %s --check-prefix=FAILED

// --mlir-print-ir-after-all prints the IR after every pass, upstream and alpa,
// to stderr, for every part; the output itself is unchanged.

// OUT-NOT: IR Dump
// OUT-LABEL: func @print_after_all_first
// OUT-LABEL: func @print_after_all_second
// OUT-NOT: IR Dump

// The dump after canonicalize already lacks the dead tanh.
// CHECK-NOT: Traceback
// CHECK: // -----// IR Dump After {{.*}}canonicalize{{.*}} //----- //
// CHECK-NEXT: module attributes {mhlo.num_partitions = 2 : i32} {
// CHECK-NEXT: func.func @print_after_all_first
// CHECK-NOT: stablehlo.tanh
// CHECK: // -----// IR Dump After VerifyShardingPass: alpa-verify-sharding //----- //
// CHECK-NEXT: module attributes {mhlo.num_partitions = 2 : i32} {
// CHECK-NEXT: func.func @print_after_all_first

// A failing pass still dumps, marked Failed, before its error.
// FAILED-NOT: Traceback
// FAILED: // -----// IR Dump After VerifyShardingPass Failed: alpa-verify-sharding //----- //
// FAILED-NEXT: module attributes {mhlo.num_partitions = 2 : i32} {
// FAILED-NEXT: func.func @print_after_all_first
// FAILED: {{.*}}print_ir_after_all.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: argument #0: sharding '{devices=[2]<=[2]}' uses 2 devices but the mesh [4] has 4
module attributes {mhlo.num_partitions = 2 : i32} {
  func.func @print_after_all_first(%arg0: tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> tensor<4xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<4xf32>
    return %arg0 : tensor<4xf32>
  }
}

// -----

// The second part gets dumps of its own.
// CHECK: // -----// IR Dump After {{.*}}canonicalize{{.*}} //----- //
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @print_after_all_second
// CHECK: // -----// IR Dump After VerifyShardingPass: alpa-verify-sharding //----- //
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @print_after_all_second
// CHECK-NOT: IR Dump
// FAILED: // -----// IR Dump After VerifyShardingPass: alpa-verify-sharding //----- //
// FAILED-NEXT: module {
// FAILED-NEXT: func.func @print_after_all_second
func.func @print_after_all_second(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}
