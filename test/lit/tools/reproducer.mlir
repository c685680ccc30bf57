// A failing pass prints the command that reproduces it, with its pass options
// and --allow-unregistered-dialect when it was given. A file read whole is named
// as it is.
// RUN: not alpa-opt --allow-unregistered-dialect --alpa-verify-sharding=mesh-shape=2 %s 2>&1 | FileCheck %s --check-prefix=FILE

// Standard input and a part of a split file are written to a temporary file.
// RUN: not alpa-opt --allow-unregistered-dialect --alpa-verify-sharding=mesh-shape=2 - < %s 2> %t.stdin.err
// RUN: FileCheck %s --check-prefix=STDIN --input-file=%t.stdin.err
// RUN: not alpa-opt --allow-unregistered-dialect --alpa-verify-sharding=mesh-shape=2 --split-input-file %s 2> %t.split.err
// RUN: FileCheck %s --check-prefix=SPLIT --input-file=%t.split.err

// Running the printed commands reports the same error at the same line.
// RUN: not %PYTHON %S/Inputs/run_reproducer.py %t.stdin.err | FileCheck %s --check-prefix=REPLAY
// RUN: not %PYTHON %S/Inputs/run_reproducer.py %t.split.err | FileCheck %s --check-prefix=REPLAY

// Diagnostics without a failing pass (here a parse error) print no reproducer.
// RUN: not alpa-opt --alpa-verify-sharding --split-input-file %S/Inputs/reproducer_parse_error.mlir 2>&1 | FileCheck %s --check-prefix=PARSE

// FILE-NOT: Traceback
// FILE: {{.*}}reproducer.mlir:[[# @LINE + 13]]:{{[0-9]+}}: error: argument #0: sharding '{devices=[4]<=[4]}' uses 4 devices but the mesh [2] has 2
// FILE-NEXT: note: reproduce with: alpa-opt {{.*}}reproducer.mlir --allow-unregistered-dialect --pass-pipeline='builtin.module(alpa-verify-sharding{mesh-shape=2})'{{$}}
// STDIN: <stdin>:[[# @LINE + 11]]:{{[0-9]+}}: error: argument #0
// STDIN-NEXT: note: reproduce with: alpa-opt {{.*}}alpa-opt-reproducer-{{[^ ]*}}.mlir --allow-unregistered-dialect --pass-pipeline='builtin.module(alpa-verify-sharding{mesh-shape=2})'{{$}}
// SPLIT: reproducer.mlir:[[# @LINE + 9]]:{{[0-9]+}}: error: argument #0
// SPLIT-NEXT: note: reproduce with: alpa-opt {{.*}}alpa-opt-reproducer-{{[^ ]*}}.mlir --allow-unregistered-dialect --pass-pipeline='builtin.module(alpa-verify-sharding{mesh-shape=2})'{{$}}
// REPLAY-NOT: unregistered operation
// REPLAY: alpa-opt-reproducer-{{[^ ]*}}.mlir:[[# @LINE + 6]]:{{[0-9]+}}: error: argument #0: sharding '{devices=[4]<=[4]}' uses 4 devices but the mesh [2] has 2
// REPLAY-NEXT: note: reproduce with:
// REPLAY-NOT: unregistered operation
// PARSE-NOT: Traceback
// PARSE: error: use of undeclared SSA value name
// PARSE-NOT: reproduce with
func.func @reproducer_bad_mesh(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}) -> tensor<8xf32> {
  "foo.keep_me"() : () -> ()
  return %arg0 : tensor<8xf32>
}
