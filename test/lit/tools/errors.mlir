// The input is valid: every failure below comes from the command line alone.
// RUN: alpa-opt --alpa-verify-sharding %s | FileCheck %s
// CHECK-LABEL: func @errors_valid_input

// An unknown alpa pass is named, with every alpa pass listed.
// RUN: not alpa-opt --alpa-no-such-pass %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN-PASS
// UNKNOWN-PASS-NOT: Traceback
// UNKNOWN-PASS: alpa-opt: error: unknown pass 'alpa-no-such-pass'; alpa passes are: {{.*}}alpa-import-pipeline, alpa-import-sharding, {{.*}}alpa-verify-sharding
// UNKNOWN-PASS-NOT: did you mean

// A near miss gets a suggestion.
// RUN: not alpa-opt --alpa-verify-shardin %s 2>&1 | FileCheck %s --check-prefix=DID-YOU-MEAN
// DID-YOU-MEAN-NOT: Traceback
// DID-YOU-MEAN: alpa-opt: error: unknown pass 'alpa-verify-shardin' (did you mean 'alpa-verify-sharding'?); alpa passes are:

// An unknown option is named, with the pass's options listed.
// RUN: not alpa-opt --alpa-verify-sharding=foo=1 %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OPTION
// UNKNOWN-OPTION-NOT: Traceback
// UNKNOWN-OPTION: alpa-opt: error: unknown option 'foo' for alpa-verify-sharding; its options are: mesh-shape, mesh-axes

// The same inside a textual pipeline.
// RUN: not alpa-opt --pass-pipeline='builtin.module(alpa-strip-sharding{keep=1})' %s 2>&1 | FileCheck %s --check-prefix=PIPELINE-OPTION
// PIPELINE-OPTION-NOT: Traceback
// PIPELINE-OPTION: alpa-opt: error: unknown option 'keep' for alpa-strip-sharding; its options are: keep-mesh

// A value of the wrong type names the option and the type it expects.
// RUN: not alpa-opt --alpa-verify-sharding=mesh-shape=a,b %s 2>&1 | FileCheck %s --check-prefix=BAD-VALUE
// BAD-VALUE-NOT: Traceback
// BAD-VALUE: alpa-opt: error: option 'mesh-shape' of alpa-verify-sharding expects list of int; got 'a,b'

// A boolean option accepts true/false/1/0 only.
// RUN: not alpa-opt --alpa-strip-sharding=keep-mesh=maybe %s 2>&1 | FileCheck %s --check-prefix=BAD-BOOL
// BAD-BOOL-NOT: Traceback
// BAD-BOOL: alpa-opt: error: option 'keep-mesh' of alpa-strip-sharding must be true or false; got 'maybe'

// A pass that is neither alpa's nor upstream MLIR's.
// RUN: not alpa-opt --no-such-upstream-pass %s 2>&1 | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-NOT: Traceback
// UPSTREAM: alpa-opt: error: {{.*}}'no-such-upstream-pass' does not refer to a registered pass or pass pipeline

// The pipeline is checked before the input is read, like mlir-opt: a bad pass
// is reported even when the input is missing (or stdin would block).
// RUN: not alpa-opt --no-such-upstream-pass %t.does-not-exist 2>&1 | FileCheck %s --check-prefix=UPSTREAM-FIRST
// UPSTREAM-FIRST-NOT: cannot read
// UPSTREAM-FIRST: 'no-such-upstream-pass' does not refer to a registered pass
// UPSTREAM-FIRST-NOT: cannot read

// A pipeline and pass flags together are ambiguous about the order.
// RUN: not alpa-opt --pass-pipeline='builtin.module(cse)' --alpa-verify-sharding %s 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH-NOT: Traceback
// BOTH: alpa-opt: error: give either --pass-pipeline or pass flags, not both

// Unbalanced brackets in a textual pipeline.
// RUN: not alpa-opt --pass-pipeline='builtin.module(cse' %s 2>&1 | FileCheck %s --check-prefix=UNBALANCED
// UNBALANCED-NOT: Traceback
// UNBALANCED: alpa-opt: error: cannot parse pipeline 'builtin.module(cse': expected builtin.module(...)

// A missing input file.
// RUN: not alpa-opt %t.does-not-exist 2>&1 | FileCheck %s --check-prefix=NO-INPUT
// NO-INPUT-NOT: Traceback
// NO-INPUT: alpa-opt: error: cannot read '{{.*}}errors.mlir.tmp.does-not-exist': No such file or directory

// A directory is no input file either.
// RUN: not alpa-opt %S 2>&1 | FileCheck %s --check-prefix=DIRECTORY
// DIRECTORY-NOT: Traceback
// DIRECTORY: alpa-opt: error: cannot read '{{.*}}tools': Is a directory

// Input that is not UTF-8 text (e.g. MLIR bytecode) is refused, not a crash.
// RUN: %PYTHON -c "open(r'%t.binary', 'wb').write(bytes([0x4d, 0x4c, 0xef, 0x52, 0xff]))"
// RUN: not alpa-opt %t.binary 2>&1 | FileCheck %s --check-prefix=BINARY
// BINARY-NOT: Traceback
// BINARY: alpa-opt: error: cannot read '{{.*}}errors.mlir.tmp.binary': not UTF-8 text (invalid continuation byte at byte 2)

// An output file in a directory that does not exist.
// RUN: not alpa-opt %s -o %t.no-such-dir/out.mlir 2>&1 | FileCheck %s --check-prefix=NO-OUTPUT
// NO-OUTPUT-NOT: Traceback
// NO-OUTPUT: alpa-opt: error: cannot write '{{.*}}no-such-dir/out.mlir': No such file or directory

// A driver flag that takes a value, given none.
// RUN: not alpa-opt %s -o 2>&1 | FileCheck %s --check-prefix=NO-VALUE
// NO-VALUE-NOT: Traceback
// NO-VALUE: alpa-opt: error: argument -o: expected one argument

func.func @errors_valid_input(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}
