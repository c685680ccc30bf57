// RUN: alpa-opt --help | FileCheck %s
// RUN: alpa-opt --help | FileCheck %s --check-prefix=SUMMARY
// RUN: alpa-opt --list-passes | FileCheck %s --check-prefix=LIST

// --help lists every registered pass and pipeline as a flag, with its one-line
// summary and its options; --list-passes gives each whole docstring and the
// options' defaults.

// CHECK: usage: alpa-opt
// CHECK: --split-input-file
// CHECK: --verify-diagnostics
// CHECK: --list-passes
// SUMMARY-NOT: Input::
// SUMMARY-NOT: Example error::

// CHECK-LABEL: --alpa-export-sdy
// CHECK-NEXT: {{[A-Z]}}
// CHECK-NEXT: Options:
// CHECK-NEXT: mesh-shape=<list of int>
// CHECK-NEXT: mesh-axes=<list of str>
// CHECK-NEXT: mesh-name=<str> {{.*}}(default: mesh)

// CHECK-LABEL: --alpa-import-pipeline
// CHECK-NEXT: {{[A-Z]}}
// CHECK-NEXT: Options:
// CHECK-NEXT: mesh-shape=<list of int>
// CHECK-NEXT: mesh-axes=<list of str>

// CHECK-LABEL: --alpa-import-sharding
// CHECK-NEXT: {{[A-Z]}}
// CHECK-NEXT: Options:
// CHECK-NEXT: mesh-shape=<list of int>
// CHECK-NEXT: mesh-axes=<list of str>

// CHECK-LABEL: --alpa-sdy-roundtrip-pipeline
// CHECK-NEXT: {{[A-Z]}}
// CHECK-NEXT: Options:
// CHECK-NEXT: mesh-shape=<list of int>
// CHECK-NEXT: mesh-axes=<list of str>

// CHECK-LABEL: --alpa-strip-sharding
// CHECK-NEXT: {{[A-Z]}}
// CHECK-NEXT: Options:
// CHECK-NEXT: keep-mesh=<bool> {{.*}}(default: false)

// CHECK-LABEL: --alpa-verify-sharding
// CHECK-NEXT: Check that every sharding annotation parses
// CHECK-NEXT: Options:
// CHECK-NEXT: mesh-shape=<list of int>
// CHECK-NEXT: mesh-axes=<list of str>
// CHECK: --canonicalize, --cse, --inline

// The full docstrings, and each default stated once.
// LIST-LABEL: --alpa-export-sdy
// LIST: Input::
// LIST: Output::
// LIST: Options:
// LIST-NEXT: mesh-shape=<list of int> {{.*}}(default: the module's mesh){{$}}
// LIST-LABEL: --alpa-import-pipeline
// LIST: ``inline`` first
// LIST-LABEL: --alpa-import-sharding
// LIST: Input::
// LIST: Output::
// LIST-LABEL: --alpa-sdy-roundtrip-pipeline
// LIST-LABEL: --alpa-strip-sharding
// LIST: Input::
// LIST: keep-mesh=<bool> {{.*}}(default: false){{$}}
// LIST-LABEL: --alpa-verify-sharding
// LIST: Input::
// LIST: Output: the IR unchanged, or an error at the op::
// LIST: Options:
