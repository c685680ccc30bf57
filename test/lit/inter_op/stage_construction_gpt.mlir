// RUN: alpa-opt %S/Inputs/gpt_4_layers.mlir --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=4}, alpa-stage-construction{cluster-shape=1,4 num-micro-batches=4 stage-mode=equal-layer num-stages=2 logical-mesh-space=physical})' | FileCheck %s --check-prefix=TWO
// RUN: alpa-opt %S/Inputs/gpt_4_layers.mlir --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=4}, alpa-stage-construction{cluster-shape=2,2 num-micro-batches=4})' | FileCheck %s --check-prefix=FOUR
// RUN: alpa-opt %S/Inputs/gpt_4_layers.mlir --pass-pipeline='builtin.module(alpa-import-pipeline, alpa-layer-construction{layers=4}, alpa-stage-construction{cluster-shape=1,4 num-micro-batches=4 stage-mode=equal-layer num-stages=4 virtual-stages=2 logical-mesh-space=physical})' | FileCheck %s --check-prefix=INTERLEAVED

// A 4-layer GPT training step with Adam (the input's header says how it was made).

// Two stages of two layers each on one host of four devices: each stage's forward and
// backward parts land on the same mesh.
// TWO-LABEL: func.func private @stage0_forward
// TWO-SAME: device_ids = [[M0:array<i64: [0-9, ]+>]]
// TWO-NOT: alpa.layer = 2
// TWO-LABEL: func.func private @stage1_forward
// TWO-SAME: device_ids = [[M1:array<i64: [0-9, ]+>]]
// TWO-NOT: alpa.layer = 1 :
// TWO-LABEL: func.func private @stage1_backward
// TWO-SAME: device_ids = [[M1]]
// TWO-LABEL: func.func private @stage0_backward
// TWO-SAME: device_ids = [[M0]]
// TWO-NOT: alpa.layer = 2
// Each stage updates its own parameters (Adam's moments stay on their mesh): the apply
// parts read no other apply part, so they come in stage order.
// TWO-LABEL: func.func private @stage0_apply
// TWO-SAME: device_ids = [[M0]]
// TWO-LABEL: func.func private @stage1_apply
// TWO-SAME: device_ids = [[M1]]

// The DP itself (auto mode) on two hosts of two devices: GPT's layers are alike, and it
// picks four stages of one layer each, one per pair of devices (Sec. 8.3: uniform models
// get equal stages); every backward part shares its forward part's mesh.
// FOUR-LABEL: func.func private @stage0_forward
// FOUR-SAME: device_ids = [[M0:array<i64: [0-9, ]+>]]
// FOUR-NOT: alpa.layer = 1 :
// FOUR-LABEL: func.func private @stage1_forward
// FOUR-SAME: device_ids = [[M1:array<i64: [0-9, ]+>]]
// FOUR-NOT: alpa.layer = 2 :
// FOUR-LABEL: func.func private @stage2_forward
// FOUR-SAME: device_ids = [[M2:array<i64: [0-9, ]+>]]
// FOUR-NOT: alpa.layer = 3 :
// FOUR-LABEL: func.func private @stage3_forward
// FOUR-SAME: device_ids = [[M3:array<i64: [0-9, ]+>]]
// FOUR-LABEL: func.func private @stage3_backward
// FOUR-SAME: device_ids = [[M3]]
// FOUR-LABEL: func.func private @stage2_backward
// FOUR-SAME: device_ids = [[M2]]
// FOUR-LABEL: func.func private @stage1_backward
// FOUR-SAME: device_ids = [[M1]]
// FOUR-LABEL: func.func private @stage0_backward
// FOUR-SAME: device_ids = [[M0]]
// FOUR-LABEL: func.func public @main

// Interleaved 1F1B's virtual stages: four stages of one layer on two meshes, stage k on
// mesh k mod 2, so stages 0 and 2 share one mesh and stages 1 and 3 the other.
// INTERLEAVED-LABEL: func.func private @stage0_forward
// INTERLEAVED-SAME: device_ids = [[V0:array<i64: [0-9, ]+>]]{{.*}}alpa.stage = 0
// INTERLEAVED-LABEL: func.func private @stage1_forward
// INTERLEAVED-SAME: device_ids = [[V1:array<i64: [0-9, ]+>]]{{.*}}alpa.stage = 1
// INTERLEAVED-LABEL: func.func private @stage2_forward
// INTERLEAVED-SAME: device_ids = [[V0]]{{.*}}alpa.stage = 2
// INTERLEAVED-LABEL: func.func private @stage3_forward
// INTERLEAVED-SAME: device_ids = [[V1]]{{.*}}alpa.stage = 3
