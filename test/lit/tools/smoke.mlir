// RUN: alpa-opt %s --alpa-verify-sharding | FileCheck %s

// CHECK-LABEL: func @smoke
func.func @smoke(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}
