// RUN: alpa-opt %s --split-input-file --verify-diagnostics --alpa-auto-sharding='mesh-shape=1,4' | FileCheck %s

// jax.debug.print of a split activation: the callback reads it whole (one all-gather,
// made explicit) and runs once, on its device, as under jax.jit; no rule is missing.
// CHECK-LABEL: func @print_of_a_split_matmul
// CHECK: %[[DOT:.*]] = stablehlo.dot_general {{.*}} {mhlo.sharding = "{devices=[1,4]<=[4]}"}
// CHECK-NEXT: %[[WHOLE:.*]] = stablehlo.custom_call @Sharding(%[[DOT]]) {{.*}}mhlo.sharding = "{replicated}"
// CHECK: stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[WHOLE]]) {{{.*}}mhlo.sharding = "{maximal device=0}"{{.*}}} : (tensor<8x1024xf32>) -> ()
func.func @print_of_a_split_matmul(%x: tensor<8x1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<8x1024xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x1024xf32>, tensor<1024x1024xf32>) -> tensor<8x1024xf32>
  stablehlo.custom_call @xla_ffi_python_cpu_callback(%0) {has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, mhlo.sharding = "{maximal device=0}"} : (tensor<8x1024xf32>) -> ()
  return %0 : tensor<8x1024xf32>
}

// -----

// An ordered io_callback: its token chain starts in the step (after_all, which has
// nothing to lay out), it keeps the device the import gave it, one sharding per result,
// and its users take its value from that device in the layout they need.
// CHECK-LABEL: func @ordered_io_callback
// CHECK: %[[TOKEN:.*]] = stablehlo.after_all {{ *}}: !stablehlo.token{{$}}
// CHECK: %[[CALL:.*]]:2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[TOKEN]], {{.*}}mhlo.sharding = "{{[{][{]}}maximal device=3}, {maximal device=3}}"
// CHECK: %[[SPLIT:.*]] = stablehlo.custom_call @Sharding(%[[CALL]]#1) {{.*}}mhlo.sharding = "{devices=[4,1]<=[4]}"
// CHECK: stablehlo.add %[[SPLIT]],
func.func @ordered_io_callback(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %t = stablehlo.after_all : !stablehlo.token
  %0:2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%t, %x) {has_side_effect = true, mhlo.backend_config = {index = 0 : ui64}, mhlo.sharding = "{{maximal device=3}, {maximal device=3}}"} : (!stablehlo.token, tensor<8x4xf32>) -> (!stablehlo.token, tensor<8x4xf32>)
  %1 = stablehlo.add %0#1, %x : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
