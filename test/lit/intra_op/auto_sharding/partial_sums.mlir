// partial-sums: what a bf16 dot split over its contraction all-reduces. float32 (the
// default) prices f32 partials, as alpa-widen-split-contractions emits them; result
// prices bf16 ones (half the bytes) and says so on the module, so the lowering leaves
// the dot as it is.
// RUN: alpa-opt %s --alpa-auto-sharding='mesh-shape=8 report=%t.f32.json' | FileCheck %s --check-prefix=F32
// RUN: FileCheck %s --check-prefix=F32-REPORT < %t.f32.json
// RUN: alpa-opt %s --alpa-auto-sharding='mesh-shape=8 partial-sums=result report=%t.bf16.json' | FileCheck %s --check-prefix=BF16
// RUN: FileCheck %s --check-prefix=BF16-REPORT < %t.bf16.json

// F32-NOT: alpa.partial_sums
// F32: func.func @main
// F32-REPORT: "kind": "all-reduce"
// F32-REPORT: "bytes": 864.0
// BF16: module attributes {{{.*}}alpa.partial_sums = "result"
// BF16-REPORT: "kind": "all-reduce"
// BF16-REPORT: "bytes": 432.0
func.func @main(%x: tensor<4x6x1024xbf16> {mhlo.sharding = "{devices=[1,1,8]<=[8]}"},
                %w: tensor<1024x9xbf16> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> tensor<4x6x9xbf16> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [2] x [0] : (tensor<4x6x1024xbf16>, tensor<1024x9xbf16>) -> tensor<4x6x9xbf16>
  return %0 : tensor<4x6x9xbf16>
}
