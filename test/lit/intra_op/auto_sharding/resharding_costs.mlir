// resharding-costs=xla prices a resharding as XLA's SPMD partitioner emits it; model
// uses Table 2's collectives. The report shows which collective each one predicts.
// RUN: env XLA_FLAGS=--xla_force_host_platform_device_count=8 alpa-opt %s --alpa-auto-sharding='mesh-shape=2,4 resharding-costs=xla report=%t.xla.json' | FileCheck %s
// RUN: FileCheck %s --check-prefix=XLA < %t.xla.json
// RUN: alpa-opt %s --alpa-auto-sharding='mesh-shape=2,4 report=%t.model.json' | FileCheck %s
// RUN: FileCheck %s --check-prefix=MODEL < %t.model.json

// The pins force a resharding at the result: columns split over x (replicated over y)
// to rows split over y (replicated over x). The model's last rule prices an all-to-all
// and a permute of the 512-byte target tile; XLA gathers the whole tensor over x and
// slices (its other rules the model matches exactly, see cost_model).
// CHECK-LABEL: func @main
// CHECK: %[[SUM:.*]] = stablehlo.add
// CHECK-NEXT: %[[MOVED:.*]] = stablehlo.custom_call @Sharding(%[[SUM]]) {{.*}}mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
// CHECK-NEXT: return %[[MOVED]]
// XLA: "op": "func.return"
// XLA: "kind": "all-gather"
// XLA-NEXT: "mesh_axes": [
// XLA-NEXT: 0
// XLA-NEXT: ],
// XLA-NEXT: "bytes": 2048.0
// XLA-NOT: "kind"
// MODEL: "op": "func.return"
// MODEL: "kind": "all-to-all"
// MODEL: "bytes": 512.0
// MODEL: "kind": "collective-permute"
// MODEL: "bytes": 512.0
func.func @main(%a: tensor<16x32xf32> {mhlo.sharding = "{devices=[1,2,4]<=[8] last_tile_dim_replicate}"})
    -> (tensor<16x32xf32> {mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}) {
  %0 = stablehlo.add %a, %a : tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
