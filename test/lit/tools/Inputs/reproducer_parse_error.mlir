// Input of reproducer.mlir: an error before any pass runs.
func.func @reproducer_parse_error(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  return %undeclared : tensor<4xf32>
}
