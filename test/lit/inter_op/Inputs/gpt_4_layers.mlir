// A 4-layer GPT training step (alpa_mlir.models.GPTConfig(vocab=64, hidden=32, layers=4, heads=2,
// seq_len=8), Adam, batch 8) as jax.jit(...).lower(...).as_text() gives it.
module @jit_train_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<128xf32>, %arg1: tensor<32x128xf32>, %arg2: tensor<32xf32>, %arg3: tensor<128x32xf32>, %arg4: tensor<32xf32>, %arg5: tensor<32xf32>, %arg6: tensor<32xf32>, %arg7: tensor<32xf32>, %arg8: tensor<32xf32>, %arg9: tensor<32x32xf32>, %arg10: tensor<96xf32>, %arg11: tensor<32x96xf32>, %arg12: tensor<128xf32>, %arg13: tensor<32x128xf32>, %arg14: tensor<32xf32>, %arg15: tensor<128x32xf32>, %arg16: tensor<32xf32>, %arg17: tensor<32xf32>, %arg18: tensor<32xf32>, %arg19: tensor<32xf32>, %arg20: tensor<32xf32>, %arg21: tensor<32x32xf32>, %arg22: tensor<96xf32>, %arg23: tensor<32x96xf32>, %arg24: tensor<128xf32>, %arg25: tensor<32x128xf32>, %arg26: tensor<32xf32>, %arg27: tensor<128x32xf32>, %arg28: tensor<32xf32>, %arg29: tensor<32xf32>, %arg30: tensor<32xf32>, %arg31: tensor<32xf32>, %arg32: tensor<32xf32>, %arg33: tensor<32x32xf32>, %arg34: tensor<96xf32>, %arg35: tensor<32x96xf32>, %arg36: tensor<128xf32>, %arg37: tensor<32x128xf32>, %arg38: tensor<32xf32>, %arg39: tensor<128x32xf32>, %arg40: tensor<32xf32>, %arg41: tensor<32xf32>, %arg42: tensor<32xf32>, %arg43: tensor<32xf32>, %arg44: tensor<32xf32>, %arg45: tensor<32x32xf32>, %arg46: tensor<96xf32>, %arg47: tensor<32x96xf32>, %arg48: tensor<32xf32>, %arg49: tensor<32xf32>, %arg50: tensor<8x32xf32>, %arg51: tensor<64x32xf32>, %arg52: tensor<128xf32>, %arg53: tensor<32x128xf32>, %arg54: tensor<32xf32>, %arg55: tensor<128x32xf32>, %arg56: tensor<32xf32>, %arg57: tensor<32xf32>, %arg58: tensor<32xf32>, %arg59: tensor<32xf32>, %arg60: tensor<32xf32>, %arg61: tensor<32x32xf32>, %arg62: tensor<96xf32>, %arg63: tensor<32x96xf32>, %arg64: tensor<128xf32>, %arg65: tensor<32x128xf32>, %arg66: tensor<32xf32>, %arg67: tensor<128x32xf32>, %arg68: tensor<32xf32>, %arg69: tensor<32xf32>, %arg70: tensor<32xf32>, %arg71: tensor<32xf32>, %arg72: tensor<32xf32>, %arg73: tensor<32x32xf32>, %arg74: tensor<96xf32>, %arg75: tensor<32x96xf32>, %arg76: tensor<128xf32>, %arg77: tensor<32x128xf32>, %arg78: tensor<32xf32>, %arg79: tensor<128x32xf32>, %arg80: tensor<32xf32>, %arg81: tensor<32xf32>, %arg82: tensor<32xf32>, %arg83: tensor<32xf32>, %arg84: tensor<32xf32>, %arg85: tensor<32x32xf32>, %arg86: tensor<96xf32>, %arg87: tensor<32x96xf32>, %arg88: tensor<128xf32>, %arg89: tensor<32x128xf32>, %arg90: tensor<32xf32>, %arg91: tensor<128x32xf32>, %arg92: tensor<32xf32>, %arg93: tensor<32xf32>, %arg94: tensor<32xf32>, %arg95: tensor<32xf32>, %arg96: tensor<32xf32>, %arg97: tensor<32x32xf32>, %arg98: tensor<96xf32>, %arg99: tensor<32x96xf32>, %arg100: tensor<32xf32>, %arg101: tensor<32xf32>, %arg102: tensor<8x32xf32>, %arg103: tensor<64x32xf32>, %arg104: tensor<128xf32>, %arg105: tensor<32x128xf32>, %arg106: tensor<32xf32>, %arg107: tensor<128x32xf32>, %arg108: tensor<32xf32>, %arg109: tensor<32xf32>, %arg110: tensor<32xf32>, %arg111: tensor<32xf32>, %arg112: tensor<32xf32>, %arg113: tensor<32x32xf32>, %arg114: tensor<96xf32>, %arg115: tensor<32x96xf32>, %arg116: tensor<128xf32>, %arg117: tensor<32x128xf32>, %arg118: tensor<32xf32>, %arg119: tensor<128x32xf32>, %arg120: tensor<32xf32>, %arg121: tensor<32xf32>, %arg122: tensor<32xf32>, %arg123: tensor<32xf32>, %arg124: tensor<32xf32>, %arg125: tensor<32x32xf32>, %arg126: tensor<96xf32>, %arg127: tensor<32x96xf32>, %arg128: tensor<128xf32>, %arg129: tensor<32x128xf32>, %arg130: tensor<32xf32>, %arg131: tensor<128x32xf32>, %arg132: tensor<32xf32>, %arg133: tensor<32xf32>, %arg134: tensor<32xf32>, %arg135: tensor<32xf32>, %arg136: tensor<32xf32>, %arg137: tensor<32x32xf32>, %arg138: tensor<96xf32>, %arg139: tensor<32x96xf32>, %arg140: tensor<128xf32>, %arg141: tensor<32x128xf32>, %arg142: tensor<32xf32>, %arg143: tensor<128x32xf32>, %arg144: tensor<32xf32>, %arg145: tensor<32xf32>, %arg146: tensor<32xf32>, %arg147: tensor<32xf32>, %arg148: tensor<32xf32>, %arg149: tensor<32x32xf32>, %arg150: tensor<96xf32>, %arg151: tensor<32x96xf32>, %arg152: tensor<32xf32>, %arg153: tensor<32xf32>, %arg154: tensor<8x32xf32>, %arg155: tensor<64x32xf32>, %arg156: tensor<i32>, %arg157: tensor<8x8xi32>, %arg158: tensor<8x8xi32>) -> (tensor<128xf32> {jax.result_info = "result[0]['layers'][0]['fc1']['b']"}, tensor<32x128xf32> {jax.result_info = "result[0]['layers'][0]['fc1']['w']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][0]['fc2']['b']"}, tensor<128x32xf32> {jax.result_info = "result[0]['layers'][0]['fc2']['w']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][0]['ln1']['bias']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][0]['ln1']['scale']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][0]['ln2']['bias']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][0]['ln2']['scale']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][0]['out']['b']"}, tensor<32x32xf32> {jax.result_info = "result[0]['layers'][0]['out']['w']"}, tensor<96xf32> {jax.result_info = "result[0]['layers'][0]['qkv']['b']"}, tensor<32x96xf32> {jax.result_info = "result[0]['layers'][0]['qkv']['w']"}, tensor<128xf32> {jax.result_info = "result[0]['layers'][1]['fc1']['b']"}, tensor<32x128xf32> {jax.result_info = "result[0]['layers'][1]['fc1']['w']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][1]['fc2']['b']"}, tensor<128x32xf32> {jax.result_info = "result[0]['layers'][1]['fc2']['w']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][1]['ln1']['bias']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][1]['ln1']['scale']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][1]['ln2']['bias']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][1]['ln2']['scale']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][1]['out']['b']"}, tensor<32x32xf32> {jax.result_info = "result[0]['layers'][1]['out']['w']"}, tensor<96xf32> {jax.result_info = "result[0]['layers'][1]['qkv']['b']"}, tensor<32x96xf32> {jax.result_info = "result[0]['layers'][1]['qkv']['w']"}, tensor<128xf32> {jax.result_info = "result[0]['layers'][2]['fc1']['b']"}, tensor<32x128xf32> {jax.result_info = "result[0]['layers'][2]['fc1']['w']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][2]['fc2']['b']"}, tensor<128x32xf32> {jax.result_info = "result[0]['layers'][2]['fc2']['w']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][2]['ln1']['bias']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][2]['ln1']['scale']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][2]['ln2']['bias']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][2]['ln2']['scale']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][2]['out']['b']"}, tensor<32x32xf32> {jax.result_info = "result[0]['layers'][2]['out']['w']"}, tensor<96xf32> {jax.result_info = "result[0]['layers'][2]['qkv']['b']"}, tensor<32x96xf32> {jax.result_info = "result[0]['layers'][2]['qkv']['w']"}, tensor<128xf32> {jax.result_info = "result[0]['layers'][3]['fc1']['b']"}, tensor<32x128xf32> {jax.result_info = "result[0]['layers'][3]['fc1']['w']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][3]['fc2']['b']"}, tensor<128x32xf32> {jax.result_info = "result[0]['layers'][3]['fc2']['w']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][3]['ln1']['bias']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][3]['ln1']['scale']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][3]['ln2']['bias']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][3]['ln2']['scale']"}, tensor<32xf32> {jax.result_info = "result[0]['layers'][3]['out']['b']"}, tensor<32x32xf32> {jax.result_info = "result[0]['layers'][3]['out']['w']"}, tensor<96xf32> {jax.result_info = "result[0]['layers'][3]['qkv']['b']"}, tensor<32x96xf32> {jax.result_info = "result[0]['layers'][3]['qkv']['w']"}, tensor<32xf32> {jax.result_info = "result[0]['ln_f']['bias']"}, tensor<32xf32> {jax.result_info = "result[0]['ln_f']['scale']"}, tensor<8x32xf32> {jax.result_info = "result[0]['wpe']"}, tensor<64x32xf32> {jax.result_info = "result[0]['wte']"}, tensor<128xf32> {jax.result_info = "result[1]['mu']['layers'][0]['fc1']['b']"}, tensor<32x128xf32> {jax.result_info = "result[1]['mu']['layers'][0]['fc1']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][0]['fc2']['b']"}, tensor<128x32xf32> {jax.result_info = "result[1]['mu']['layers'][0]['fc2']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][0]['ln1']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][0]['ln1']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][0]['ln2']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][0]['ln2']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][0]['out']['b']"}, tensor<32x32xf32> {jax.result_info = "result[1]['mu']['layers'][0]['out']['w']"}, tensor<96xf32> {jax.result_info = "result[1]['mu']['layers'][0]['qkv']['b']"}, tensor<32x96xf32> {jax.result_info = "result[1]['mu']['layers'][0]['qkv']['w']"}, tensor<128xf32> {jax.result_info = "result[1]['mu']['layers'][1]['fc1']['b']"}, tensor<32x128xf32> {jax.result_info = "result[1]['mu']['layers'][1]['fc1']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][1]['fc2']['b']"}, tensor<128x32xf32> {jax.result_info = "result[1]['mu']['layers'][1]['fc2']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][1]['ln1']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][1]['ln1']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][1]['ln2']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][1]['ln2']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][1]['out']['b']"}, tensor<32x32xf32> {jax.result_info = "result[1]['mu']['layers'][1]['out']['w']"}, tensor<96xf32> {jax.result_info = "result[1]['mu']['layers'][1]['qkv']['b']"}, tensor<32x96xf32> {jax.result_info = "result[1]['mu']['layers'][1]['qkv']['w']"}, tensor<128xf32> {jax.result_info = "result[1]['mu']['layers'][2]['fc1']['b']"}, tensor<32x128xf32> {jax.result_info = "result[1]['mu']['layers'][2]['fc1']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][2]['fc2']['b']"}, tensor<128x32xf32> {jax.result_info = "result[1]['mu']['layers'][2]['fc2']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][2]['ln1']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][2]['ln1']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][2]['ln2']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][2]['ln2']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][2]['out']['b']"}, tensor<32x32xf32> {jax.result_info = "result[1]['mu']['layers'][2]['out']['w']"}, tensor<96xf32> {jax.result_info = "result[1]['mu']['layers'][2]['qkv']['b']"}, tensor<32x96xf32> {jax.result_info = "result[1]['mu']['layers'][2]['qkv']['w']"}, tensor<128xf32> {jax.result_info = "result[1]['mu']['layers'][3]['fc1']['b']"}, tensor<32x128xf32> {jax.result_info = "result[1]['mu']['layers'][3]['fc1']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][3]['fc2']['b']"}, tensor<128x32xf32> {jax.result_info = "result[1]['mu']['layers'][3]['fc2']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][3]['ln1']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][3]['ln1']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][3]['ln2']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][3]['ln2']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['layers'][3]['out']['b']"}, tensor<32x32xf32> {jax.result_info = "result[1]['mu']['layers'][3]['out']['w']"}, tensor<96xf32> {jax.result_info = "result[1]['mu']['layers'][3]['qkv']['b']"}, tensor<32x96xf32> {jax.result_info = "result[1]['mu']['layers'][3]['qkv']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['ln_f']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['mu']['ln_f']['scale']"}, tensor<8x32xf32> {jax.result_info = "result[1]['mu']['wpe']"}, tensor<64x32xf32> {jax.result_info = "result[1]['mu']['wte']"}, tensor<128xf32> {jax.result_info = "result[1]['nu']['layers'][0]['fc1']['b']"}, tensor<32x128xf32> {jax.result_info = "result[1]['nu']['layers'][0]['fc1']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][0]['fc2']['b']"}, tensor<128x32xf32> {jax.result_info = "result[1]['nu']['layers'][0]['fc2']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][0]['ln1']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][0]['ln1']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][0]['ln2']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][0]['ln2']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][0]['out']['b']"}, tensor<32x32xf32> {jax.result_info = "result[1]['nu']['layers'][0]['out']['w']"}, tensor<96xf32> {jax.result_info = "result[1]['nu']['layers'][0]['qkv']['b']"}, tensor<32x96xf32> {jax.result_info = "result[1]['nu']['layers'][0]['qkv']['w']"}, tensor<128xf32> {jax.result_info = "result[1]['nu']['layers'][1]['fc1']['b']"}, tensor<32x128xf32> {jax.result_info = "result[1]['nu']['layers'][1]['fc1']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][1]['fc2']['b']"}, tensor<128x32xf32> {jax.result_info = "result[1]['nu']['layers'][1]['fc2']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][1]['ln1']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][1]['ln1']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][1]['ln2']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][1]['ln2']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][1]['out']['b']"}, tensor<32x32xf32> {jax.result_info = "result[1]['nu']['layers'][1]['out']['w']"}, tensor<96xf32> {jax.result_info = "result[1]['nu']['layers'][1]['qkv']['b']"}, tensor<32x96xf32> {jax.result_info = "result[1]['nu']['layers'][1]['qkv']['w']"}, tensor<128xf32> {jax.result_info = "result[1]['nu']['layers'][2]['fc1']['b']"}, tensor<32x128xf32> {jax.result_info = "result[1]['nu']['layers'][2]['fc1']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][2]['fc2']['b']"}, tensor<128x32xf32> {jax.result_info = "result[1]['nu']['layers'][2]['fc2']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][2]['ln1']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][2]['ln1']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][2]['ln2']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][2]['ln2']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][2]['out']['b']"}, tensor<32x32xf32> {jax.result_info = "result[1]['nu']['layers'][2]['out']['w']"}, tensor<96xf32> {jax.result_info = "result[1]['nu']['layers'][2]['qkv']['b']"}, tensor<32x96xf32> {jax.result_info = "result[1]['nu']['layers'][2]['qkv']['w']"}, tensor<128xf32> {jax.result_info = "result[1]['nu']['layers'][3]['fc1']['b']"}, tensor<32x128xf32> {jax.result_info = "result[1]['nu']['layers'][3]['fc1']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][3]['fc2']['b']"}, tensor<128x32xf32> {jax.result_info = "result[1]['nu']['layers'][3]['fc2']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][3]['ln1']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][3]['ln1']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][3]['ln2']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][3]['ln2']['scale']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['layers'][3]['out']['b']"}, tensor<32x32xf32> {jax.result_info = "result[1]['nu']['layers'][3]['out']['w']"}, tensor<96xf32> {jax.result_info = "result[1]['nu']['layers'][3]['qkv']['b']"}, tensor<32x96xf32> {jax.result_info = "result[1]['nu']['layers'][3]['qkv']['w']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['ln_f']['bias']"}, tensor<32xf32> {jax.result_info = "result[1]['nu']['ln_f']['scale']"}, tensor<8x32xf32> {jax.result_info = "result[1]['nu']['wpe']"}, tensor<64x32xf32> {jax.result_info = "result[1]['nu']['wte']"}, tensor<i32> {jax.result_info = "result[1]['step']"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %0:2 = call @_take(%arg51, %arg158) : (tensor<64x32xf32>, tensor<8x8xi32>) -> (tensor<8x8x32xf32>, tensor<8x8x1xi32>)
    %1 = stablehlo.broadcast_in_dim %arg50, dims = [1, 2] : (tensor<8x32xf32>) -> tensor<1x8x32xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2] : (tensor<1x8x32xf32>) -> tensor<8x8x32xf32>
    %3 = stablehlo.add %0#0, %2 : tensor<8x8x32xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_0 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %7 = stablehlo.divide %5, %6 : tensor<8x8x1xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %9 = stablehlo.subtract %3, %8 : tensor<8x8x32xf32>
    %10 = chlo.square %9 : tensor<8x8x32xf32> -> tensor<8x8x32xf32>
    %cst_1 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %12 = stablehlo.multiply %11, %9 : tensor<8x8x32xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %13 = stablehlo.reduce(%10 init: %cst_2) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_3 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %16 = stablehlo.divide %14, %15 : tensor<8x8x1xf32>
    %17 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %18 = stablehlo.subtract %3, %17 : tensor<8x8x32xf32>
    %cst_4 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %20 = stablehlo.add %16, %19 : tensor<8x8x1xf32>
    %21 = stablehlo.rsqrt %20 : tensor<8x8x1xf32>
    %22 = stablehlo.divide %21, %20 : tensor<8x8x1xf32>
    %cst_5 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %24 = stablehlo.multiply %23, %22 : tensor<8x8x1xf32>
    %25 = stablehlo.broadcast_in_dim %21, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %26 = stablehlo.multiply %18, %25 : tensor<8x8x32xf32>
    %27 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %28 = stablehlo.broadcast_in_dim %27, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %29 = stablehlo.multiply %26, %28 : tensor<8x8x32xf32>
    %30 = stablehlo.broadcast_in_dim %arg4, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %32 = stablehlo.add %29, %31 : tensor<8x8x32xf32>
    %33 = stablehlo.dot_general %32, %arg11, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x96xf32>) -> tensor<8x8x96xf32>
    %34 = stablehlo.broadcast_in_dim %arg10, dims = [2] : (tensor<96xf32>) -> tensor<1x1x96xf32>
    %35 = stablehlo.broadcast_in_dim %34, dims = [0, 1, 2] : (tensor<1x1x96xf32>) -> tensor<8x8x96xf32>
    %36 = stablehlo.add %33, %35 : tensor<8x8x96xf32>
    %37 = stablehlo.reshape %36 : (tensor<8x8x96xf32>) -> tensor<8x8x3x2x16xf32>
    %38 = stablehlo.slice %37 [0:8, 0:8, 0:1, 0:2, 0:16] : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %39 = stablehlo.reshape %38 : (tensor<8x8x1x2x16xf32>) -> tensor<8x8x2x16xf32>
    %40 = stablehlo.slice %37 [0:8, 0:8, 1:2, 0:2, 0:16] : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %41 = stablehlo.reshape %40 : (tensor<8x8x1x2x16xf32>) -> tensor<8x8x2x16xf32>
    %42 = stablehlo.slice %37 [0:8, 0:8, 2:3, 0:2, 0:16] : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %43 = stablehlo.reshape %42 : (tensor<8x8x1x2x16xf32>) -> tensor<8x8x2x16xf32>
    %44 = stablehlo.dot_general %39, %41, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x2x16xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x8xf32>
    %cst_6 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %45 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x2x8x8xf32>
    %46 = stablehlo.divide %44, %45 : tensor<8x2x8x8xf32>
    %c = stablehlo.constant dense<true> : tensor<i1>
    %47 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %48 = call @tril(%47) : (tensor<8x8xi1>) -> tensor<8x8xi1>
    %cst_7 = stablehlo.constant dense<-3.40282347E+38> : tensor<f32>
    %49:2 = call @_where_0(%48, %46, %cst_7) : (tensor<8x8xi1>, tensor<8x2x8x8xf32>, tensor<f32>) -> (tensor<8x2x8x8xf32>, tensor<8x2x8x8xi1>)
    %cst_8 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %50 = stablehlo.reduce(%49#0 init: %cst_8) applies stablehlo.maximum across dimensions = [3] : (tensor<8x2x8x8xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %cst_9 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %51 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<8x2x8xf32>
    %52 = stablehlo.maximum %51, %50 : tensor<8x2x8xf32>
    %53 = stablehlo.broadcast_in_dim %52, dims = [0, 1, 2] : (tensor<8x2x8xf32>) -> tensor<8x2x8x1xf32>
    %54 = stablehlo.broadcast_in_dim %53, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %55 = stablehlo.subtract %49#0, %54 : tensor<8x2x8x8xf32>
    %56 = stablehlo.exponential %55 : tensor<8x2x8x8xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %57 = stablehlo.reduce(%56 init: %cst_10) applies stablehlo.add across dimensions = [3] : (tensor<8x2x8x8xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %58 = stablehlo.broadcast_in_dim %57, dims = [0, 1, 2] : (tensor<8x2x8xf32>) -> tensor<8x2x8x1xf32>
    %59 = stablehlo.broadcast_in_dim %58, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %60 = stablehlo.divide %56, %59 : tensor<8x2x8x8xf32>
    %61 = stablehlo.multiply %58, %58 : tensor<8x2x8x1xf32>
    %cst_11 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %62 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8x2x8x1xf32>
    %63 = stablehlo.divide %62, %61 : tensor<8x2x8x1xf32>
    %64 = stablehlo.dot_general %43, %60, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x2x16xf32>, tensor<8x2x8x8xf32>) -> tensor<8x2x16x8xf32>
    %65 = stablehlo.transpose %64, dims = [0, 3, 1, 2] : (tensor<8x2x16x8xf32>) -> tensor<8x8x2x16xf32>
    %66 = stablehlo.reshape %65 : (tensor<8x8x2x16xf32>) -> tensor<8x8x32xf32>
    %67 = stablehlo.dot_general %66, %arg9, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %68 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %70 = stablehlo.add %67, %69 : tensor<8x8x32xf32>
    %71 = stablehlo.add %3, %70 : tensor<8x8x32xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %72 = stablehlo.reduce(%71 init: %cst_12) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %73 = stablehlo.broadcast_in_dim %72, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_13 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %74 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %75 = stablehlo.divide %73, %74 : tensor<8x8x1xf32>
    %76 = stablehlo.broadcast_in_dim %75, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %77 = stablehlo.subtract %71, %76 : tensor<8x8x32xf32>
    %78 = chlo.square %77 : tensor<8x8x32xf32> -> tensor<8x8x32xf32>
    %cst_14 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %79 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %80 = stablehlo.multiply %79, %77 : tensor<8x8x32xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %81 = stablehlo.reduce(%78 init: %cst_15) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %82 = stablehlo.broadcast_in_dim %81, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_16 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %83 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %84 = stablehlo.divide %82, %83 : tensor<8x8x1xf32>
    %85 = stablehlo.broadcast_in_dim %75, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %86 = stablehlo.subtract %71, %85 : tensor<8x8x32xf32>
    %cst_17 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %87 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %88 = stablehlo.add %84, %87 : tensor<8x8x1xf32>
    %89 = stablehlo.rsqrt %88 : tensor<8x8x1xf32>
    %90 = stablehlo.divide %89, %88 : tensor<8x8x1xf32>
    %cst_18 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %91 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %92 = stablehlo.multiply %91, %90 : tensor<8x8x1xf32>
    %93 = stablehlo.broadcast_in_dim %89, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %94 = stablehlo.multiply %86, %93 : tensor<8x8x32xf32>
    %95 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %96 = stablehlo.broadcast_in_dim %95, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %97 = stablehlo.multiply %94, %96 : tensor<8x8x32xf32>
    %98 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %99 = stablehlo.broadcast_in_dim %98, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %100 = stablehlo.add %97, %99 : tensor<8x8x32xf32>
    %101 = stablehlo.dot_general %100, %arg1, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x128xf32>) -> tensor<8x8x128xf32>
    %102 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %103 = stablehlo.broadcast_in_dim %102, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x8x128xf32>
    %104 = stablehlo.add %101, %103 : tensor<8x8x128xf32>
    %105 = stablehlo.multiply %104, %104 : tensor<8x8x128xf32>
    %106 = stablehlo.multiply %105, %104 : tensor<8x8x128xf32>
    %107 = stablehlo.multiply %104, %104 : tensor<8x8x128xf32>
    %cst_19 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %108 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %109 = stablehlo.multiply %108, %107 : tensor<8x8x128xf32>
    %cst_20 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %110 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %111 = stablehlo.multiply %110, %106 : tensor<8x8x128xf32>
    %112 = stablehlo.add %104, %111 : tensor<8x8x128xf32>
    %cst_21 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %113 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %114 = stablehlo.multiply %113, %112 : tensor<8x8x128xf32>
    %115 = stablehlo.tanh %114 : tensor<8x8x128xf32>
    %cst_22 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %116 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %117 = stablehlo.subtract %116, %115 : tensor<8x8x128xf32>
    %cst_23 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %118 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %119 = stablehlo.add %118, %115 : tensor<8x8x128xf32>
    %cst_24 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %120 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %121 = stablehlo.multiply %120, %119 : tensor<8x8x128xf32>
    %122 = stablehlo.multiply %104, %121 : tensor<8x8x128xf32>
    %123 = stablehlo.dot_general %122, %arg3, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<128x32xf32>) -> tensor<8x8x32xf32>
    %124 = stablehlo.add %71, %123 : tensor<8x8x32xf32>
    %125 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %126 = stablehlo.broadcast_in_dim %125, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %127 = stablehlo.add %124, %126 : tensor<8x8x32xf32>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %128 = stablehlo.reduce(%127 init: %cst_25) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %129 = stablehlo.broadcast_in_dim %128, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_26 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %130 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %131 = stablehlo.divide %129, %130 : tensor<8x8x1xf32>
    %132 = stablehlo.broadcast_in_dim %131, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %133 = stablehlo.subtract %127, %132 : tensor<8x8x32xf32>
    %134 = chlo.square %133 : tensor<8x8x32xf32> -> tensor<8x8x32xf32>
    %cst_27 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %135 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %136 = stablehlo.multiply %135, %133 : tensor<8x8x32xf32>
    %cst_28 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %137 = stablehlo.reduce(%134 init: %cst_28) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %138 = stablehlo.broadcast_in_dim %137, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_29 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %139 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %140 = stablehlo.divide %138, %139 : tensor<8x8x1xf32>
    %141 = stablehlo.broadcast_in_dim %131, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %142 = stablehlo.subtract %127, %141 : tensor<8x8x32xf32>
    %cst_30 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %143 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %144 = stablehlo.add %140, %143 : tensor<8x8x1xf32>
    %145 = stablehlo.rsqrt %144 : tensor<8x8x1xf32>
    %146 = stablehlo.divide %145, %144 : tensor<8x8x1xf32>
    %cst_31 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %147 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %148 = stablehlo.multiply %147, %146 : tensor<8x8x1xf32>
    %149 = stablehlo.broadcast_in_dim %145, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %150 = stablehlo.multiply %142, %149 : tensor<8x8x32xf32>
    %151 = stablehlo.broadcast_in_dim %arg17, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %152 = stablehlo.broadcast_in_dim %151, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %153 = stablehlo.multiply %150, %152 : tensor<8x8x32xf32>
    %154 = stablehlo.broadcast_in_dim %arg16, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %155 = stablehlo.broadcast_in_dim %154, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %156 = stablehlo.add %153, %155 : tensor<8x8x32xf32>
    %157 = stablehlo.dot_general %156, %arg23, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x96xf32>) -> tensor<8x8x96xf32>
    %158 = stablehlo.broadcast_in_dim %arg22, dims = [2] : (tensor<96xf32>) -> tensor<1x1x96xf32>
    %159 = stablehlo.broadcast_in_dim %158, dims = [0, 1, 2] : (tensor<1x1x96xf32>) -> tensor<8x8x96xf32>
    %160 = stablehlo.add %157, %159 : tensor<8x8x96xf32>
    %161 = stablehlo.reshape %160 : (tensor<8x8x96xf32>) -> tensor<8x8x3x2x16xf32>
    %162 = stablehlo.slice %161 [0:8, 0:8, 0:1, 0:2, 0:16] : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %163 = stablehlo.reshape %162 : (tensor<8x8x1x2x16xf32>) -> tensor<8x8x2x16xf32>
    %164 = stablehlo.slice %161 [0:8, 0:8, 1:2, 0:2, 0:16] : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %165 = stablehlo.reshape %164 : (tensor<8x8x1x2x16xf32>) -> tensor<8x8x2x16xf32>
    %166 = stablehlo.slice %161 [0:8, 0:8, 2:3, 0:2, 0:16] : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %167 = stablehlo.reshape %166 : (tensor<8x8x1x2x16xf32>) -> tensor<8x8x2x16xf32>
    %168 = stablehlo.dot_general %163, %165, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x2x16xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x8xf32>
    %cst_32 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %169 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<8x2x8x8xf32>
    %170 = stablehlo.divide %168, %169 : tensor<8x2x8x8xf32>
    %c_33 = stablehlo.constant dense<true> : tensor<i1>
    %171 = stablehlo.broadcast_in_dim %c_33, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %172 = call @tril(%171) : (tensor<8x8xi1>) -> tensor<8x8xi1>
    %cst_34 = stablehlo.constant dense<-3.40282347E+38> : tensor<f32>
    %173:2 = call @_where_0(%172, %170, %cst_34) : (tensor<8x8xi1>, tensor<8x2x8x8xf32>, tensor<f32>) -> (tensor<8x2x8x8xf32>, tensor<8x2x8x8xi1>)
    %cst_35 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %174 = stablehlo.reduce(%173#0 init: %cst_35) applies stablehlo.maximum across dimensions = [3] : (tensor<8x2x8x8xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %cst_36 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %175 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<8x2x8xf32>
    %176 = stablehlo.maximum %175, %174 : tensor<8x2x8xf32>
    %177 = stablehlo.broadcast_in_dim %176, dims = [0, 1, 2] : (tensor<8x2x8xf32>) -> tensor<8x2x8x1xf32>
    %178 = stablehlo.broadcast_in_dim %177, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %179 = stablehlo.subtract %173#0, %178 : tensor<8x2x8x8xf32>
    %180 = stablehlo.exponential %179 : tensor<8x2x8x8xf32>
    %cst_37 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %181 = stablehlo.reduce(%180 init: %cst_37) applies stablehlo.add across dimensions = [3] : (tensor<8x2x8x8xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %182 = stablehlo.broadcast_in_dim %181, dims = [0, 1, 2] : (tensor<8x2x8xf32>) -> tensor<8x2x8x1xf32>
    %183 = stablehlo.broadcast_in_dim %182, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %184 = stablehlo.divide %180, %183 : tensor<8x2x8x8xf32>
    %185 = stablehlo.multiply %182, %182 : tensor<8x2x8x1xf32>
    %cst_38 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %186 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<8x2x8x1xf32>
    %187 = stablehlo.divide %186, %185 : tensor<8x2x8x1xf32>
    %188 = stablehlo.dot_general %167, %184, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x2x16xf32>, tensor<8x2x8x8xf32>) -> tensor<8x2x16x8xf32>
    %189 = stablehlo.transpose %188, dims = [0, 3, 1, 2] : (tensor<8x2x16x8xf32>) -> tensor<8x8x2x16xf32>
    %190 = stablehlo.reshape %189 : (tensor<8x8x2x16xf32>) -> tensor<8x8x32xf32>
    %191 = stablehlo.dot_general %190, %arg21, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %192 = stablehlo.broadcast_in_dim %arg20, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %193 = stablehlo.broadcast_in_dim %192, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %194 = stablehlo.add %191, %193 : tensor<8x8x32xf32>
    %195 = stablehlo.add %127, %194 : tensor<8x8x32xf32>
    %cst_39 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %196 = stablehlo.reduce(%195 init: %cst_39) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %197 = stablehlo.broadcast_in_dim %196, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_40 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %198 = stablehlo.broadcast_in_dim %cst_40, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %199 = stablehlo.divide %197, %198 : tensor<8x8x1xf32>
    %200 = stablehlo.broadcast_in_dim %199, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %201 = stablehlo.subtract %195, %200 : tensor<8x8x32xf32>
    %202 = chlo.square %201 : tensor<8x8x32xf32> -> tensor<8x8x32xf32>
    %cst_41 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %203 = stablehlo.broadcast_in_dim %cst_41, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %204 = stablehlo.multiply %203, %201 : tensor<8x8x32xf32>
    %cst_42 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %205 = stablehlo.reduce(%202 init: %cst_42) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %206 = stablehlo.broadcast_in_dim %205, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_43 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %207 = stablehlo.broadcast_in_dim %cst_43, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %208 = stablehlo.divide %206, %207 : tensor<8x8x1xf32>
    %209 = stablehlo.broadcast_in_dim %199, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %210 = stablehlo.subtract %195, %209 : tensor<8x8x32xf32>
    %cst_44 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %211 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %212 = stablehlo.add %208, %211 : tensor<8x8x1xf32>
    %213 = stablehlo.rsqrt %212 : tensor<8x8x1xf32>
    %214 = stablehlo.divide %213, %212 : tensor<8x8x1xf32>
    %cst_45 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %215 = stablehlo.broadcast_in_dim %cst_45, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %216 = stablehlo.multiply %215, %214 : tensor<8x8x1xf32>
    %217 = stablehlo.broadcast_in_dim %213, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %218 = stablehlo.multiply %210, %217 : tensor<8x8x32xf32>
    %219 = stablehlo.broadcast_in_dim %arg19, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %220 = stablehlo.broadcast_in_dim %219, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %221 = stablehlo.multiply %218, %220 : tensor<8x8x32xf32>
    %222 = stablehlo.broadcast_in_dim %arg18, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %223 = stablehlo.broadcast_in_dim %222, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %224 = stablehlo.add %221, %223 : tensor<8x8x32xf32>
    %225 = stablehlo.dot_general %224, %arg13, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x128xf32>) -> tensor<8x8x128xf32>
    %226 = stablehlo.broadcast_in_dim %arg12, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %227 = stablehlo.broadcast_in_dim %226, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x8x128xf32>
    %228 = stablehlo.add %225, %227 : tensor<8x8x128xf32>
    %229 = stablehlo.multiply %228, %228 : tensor<8x8x128xf32>
    %230 = stablehlo.multiply %229, %228 : tensor<8x8x128xf32>
    %231 = stablehlo.multiply %228, %228 : tensor<8x8x128xf32>
    %cst_46 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %232 = stablehlo.broadcast_in_dim %cst_46, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %233 = stablehlo.multiply %232, %231 : tensor<8x8x128xf32>
    %cst_47 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %234 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %235 = stablehlo.multiply %234, %230 : tensor<8x8x128xf32>
    %236 = stablehlo.add %228, %235 : tensor<8x8x128xf32>
    %cst_48 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %237 = stablehlo.broadcast_in_dim %cst_48, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %238 = stablehlo.multiply %237, %236 : tensor<8x8x128xf32>
    %239 = stablehlo.tanh %238 : tensor<8x8x128xf32>
    %cst_49 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %240 = stablehlo.broadcast_in_dim %cst_49, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %241 = stablehlo.subtract %240, %239 : tensor<8x8x128xf32>
    %cst_50 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %242 = stablehlo.broadcast_in_dim %cst_50, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %243 = stablehlo.add %242, %239 : tensor<8x8x128xf32>
    %cst_51 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %244 = stablehlo.broadcast_in_dim %cst_51, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %245 = stablehlo.multiply %244, %243 : tensor<8x8x128xf32>
    %246 = stablehlo.multiply %228, %245 : tensor<8x8x128xf32>
    %247 = stablehlo.dot_general %246, %arg15, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<128x32xf32>) -> tensor<8x8x32xf32>
    %248 = stablehlo.add %195, %247 : tensor<8x8x32xf32>
    %249 = stablehlo.broadcast_in_dim %arg14, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %250 = stablehlo.broadcast_in_dim %249, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %251 = stablehlo.add %248, %250 : tensor<8x8x32xf32>
    %cst_52 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %252 = stablehlo.reduce(%251 init: %cst_52) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %253 = stablehlo.broadcast_in_dim %252, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_53 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %254 = stablehlo.broadcast_in_dim %cst_53, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %255 = stablehlo.divide %253, %254 : tensor<8x8x1xf32>
    %256 = stablehlo.broadcast_in_dim %255, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %257 = stablehlo.subtract %251, %256 : tensor<8x8x32xf32>
    %258 = chlo.square %257 : tensor<8x8x32xf32> -> tensor<8x8x32xf32>
    %cst_54 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %259 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %260 = stablehlo.multiply %259, %257 : tensor<8x8x32xf32>
    %cst_55 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %261 = stablehlo.reduce(%258 init: %cst_55) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %262 = stablehlo.broadcast_in_dim %261, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_56 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %263 = stablehlo.broadcast_in_dim %cst_56, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %264 = stablehlo.divide %262, %263 : tensor<8x8x1xf32>
    %265 = stablehlo.broadcast_in_dim %255, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %266 = stablehlo.subtract %251, %265 : tensor<8x8x32xf32>
    %cst_57 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %267 = stablehlo.broadcast_in_dim %cst_57, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %268 = stablehlo.add %264, %267 : tensor<8x8x1xf32>
    %269 = stablehlo.rsqrt %268 : tensor<8x8x1xf32>
    %270 = stablehlo.divide %269, %268 : tensor<8x8x1xf32>
    %cst_58 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %271 = stablehlo.broadcast_in_dim %cst_58, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %272 = stablehlo.multiply %271, %270 : tensor<8x8x1xf32>
    %273 = stablehlo.broadcast_in_dim %269, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %274 = stablehlo.multiply %266, %273 : tensor<8x8x32xf32>
    %275 = stablehlo.broadcast_in_dim %arg29, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %276 = stablehlo.broadcast_in_dim %275, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %277 = stablehlo.multiply %274, %276 : tensor<8x8x32xf32>
    %278 = stablehlo.broadcast_in_dim %arg28, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %279 = stablehlo.broadcast_in_dim %278, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %280 = stablehlo.add %277, %279 : tensor<8x8x32xf32>
    %281 = stablehlo.dot_general %280, %arg35, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x96xf32>) -> tensor<8x8x96xf32>
    %282 = stablehlo.broadcast_in_dim %arg34, dims = [2] : (tensor<96xf32>) -> tensor<1x1x96xf32>
    %283 = stablehlo.broadcast_in_dim %282, dims = [0, 1, 2] : (tensor<1x1x96xf32>) -> tensor<8x8x96xf32>
    %284 = stablehlo.add %281, %283 : tensor<8x8x96xf32>
    %285 = stablehlo.reshape %284 : (tensor<8x8x96xf32>) -> tensor<8x8x3x2x16xf32>
    %286 = stablehlo.slice %285 [0:8, 0:8, 0:1, 0:2, 0:16] : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %287 = stablehlo.reshape %286 : (tensor<8x8x1x2x16xf32>) -> tensor<8x8x2x16xf32>
    %288 = stablehlo.slice %285 [0:8, 0:8, 1:2, 0:2, 0:16] : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %289 = stablehlo.reshape %288 : (tensor<8x8x1x2x16xf32>) -> tensor<8x8x2x16xf32>
    %290 = stablehlo.slice %285 [0:8, 0:8, 2:3, 0:2, 0:16] : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %291 = stablehlo.reshape %290 : (tensor<8x8x1x2x16xf32>) -> tensor<8x8x2x16xf32>
    %292 = stablehlo.dot_general %287, %289, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x2x16xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x8xf32>
    %cst_59 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %293 = stablehlo.broadcast_in_dim %cst_59, dims = [] : (tensor<f32>) -> tensor<8x2x8x8xf32>
    %294 = stablehlo.divide %292, %293 : tensor<8x2x8x8xf32>
    %c_60 = stablehlo.constant dense<true> : tensor<i1>
    %295 = stablehlo.broadcast_in_dim %c_60, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %296 = call @tril(%295) : (tensor<8x8xi1>) -> tensor<8x8xi1>
    %cst_61 = stablehlo.constant dense<-3.40282347E+38> : tensor<f32>
    %297:2 = call @_where_0(%296, %294, %cst_61) : (tensor<8x8xi1>, tensor<8x2x8x8xf32>, tensor<f32>) -> (tensor<8x2x8x8xf32>, tensor<8x2x8x8xi1>)
    %cst_62 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %298 = stablehlo.reduce(%297#0 init: %cst_62) applies stablehlo.maximum across dimensions = [3] : (tensor<8x2x8x8xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %cst_63 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %299 = stablehlo.broadcast_in_dim %cst_63, dims = [] : (tensor<f32>) -> tensor<8x2x8xf32>
    %300 = stablehlo.maximum %299, %298 : tensor<8x2x8xf32>
    %301 = stablehlo.broadcast_in_dim %300, dims = [0, 1, 2] : (tensor<8x2x8xf32>) -> tensor<8x2x8x1xf32>
    %302 = stablehlo.broadcast_in_dim %301, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %303 = stablehlo.subtract %297#0, %302 : tensor<8x2x8x8xf32>
    %304 = stablehlo.exponential %303 : tensor<8x2x8x8xf32>
    %cst_64 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %305 = stablehlo.reduce(%304 init: %cst_64) applies stablehlo.add across dimensions = [3] : (tensor<8x2x8x8xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %306 = stablehlo.broadcast_in_dim %305, dims = [0, 1, 2] : (tensor<8x2x8xf32>) -> tensor<8x2x8x1xf32>
    %307 = stablehlo.broadcast_in_dim %306, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %308 = stablehlo.divide %304, %307 : tensor<8x2x8x8xf32>
    %309 = stablehlo.multiply %306, %306 : tensor<8x2x8x1xf32>
    %cst_65 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %310 = stablehlo.broadcast_in_dim %cst_65, dims = [] : (tensor<f32>) -> tensor<8x2x8x1xf32>
    %311 = stablehlo.divide %310, %309 : tensor<8x2x8x1xf32>
    %312 = stablehlo.dot_general %291, %308, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x2x16xf32>, tensor<8x2x8x8xf32>) -> tensor<8x2x16x8xf32>
    %313 = stablehlo.transpose %312, dims = [0, 3, 1, 2] : (tensor<8x2x16x8xf32>) -> tensor<8x8x2x16xf32>
    %314 = stablehlo.reshape %313 : (tensor<8x8x2x16xf32>) -> tensor<8x8x32xf32>
    %315 = stablehlo.dot_general %314, %arg33, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %316 = stablehlo.broadcast_in_dim %arg32, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %317 = stablehlo.broadcast_in_dim %316, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %318 = stablehlo.add %315, %317 : tensor<8x8x32xf32>
    %319 = stablehlo.add %251, %318 : tensor<8x8x32xf32>
    %cst_66 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %320 = stablehlo.reduce(%319 init: %cst_66) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %321 = stablehlo.broadcast_in_dim %320, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_67 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %322 = stablehlo.broadcast_in_dim %cst_67, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %323 = stablehlo.divide %321, %322 : tensor<8x8x1xf32>
    %324 = stablehlo.broadcast_in_dim %323, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %325 = stablehlo.subtract %319, %324 : tensor<8x8x32xf32>
    %326 = chlo.square %325 : tensor<8x8x32xf32> -> tensor<8x8x32xf32>
    %cst_68 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %327 = stablehlo.broadcast_in_dim %cst_68, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %328 = stablehlo.multiply %327, %325 : tensor<8x8x32xf32>
    %cst_69 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %329 = stablehlo.reduce(%326 init: %cst_69) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %330 = stablehlo.broadcast_in_dim %329, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_70 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %331 = stablehlo.broadcast_in_dim %cst_70, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %332 = stablehlo.divide %330, %331 : tensor<8x8x1xf32>
    %333 = stablehlo.broadcast_in_dim %323, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %334 = stablehlo.subtract %319, %333 : tensor<8x8x32xf32>
    %cst_71 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %335 = stablehlo.broadcast_in_dim %cst_71, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %336 = stablehlo.add %332, %335 : tensor<8x8x1xf32>
    %337 = stablehlo.rsqrt %336 : tensor<8x8x1xf32>
    %338 = stablehlo.divide %337, %336 : tensor<8x8x1xf32>
    %cst_72 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %339 = stablehlo.broadcast_in_dim %cst_72, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %340 = stablehlo.multiply %339, %338 : tensor<8x8x1xf32>
    %341 = stablehlo.broadcast_in_dim %337, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %342 = stablehlo.multiply %334, %341 : tensor<8x8x32xf32>
    %343 = stablehlo.broadcast_in_dim %arg31, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %344 = stablehlo.broadcast_in_dim %343, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %345 = stablehlo.multiply %342, %344 : tensor<8x8x32xf32>
    %346 = stablehlo.broadcast_in_dim %arg30, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %347 = stablehlo.broadcast_in_dim %346, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %348 = stablehlo.add %345, %347 : tensor<8x8x32xf32>
    %349 = stablehlo.dot_general %348, %arg25, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x128xf32>) -> tensor<8x8x128xf32>
    %350 = stablehlo.broadcast_in_dim %arg24, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %351 = stablehlo.broadcast_in_dim %350, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x8x128xf32>
    %352 = stablehlo.add %349, %351 : tensor<8x8x128xf32>
    %353 = stablehlo.multiply %352, %352 : tensor<8x8x128xf32>
    %354 = stablehlo.multiply %353, %352 : tensor<8x8x128xf32>
    %355 = stablehlo.multiply %352, %352 : tensor<8x8x128xf32>
    %cst_73 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %356 = stablehlo.broadcast_in_dim %cst_73, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %357 = stablehlo.multiply %356, %355 : tensor<8x8x128xf32>
    %cst_74 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %358 = stablehlo.broadcast_in_dim %cst_74, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %359 = stablehlo.multiply %358, %354 : tensor<8x8x128xf32>
    %360 = stablehlo.add %352, %359 : tensor<8x8x128xf32>
    %cst_75 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %361 = stablehlo.broadcast_in_dim %cst_75, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %362 = stablehlo.multiply %361, %360 : tensor<8x8x128xf32>
    %363 = stablehlo.tanh %362 : tensor<8x8x128xf32>
    %cst_76 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %364 = stablehlo.broadcast_in_dim %cst_76, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %365 = stablehlo.subtract %364, %363 : tensor<8x8x128xf32>
    %cst_77 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %366 = stablehlo.broadcast_in_dim %cst_77, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %367 = stablehlo.add %366, %363 : tensor<8x8x128xf32>
    %cst_78 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %368 = stablehlo.broadcast_in_dim %cst_78, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %369 = stablehlo.multiply %368, %367 : tensor<8x8x128xf32>
    %370 = stablehlo.multiply %352, %369 : tensor<8x8x128xf32>
    %371 = stablehlo.dot_general %370, %arg27, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<128x32xf32>) -> tensor<8x8x32xf32>
    %372 = stablehlo.add %319, %371 : tensor<8x8x32xf32>
    %373 = stablehlo.broadcast_in_dim %arg26, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %374 = stablehlo.broadcast_in_dim %373, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %375 = stablehlo.add %372, %374 : tensor<8x8x32xf32>
    %cst_79 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %376 = stablehlo.reduce(%375 init: %cst_79) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %377 = stablehlo.broadcast_in_dim %376, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_80 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %378 = stablehlo.broadcast_in_dim %cst_80, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %379 = stablehlo.divide %377, %378 : tensor<8x8x1xf32>
    %380 = stablehlo.broadcast_in_dim %379, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %381 = stablehlo.subtract %375, %380 : tensor<8x8x32xf32>
    %382 = chlo.square %381 : tensor<8x8x32xf32> -> tensor<8x8x32xf32>
    %cst_81 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %383 = stablehlo.broadcast_in_dim %cst_81, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %384 = stablehlo.multiply %383, %381 : tensor<8x8x32xf32>
    %cst_82 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %385 = stablehlo.reduce(%382 init: %cst_82) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %386 = stablehlo.broadcast_in_dim %385, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_83 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %387 = stablehlo.broadcast_in_dim %cst_83, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %388 = stablehlo.divide %386, %387 : tensor<8x8x1xf32>
    %389 = stablehlo.broadcast_in_dim %379, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %390 = stablehlo.subtract %375, %389 : tensor<8x8x32xf32>
    %cst_84 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %391 = stablehlo.broadcast_in_dim %cst_84, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %392 = stablehlo.add %388, %391 : tensor<8x8x1xf32>
    %393 = stablehlo.rsqrt %392 : tensor<8x8x1xf32>
    %394 = stablehlo.divide %393, %392 : tensor<8x8x1xf32>
    %cst_85 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %395 = stablehlo.broadcast_in_dim %cst_85, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %396 = stablehlo.multiply %395, %394 : tensor<8x8x1xf32>
    %397 = stablehlo.broadcast_in_dim %393, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %398 = stablehlo.multiply %390, %397 : tensor<8x8x32xf32>
    %399 = stablehlo.broadcast_in_dim %arg41, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %400 = stablehlo.broadcast_in_dim %399, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %401 = stablehlo.multiply %398, %400 : tensor<8x8x32xf32>
    %402 = stablehlo.broadcast_in_dim %arg40, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %403 = stablehlo.broadcast_in_dim %402, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %404 = stablehlo.add %401, %403 : tensor<8x8x32xf32>
    %405 = stablehlo.dot_general %404, %arg47, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x96xf32>) -> tensor<8x8x96xf32>
    %406 = stablehlo.broadcast_in_dim %arg46, dims = [2] : (tensor<96xf32>) -> tensor<1x1x96xf32>
    %407 = stablehlo.broadcast_in_dim %406, dims = [0, 1, 2] : (tensor<1x1x96xf32>) -> tensor<8x8x96xf32>
    %408 = stablehlo.add %405, %407 : tensor<8x8x96xf32>
    %409 = stablehlo.reshape %408 : (tensor<8x8x96xf32>) -> tensor<8x8x3x2x16xf32>
    %410 = stablehlo.slice %409 [0:8, 0:8, 0:1, 0:2, 0:16] : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %411 = stablehlo.reshape %410 : (tensor<8x8x1x2x16xf32>) -> tensor<8x8x2x16xf32>
    %412 = stablehlo.slice %409 [0:8, 0:8, 1:2, 0:2, 0:16] : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %413 = stablehlo.reshape %412 : (tensor<8x8x1x2x16xf32>) -> tensor<8x8x2x16xf32>
    %414 = stablehlo.slice %409 [0:8, 0:8, 2:3, 0:2, 0:16] : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %415 = stablehlo.reshape %414 : (tensor<8x8x1x2x16xf32>) -> tensor<8x8x2x16xf32>
    %416 = stablehlo.dot_general %411, %413, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x2x16xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x8xf32>
    %cst_86 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %417 = stablehlo.broadcast_in_dim %cst_86, dims = [] : (tensor<f32>) -> tensor<8x2x8x8xf32>
    %418 = stablehlo.divide %416, %417 : tensor<8x2x8x8xf32>
    %c_87 = stablehlo.constant dense<true> : tensor<i1>
    %419 = stablehlo.broadcast_in_dim %c_87, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %420 = call @tril(%419) : (tensor<8x8xi1>) -> tensor<8x8xi1>
    %cst_88 = stablehlo.constant dense<-3.40282347E+38> : tensor<f32>
    %421:2 = call @_where_0(%420, %418, %cst_88) : (tensor<8x8xi1>, tensor<8x2x8x8xf32>, tensor<f32>) -> (tensor<8x2x8x8xf32>, tensor<8x2x8x8xi1>)
    %cst_89 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %422 = stablehlo.reduce(%421#0 init: %cst_89) applies stablehlo.maximum across dimensions = [3] : (tensor<8x2x8x8xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %cst_90 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %423 = stablehlo.broadcast_in_dim %cst_90, dims = [] : (tensor<f32>) -> tensor<8x2x8xf32>
    %424 = stablehlo.maximum %423, %422 : tensor<8x2x8xf32>
    %425 = stablehlo.broadcast_in_dim %424, dims = [0, 1, 2] : (tensor<8x2x8xf32>) -> tensor<8x2x8x1xf32>
    %426 = stablehlo.broadcast_in_dim %425, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %427 = stablehlo.subtract %421#0, %426 : tensor<8x2x8x8xf32>
    %428 = stablehlo.exponential %427 : tensor<8x2x8x8xf32>
    %cst_91 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %429 = stablehlo.reduce(%428 init: %cst_91) applies stablehlo.add across dimensions = [3] : (tensor<8x2x8x8xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %430 = stablehlo.broadcast_in_dim %429, dims = [0, 1, 2] : (tensor<8x2x8xf32>) -> tensor<8x2x8x1xf32>
    %431 = stablehlo.broadcast_in_dim %430, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %432 = stablehlo.divide %428, %431 : tensor<8x2x8x8xf32>
    %433 = stablehlo.multiply %430, %430 : tensor<8x2x8x1xf32>
    %cst_92 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %434 = stablehlo.broadcast_in_dim %cst_92, dims = [] : (tensor<f32>) -> tensor<8x2x8x1xf32>
    %435 = stablehlo.divide %434, %433 : tensor<8x2x8x1xf32>
    %436 = stablehlo.dot_general %415, %432, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x2x16xf32>, tensor<8x2x8x8xf32>) -> tensor<8x2x16x8xf32>
    %437 = stablehlo.transpose %436, dims = [0, 3, 1, 2] : (tensor<8x2x16x8xf32>) -> tensor<8x8x2x16xf32>
    %438 = stablehlo.reshape %437 : (tensor<8x8x2x16xf32>) -> tensor<8x8x32xf32>
    %439 = stablehlo.dot_general %438, %arg45, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %440 = stablehlo.broadcast_in_dim %arg44, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %441 = stablehlo.broadcast_in_dim %440, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %442 = stablehlo.add %439, %441 : tensor<8x8x32xf32>
    %443 = stablehlo.add %375, %442 : tensor<8x8x32xf32>
    %cst_93 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %444 = stablehlo.reduce(%443 init: %cst_93) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %445 = stablehlo.broadcast_in_dim %444, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_94 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %446 = stablehlo.broadcast_in_dim %cst_94, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %447 = stablehlo.divide %445, %446 : tensor<8x8x1xf32>
    %448 = stablehlo.broadcast_in_dim %447, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %449 = stablehlo.subtract %443, %448 : tensor<8x8x32xf32>
    %450 = chlo.square %449 : tensor<8x8x32xf32> -> tensor<8x8x32xf32>
    %cst_95 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %451 = stablehlo.broadcast_in_dim %cst_95, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %452 = stablehlo.multiply %451, %449 : tensor<8x8x32xf32>
    %cst_96 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %453 = stablehlo.reduce(%450 init: %cst_96) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %454 = stablehlo.broadcast_in_dim %453, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_97 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %455 = stablehlo.broadcast_in_dim %cst_97, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %456 = stablehlo.divide %454, %455 : tensor<8x8x1xf32>
    %457 = stablehlo.broadcast_in_dim %447, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %458 = stablehlo.subtract %443, %457 : tensor<8x8x32xf32>
    %cst_98 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %459 = stablehlo.broadcast_in_dim %cst_98, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %460 = stablehlo.add %456, %459 : tensor<8x8x1xf32>
    %461 = stablehlo.rsqrt %460 : tensor<8x8x1xf32>
    %462 = stablehlo.divide %461, %460 : tensor<8x8x1xf32>
    %cst_99 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %463 = stablehlo.broadcast_in_dim %cst_99, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %464 = stablehlo.multiply %463, %462 : tensor<8x8x1xf32>
    %465 = stablehlo.broadcast_in_dim %461, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %466 = stablehlo.multiply %458, %465 : tensor<8x8x32xf32>
    %467 = stablehlo.broadcast_in_dim %arg43, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %468 = stablehlo.broadcast_in_dim %467, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %469 = stablehlo.multiply %466, %468 : tensor<8x8x32xf32>
    %470 = stablehlo.broadcast_in_dim %arg42, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %471 = stablehlo.broadcast_in_dim %470, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %472 = stablehlo.add %469, %471 : tensor<8x8x32xf32>
    %473 = stablehlo.dot_general %472, %arg37, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x128xf32>) -> tensor<8x8x128xf32>
    %474 = stablehlo.broadcast_in_dim %arg36, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %475 = stablehlo.broadcast_in_dim %474, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<8x8x128xf32>
    %476 = stablehlo.add %473, %475 : tensor<8x8x128xf32>
    %477 = stablehlo.multiply %476, %476 : tensor<8x8x128xf32>
    %478 = stablehlo.multiply %477, %476 : tensor<8x8x128xf32>
    %479 = stablehlo.multiply %476, %476 : tensor<8x8x128xf32>
    %cst_100 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %480 = stablehlo.broadcast_in_dim %cst_100, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %481 = stablehlo.multiply %480, %479 : tensor<8x8x128xf32>
    %cst_101 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %482 = stablehlo.broadcast_in_dim %cst_101, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %483 = stablehlo.multiply %482, %478 : tensor<8x8x128xf32>
    %484 = stablehlo.add %476, %483 : tensor<8x8x128xf32>
    %cst_102 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %485 = stablehlo.broadcast_in_dim %cst_102, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %486 = stablehlo.multiply %485, %484 : tensor<8x8x128xf32>
    %487 = stablehlo.tanh %486 : tensor<8x8x128xf32>
    %cst_103 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %488 = stablehlo.broadcast_in_dim %cst_103, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %489 = stablehlo.subtract %488, %487 : tensor<8x8x128xf32>
    %cst_104 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %490 = stablehlo.broadcast_in_dim %cst_104, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %491 = stablehlo.add %490, %487 : tensor<8x8x128xf32>
    %cst_105 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %492 = stablehlo.broadcast_in_dim %cst_105, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %493 = stablehlo.multiply %492, %491 : tensor<8x8x128xf32>
    %494 = stablehlo.multiply %476, %493 : tensor<8x8x128xf32>
    %495 = stablehlo.dot_general %494, %arg39, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<128x32xf32>) -> tensor<8x8x32xf32>
    %496 = stablehlo.add %443, %495 : tensor<8x8x32xf32>
    %497 = stablehlo.broadcast_in_dim %arg38, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %498 = stablehlo.broadcast_in_dim %497, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %499 = stablehlo.add %496, %498 : tensor<8x8x32xf32>
    %cst_106 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %500 = stablehlo.reduce(%499 init: %cst_106) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %501 = stablehlo.broadcast_in_dim %500, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_107 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %502 = stablehlo.broadcast_in_dim %cst_107, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %503 = stablehlo.divide %501, %502 : tensor<8x8x1xf32>
    %504 = stablehlo.broadcast_in_dim %503, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %505 = stablehlo.subtract %499, %504 : tensor<8x8x32xf32>
    %506 = chlo.square %505 : tensor<8x8x32xf32> -> tensor<8x8x32xf32>
    %cst_108 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %507 = stablehlo.broadcast_in_dim %cst_108, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %508 = stablehlo.multiply %507, %505 : tensor<8x8x32xf32>
    %cst_109 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %509 = stablehlo.reduce(%506 init: %cst_109) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %510 = stablehlo.broadcast_in_dim %509, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_110 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %511 = stablehlo.broadcast_in_dim %cst_110, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %512 = stablehlo.divide %510, %511 : tensor<8x8x1xf32>
    %513 = stablehlo.broadcast_in_dim %503, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %514 = stablehlo.subtract %499, %513 : tensor<8x8x32xf32>
    %cst_111 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %515 = stablehlo.broadcast_in_dim %cst_111, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %516 = stablehlo.add %512, %515 : tensor<8x8x1xf32>
    %517 = stablehlo.rsqrt %516 : tensor<8x8x1xf32>
    %518 = stablehlo.divide %517, %516 : tensor<8x8x1xf32>
    %cst_112 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %519 = stablehlo.broadcast_in_dim %cst_112, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %520 = stablehlo.multiply %519, %518 : tensor<8x8x1xf32>
    %521 = stablehlo.broadcast_in_dim %517, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %522 = stablehlo.multiply %514, %521 : tensor<8x8x32xf32>
    %523 = stablehlo.broadcast_in_dim %arg49, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %524 = stablehlo.broadcast_in_dim %523, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %525 = stablehlo.multiply %522, %524 : tensor<8x8x32xf32>
    %526 = stablehlo.broadcast_in_dim %arg48, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %527 = stablehlo.broadcast_in_dim %526, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %528 = stablehlo.add %525, %527 : tensor<8x8x32xf32>
    %529 = stablehlo.transpose %arg51, dims = [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %530 = stablehlo.dot_general %528, %529, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x64xf32>) -> tensor<8x8x64xf32>
    %531:3 = call @log_softmax(%530) : (tensor<8x8x64xf32>) -> (tensor<8x8x64xf32>, tensor<8x8x64xf32>, tensor<8x8x1xf32>)
    %532 = stablehlo.broadcast_in_dim %arg157, dims = [0, 1] : (tensor<8x8xi32>) -> tensor<8x8x1xi32>
    %533:2 = call @take_along_axis(%531#0, %532) : (tensor<8x8x64xf32>, tensor<8x8x1xi32>) -> (tensor<8x8x1xf32>, tensor<8x8x1x1xi32>)
    %cst_113 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %534 = stablehlo.reduce(%533#0 init: %cst_113) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<f32>
    %cst_114 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %535 = stablehlo.divide %534, %cst_114 : tensor<f32>
    %536 = stablehlo.negate %535 : tensor<f32>
    %cst_115 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %537 = stablehlo.negate %cst_115 : tensor<f32>
    %cst_116 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %538 = stablehlo.divide %537, %cst_116 : tensor<f32>
    %539 = stablehlo.broadcast_in_dim %538, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %540 = call @take_along_axis_1(%533#1, %539) : (tensor<8x8x1x1xi32>, tensor<8x8x1xf32>) -> tensor<8x8x64xf32>
    %541 = call @log_softmax_2(%531#1, %531#2, %540) : (tensor<8x8x64xf32>, tensor<8x8x1xf32>, tensor<8x8x64xf32>) -> tensor<8x8x64xf32>
    %542 = stablehlo.dot_general %541, %528, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x64xf32>, tensor<8x8x32xf32>) -> tensor<64x32xf32>
    %543 = stablehlo.transpose %542, dims = [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %544 = stablehlo.dot_general %541, %529, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x64xf32>, tensor<32x64xf32>) -> tensor<8x8x32xf32>
    %545 = stablehlo.transpose %543, dims = [1, 0] : (tensor<32x64xf32>) -> tensor<64x32xf32>
    %cst_117 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %546 = stablehlo.reduce(%544 init: %cst_117) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %547 = stablehlo.reshape %546 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_118 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %548 = stablehlo.reduce(%547 init: %cst_118) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %549 = stablehlo.multiply %522, %544 : tensor<8x8x32xf32>
    %cst_119 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %550 = stablehlo.reduce(%549 init: %cst_119) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %551 = stablehlo.reshape %550 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %552 = stablehlo.broadcast_in_dim %523, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %553 = stablehlo.multiply %544, %552 : tensor<8x8x32xf32>
    %cst_120 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %554 = stablehlo.reduce(%551 init: %cst_120) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %555 = stablehlo.multiply %514, %553 : tensor<8x8x32xf32>
    %cst_121 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %556 = stablehlo.reduce(%555 init: %cst_121) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %557 = stablehlo.reshape %556 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %558 = stablehlo.broadcast_in_dim %517, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %559 = stablehlo.multiply %553, %558 : tensor<8x8x32xf32>
    %560 = stablehlo.multiply %557, %520 : tensor<8x8x1xf32>
    %561 = stablehlo.negate %559 : tensor<8x8x32xf32>
    %cst_122 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %562 = stablehlo.reduce(%561 init: %cst_122) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %563 = stablehlo.reshape %562 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_123 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %564 = stablehlo.broadcast_in_dim %cst_123, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %565 = stablehlo.divide %560, %564 : tensor<8x8x1xf32>
    %cst_124 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %566 = stablehlo.reduce(%565 init: %cst_124) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %567 = stablehlo.broadcast_in_dim %566, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %568 = stablehlo.multiply %567, %508 : tensor<8x8x32xf32>
    %569 = stablehlo.negate %568 : tensor<8x8x32xf32>
    %cst_125 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %570 = stablehlo.reduce(%569 init: %cst_125) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %571 = stablehlo.reshape %570 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %572 = stablehlo.add %559, %568 : tensor<8x8x32xf32>
    %573 = stablehlo.add %563, %571 : tensor<8x8x1xf32>
    %cst_126 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %574 = stablehlo.broadcast_in_dim %cst_126, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %575 = stablehlo.divide %573, %574 : tensor<8x8x1xf32>
    %cst_127 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %576 = stablehlo.reduce(%575 init: %cst_127) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %577 = stablehlo.broadcast_in_dim %576, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %578 = stablehlo.add %572, %577 : tensor<8x8x32xf32>
    %cst_128 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %579 = stablehlo.reduce(%578 init: %cst_128) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %580 = stablehlo.reshape %579 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_129 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %581 = stablehlo.reduce(%580 init: %cst_129) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %582 = stablehlo.dot_general %578, %494, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x128xf32>) -> tensor<32x128xf32>
    %583 = stablehlo.transpose %582, dims = [1, 0] : (tensor<32x128xf32>) -> tensor<128x32xf32>
    %584 = stablehlo.dot_general %578, %arg39, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<128x32xf32>) -> tensor<8x8x128xf32>
    %585 = stablehlo.multiply %476, %584 : tensor<8x8x128xf32>
    %586 = stablehlo.multiply %584, %493 : tensor<8x8x128xf32>
    %cst_130 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %587 = stablehlo.broadcast_in_dim %cst_130, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %588 = stablehlo.multiply %587, %585 : tensor<8x8x128xf32>
    %589 = stablehlo.multiply %588, %489 : tensor<8x8x128xf32>
    %590 = stablehlo.multiply %589, %487 : tensor<8x8x128xf32>
    %591 = stablehlo.add %589, %590 : tensor<8x8x128xf32>
    %cst_131 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %592 = stablehlo.broadcast_in_dim %cst_131, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %593 = stablehlo.multiply %592, %591 : tensor<8x8x128xf32>
    %594 = stablehlo.add %586, %593 : tensor<8x8x128xf32>
    %cst_132 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %595 = stablehlo.broadcast_in_dim %cst_132, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %596 = stablehlo.multiply %595, %593 : tensor<8x8x128xf32>
    %597 = stablehlo.multiply %596, %481 : tensor<8x8x128xf32>
    %598 = stablehlo.add %594, %597 : tensor<8x8x128xf32>
    %cst_133 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %599 = stablehlo.reduce(%598 init: %cst_133) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x128xf32>, tensor<f32>) -> tensor<128xf32>
    %600 = stablehlo.reshape %599 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %cst_134 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %601 = stablehlo.reduce(%600 init: %cst_134) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %602 = stablehlo.dot_general %598, %472, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<8x8x32xf32>) -> tensor<128x32xf32>
    %603 = stablehlo.transpose %602, dims = [1, 0] : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %604 = stablehlo.dot_general %598, %arg37, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<32x128xf32>) -> tensor<8x8x32xf32>
    %cst_135 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %605 = stablehlo.reduce(%604 init: %cst_135) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %606 = stablehlo.reshape %605 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_136 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %607 = stablehlo.reduce(%606 init: %cst_136) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %608 = stablehlo.multiply %466, %604 : tensor<8x8x32xf32>
    %cst_137 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %609 = stablehlo.reduce(%608 init: %cst_137) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %610 = stablehlo.reshape %609 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %611 = stablehlo.broadcast_in_dim %467, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %612 = stablehlo.multiply %604, %611 : tensor<8x8x32xf32>
    %cst_138 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %613 = stablehlo.reduce(%610 init: %cst_138) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %614 = stablehlo.multiply %458, %612 : tensor<8x8x32xf32>
    %cst_139 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %615 = stablehlo.reduce(%614 init: %cst_139) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %616 = stablehlo.reshape %615 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %617 = stablehlo.broadcast_in_dim %461, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %618 = stablehlo.multiply %612, %617 : tensor<8x8x32xf32>
    %619 = stablehlo.multiply %616, %464 : tensor<8x8x1xf32>
    %620 = stablehlo.negate %618 : tensor<8x8x32xf32>
    %cst_140 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %621 = stablehlo.reduce(%620 init: %cst_140) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %622 = stablehlo.reshape %621 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %623 = stablehlo.add %578, %618 : tensor<8x8x32xf32>
    %cst_141 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %624 = stablehlo.broadcast_in_dim %cst_141, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %625 = stablehlo.divide %619, %624 : tensor<8x8x1xf32>
    %cst_142 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %626 = stablehlo.reduce(%625 init: %cst_142) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %627 = stablehlo.broadcast_in_dim %626, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %628 = stablehlo.multiply %627, %452 : tensor<8x8x32xf32>
    %629 = stablehlo.negate %628 : tensor<8x8x32xf32>
    %cst_143 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %630 = stablehlo.reduce(%629 init: %cst_143) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %631 = stablehlo.reshape %630 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %632 = stablehlo.add %623, %628 : tensor<8x8x32xf32>
    %633 = stablehlo.add %622, %631 : tensor<8x8x1xf32>
    %cst_144 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %634 = stablehlo.broadcast_in_dim %cst_144, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %635 = stablehlo.divide %633, %634 : tensor<8x8x1xf32>
    %cst_145 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %636 = stablehlo.reduce(%635 init: %cst_145) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %637 = stablehlo.broadcast_in_dim %636, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %638 = stablehlo.add %632, %637 : tensor<8x8x32xf32>
    %cst_146 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %639 = stablehlo.reduce(%638 init: %cst_146) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %640 = stablehlo.reshape %639 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_147 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %641 = stablehlo.reduce(%640 init: %cst_147) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %642 = stablehlo.dot_general %638, %438, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x32xf32>) -> tensor<32x32xf32>
    %643 = stablehlo.transpose %642, dims = [1, 0] : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %644 = stablehlo.dot_general %638, %arg45, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %645 = stablehlo.reshape %644 : (tensor<8x8x32xf32>) -> tensor<8x8x2x16xf32>
    %646 = stablehlo.transpose %645, dims = [0, 2, 3, 1] : (tensor<8x8x2x16xf32>) -> tensor<8x2x16x8xf32>
    %647 = stablehlo.dot_general %646, %415, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x2x16x8xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x8xf32>
    %648 = stablehlo.dot_general %646, %432, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x2x16x8xf32>, tensor<8x2x8x8xf32>) -> tensor<8x2x16x8xf32>
    %649 = stablehlo.transpose %648, dims = [0, 3, 1, 2] : (tensor<8x2x16x8xf32>) -> tensor<8x8x2x16xf32>
    %650 = stablehlo.broadcast_in_dim %435, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %651 = stablehlo.multiply %647, %650 : tensor<8x2x8x8xf32>
    %652 = stablehlo.multiply %651, %428 : tensor<8x2x8x8xf32>
    %cst_148 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %653 = stablehlo.reduce(%652 init: %cst_148) applies stablehlo.add across dimensions = [3] : (tensor<8x2x8x8xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %654 = stablehlo.reshape %653 : (tensor<8x2x8xf32>) -> tensor<8x2x8x1xf32>
    %655 = stablehlo.negate %654 : tensor<8x2x8x1xf32>
    %656 = stablehlo.broadcast_in_dim %430, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %657 = stablehlo.divide %647, %656 : tensor<8x2x8x8xf32>
    %cst_149 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %658 = stablehlo.reduce(%655 init: %cst_149) applies stablehlo.add across dimensions = [3] : (tensor<8x2x8x1xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %659 = stablehlo.broadcast_in_dim %658, dims = [0, 1, 2] : (tensor<8x2x8xf32>) -> tensor<8x2x8x8xf32>
    %660 = stablehlo.add %657, %659 : tensor<8x2x8x8xf32>
    %661 = stablehlo.multiply %660, %428 : tensor<8x2x8x8xf32>
    %662 = call @_where_3(%421#1, %661) : (tensor<8x2x8x8xi1>, tensor<8x2x8x8xf32>) -> tensor<8x2x8x8xf32>
    %cst_150 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %663 = stablehlo.broadcast_in_dim %cst_150, dims = [] : (tensor<f32>) -> tensor<8x2x8x8xf32>
    %664 = stablehlo.divide %662, %663 : tensor<8x2x8x8xf32>
    %665 = stablehlo.dot_general %664, %411, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x2x8x8xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x16xf32>
    %666 = stablehlo.transpose %665, dims = [0, 2, 1, 3] : (tensor<8x2x8x16xf32>) -> tensor<8x8x2x16xf32>
    %667 = stablehlo.dot_general %664, %413, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x2x8x8xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x16xf32>
    %668 = stablehlo.transpose %667, dims = [0, 2, 1, 3] : (tensor<8x2x8x16xf32>) -> tensor<8x8x2x16xf32>
    %669 = stablehlo.broadcast_in_dim %649, dims = [0, 1, 3, 4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %cst_151 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %670 = stablehlo.pad %669, %cst_151, low = [0, 0, 2, 0, 0], high = [0, 0, 0, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<8x8x1x2x16xf32>, tensor<f32>) -> tensor<8x8x3x2x16xf32>
    %671 = stablehlo.broadcast_in_dim %666, dims = [0, 1, 3, 4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %cst_152 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %672 = stablehlo.pad %671, %cst_152, low = [0, 0, 1, 0, 0], high = [0, 0, 1, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<8x8x1x2x16xf32>, tensor<f32>) -> tensor<8x8x3x2x16xf32>
    %673 = stablehlo.add %670, %672 : tensor<8x8x3x2x16xf32>
    %674 = stablehlo.broadcast_in_dim %668, dims = [0, 1, 3, 4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %cst_153 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %675 = stablehlo.pad %674, %cst_153, low = [0, 0, 0, 0, 0], high = [0, 0, 2, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<8x8x1x2x16xf32>, tensor<f32>) -> tensor<8x8x3x2x16xf32>
    %676 = stablehlo.add %673, %675 : tensor<8x8x3x2x16xf32>
    %677 = stablehlo.reshape %676 : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x96xf32>
    %cst_154 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %678 = stablehlo.reduce(%677 init: %cst_154) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x96xf32>, tensor<f32>) -> tensor<96xf32>
    %679 = stablehlo.reshape %678 : (tensor<96xf32>) -> tensor<1x1x96xf32>
    %cst_155 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %680 = stablehlo.reduce(%679 init: %cst_155) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x96xf32>, tensor<f32>) -> tensor<96xf32>
    %681 = stablehlo.dot_general %677, %404, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<8x8x32xf32>) -> tensor<96x32xf32>
    %682 = stablehlo.transpose %681, dims = [1, 0] : (tensor<96x32xf32>) -> tensor<32x96xf32>
    %683 = stablehlo.dot_general %677, %arg47, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<32x96xf32>) -> tensor<8x8x32xf32>
    %cst_156 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %684 = stablehlo.reduce(%683 init: %cst_156) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %685 = stablehlo.reshape %684 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_157 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %686 = stablehlo.reduce(%685 init: %cst_157) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %687 = stablehlo.multiply %398, %683 : tensor<8x8x32xf32>
    %cst_158 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %688 = stablehlo.reduce(%687 init: %cst_158) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %689 = stablehlo.reshape %688 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %690 = stablehlo.broadcast_in_dim %399, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %691 = stablehlo.multiply %683, %690 : tensor<8x8x32xf32>
    %cst_159 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %692 = stablehlo.reduce(%689 init: %cst_159) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %693 = stablehlo.multiply %390, %691 : tensor<8x8x32xf32>
    %cst_160 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %694 = stablehlo.reduce(%693 init: %cst_160) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %695 = stablehlo.reshape %694 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %696 = stablehlo.broadcast_in_dim %393, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %697 = stablehlo.multiply %691, %696 : tensor<8x8x32xf32>
    %698 = stablehlo.multiply %695, %396 : tensor<8x8x1xf32>
    %699 = stablehlo.negate %697 : tensor<8x8x32xf32>
    %cst_161 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %700 = stablehlo.reduce(%699 init: %cst_161) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %701 = stablehlo.reshape %700 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %702 = stablehlo.add %638, %697 : tensor<8x8x32xf32>
    %cst_162 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %703 = stablehlo.broadcast_in_dim %cst_162, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %704 = stablehlo.divide %698, %703 : tensor<8x8x1xf32>
    %cst_163 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %705 = stablehlo.reduce(%704 init: %cst_163) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %706 = stablehlo.broadcast_in_dim %705, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %707 = stablehlo.multiply %706, %384 : tensor<8x8x32xf32>
    %708 = stablehlo.negate %707 : tensor<8x8x32xf32>
    %cst_164 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %709 = stablehlo.reduce(%708 init: %cst_164) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %710 = stablehlo.reshape %709 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %711 = stablehlo.add %702, %707 : tensor<8x8x32xf32>
    %712 = stablehlo.add %701, %710 : tensor<8x8x1xf32>
    %cst_165 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %713 = stablehlo.broadcast_in_dim %cst_165, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %714 = stablehlo.divide %712, %713 : tensor<8x8x1xf32>
    %cst_166 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %715 = stablehlo.reduce(%714 init: %cst_166) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %716 = stablehlo.broadcast_in_dim %715, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %717 = stablehlo.add %711, %716 : tensor<8x8x32xf32>
    %cst_167 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %718 = stablehlo.reduce(%717 init: %cst_167) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %719 = stablehlo.reshape %718 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_168 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %720 = stablehlo.reduce(%719 init: %cst_168) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %721 = stablehlo.dot_general %717, %370, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x128xf32>) -> tensor<32x128xf32>
    %722 = stablehlo.transpose %721, dims = [1, 0] : (tensor<32x128xf32>) -> tensor<128x32xf32>
    %723 = stablehlo.dot_general %717, %arg27, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<128x32xf32>) -> tensor<8x8x128xf32>
    %724 = stablehlo.multiply %352, %723 : tensor<8x8x128xf32>
    %725 = stablehlo.multiply %723, %369 : tensor<8x8x128xf32>
    %cst_169 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %726 = stablehlo.broadcast_in_dim %cst_169, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %727 = stablehlo.multiply %726, %724 : tensor<8x8x128xf32>
    %728 = stablehlo.multiply %727, %365 : tensor<8x8x128xf32>
    %729 = stablehlo.multiply %728, %363 : tensor<8x8x128xf32>
    %730 = stablehlo.add %728, %729 : tensor<8x8x128xf32>
    %cst_170 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %731 = stablehlo.broadcast_in_dim %cst_170, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %732 = stablehlo.multiply %731, %730 : tensor<8x8x128xf32>
    %733 = stablehlo.add %725, %732 : tensor<8x8x128xf32>
    %cst_171 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %734 = stablehlo.broadcast_in_dim %cst_171, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %735 = stablehlo.multiply %734, %732 : tensor<8x8x128xf32>
    %736 = stablehlo.multiply %735, %357 : tensor<8x8x128xf32>
    %737 = stablehlo.add %733, %736 : tensor<8x8x128xf32>
    %cst_172 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %738 = stablehlo.reduce(%737 init: %cst_172) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x128xf32>, tensor<f32>) -> tensor<128xf32>
    %739 = stablehlo.reshape %738 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %cst_173 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %740 = stablehlo.reduce(%739 init: %cst_173) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %741 = stablehlo.dot_general %737, %348, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<8x8x32xf32>) -> tensor<128x32xf32>
    %742 = stablehlo.transpose %741, dims = [1, 0] : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %743 = stablehlo.dot_general %737, %arg25, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<32x128xf32>) -> tensor<8x8x32xf32>
    %cst_174 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %744 = stablehlo.reduce(%743 init: %cst_174) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %745 = stablehlo.reshape %744 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_175 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %746 = stablehlo.reduce(%745 init: %cst_175) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %747 = stablehlo.multiply %342, %743 : tensor<8x8x32xf32>
    %cst_176 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %748 = stablehlo.reduce(%747 init: %cst_176) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %749 = stablehlo.reshape %748 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %750 = stablehlo.broadcast_in_dim %343, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %751 = stablehlo.multiply %743, %750 : tensor<8x8x32xf32>
    %cst_177 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %752 = stablehlo.reduce(%749 init: %cst_177) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %753 = stablehlo.multiply %334, %751 : tensor<8x8x32xf32>
    %cst_178 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %754 = stablehlo.reduce(%753 init: %cst_178) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %755 = stablehlo.reshape %754 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %756 = stablehlo.broadcast_in_dim %337, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %757 = stablehlo.multiply %751, %756 : tensor<8x8x32xf32>
    %758 = stablehlo.multiply %755, %340 : tensor<8x8x1xf32>
    %759 = stablehlo.negate %757 : tensor<8x8x32xf32>
    %cst_179 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %760 = stablehlo.reduce(%759 init: %cst_179) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %761 = stablehlo.reshape %760 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %762 = stablehlo.add %717, %757 : tensor<8x8x32xf32>
    %cst_180 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %763 = stablehlo.broadcast_in_dim %cst_180, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %764 = stablehlo.divide %758, %763 : tensor<8x8x1xf32>
    %cst_181 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %765 = stablehlo.reduce(%764 init: %cst_181) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %766 = stablehlo.broadcast_in_dim %765, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %767 = stablehlo.multiply %766, %328 : tensor<8x8x32xf32>
    %768 = stablehlo.negate %767 : tensor<8x8x32xf32>
    %cst_182 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %769 = stablehlo.reduce(%768 init: %cst_182) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %770 = stablehlo.reshape %769 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %771 = stablehlo.add %762, %767 : tensor<8x8x32xf32>
    %772 = stablehlo.add %761, %770 : tensor<8x8x1xf32>
    %cst_183 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %773 = stablehlo.broadcast_in_dim %cst_183, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %774 = stablehlo.divide %772, %773 : tensor<8x8x1xf32>
    %cst_184 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %775 = stablehlo.reduce(%774 init: %cst_184) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %776 = stablehlo.broadcast_in_dim %775, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %777 = stablehlo.add %771, %776 : tensor<8x8x32xf32>
    %cst_185 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %778 = stablehlo.reduce(%777 init: %cst_185) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %779 = stablehlo.reshape %778 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_186 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %780 = stablehlo.reduce(%779 init: %cst_186) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %781 = stablehlo.dot_general %777, %314, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x32xf32>) -> tensor<32x32xf32>
    %782 = stablehlo.transpose %781, dims = [1, 0] : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %783 = stablehlo.dot_general %777, %arg33, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %784 = stablehlo.reshape %783 : (tensor<8x8x32xf32>) -> tensor<8x8x2x16xf32>
    %785 = stablehlo.transpose %784, dims = [0, 2, 3, 1] : (tensor<8x8x2x16xf32>) -> tensor<8x2x16x8xf32>
    %786 = stablehlo.dot_general %785, %291, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x2x16x8xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x8xf32>
    %787 = stablehlo.dot_general %785, %308, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x2x16x8xf32>, tensor<8x2x8x8xf32>) -> tensor<8x2x16x8xf32>
    %788 = stablehlo.transpose %787, dims = [0, 3, 1, 2] : (tensor<8x2x16x8xf32>) -> tensor<8x8x2x16xf32>
    %789 = stablehlo.broadcast_in_dim %311, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %790 = stablehlo.multiply %786, %789 : tensor<8x2x8x8xf32>
    %791 = stablehlo.multiply %790, %304 : tensor<8x2x8x8xf32>
    %cst_187 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %792 = stablehlo.reduce(%791 init: %cst_187) applies stablehlo.add across dimensions = [3] : (tensor<8x2x8x8xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %793 = stablehlo.reshape %792 : (tensor<8x2x8xf32>) -> tensor<8x2x8x1xf32>
    %794 = stablehlo.negate %793 : tensor<8x2x8x1xf32>
    %795 = stablehlo.broadcast_in_dim %306, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %796 = stablehlo.divide %786, %795 : tensor<8x2x8x8xf32>
    %cst_188 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %797 = stablehlo.reduce(%794 init: %cst_188) applies stablehlo.add across dimensions = [3] : (tensor<8x2x8x1xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %798 = stablehlo.broadcast_in_dim %797, dims = [0, 1, 2] : (tensor<8x2x8xf32>) -> tensor<8x2x8x8xf32>
    %799 = stablehlo.add %796, %798 : tensor<8x2x8x8xf32>
    %800 = stablehlo.multiply %799, %304 : tensor<8x2x8x8xf32>
    %801 = call @_where_3(%297#1, %800) : (tensor<8x2x8x8xi1>, tensor<8x2x8x8xf32>) -> tensor<8x2x8x8xf32>
    %cst_189 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %802 = stablehlo.broadcast_in_dim %cst_189, dims = [] : (tensor<f32>) -> tensor<8x2x8x8xf32>
    %803 = stablehlo.divide %801, %802 : tensor<8x2x8x8xf32>
    %804 = stablehlo.dot_general %803, %287, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x2x8x8xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x16xf32>
    %805 = stablehlo.transpose %804, dims = [0, 2, 1, 3] : (tensor<8x2x8x16xf32>) -> tensor<8x8x2x16xf32>
    %806 = stablehlo.dot_general %803, %289, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x2x8x8xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x16xf32>
    %807 = stablehlo.transpose %806, dims = [0, 2, 1, 3] : (tensor<8x2x8x16xf32>) -> tensor<8x8x2x16xf32>
    %808 = stablehlo.broadcast_in_dim %788, dims = [0, 1, 3, 4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %cst_190 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %809 = stablehlo.pad %808, %cst_190, low = [0, 0, 2, 0, 0], high = [0, 0, 0, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<8x8x1x2x16xf32>, tensor<f32>) -> tensor<8x8x3x2x16xf32>
    %810 = stablehlo.broadcast_in_dim %805, dims = [0, 1, 3, 4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %cst_191 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %811 = stablehlo.pad %810, %cst_191, low = [0, 0, 1, 0, 0], high = [0, 0, 1, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<8x8x1x2x16xf32>, tensor<f32>) -> tensor<8x8x3x2x16xf32>
    %812 = stablehlo.add %809, %811 : tensor<8x8x3x2x16xf32>
    %813 = stablehlo.broadcast_in_dim %807, dims = [0, 1, 3, 4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %cst_192 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %814 = stablehlo.pad %813, %cst_192, low = [0, 0, 0, 0, 0], high = [0, 0, 2, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<8x8x1x2x16xf32>, tensor<f32>) -> tensor<8x8x3x2x16xf32>
    %815 = stablehlo.add %812, %814 : tensor<8x8x3x2x16xf32>
    %816 = stablehlo.reshape %815 : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x96xf32>
    %cst_193 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %817 = stablehlo.reduce(%816 init: %cst_193) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x96xf32>, tensor<f32>) -> tensor<96xf32>
    %818 = stablehlo.reshape %817 : (tensor<96xf32>) -> tensor<1x1x96xf32>
    %cst_194 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %819 = stablehlo.reduce(%818 init: %cst_194) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x96xf32>, tensor<f32>) -> tensor<96xf32>
    %820 = stablehlo.dot_general %816, %280, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<8x8x32xf32>) -> tensor<96x32xf32>
    %821 = stablehlo.transpose %820, dims = [1, 0] : (tensor<96x32xf32>) -> tensor<32x96xf32>
    %822 = stablehlo.dot_general %816, %arg35, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<32x96xf32>) -> tensor<8x8x32xf32>
    %cst_195 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %823 = stablehlo.reduce(%822 init: %cst_195) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %824 = stablehlo.reshape %823 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_196 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %825 = stablehlo.reduce(%824 init: %cst_196) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %826 = stablehlo.multiply %274, %822 : tensor<8x8x32xf32>
    %cst_197 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %827 = stablehlo.reduce(%826 init: %cst_197) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %828 = stablehlo.reshape %827 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %829 = stablehlo.broadcast_in_dim %275, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %830 = stablehlo.multiply %822, %829 : tensor<8x8x32xf32>
    %cst_198 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %831 = stablehlo.reduce(%828 init: %cst_198) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %832 = stablehlo.multiply %266, %830 : tensor<8x8x32xf32>
    %cst_199 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %833 = stablehlo.reduce(%832 init: %cst_199) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %834 = stablehlo.reshape %833 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %835 = stablehlo.broadcast_in_dim %269, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %836 = stablehlo.multiply %830, %835 : tensor<8x8x32xf32>
    %837 = stablehlo.multiply %834, %272 : tensor<8x8x1xf32>
    %838 = stablehlo.negate %836 : tensor<8x8x32xf32>
    %cst_200 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %839 = stablehlo.reduce(%838 init: %cst_200) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %840 = stablehlo.reshape %839 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %841 = stablehlo.add %777, %836 : tensor<8x8x32xf32>
    %cst_201 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %842 = stablehlo.broadcast_in_dim %cst_201, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %843 = stablehlo.divide %837, %842 : tensor<8x8x1xf32>
    %cst_202 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %844 = stablehlo.reduce(%843 init: %cst_202) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %845 = stablehlo.broadcast_in_dim %844, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %846 = stablehlo.multiply %845, %260 : tensor<8x8x32xf32>
    %847 = stablehlo.negate %846 : tensor<8x8x32xf32>
    %cst_203 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %848 = stablehlo.reduce(%847 init: %cst_203) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %849 = stablehlo.reshape %848 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %850 = stablehlo.add %841, %846 : tensor<8x8x32xf32>
    %851 = stablehlo.add %840, %849 : tensor<8x8x1xf32>
    %cst_204 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %852 = stablehlo.broadcast_in_dim %cst_204, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %853 = stablehlo.divide %851, %852 : tensor<8x8x1xf32>
    %cst_205 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %854 = stablehlo.reduce(%853 init: %cst_205) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %855 = stablehlo.broadcast_in_dim %854, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %856 = stablehlo.add %850, %855 : tensor<8x8x32xf32>
    %cst_206 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %857 = stablehlo.reduce(%856 init: %cst_206) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %858 = stablehlo.reshape %857 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_207 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %859 = stablehlo.reduce(%858 init: %cst_207) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %860 = stablehlo.dot_general %856, %246, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x128xf32>) -> tensor<32x128xf32>
    %861 = stablehlo.transpose %860, dims = [1, 0] : (tensor<32x128xf32>) -> tensor<128x32xf32>
    %862 = stablehlo.dot_general %856, %arg15, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<128x32xf32>) -> tensor<8x8x128xf32>
    %863 = stablehlo.multiply %228, %862 : tensor<8x8x128xf32>
    %864 = stablehlo.multiply %862, %245 : tensor<8x8x128xf32>
    %cst_208 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %865 = stablehlo.broadcast_in_dim %cst_208, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %866 = stablehlo.multiply %865, %863 : tensor<8x8x128xf32>
    %867 = stablehlo.multiply %866, %241 : tensor<8x8x128xf32>
    %868 = stablehlo.multiply %867, %239 : tensor<8x8x128xf32>
    %869 = stablehlo.add %867, %868 : tensor<8x8x128xf32>
    %cst_209 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %870 = stablehlo.broadcast_in_dim %cst_209, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %871 = stablehlo.multiply %870, %869 : tensor<8x8x128xf32>
    %872 = stablehlo.add %864, %871 : tensor<8x8x128xf32>
    %cst_210 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %873 = stablehlo.broadcast_in_dim %cst_210, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %874 = stablehlo.multiply %873, %871 : tensor<8x8x128xf32>
    %875 = stablehlo.multiply %874, %233 : tensor<8x8x128xf32>
    %876 = stablehlo.add %872, %875 : tensor<8x8x128xf32>
    %cst_211 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %877 = stablehlo.reduce(%876 init: %cst_211) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x128xf32>, tensor<f32>) -> tensor<128xf32>
    %878 = stablehlo.reshape %877 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %cst_212 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %879 = stablehlo.reduce(%878 init: %cst_212) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %880 = stablehlo.dot_general %876, %224, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<8x8x32xf32>) -> tensor<128x32xf32>
    %881 = stablehlo.transpose %880, dims = [1, 0] : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %882 = stablehlo.dot_general %876, %arg13, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<32x128xf32>) -> tensor<8x8x32xf32>
    %cst_213 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %883 = stablehlo.reduce(%882 init: %cst_213) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %884 = stablehlo.reshape %883 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_214 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %885 = stablehlo.reduce(%884 init: %cst_214) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %886 = stablehlo.multiply %218, %882 : tensor<8x8x32xf32>
    %cst_215 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %887 = stablehlo.reduce(%886 init: %cst_215) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %888 = stablehlo.reshape %887 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %889 = stablehlo.broadcast_in_dim %219, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %890 = stablehlo.multiply %882, %889 : tensor<8x8x32xf32>
    %cst_216 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %891 = stablehlo.reduce(%888 init: %cst_216) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %892 = stablehlo.multiply %210, %890 : tensor<8x8x32xf32>
    %cst_217 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %893 = stablehlo.reduce(%892 init: %cst_217) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %894 = stablehlo.reshape %893 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %895 = stablehlo.broadcast_in_dim %213, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %896 = stablehlo.multiply %890, %895 : tensor<8x8x32xf32>
    %897 = stablehlo.multiply %894, %216 : tensor<8x8x1xf32>
    %898 = stablehlo.negate %896 : tensor<8x8x32xf32>
    %cst_218 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %899 = stablehlo.reduce(%898 init: %cst_218) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %900 = stablehlo.reshape %899 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %901 = stablehlo.add %856, %896 : tensor<8x8x32xf32>
    %cst_219 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %902 = stablehlo.broadcast_in_dim %cst_219, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %903 = stablehlo.divide %897, %902 : tensor<8x8x1xf32>
    %cst_220 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %904 = stablehlo.reduce(%903 init: %cst_220) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %905 = stablehlo.broadcast_in_dim %904, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %906 = stablehlo.multiply %905, %204 : tensor<8x8x32xf32>
    %907 = stablehlo.negate %906 : tensor<8x8x32xf32>
    %cst_221 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %908 = stablehlo.reduce(%907 init: %cst_221) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %909 = stablehlo.reshape %908 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %910 = stablehlo.add %901, %906 : tensor<8x8x32xf32>
    %911 = stablehlo.add %900, %909 : tensor<8x8x1xf32>
    %cst_222 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %912 = stablehlo.broadcast_in_dim %cst_222, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %913 = stablehlo.divide %911, %912 : tensor<8x8x1xf32>
    %cst_223 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %914 = stablehlo.reduce(%913 init: %cst_223) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %915 = stablehlo.broadcast_in_dim %914, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %916 = stablehlo.add %910, %915 : tensor<8x8x32xf32>
    %cst_224 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %917 = stablehlo.reduce(%916 init: %cst_224) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %918 = stablehlo.reshape %917 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_225 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %919 = stablehlo.reduce(%918 init: %cst_225) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %920 = stablehlo.dot_general %916, %190, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x32xf32>) -> tensor<32x32xf32>
    %921 = stablehlo.transpose %920, dims = [1, 0] : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %922 = stablehlo.dot_general %916, %arg21, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %923 = stablehlo.reshape %922 : (tensor<8x8x32xf32>) -> tensor<8x8x2x16xf32>
    %924 = stablehlo.transpose %923, dims = [0, 2, 3, 1] : (tensor<8x8x2x16xf32>) -> tensor<8x2x16x8xf32>
    %925 = stablehlo.dot_general %924, %167, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x2x16x8xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x8xf32>
    %926 = stablehlo.dot_general %924, %184, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x2x16x8xf32>, tensor<8x2x8x8xf32>) -> tensor<8x2x16x8xf32>
    %927 = stablehlo.transpose %926, dims = [0, 3, 1, 2] : (tensor<8x2x16x8xf32>) -> tensor<8x8x2x16xf32>
    %928 = stablehlo.broadcast_in_dim %187, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %929 = stablehlo.multiply %925, %928 : tensor<8x2x8x8xf32>
    %930 = stablehlo.multiply %929, %180 : tensor<8x2x8x8xf32>
    %cst_226 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %931 = stablehlo.reduce(%930 init: %cst_226) applies stablehlo.add across dimensions = [3] : (tensor<8x2x8x8xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %932 = stablehlo.reshape %931 : (tensor<8x2x8xf32>) -> tensor<8x2x8x1xf32>
    %933 = stablehlo.negate %932 : tensor<8x2x8x1xf32>
    %934 = stablehlo.broadcast_in_dim %182, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %935 = stablehlo.divide %925, %934 : tensor<8x2x8x8xf32>
    %cst_227 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %936 = stablehlo.reduce(%933 init: %cst_227) applies stablehlo.add across dimensions = [3] : (tensor<8x2x8x1xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %937 = stablehlo.broadcast_in_dim %936, dims = [0, 1, 2] : (tensor<8x2x8xf32>) -> tensor<8x2x8x8xf32>
    %938 = stablehlo.add %935, %937 : tensor<8x2x8x8xf32>
    %939 = stablehlo.multiply %938, %180 : tensor<8x2x8x8xf32>
    %940 = call @_where_3(%173#1, %939) : (tensor<8x2x8x8xi1>, tensor<8x2x8x8xf32>) -> tensor<8x2x8x8xf32>
    %cst_228 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %941 = stablehlo.broadcast_in_dim %cst_228, dims = [] : (tensor<f32>) -> tensor<8x2x8x8xf32>
    %942 = stablehlo.divide %940, %941 : tensor<8x2x8x8xf32>
    %943 = stablehlo.dot_general %942, %163, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x2x8x8xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x16xf32>
    %944 = stablehlo.transpose %943, dims = [0, 2, 1, 3] : (tensor<8x2x8x16xf32>) -> tensor<8x8x2x16xf32>
    %945 = stablehlo.dot_general %942, %165, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x2x8x8xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x16xf32>
    %946 = stablehlo.transpose %945, dims = [0, 2, 1, 3] : (tensor<8x2x8x16xf32>) -> tensor<8x8x2x16xf32>
    %947 = stablehlo.broadcast_in_dim %927, dims = [0, 1, 3, 4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %cst_229 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %948 = stablehlo.pad %947, %cst_229, low = [0, 0, 2, 0, 0], high = [0, 0, 0, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<8x8x1x2x16xf32>, tensor<f32>) -> tensor<8x8x3x2x16xf32>
    %949 = stablehlo.broadcast_in_dim %944, dims = [0, 1, 3, 4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %cst_230 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %950 = stablehlo.pad %949, %cst_230, low = [0, 0, 1, 0, 0], high = [0, 0, 1, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<8x8x1x2x16xf32>, tensor<f32>) -> tensor<8x8x3x2x16xf32>
    %951 = stablehlo.add %948, %950 : tensor<8x8x3x2x16xf32>
    %952 = stablehlo.broadcast_in_dim %946, dims = [0, 1, 3, 4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %cst_231 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %953 = stablehlo.pad %952, %cst_231, low = [0, 0, 0, 0, 0], high = [0, 0, 2, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<8x8x1x2x16xf32>, tensor<f32>) -> tensor<8x8x3x2x16xf32>
    %954 = stablehlo.add %951, %953 : tensor<8x8x3x2x16xf32>
    %955 = stablehlo.reshape %954 : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x96xf32>
    %cst_232 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %956 = stablehlo.reduce(%955 init: %cst_232) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x96xf32>, tensor<f32>) -> tensor<96xf32>
    %957 = stablehlo.reshape %956 : (tensor<96xf32>) -> tensor<1x1x96xf32>
    %cst_233 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %958 = stablehlo.reduce(%957 init: %cst_233) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x96xf32>, tensor<f32>) -> tensor<96xf32>
    %959 = stablehlo.dot_general %955, %156, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<8x8x32xf32>) -> tensor<96x32xf32>
    %960 = stablehlo.transpose %959, dims = [1, 0] : (tensor<96x32xf32>) -> tensor<32x96xf32>
    %961 = stablehlo.dot_general %955, %arg23, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<32x96xf32>) -> tensor<8x8x32xf32>
    %cst_234 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %962 = stablehlo.reduce(%961 init: %cst_234) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %963 = stablehlo.reshape %962 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_235 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %964 = stablehlo.reduce(%963 init: %cst_235) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %965 = stablehlo.multiply %150, %961 : tensor<8x8x32xf32>
    %cst_236 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %966 = stablehlo.reduce(%965 init: %cst_236) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %967 = stablehlo.reshape %966 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %968 = stablehlo.broadcast_in_dim %151, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %969 = stablehlo.multiply %961, %968 : tensor<8x8x32xf32>
    %cst_237 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %970 = stablehlo.reduce(%967 init: %cst_237) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %971 = stablehlo.multiply %142, %969 : tensor<8x8x32xf32>
    %cst_238 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %972 = stablehlo.reduce(%971 init: %cst_238) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %973 = stablehlo.reshape %972 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %974 = stablehlo.broadcast_in_dim %145, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %975 = stablehlo.multiply %969, %974 : tensor<8x8x32xf32>
    %976 = stablehlo.multiply %973, %148 : tensor<8x8x1xf32>
    %977 = stablehlo.negate %975 : tensor<8x8x32xf32>
    %cst_239 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %978 = stablehlo.reduce(%977 init: %cst_239) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %979 = stablehlo.reshape %978 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %980 = stablehlo.add %916, %975 : tensor<8x8x32xf32>
    %cst_240 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %981 = stablehlo.broadcast_in_dim %cst_240, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %982 = stablehlo.divide %976, %981 : tensor<8x8x1xf32>
    %cst_241 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %983 = stablehlo.reduce(%982 init: %cst_241) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %984 = stablehlo.broadcast_in_dim %983, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %985 = stablehlo.multiply %984, %136 : tensor<8x8x32xf32>
    %986 = stablehlo.negate %985 : tensor<8x8x32xf32>
    %cst_242 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %987 = stablehlo.reduce(%986 init: %cst_242) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %988 = stablehlo.reshape %987 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %989 = stablehlo.add %980, %985 : tensor<8x8x32xf32>
    %990 = stablehlo.add %979, %988 : tensor<8x8x1xf32>
    %cst_243 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %991 = stablehlo.broadcast_in_dim %cst_243, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %992 = stablehlo.divide %990, %991 : tensor<8x8x1xf32>
    %cst_244 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %993 = stablehlo.reduce(%992 init: %cst_244) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %994 = stablehlo.broadcast_in_dim %993, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %995 = stablehlo.add %989, %994 : tensor<8x8x32xf32>
    %cst_245 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %996 = stablehlo.reduce(%995 init: %cst_245) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %997 = stablehlo.reshape %996 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_246 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %998 = stablehlo.reduce(%997 init: %cst_246) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %999 = stablehlo.dot_general %995, %122, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x128xf32>) -> tensor<32x128xf32>
    %1000 = stablehlo.transpose %999, dims = [1, 0] : (tensor<32x128xf32>) -> tensor<128x32xf32>
    %1001 = stablehlo.dot_general %995, %arg3, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<128x32xf32>) -> tensor<8x8x128xf32>
    %1002 = stablehlo.multiply %104, %1001 : tensor<8x8x128xf32>
    %1003 = stablehlo.multiply %1001, %121 : tensor<8x8x128xf32>
    %cst_247 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %1004 = stablehlo.broadcast_in_dim %cst_247, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %1005 = stablehlo.multiply %1004, %1002 : tensor<8x8x128xf32>
    %1006 = stablehlo.multiply %1005, %117 : tensor<8x8x128xf32>
    %1007 = stablehlo.multiply %1006, %115 : tensor<8x8x128xf32>
    %1008 = stablehlo.add %1006, %1007 : tensor<8x8x128xf32>
    %cst_248 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %1009 = stablehlo.broadcast_in_dim %cst_248, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %1010 = stablehlo.multiply %1009, %1008 : tensor<8x8x128xf32>
    %1011 = stablehlo.add %1003, %1010 : tensor<8x8x128xf32>
    %cst_249 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %1012 = stablehlo.broadcast_in_dim %cst_249, dims = [] : (tensor<f32>) -> tensor<8x8x128xf32>
    %1013 = stablehlo.multiply %1012, %1010 : tensor<8x8x128xf32>
    %1014 = stablehlo.multiply %1013, %109 : tensor<8x8x128xf32>
    %1015 = stablehlo.add %1011, %1014 : tensor<8x8x128xf32>
    %cst_250 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1016 = stablehlo.reduce(%1015 init: %cst_250) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x128xf32>, tensor<f32>) -> tensor<128xf32>
    %1017 = stablehlo.reshape %1016 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %cst_251 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1018 = stablehlo.reduce(%1017 init: %cst_251) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %1019 = stablehlo.dot_general %1015, %100, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<8x8x32xf32>) -> tensor<128x32xf32>
    %1020 = stablehlo.transpose %1019, dims = [1, 0] : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %1021 = stablehlo.dot_general %1015, %arg1, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x128xf32>, tensor<32x128xf32>) -> tensor<8x8x32xf32>
    %cst_252 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1022 = stablehlo.reduce(%1021 init: %cst_252) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %1023 = stablehlo.reshape %1022 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_253 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1024 = stablehlo.reduce(%1023 init: %cst_253) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %1025 = stablehlo.multiply %94, %1021 : tensor<8x8x32xf32>
    %cst_254 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1026 = stablehlo.reduce(%1025 init: %cst_254) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %1027 = stablehlo.reshape %1026 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %1028 = stablehlo.broadcast_in_dim %95, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %1029 = stablehlo.multiply %1021, %1028 : tensor<8x8x32xf32>
    %cst_255 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1030 = stablehlo.reduce(%1027 init: %cst_255) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %1031 = stablehlo.multiply %86, %1029 : tensor<8x8x32xf32>
    %cst_256 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1032 = stablehlo.reduce(%1031 init: %cst_256) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1033 = stablehlo.reshape %1032 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %1034 = stablehlo.broadcast_in_dim %89, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %1035 = stablehlo.multiply %1029, %1034 : tensor<8x8x32xf32>
    %1036 = stablehlo.multiply %1033, %92 : tensor<8x8x1xf32>
    %1037 = stablehlo.negate %1035 : tensor<8x8x32xf32>
    %cst_257 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1038 = stablehlo.reduce(%1037 init: %cst_257) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1039 = stablehlo.reshape %1038 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %1040 = stablehlo.add %995, %1035 : tensor<8x8x32xf32>
    %cst_258 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %1041 = stablehlo.broadcast_in_dim %cst_258, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %1042 = stablehlo.divide %1036, %1041 : tensor<8x8x1xf32>
    %cst_259 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1043 = stablehlo.reduce(%1042 init: %cst_259) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1044 = stablehlo.broadcast_in_dim %1043, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %1045 = stablehlo.multiply %1044, %80 : tensor<8x8x32xf32>
    %1046 = stablehlo.negate %1045 : tensor<8x8x32xf32>
    %cst_260 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1047 = stablehlo.reduce(%1046 init: %cst_260) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1048 = stablehlo.reshape %1047 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %1049 = stablehlo.add %1040, %1045 : tensor<8x8x32xf32>
    %1050 = stablehlo.add %1039, %1048 : tensor<8x8x1xf32>
    %cst_261 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %1051 = stablehlo.broadcast_in_dim %cst_261, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %1052 = stablehlo.divide %1050, %1051 : tensor<8x8x1xf32>
    %cst_262 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1053 = stablehlo.reduce(%1052 init: %cst_262) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1054 = stablehlo.broadcast_in_dim %1053, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %1055 = stablehlo.add %1049, %1054 : tensor<8x8x32xf32>
    %cst_263 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1056 = stablehlo.reduce(%1055 init: %cst_263) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %1057 = stablehlo.reshape %1056 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_264 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1058 = stablehlo.reduce(%1057 init: %cst_264) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %1059 = stablehlo.dot_general %1055, %66, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x32xf32>) -> tensor<32x32xf32>
    %1060 = stablehlo.transpose %1059, dims = [1, 0] : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %1061 = stablehlo.dot_general %1055, %arg9, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %1062 = stablehlo.reshape %1061 : (tensor<8x8x32xf32>) -> tensor<8x8x2x16xf32>
    %1063 = stablehlo.transpose %1062, dims = [0, 2, 3, 1] : (tensor<8x8x2x16xf32>) -> tensor<8x2x16x8xf32>
    %1064 = stablehlo.dot_general %1063, %43, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x2x16x8xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x8xf32>
    %1065 = stablehlo.dot_general %1063, %60, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x2x16x8xf32>, tensor<8x2x8x8xf32>) -> tensor<8x2x16x8xf32>
    %1066 = stablehlo.transpose %1065, dims = [0, 3, 1, 2] : (tensor<8x2x16x8xf32>) -> tensor<8x8x2x16xf32>
    %1067 = stablehlo.broadcast_in_dim %63, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %1068 = stablehlo.multiply %1064, %1067 : tensor<8x2x8x8xf32>
    %1069 = stablehlo.multiply %1068, %56 : tensor<8x2x8x8xf32>
    %cst_265 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1070 = stablehlo.reduce(%1069 init: %cst_265) applies stablehlo.add across dimensions = [3] : (tensor<8x2x8x8xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %1071 = stablehlo.reshape %1070 : (tensor<8x2x8xf32>) -> tensor<8x2x8x1xf32>
    %1072 = stablehlo.negate %1071 : tensor<8x2x8x1xf32>
    %1073 = stablehlo.broadcast_in_dim %58, dims = [0, 1, 2, 3] : (tensor<8x2x8x1xf32>) -> tensor<8x2x8x8xf32>
    %1074 = stablehlo.divide %1064, %1073 : tensor<8x2x8x8xf32>
    %cst_266 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1075 = stablehlo.reduce(%1072 init: %cst_266) applies stablehlo.add across dimensions = [3] : (tensor<8x2x8x1xf32>, tensor<f32>) -> tensor<8x2x8xf32>
    %1076 = stablehlo.broadcast_in_dim %1075, dims = [0, 1, 2] : (tensor<8x2x8xf32>) -> tensor<8x2x8x8xf32>
    %1077 = stablehlo.add %1074, %1076 : tensor<8x2x8x8xf32>
    %1078 = stablehlo.multiply %1077, %56 : tensor<8x2x8x8xf32>
    %1079 = call @_where_3(%49#1, %1078) : (tensor<8x2x8x8xi1>, tensor<8x2x8x8xf32>) -> tensor<8x2x8x8xf32>
    %cst_267 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %1080 = stablehlo.broadcast_in_dim %cst_267, dims = [] : (tensor<f32>) -> tensor<8x2x8x8xf32>
    %1081 = stablehlo.divide %1079, %1080 : tensor<8x2x8x8xf32>
    %1082 = stablehlo.dot_general %1081, %39, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x2x8x8xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x16xf32>
    %1083 = stablehlo.transpose %1082, dims = [0, 2, 1, 3] : (tensor<8x2x8x16xf32>) -> tensor<8x8x2x16xf32>
    %1084 = stablehlo.dot_general %1081, %41, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x2x8x8xf32>, tensor<8x8x2x16xf32>) -> tensor<8x2x8x16xf32>
    %1085 = stablehlo.transpose %1084, dims = [0, 2, 1, 3] : (tensor<8x2x8x16xf32>) -> tensor<8x8x2x16xf32>
    %1086 = stablehlo.broadcast_in_dim %1066, dims = [0, 1, 3, 4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %cst_268 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1087 = stablehlo.pad %1086, %cst_268, low = [0, 0, 2, 0, 0], high = [0, 0, 0, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<8x8x1x2x16xf32>, tensor<f32>) -> tensor<8x8x3x2x16xf32>
    %1088 = stablehlo.broadcast_in_dim %1083, dims = [0, 1, 3, 4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %cst_269 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1089 = stablehlo.pad %1088, %cst_269, low = [0, 0, 1, 0, 0], high = [0, 0, 1, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<8x8x1x2x16xf32>, tensor<f32>) -> tensor<8x8x3x2x16xf32>
    %1090 = stablehlo.add %1087, %1089 : tensor<8x8x3x2x16xf32>
    %1091 = stablehlo.broadcast_in_dim %1085, dims = [0, 1, 3, 4] : (tensor<8x8x2x16xf32>) -> tensor<8x8x1x2x16xf32>
    %cst_270 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1092 = stablehlo.pad %1091, %cst_270, low = [0, 0, 0, 0, 0], high = [0, 0, 2, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<8x8x1x2x16xf32>, tensor<f32>) -> tensor<8x8x3x2x16xf32>
    %1093 = stablehlo.add %1090, %1092 : tensor<8x8x3x2x16xf32>
    %1094 = stablehlo.reshape %1093 : (tensor<8x8x3x2x16xf32>) -> tensor<8x8x96xf32>
    %cst_271 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1095 = stablehlo.reduce(%1094 init: %cst_271) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x96xf32>, tensor<f32>) -> tensor<96xf32>
    %1096 = stablehlo.reshape %1095 : (tensor<96xf32>) -> tensor<1x1x96xf32>
    %cst_272 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1097 = stablehlo.reduce(%1096 init: %cst_272) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x96xf32>, tensor<f32>) -> tensor<96xf32>
    %1098 = stablehlo.dot_general %1094, %32, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<8x8x32xf32>) -> tensor<96x32xf32>
    %1099 = stablehlo.transpose %1098, dims = [1, 0] : (tensor<96x32xf32>) -> tensor<32x96xf32>
    %1100 = stablehlo.dot_general %1094, %arg11, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<32x96xf32>) -> tensor<8x8x32xf32>
    %cst_273 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1101 = stablehlo.reduce(%1100 init: %cst_273) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %1102 = stablehlo.reshape %1101 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_274 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1103 = stablehlo.reduce(%1102 init: %cst_274) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %1104 = stablehlo.multiply %26, %1100 : tensor<8x8x32xf32>
    %cst_275 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1105 = stablehlo.reduce(%1104 init: %cst_275) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %1106 = stablehlo.reshape %1105 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %1107 = stablehlo.broadcast_in_dim %27, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %1108 = stablehlo.multiply %1100, %1107 : tensor<8x8x32xf32>
    %cst_276 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1109 = stablehlo.reduce(%1106 init: %cst_276) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %1110 = stablehlo.multiply %18, %1108 : tensor<8x8x32xf32>
    %cst_277 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1111 = stablehlo.reduce(%1110 init: %cst_277) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1112 = stablehlo.reshape %1111 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %1113 = stablehlo.broadcast_in_dim %21, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %1114 = stablehlo.multiply %1108, %1113 : tensor<8x8x32xf32>
    %1115 = stablehlo.multiply %1112, %24 : tensor<8x8x1xf32>
    %1116 = stablehlo.negate %1114 : tensor<8x8x32xf32>
    %cst_278 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1117 = stablehlo.reduce(%1116 init: %cst_278) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1118 = stablehlo.reshape %1117 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %1119 = stablehlo.add %1055, %1114 : tensor<8x8x32xf32>
    %cst_279 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %1120 = stablehlo.broadcast_in_dim %cst_279, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %1121 = stablehlo.divide %1115, %1120 : tensor<8x8x1xf32>
    %cst_280 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1122 = stablehlo.reduce(%1121 init: %cst_280) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1123 = stablehlo.broadcast_in_dim %1122, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %1124 = stablehlo.multiply %1123, %12 : tensor<8x8x32xf32>
    %1125 = stablehlo.negate %1124 : tensor<8x8x32xf32>
    %cst_281 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1126 = stablehlo.reduce(%1125 init: %cst_281) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1127 = stablehlo.reshape %1126 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %1128 = stablehlo.add %1119, %1124 : tensor<8x8x32xf32>
    %1129 = stablehlo.add %1118, %1127 : tensor<8x8x1xf32>
    %cst_282 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %1130 = stablehlo.broadcast_in_dim %cst_282, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %1131 = stablehlo.divide %1129, %1130 : tensor<8x8x1xf32>
    %cst_283 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1132 = stablehlo.reduce(%1131 init: %cst_283) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1133 = stablehlo.broadcast_in_dim %1132, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %1134 = stablehlo.add %1128, %1133 : tensor<8x8x32xf32>
    %cst_284 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1135 = stablehlo.reduce(%1134 init: %cst_284) applies stablehlo.add across dimensions = [0] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
    %1136 = stablehlo.reshape %1135 : (tensor<8x32xf32>) -> tensor<1x8x32xf32>
    %cst_285 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1137 = stablehlo.reduce(%1136 init: %cst_285) applies stablehlo.add across dimensions = [0] : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
    %1138 = call @_take_4(%0#1, %1134) : (tensor<8x8x1xi32>, tensor<8x8x32xf32>) -> tensor<64x32xf32>
    %1139 = stablehlo.add %545, %1138 : tensor<64x32xf32>
    %c_286 = stablehlo.constant dense<1> : tensor<i32>
    %1140 = stablehlo.add %arg156, %c_286 : tensor<i32>
    %1141 = stablehlo.convert %1140 : (tensor<i32>) -> tensor<f32>
    %cst_287 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1142 = stablehlo.broadcast_in_dim %cst_287, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1143 = stablehlo.multiply %1142, %arg52 : tensor<128xf32>
    %cst_288 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1144 = stablehlo.broadcast_in_dim %cst_288, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1145 = stablehlo.multiply %1144, %1018 : tensor<128xf32>
    %1146 = stablehlo.add %1143, %1145 : tensor<128xf32>
    %cst_289 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1147 = stablehlo.broadcast_in_dim %cst_289, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1148 = stablehlo.multiply %1147, %arg53 : tensor<32x128xf32>
    %cst_290 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1149 = stablehlo.broadcast_in_dim %cst_290, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1150 = stablehlo.multiply %1149, %1020 : tensor<32x128xf32>
    %1151 = stablehlo.add %1148, %1150 : tensor<32x128xf32>
    %cst_291 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1152 = stablehlo.broadcast_in_dim %cst_291, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1153 = stablehlo.multiply %1152, %arg54 : tensor<32xf32>
    %cst_292 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1154 = stablehlo.broadcast_in_dim %cst_292, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1155 = stablehlo.multiply %1154, %998 : tensor<32xf32>
    %1156 = stablehlo.add %1153, %1155 : tensor<32xf32>
    %cst_293 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1157 = stablehlo.broadcast_in_dim %cst_293, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1158 = stablehlo.multiply %1157, %arg55 : tensor<128x32xf32>
    %cst_294 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1159 = stablehlo.broadcast_in_dim %cst_294, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1160 = stablehlo.multiply %1159, %1000 : tensor<128x32xf32>
    %1161 = stablehlo.add %1158, %1160 : tensor<128x32xf32>
    %cst_295 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1162 = stablehlo.broadcast_in_dim %cst_295, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1163 = stablehlo.multiply %1162, %arg56 : tensor<32xf32>
    %cst_296 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1164 = stablehlo.broadcast_in_dim %cst_296, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1165 = stablehlo.multiply %1164, %1103 : tensor<32xf32>
    %1166 = stablehlo.add %1163, %1165 : tensor<32xf32>
    %cst_297 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1167 = stablehlo.broadcast_in_dim %cst_297, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1168 = stablehlo.multiply %1167, %arg57 : tensor<32xf32>
    %cst_298 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1169 = stablehlo.broadcast_in_dim %cst_298, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1170 = stablehlo.multiply %1169, %1109 : tensor<32xf32>
    %1171 = stablehlo.add %1168, %1170 : tensor<32xf32>
    %cst_299 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1172 = stablehlo.broadcast_in_dim %cst_299, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1173 = stablehlo.multiply %1172, %arg58 : tensor<32xf32>
    %cst_300 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1174 = stablehlo.broadcast_in_dim %cst_300, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1175 = stablehlo.multiply %1174, %1024 : tensor<32xf32>
    %1176 = stablehlo.add %1173, %1175 : tensor<32xf32>
    %cst_301 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1177 = stablehlo.broadcast_in_dim %cst_301, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1178 = stablehlo.multiply %1177, %arg59 : tensor<32xf32>
    %cst_302 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1179 = stablehlo.broadcast_in_dim %cst_302, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1180 = stablehlo.multiply %1179, %1030 : tensor<32xf32>
    %1181 = stablehlo.add %1178, %1180 : tensor<32xf32>
    %cst_303 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1182 = stablehlo.broadcast_in_dim %cst_303, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1183 = stablehlo.multiply %1182, %arg60 : tensor<32xf32>
    %cst_304 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1184 = stablehlo.broadcast_in_dim %cst_304, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1185 = stablehlo.multiply %1184, %1058 : tensor<32xf32>
    %1186 = stablehlo.add %1183, %1185 : tensor<32xf32>
    %cst_305 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1187 = stablehlo.broadcast_in_dim %cst_305, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1188 = stablehlo.multiply %1187, %arg61 : tensor<32x32xf32>
    %cst_306 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1189 = stablehlo.broadcast_in_dim %cst_306, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1190 = stablehlo.multiply %1189, %1060 : tensor<32x32xf32>
    %1191 = stablehlo.add %1188, %1190 : tensor<32x32xf32>
    %cst_307 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1192 = stablehlo.broadcast_in_dim %cst_307, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1193 = stablehlo.multiply %1192, %arg62 : tensor<96xf32>
    %cst_308 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1194 = stablehlo.broadcast_in_dim %cst_308, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1195 = stablehlo.multiply %1194, %1097 : tensor<96xf32>
    %1196 = stablehlo.add %1193, %1195 : tensor<96xf32>
    %cst_309 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1197 = stablehlo.broadcast_in_dim %cst_309, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1198 = stablehlo.multiply %1197, %arg63 : tensor<32x96xf32>
    %cst_310 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1199 = stablehlo.broadcast_in_dim %cst_310, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1200 = stablehlo.multiply %1199, %1099 : tensor<32x96xf32>
    %1201 = stablehlo.add %1198, %1200 : tensor<32x96xf32>
    %cst_311 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1202 = stablehlo.broadcast_in_dim %cst_311, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1203 = stablehlo.multiply %1202, %arg64 : tensor<128xf32>
    %cst_312 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1204 = stablehlo.broadcast_in_dim %cst_312, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1205 = stablehlo.multiply %1204, %879 : tensor<128xf32>
    %1206 = stablehlo.add %1203, %1205 : tensor<128xf32>
    %cst_313 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1207 = stablehlo.broadcast_in_dim %cst_313, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1208 = stablehlo.multiply %1207, %arg65 : tensor<32x128xf32>
    %cst_314 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1209 = stablehlo.broadcast_in_dim %cst_314, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1210 = stablehlo.multiply %1209, %881 : tensor<32x128xf32>
    %1211 = stablehlo.add %1208, %1210 : tensor<32x128xf32>
    %cst_315 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1212 = stablehlo.broadcast_in_dim %cst_315, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1213 = stablehlo.multiply %1212, %arg66 : tensor<32xf32>
    %cst_316 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1214 = stablehlo.broadcast_in_dim %cst_316, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1215 = stablehlo.multiply %1214, %859 : tensor<32xf32>
    %1216 = stablehlo.add %1213, %1215 : tensor<32xf32>
    %cst_317 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1217 = stablehlo.broadcast_in_dim %cst_317, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1218 = stablehlo.multiply %1217, %arg67 : tensor<128x32xf32>
    %cst_318 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1219 = stablehlo.broadcast_in_dim %cst_318, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1220 = stablehlo.multiply %1219, %861 : tensor<128x32xf32>
    %1221 = stablehlo.add %1218, %1220 : tensor<128x32xf32>
    %cst_319 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1222 = stablehlo.broadcast_in_dim %cst_319, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1223 = stablehlo.multiply %1222, %arg68 : tensor<32xf32>
    %cst_320 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1224 = stablehlo.broadcast_in_dim %cst_320, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1225 = stablehlo.multiply %1224, %964 : tensor<32xf32>
    %1226 = stablehlo.add %1223, %1225 : tensor<32xf32>
    %cst_321 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1227 = stablehlo.broadcast_in_dim %cst_321, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1228 = stablehlo.multiply %1227, %arg69 : tensor<32xf32>
    %cst_322 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1229 = stablehlo.broadcast_in_dim %cst_322, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1230 = stablehlo.multiply %1229, %970 : tensor<32xf32>
    %1231 = stablehlo.add %1228, %1230 : tensor<32xf32>
    %cst_323 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1232 = stablehlo.broadcast_in_dim %cst_323, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1233 = stablehlo.multiply %1232, %arg70 : tensor<32xf32>
    %cst_324 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1234 = stablehlo.broadcast_in_dim %cst_324, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1235 = stablehlo.multiply %1234, %885 : tensor<32xf32>
    %1236 = stablehlo.add %1233, %1235 : tensor<32xf32>
    %cst_325 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1237 = stablehlo.broadcast_in_dim %cst_325, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1238 = stablehlo.multiply %1237, %arg71 : tensor<32xf32>
    %cst_326 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1239 = stablehlo.broadcast_in_dim %cst_326, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1240 = stablehlo.multiply %1239, %891 : tensor<32xf32>
    %1241 = stablehlo.add %1238, %1240 : tensor<32xf32>
    %cst_327 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1242 = stablehlo.broadcast_in_dim %cst_327, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1243 = stablehlo.multiply %1242, %arg72 : tensor<32xf32>
    %cst_328 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1244 = stablehlo.broadcast_in_dim %cst_328, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1245 = stablehlo.multiply %1244, %919 : tensor<32xf32>
    %1246 = stablehlo.add %1243, %1245 : tensor<32xf32>
    %cst_329 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1247 = stablehlo.broadcast_in_dim %cst_329, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1248 = stablehlo.multiply %1247, %arg73 : tensor<32x32xf32>
    %cst_330 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1249 = stablehlo.broadcast_in_dim %cst_330, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1250 = stablehlo.multiply %1249, %921 : tensor<32x32xf32>
    %1251 = stablehlo.add %1248, %1250 : tensor<32x32xf32>
    %cst_331 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1252 = stablehlo.broadcast_in_dim %cst_331, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1253 = stablehlo.multiply %1252, %arg74 : tensor<96xf32>
    %cst_332 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1254 = stablehlo.broadcast_in_dim %cst_332, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1255 = stablehlo.multiply %1254, %958 : tensor<96xf32>
    %1256 = stablehlo.add %1253, %1255 : tensor<96xf32>
    %cst_333 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1257 = stablehlo.broadcast_in_dim %cst_333, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1258 = stablehlo.multiply %1257, %arg75 : tensor<32x96xf32>
    %cst_334 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1259 = stablehlo.broadcast_in_dim %cst_334, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1260 = stablehlo.multiply %1259, %960 : tensor<32x96xf32>
    %1261 = stablehlo.add %1258, %1260 : tensor<32x96xf32>
    %cst_335 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1262 = stablehlo.broadcast_in_dim %cst_335, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1263 = stablehlo.multiply %1262, %arg76 : tensor<128xf32>
    %cst_336 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1264 = stablehlo.broadcast_in_dim %cst_336, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1265 = stablehlo.multiply %1264, %740 : tensor<128xf32>
    %1266 = stablehlo.add %1263, %1265 : tensor<128xf32>
    %cst_337 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1267 = stablehlo.broadcast_in_dim %cst_337, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1268 = stablehlo.multiply %1267, %arg77 : tensor<32x128xf32>
    %cst_338 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1269 = stablehlo.broadcast_in_dim %cst_338, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1270 = stablehlo.multiply %1269, %742 : tensor<32x128xf32>
    %1271 = stablehlo.add %1268, %1270 : tensor<32x128xf32>
    %cst_339 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1272 = stablehlo.broadcast_in_dim %cst_339, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1273 = stablehlo.multiply %1272, %arg78 : tensor<32xf32>
    %cst_340 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1274 = stablehlo.broadcast_in_dim %cst_340, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1275 = stablehlo.multiply %1274, %720 : tensor<32xf32>
    %1276 = stablehlo.add %1273, %1275 : tensor<32xf32>
    %cst_341 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1277 = stablehlo.broadcast_in_dim %cst_341, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1278 = stablehlo.multiply %1277, %arg79 : tensor<128x32xf32>
    %cst_342 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1279 = stablehlo.broadcast_in_dim %cst_342, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1280 = stablehlo.multiply %1279, %722 : tensor<128x32xf32>
    %1281 = stablehlo.add %1278, %1280 : tensor<128x32xf32>
    %cst_343 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1282 = stablehlo.broadcast_in_dim %cst_343, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1283 = stablehlo.multiply %1282, %arg80 : tensor<32xf32>
    %cst_344 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1284 = stablehlo.broadcast_in_dim %cst_344, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1285 = stablehlo.multiply %1284, %825 : tensor<32xf32>
    %1286 = stablehlo.add %1283, %1285 : tensor<32xf32>
    %cst_345 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1287 = stablehlo.broadcast_in_dim %cst_345, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1288 = stablehlo.multiply %1287, %arg81 : tensor<32xf32>
    %cst_346 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1289 = stablehlo.broadcast_in_dim %cst_346, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1290 = stablehlo.multiply %1289, %831 : tensor<32xf32>
    %1291 = stablehlo.add %1288, %1290 : tensor<32xf32>
    %cst_347 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1292 = stablehlo.broadcast_in_dim %cst_347, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1293 = stablehlo.multiply %1292, %arg82 : tensor<32xf32>
    %cst_348 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1294 = stablehlo.broadcast_in_dim %cst_348, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1295 = stablehlo.multiply %1294, %746 : tensor<32xf32>
    %1296 = stablehlo.add %1293, %1295 : tensor<32xf32>
    %cst_349 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1297 = stablehlo.broadcast_in_dim %cst_349, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1298 = stablehlo.multiply %1297, %arg83 : tensor<32xf32>
    %cst_350 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1299 = stablehlo.broadcast_in_dim %cst_350, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1300 = stablehlo.multiply %1299, %752 : tensor<32xf32>
    %1301 = stablehlo.add %1298, %1300 : tensor<32xf32>
    %cst_351 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1302 = stablehlo.broadcast_in_dim %cst_351, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1303 = stablehlo.multiply %1302, %arg84 : tensor<32xf32>
    %cst_352 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1304 = stablehlo.broadcast_in_dim %cst_352, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1305 = stablehlo.multiply %1304, %780 : tensor<32xf32>
    %1306 = stablehlo.add %1303, %1305 : tensor<32xf32>
    %cst_353 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1307 = stablehlo.broadcast_in_dim %cst_353, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1308 = stablehlo.multiply %1307, %arg85 : tensor<32x32xf32>
    %cst_354 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1309 = stablehlo.broadcast_in_dim %cst_354, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1310 = stablehlo.multiply %1309, %782 : tensor<32x32xf32>
    %1311 = stablehlo.add %1308, %1310 : tensor<32x32xf32>
    %cst_355 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1312 = stablehlo.broadcast_in_dim %cst_355, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1313 = stablehlo.multiply %1312, %arg86 : tensor<96xf32>
    %cst_356 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1314 = stablehlo.broadcast_in_dim %cst_356, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1315 = stablehlo.multiply %1314, %819 : tensor<96xf32>
    %1316 = stablehlo.add %1313, %1315 : tensor<96xf32>
    %cst_357 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1317 = stablehlo.broadcast_in_dim %cst_357, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1318 = stablehlo.multiply %1317, %arg87 : tensor<32x96xf32>
    %cst_358 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1319 = stablehlo.broadcast_in_dim %cst_358, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1320 = stablehlo.multiply %1319, %821 : tensor<32x96xf32>
    %1321 = stablehlo.add %1318, %1320 : tensor<32x96xf32>
    %cst_359 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1322 = stablehlo.broadcast_in_dim %cst_359, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1323 = stablehlo.multiply %1322, %arg88 : tensor<128xf32>
    %cst_360 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1324 = stablehlo.broadcast_in_dim %cst_360, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1325 = stablehlo.multiply %1324, %601 : tensor<128xf32>
    %1326 = stablehlo.add %1323, %1325 : tensor<128xf32>
    %cst_361 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1327 = stablehlo.broadcast_in_dim %cst_361, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1328 = stablehlo.multiply %1327, %arg89 : tensor<32x128xf32>
    %cst_362 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1329 = stablehlo.broadcast_in_dim %cst_362, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1330 = stablehlo.multiply %1329, %603 : tensor<32x128xf32>
    %1331 = stablehlo.add %1328, %1330 : tensor<32x128xf32>
    %cst_363 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1332 = stablehlo.broadcast_in_dim %cst_363, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1333 = stablehlo.multiply %1332, %arg90 : tensor<32xf32>
    %cst_364 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1334 = stablehlo.broadcast_in_dim %cst_364, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1335 = stablehlo.multiply %1334, %581 : tensor<32xf32>
    %1336 = stablehlo.add %1333, %1335 : tensor<32xf32>
    %cst_365 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1337 = stablehlo.broadcast_in_dim %cst_365, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1338 = stablehlo.multiply %1337, %arg91 : tensor<128x32xf32>
    %cst_366 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1339 = stablehlo.broadcast_in_dim %cst_366, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1340 = stablehlo.multiply %1339, %583 : tensor<128x32xf32>
    %1341 = stablehlo.add %1338, %1340 : tensor<128x32xf32>
    %cst_367 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1342 = stablehlo.broadcast_in_dim %cst_367, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1343 = stablehlo.multiply %1342, %arg92 : tensor<32xf32>
    %cst_368 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1344 = stablehlo.broadcast_in_dim %cst_368, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1345 = stablehlo.multiply %1344, %686 : tensor<32xf32>
    %1346 = stablehlo.add %1343, %1345 : tensor<32xf32>
    %cst_369 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1347 = stablehlo.broadcast_in_dim %cst_369, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1348 = stablehlo.multiply %1347, %arg93 : tensor<32xf32>
    %cst_370 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1349 = stablehlo.broadcast_in_dim %cst_370, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1350 = stablehlo.multiply %1349, %692 : tensor<32xf32>
    %1351 = stablehlo.add %1348, %1350 : tensor<32xf32>
    %cst_371 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1352 = stablehlo.broadcast_in_dim %cst_371, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1353 = stablehlo.multiply %1352, %arg94 : tensor<32xf32>
    %cst_372 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1354 = stablehlo.broadcast_in_dim %cst_372, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1355 = stablehlo.multiply %1354, %607 : tensor<32xf32>
    %1356 = stablehlo.add %1353, %1355 : tensor<32xf32>
    %cst_373 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1357 = stablehlo.broadcast_in_dim %cst_373, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1358 = stablehlo.multiply %1357, %arg95 : tensor<32xf32>
    %cst_374 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1359 = stablehlo.broadcast_in_dim %cst_374, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1360 = stablehlo.multiply %1359, %613 : tensor<32xf32>
    %1361 = stablehlo.add %1358, %1360 : tensor<32xf32>
    %cst_375 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1362 = stablehlo.broadcast_in_dim %cst_375, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1363 = stablehlo.multiply %1362, %arg96 : tensor<32xf32>
    %cst_376 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1364 = stablehlo.broadcast_in_dim %cst_376, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1365 = stablehlo.multiply %1364, %641 : tensor<32xf32>
    %1366 = stablehlo.add %1363, %1365 : tensor<32xf32>
    %cst_377 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1367 = stablehlo.broadcast_in_dim %cst_377, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1368 = stablehlo.multiply %1367, %arg97 : tensor<32x32xf32>
    %cst_378 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1369 = stablehlo.broadcast_in_dim %cst_378, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1370 = stablehlo.multiply %1369, %643 : tensor<32x32xf32>
    %1371 = stablehlo.add %1368, %1370 : tensor<32x32xf32>
    %cst_379 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1372 = stablehlo.broadcast_in_dim %cst_379, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1373 = stablehlo.multiply %1372, %arg98 : tensor<96xf32>
    %cst_380 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1374 = stablehlo.broadcast_in_dim %cst_380, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1375 = stablehlo.multiply %1374, %680 : tensor<96xf32>
    %1376 = stablehlo.add %1373, %1375 : tensor<96xf32>
    %cst_381 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1377 = stablehlo.broadcast_in_dim %cst_381, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1378 = stablehlo.multiply %1377, %arg99 : tensor<32x96xf32>
    %cst_382 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1379 = stablehlo.broadcast_in_dim %cst_382, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1380 = stablehlo.multiply %1379, %682 : tensor<32x96xf32>
    %1381 = stablehlo.add %1378, %1380 : tensor<32x96xf32>
    %cst_383 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1382 = stablehlo.broadcast_in_dim %cst_383, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1383 = stablehlo.multiply %1382, %arg100 : tensor<32xf32>
    %cst_384 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1384 = stablehlo.broadcast_in_dim %cst_384, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1385 = stablehlo.multiply %1384, %548 : tensor<32xf32>
    %1386 = stablehlo.add %1383, %1385 : tensor<32xf32>
    %cst_385 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1387 = stablehlo.broadcast_in_dim %cst_385, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1388 = stablehlo.multiply %1387, %arg101 : tensor<32xf32>
    %cst_386 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1389 = stablehlo.broadcast_in_dim %cst_386, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1390 = stablehlo.multiply %1389, %554 : tensor<32xf32>
    %1391 = stablehlo.add %1388, %1390 : tensor<32xf32>
    %cst_387 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1392 = stablehlo.broadcast_in_dim %cst_387, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %1393 = stablehlo.multiply %1392, %arg102 : tensor<8x32xf32>
    %cst_388 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1394 = stablehlo.broadcast_in_dim %cst_388, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %1395 = stablehlo.multiply %1394, %1137 : tensor<8x32xf32>
    %1396 = stablehlo.add %1393, %1395 : tensor<8x32xf32>
    %cst_389 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1397 = stablehlo.broadcast_in_dim %cst_389, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %1398 = stablehlo.multiply %1397, %arg103 : tensor<64x32xf32>
    %cst_390 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %1399 = stablehlo.broadcast_in_dim %cst_390, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %1400 = stablehlo.multiply %1399, %1139 : tensor<64x32xf32>
    %1401 = stablehlo.add %1398, %1400 : tensor<64x32xf32>
    %cst_391 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1402 = stablehlo.broadcast_in_dim %cst_391, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1403 = stablehlo.multiply %1402, %arg104 : tensor<128xf32>
    %cst_392 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1404 = stablehlo.broadcast_in_dim %cst_392, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1405 = stablehlo.multiply %1404, %1018 : tensor<128xf32>
    %1406 = stablehlo.multiply %1405, %1018 : tensor<128xf32>
    %1407 = stablehlo.add %1403, %1406 : tensor<128xf32>
    %cst_393 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1408 = stablehlo.broadcast_in_dim %cst_393, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1409 = stablehlo.multiply %1408, %arg105 : tensor<32x128xf32>
    %cst_394 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1410 = stablehlo.broadcast_in_dim %cst_394, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1411 = stablehlo.multiply %1410, %1020 : tensor<32x128xf32>
    %1412 = stablehlo.multiply %1411, %1020 : tensor<32x128xf32>
    %1413 = stablehlo.add %1409, %1412 : tensor<32x128xf32>
    %cst_395 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1414 = stablehlo.broadcast_in_dim %cst_395, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1415 = stablehlo.multiply %1414, %arg106 : tensor<32xf32>
    %cst_396 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1416 = stablehlo.broadcast_in_dim %cst_396, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1417 = stablehlo.multiply %1416, %998 : tensor<32xf32>
    %1418 = stablehlo.multiply %1417, %998 : tensor<32xf32>
    %1419 = stablehlo.add %1415, %1418 : tensor<32xf32>
    %cst_397 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1420 = stablehlo.broadcast_in_dim %cst_397, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1421 = stablehlo.multiply %1420, %arg107 : tensor<128x32xf32>
    %cst_398 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1422 = stablehlo.broadcast_in_dim %cst_398, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1423 = stablehlo.multiply %1422, %1000 : tensor<128x32xf32>
    %1424 = stablehlo.multiply %1423, %1000 : tensor<128x32xf32>
    %1425 = stablehlo.add %1421, %1424 : tensor<128x32xf32>
    %cst_399 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1426 = stablehlo.broadcast_in_dim %cst_399, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1427 = stablehlo.multiply %1426, %arg108 : tensor<32xf32>
    %cst_400 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1428 = stablehlo.broadcast_in_dim %cst_400, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1429 = stablehlo.multiply %1428, %1103 : tensor<32xf32>
    %1430 = stablehlo.multiply %1429, %1103 : tensor<32xf32>
    %1431 = stablehlo.add %1427, %1430 : tensor<32xf32>
    %cst_401 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1432 = stablehlo.broadcast_in_dim %cst_401, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1433 = stablehlo.multiply %1432, %arg109 : tensor<32xf32>
    %cst_402 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1434 = stablehlo.broadcast_in_dim %cst_402, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1435 = stablehlo.multiply %1434, %1109 : tensor<32xf32>
    %1436 = stablehlo.multiply %1435, %1109 : tensor<32xf32>
    %1437 = stablehlo.add %1433, %1436 : tensor<32xf32>
    %cst_403 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1438 = stablehlo.broadcast_in_dim %cst_403, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1439 = stablehlo.multiply %1438, %arg110 : tensor<32xf32>
    %cst_404 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1440 = stablehlo.broadcast_in_dim %cst_404, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1441 = stablehlo.multiply %1440, %1024 : tensor<32xf32>
    %1442 = stablehlo.multiply %1441, %1024 : tensor<32xf32>
    %1443 = stablehlo.add %1439, %1442 : tensor<32xf32>
    %cst_405 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1444 = stablehlo.broadcast_in_dim %cst_405, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1445 = stablehlo.multiply %1444, %arg111 : tensor<32xf32>
    %cst_406 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1446 = stablehlo.broadcast_in_dim %cst_406, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1447 = stablehlo.multiply %1446, %1030 : tensor<32xf32>
    %1448 = stablehlo.multiply %1447, %1030 : tensor<32xf32>
    %1449 = stablehlo.add %1445, %1448 : tensor<32xf32>
    %cst_407 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1450 = stablehlo.broadcast_in_dim %cst_407, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1451 = stablehlo.multiply %1450, %arg112 : tensor<32xf32>
    %cst_408 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1452 = stablehlo.broadcast_in_dim %cst_408, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1453 = stablehlo.multiply %1452, %1058 : tensor<32xf32>
    %1454 = stablehlo.multiply %1453, %1058 : tensor<32xf32>
    %1455 = stablehlo.add %1451, %1454 : tensor<32xf32>
    %cst_409 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1456 = stablehlo.broadcast_in_dim %cst_409, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1457 = stablehlo.multiply %1456, %arg113 : tensor<32x32xf32>
    %cst_410 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1458 = stablehlo.broadcast_in_dim %cst_410, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1459 = stablehlo.multiply %1458, %1060 : tensor<32x32xf32>
    %1460 = stablehlo.multiply %1459, %1060 : tensor<32x32xf32>
    %1461 = stablehlo.add %1457, %1460 : tensor<32x32xf32>
    %cst_411 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1462 = stablehlo.broadcast_in_dim %cst_411, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1463 = stablehlo.multiply %1462, %arg114 : tensor<96xf32>
    %cst_412 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1464 = stablehlo.broadcast_in_dim %cst_412, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1465 = stablehlo.multiply %1464, %1097 : tensor<96xf32>
    %1466 = stablehlo.multiply %1465, %1097 : tensor<96xf32>
    %1467 = stablehlo.add %1463, %1466 : tensor<96xf32>
    %cst_413 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1468 = stablehlo.broadcast_in_dim %cst_413, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1469 = stablehlo.multiply %1468, %arg115 : tensor<32x96xf32>
    %cst_414 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1470 = stablehlo.broadcast_in_dim %cst_414, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1471 = stablehlo.multiply %1470, %1099 : tensor<32x96xf32>
    %1472 = stablehlo.multiply %1471, %1099 : tensor<32x96xf32>
    %1473 = stablehlo.add %1469, %1472 : tensor<32x96xf32>
    %cst_415 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1474 = stablehlo.broadcast_in_dim %cst_415, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1475 = stablehlo.multiply %1474, %arg116 : tensor<128xf32>
    %cst_416 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1476 = stablehlo.broadcast_in_dim %cst_416, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1477 = stablehlo.multiply %1476, %879 : tensor<128xf32>
    %1478 = stablehlo.multiply %1477, %879 : tensor<128xf32>
    %1479 = stablehlo.add %1475, %1478 : tensor<128xf32>
    %cst_417 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1480 = stablehlo.broadcast_in_dim %cst_417, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1481 = stablehlo.multiply %1480, %arg117 : tensor<32x128xf32>
    %cst_418 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1482 = stablehlo.broadcast_in_dim %cst_418, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1483 = stablehlo.multiply %1482, %881 : tensor<32x128xf32>
    %1484 = stablehlo.multiply %1483, %881 : tensor<32x128xf32>
    %1485 = stablehlo.add %1481, %1484 : tensor<32x128xf32>
    %cst_419 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1486 = stablehlo.broadcast_in_dim %cst_419, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1487 = stablehlo.multiply %1486, %arg118 : tensor<32xf32>
    %cst_420 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1488 = stablehlo.broadcast_in_dim %cst_420, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1489 = stablehlo.multiply %1488, %859 : tensor<32xf32>
    %1490 = stablehlo.multiply %1489, %859 : tensor<32xf32>
    %1491 = stablehlo.add %1487, %1490 : tensor<32xf32>
    %cst_421 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1492 = stablehlo.broadcast_in_dim %cst_421, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1493 = stablehlo.multiply %1492, %arg119 : tensor<128x32xf32>
    %cst_422 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1494 = stablehlo.broadcast_in_dim %cst_422, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1495 = stablehlo.multiply %1494, %861 : tensor<128x32xf32>
    %1496 = stablehlo.multiply %1495, %861 : tensor<128x32xf32>
    %1497 = stablehlo.add %1493, %1496 : tensor<128x32xf32>
    %cst_423 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1498 = stablehlo.broadcast_in_dim %cst_423, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1499 = stablehlo.multiply %1498, %arg120 : tensor<32xf32>
    %cst_424 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1500 = stablehlo.broadcast_in_dim %cst_424, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1501 = stablehlo.multiply %1500, %964 : tensor<32xf32>
    %1502 = stablehlo.multiply %1501, %964 : tensor<32xf32>
    %1503 = stablehlo.add %1499, %1502 : tensor<32xf32>
    %cst_425 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1504 = stablehlo.broadcast_in_dim %cst_425, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1505 = stablehlo.multiply %1504, %arg121 : tensor<32xf32>
    %cst_426 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1506 = stablehlo.broadcast_in_dim %cst_426, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1507 = stablehlo.multiply %1506, %970 : tensor<32xf32>
    %1508 = stablehlo.multiply %1507, %970 : tensor<32xf32>
    %1509 = stablehlo.add %1505, %1508 : tensor<32xf32>
    %cst_427 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1510 = stablehlo.broadcast_in_dim %cst_427, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1511 = stablehlo.multiply %1510, %arg122 : tensor<32xf32>
    %cst_428 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1512 = stablehlo.broadcast_in_dim %cst_428, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1513 = stablehlo.multiply %1512, %885 : tensor<32xf32>
    %1514 = stablehlo.multiply %1513, %885 : tensor<32xf32>
    %1515 = stablehlo.add %1511, %1514 : tensor<32xf32>
    %cst_429 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1516 = stablehlo.broadcast_in_dim %cst_429, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1517 = stablehlo.multiply %1516, %arg123 : tensor<32xf32>
    %cst_430 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1518 = stablehlo.broadcast_in_dim %cst_430, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1519 = stablehlo.multiply %1518, %891 : tensor<32xf32>
    %1520 = stablehlo.multiply %1519, %891 : tensor<32xf32>
    %1521 = stablehlo.add %1517, %1520 : tensor<32xf32>
    %cst_431 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1522 = stablehlo.broadcast_in_dim %cst_431, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1523 = stablehlo.multiply %1522, %arg124 : tensor<32xf32>
    %cst_432 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1524 = stablehlo.broadcast_in_dim %cst_432, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1525 = stablehlo.multiply %1524, %919 : tensor<32xf32>
    %1526 = stablehlo.multiply %1525, %919 : tensor<32xf32>
    %1527 = stablehlo.add %1523, %1526 : tensor<32xf32>
    %cst_433 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1528 = stablehlo.broadcast_in_dim %cst_433, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1529 = stablehlo.multiply %1528, %arg125 : tensor<32x32xf32>
    %cst_434 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1530 = stablehlo.broadcast_in_dim %cst_434, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1531 = stablehlo.multiply %1530, %921 : tensor<32x32xf32>
    %1532 = stablehlo.multiply %1531, %921 : tensor<32x32xf32>
    %1533 = stablehlo.add %1529, %1532 : tensor<32x32xf32>
    %cst_435 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1534 = stablehlo.broadcast_in_dim %cst_435, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1535 = stablehlo.multiply %1534, %arg126 : tensor<96xf32>
    %cst_436 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1536 = stablehlo.broadcast_in_dim %cst_436, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1537 = stablehlo.multiply %1536, %958 : tensor<96xf32>
    %1538 = stablehlo.multiply %1537, %958 : tensor<96xf32>
    %1539 = stablehlo.add %1535, %1538 : tensor<96xf32>
    %cst_437 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1540 = stablehlo.broadcast_in_dim %cst_437, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1541 = stablehlo.multiply %1540, %arg127 : tensor<32x96xf32>
    %cst_438 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1542 = stablehlo.broadcast_in_dim %cst_438, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1543 = stablehlo.multiply %1542, %960 : tensor<32x96xf32>
    %1544 = stablehlo.multiply %1543, %960 : tensor<32x96xf32>
    %1545 = stablehlo.add %1541, %1544 : tensor<32x96xf32>
    %cst_439 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1546 = stablehlo.broadcast_in_dim %cst_439, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1547 = stablehlo.multiply %1546, %arg128 : tensor<128xf32>
    %cst_440 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1548 = stablehlo.broadcast_in_dim %cst_440, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1549 = stablehlo.multiply %1548, %740 : tensor<128xf32>
    %1550 = stablehlo.multiply %1549, %740 : tensor<128xf32>
    %1551 = stablehlo.add %1547, %1550 : tensor<128xf32>
    %cst_441 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1552 = stablehlo.broadcast_in_dim %cst_441, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1553 = stablehlo.multiply %1552, %arg129 : tensor<32x128xf32>
    %cst_442 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1554 = stablehlo.broadcast_in_dim %cst_442, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1555 = stablehlo.multiply %1554, %742 : tensor<32x128xf32>
    %1556 = stablehlo.multiply %1555, %742 : tensor<32x128xf32>
    %1557 = stablehlo.add %1553, %1556 : tensor<32x128xf32>
    %cst_443 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1558 = stablehlo.broadcast_in_dim %cst_443, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1559 = stablehlo.multiply %1558, %arg130 : tensor<32xf32>
    %cst_444 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1560 = stablehlo.broadcast_in_dim %cst_444, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1561 = stablehlo.multiply %1560, %720 : tensor<32xf32>
    %1562 = stablehlo.multiply %1561, %720 : tensor<32xf32>
    %1563 = stablehlo.add %1559, %1562 : tensor<32xf32>
    %cst_445 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1564 = stablehlo.broadcast_in_dim %cst_445, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1565 = stablehlo.multiply %1564, %arg131 : tensor<128x32xf32>
    %cst_446 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1566 = stablehlo.broadcast_in_dim %cst_446, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1567 = stablehlo.multiply %1566, %722 : tensor<128x32xf32>
    %1568 = stablehlo.multiply %1567, %722 : tensor<128x32xf32>
    %1569 = stablehlo.add %1565, %1568 : tensor<128x32xf32>
    %cst_447 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1570 = stablehlo.broadcast_in_dim %cst_447, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1571 = stablehlo.multiply %1570, %arg132 : tensor<32xf32>
    %cst_448 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1572 = stablehlo.broadcast_in_dim %cst_448, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1573 = stablehlo.multiply %1572, %825 : tensor<32xf32>
    %1574 = stablehlo.multiply %1573, %825 : tensor<32xf32>
    %1575 = stablehlo.add %1571, %1574 : tensor<32xf32>
    %cst_449 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1576 = stablehlo.broadcast_in_dim %cst_449, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1577 = stablehlo.multiply %1576, %arg133 : tensor<32xf32>
    %cst_450 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1578 = stablehlo.broadcast_in_dim %cst_450, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1579 = stablehlo.multiply %1578, %831 : tensor<32xf32>
    %1580 = stablehlo.multiply %1579, %831 : tensor<32xf32>
    %1581 = stablehlo.add %1577, %1580 : tensor<32xf32>
    %cst_451 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1582 = stablehlo.broadcast_in_dim %cst_451, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1583 = stablehlo.multiply %1582, %arg134 : tensor<32xf32>
    %cst_452 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1584 = stablehlo.broadcast_in_dim %cst_452, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1585 = stablehlo.multiply %1584, %746 : tensor<32xf32>
    %1586 = stablehlo.multiply %1585, %746 : tensor<32xf32>
    %1587 = stablehlo.add %1583, %1586 : tensor<32xf32>
    %cst_453 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1588 = stablehlo.broadcast_in_dim %cst_453, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1589 = stablehlo.multiply %1588, %arg135 : tensor<32xf32>
    %cst_454 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1590 = stablehlo.broadcast_in_dim %cst_454, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1591 = stablehlo.multiply %1590, %752 : tensor<32xf32>
    %1592 = stablehlo.multiply %1591, %752 : tensor<32xf32>
    %1593 = stablehlo.add %1589, %1592 : tensor<32xf32>
    %cst_455 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1594 = stablehlo.broadcast_in_dim %cst_455, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1595 = stablehlo.multiply %1594, %arg136 : tensor<32xf32>
    %cst_456 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1596 = stablehlo.broadcast_in_dim %cst_456, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1597 = stablehlo.multiply %1596, %780 : tensor<32xf32>
    %1598 = stablehlo.multiply %1597, %780 : tensor<32xf32>
    %1599 = stablehlo.add %1595, %1598 : tensor<32xf32>
    %cst_457 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1600 = stablehlo.broadcast_in_dim %cst_457, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1601 = stablehlo.multiply %1600, %arg137 : tensor<32x32xf32>
    %cst_458 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1602 = stablehlo.broadcast_in_dim %cst_458, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1603 = stablehlo.multiply %1602, %782 : tensor<32x32xf32>
    %1604 = stablehlo.multiply %1603, %782 : tensor<32x32xf32>
    %1605 = stablehlo.add %1601, %1604 : tensor<32x32xf32>
    %cst_459 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1606 = stablehlo.broadcast_in_dim %cst_459, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1607 = stablehlo.multiply %1606, %arg138 : tensor<96xf32>
    %cst_460 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1608 = stablehlo.broadcast_in_dim %cst_460, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1609 = stablehlo.multiply %1608, %819 : tensor<96xf32>
    %1610 = stablehlo.multiply %1609, %819 : tensor<96xf32>
    %1611 = stablehlo.add %1607, %1610 : tensor<96xf32>
    %cst_461 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1612 = stablehlo.broadcast_in_dim %cst_461, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1613 = stablehlo.multiply %1612, %arg139 : tensor<32x96xf32>
    %cst_462 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1614 = stablehlo.broadcast_in_dim %cst_462, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1615 = stablehlo.multiply %1614, %821 : tensor<32x96xf32>
    %1616 = stablehlo.multiply %1615, %821 : tensor<32x96xf32>
    %1617 = stablehlo.add %1613, %1616 : tensor<32x96xf32>
    %cst_463 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1618 = stablehlo.broadcast_in_dim %cst_463, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1619 = stablehlo.multiply %1618, %arg140 : tensor<128xf32>
    %cst_464 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1620 = stablehlo.broadcast_in_dim %cst_464, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1621 = stablehlo.multiply %1620, %601 : tensor<128xf32>
    %1622 = stablehlo.multiply %1621, %601 : tensor<128xf32>
    %1623 = stablehlo.add %1619, %1622 : tensor<128xf32>
    %cst_465 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1624 = stablehlo.broadcast_in_dim %cst_465, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1625 = stablehlo.multiply %1624, %arg141 : tensor<32x128xf32>
    %cst_466 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1626 = stablehlo.broadcast_in_dim %cst_466, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1627 = stablehlo.multiply %1626, %603 : tensor<32x128xf32>
    %1628 = stablehlo.multiply %1627, %603 : tensor<32x128xf32>
    %1629 = stablehlo.add %1625, %1628 : tensor<32x128xf32>
    %cst_467 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1630 = stablehlo.broadcast_in_dim %cst_467, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1631 = stablehlo.multiply %1630, %arg142 : tensor<32xf32>
    %cst_468 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1632 = stablehlo.broadcast_in_dim %cst_468, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1633 = stablehlo.multiply %1632, %581 : tensor<32xf32>
    %1634 = stablehlo.multiply %1633, %581 : tensor<32xf32>
    %1635 = stablehlo.add %1631, %1634 : tensor<32xf32>
    %cst_469 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1636 = stablehlo.broadcast_in_dim %cst_469, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1637 = stablehlo.multiply %1636, %arg143 : tensor<128x32xf32>
    %cst_470 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1638 = stablehlo.broadcast_in_dim %cst_470, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1639 = stablehlo.multiply %1638, %583 : tensor<128x32xf32>
    %1640 = stablehlo.multiply %1639, %583 : tensor<128x32xf32>
    %1641 = stablehlo.add %1637, %1640 : tensor<128x32xf32>
    %cst_471 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1642 = stablehlo.broadcast_in_dim %cst_471, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1643 = stablehlo.multiply %1642, %arg144 : tensor<32xf32>
    %cst_472 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1644 = stablehlo.broadcast_in_dim %cst_472, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1645 = stablehlo.multiply %1644, %686 : tensor<32xf32>
    %1646 = stablehlo.multiply %1645, %686 : tensor<32xf32>
    %1647 = stablehlo.add %1643, %1646 : tensor<32xf32>
    %cst_473 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1648 = stablehlo.broadcast_in_dim %cst_473, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1649 = stablehlo.multiply %1648, %arg145 : tensor<32xf32>
    %cst_474 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1650 = stablehlo.broadcast_in_dim %cst_474, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1651 = stablehlo.multiply %1650, %692 : tensor<32xf32>
    %1652 = stablehlo.multiply %1651, %692 : tensor<32xf32>
    %1653 = stablehlo.add %1649, %1652 : tensor<32xf32>
    %cst_475 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1654 = stablehlo.broadcast_in_dim %cst_475, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1655 = stablehlo.multiply %1654, %arg146 : tensor<32xf32>
    %cst_476 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1656 = stablehlo.broadcast_in_dim %cst_476, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1657 = stablehlo.multiply %1656, %607 : tensor<32xf32>
    %1658 = stablehlo.multiply %1657, %607 : tensor<32xf32>
    %1659 = stablehlo.add %1655, %1658 : tensor<32xf32>
    %cst_477 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1660 = stablehlo.broadcast_in_dim %cst_477, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1661 = stablehlo.multiply %1660, %arg147 : tensor<32xf32>
    %cst_478 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1662 = stablehlo.broadcast_in_dim %cst_478, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1663 = stablehlo.multiply %1662, %613 : tensor<32xf32>
    %1664 = stablehlo.multiply %1663, %613 : tensor<32xf32>
    %1665 = stablehlo.add %1661, %1664 : tensor<32xf32>
    %cst_479 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1666 = stablehlo.broadcast_in_dim %cst_479, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1667 = stablehlo.multiply %1666, %arg148 : tensor<32xf32>
    %cst_480 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1668 = stablehlo.broadcast_in_dim %cst_480, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1669 = stablehlo.multiply %1668, %641 : tensor<32xf32>
    %1670 = stablehlo.multiply %1669, %641 : tensor<32xf32>
    %1671 = stablehlo.add %1667, %1670 : tensor<32xf32>
    %cst_481 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1672 = stablehlo.broadcast_in_dim %cst_481, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1673 = stablehlo.multiply %1672, %arg149 : tensor<32x32xf32>
    %cst_482 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1674 = stablehlo.broadcast_in_dim %cst_482, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1675 = stablehlo.multiply %1674, %643 : tensor<32x32xf32>
    %1676 = stablehlo.multiply %1675, %643 : tensor<32x32xf32>
    %1677 = stablehlo.add %1673, %1676 : tensor<32x32xf32>
    %cst_483 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1678 = stablehlo.broadcast_in_dim %cst_483, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1679 = stablehlo.multiply %1678, %arg150 : tensor<96xf32>
    %cst_484 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1680 = stablehlo.broadcast_in_dim %cst_484, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1681 = stablehlo.multiply %1680, %680 : tensor<96xf32>
    %1682 = stablehlo.multiply %1681, %680 : tensor<96xf32>
    %1683 = stablehlo.add %1679, %1682 : tensor<96xf32>
    %cst_485 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1684 = stablehlo.broadcast_in_dim %cst_485, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1685 = stablehlo.multiply %1684, %arg151 : tensor<32x96xf32>
    %cst_486 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1686 = stablehlo.broadcast_in_dim %cst_486, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1687 = stablehlo.multiply %1686, %682 : tensor<32x96xf32>
    %1688 = stablehlo.multiply %1687, %682 : tensor<32x96xf32>
    %1689 = stablehlo.add %1685, %1688 : tensor<32x96xf32>
    %cst_487 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1690 = stablehlo.broadcast_in_dim %cst_487, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1691 = stablehlo.multiply %1690, %arg152 : tensor<32xf32>
    %cst_488 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1692 = stablehlo.broadcast_in_dim %cst_488, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1693 = stablehlo.multiply %1692, %548 : tensor<32xf32>
    %1694 = stablehlo.multiply %1693, %548 : tensor<32xf32>
    %1695 = stablehlo.add %1691, %1694 : tensor<32xf32>
    %cst_489 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1696 = stablehlo.broadcast_in_dim %cst_489, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1697 = stablehlo.multiply %1696, %arg153 : tensor<32xf32>
    %cst_490 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1698 = stablehlo.broadcast_in_dim %cst_490, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1699 = stablehlo.multiply %1698, %554 : tensor<32xf32>
    %1700 = stablehlo.multiply %1699, %554 : tensor<32xf32>
    %1701 = stablehlo.add %1697, %1700 : tensor<32xf32>
    %cst_491 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1702 = stablehlo.broadcast_in_dim %cst_491, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %1703 = stablehlo.multiply %1702, %arg154 : tensor<8x32xf32>
    %cst_492 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1704 = stablehlo.broadcast_in_dim %cst_492, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %1705 = stablehlo.multiply %1704, %1137 : tensor<8x32xf32>
    %1706 = stablehlo.multiply %1705, %1137 : tensor<8x32xf32>
    %1707 = stablehlo.add %1703, %1706 : tensor<8x32xf32>
    %cst_493 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1708 = stablehlo.broadcast_in_dim %cst_493, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %1709 = stablehlo.multiply %1708, %arg155 : tensor<64x32xf32>
    %cst_494 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1710 = stablehlo.broadcast_in_dim %cst_494, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %1711 = stablehlo.multiply %1710, %1139 : tensor<64x32xf32>
    %1712 = stablehlo.multiply %1711, %1139 : tensor<64x32xf32>
    %1713 = stablehlo.add %1709, %1712 : tensor<64x32xf32>
    %cst_495 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %1714 = stablehlo.power %cst_495, %1141 : tensor<f32>
    %cst_496 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1715 = stablehlo.subtract %cst_496, %1714 : tensor<f32>
    %1716 = stablehlo.sqrt %1715 : tensor<f32>
    %cst_497 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %1717 = stablehlo.multiply %cst_497, %1716 : tensor<f32>
    %cst_498 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %1718 = stablehlo.power %cst_498, %1141 : tensor<f32>
    %cst_499 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1719 = stablehlo.subtract %cst_499, %1718 : tensor<f32>
    %1720 = stablehlo.divide %1717, %1719 : tensor<f32>
    %1721 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1722 = stablehlo.multiply %1721, %1146 : tensor<128xf32>
    %1723 = stablehlo.sqrt %1407 : tensor<128xf32>
    %cst_500 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1724 = stablehlo.broadcast_in_dim %cst_500, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1725 = stablehlo.add %1723, %1724 : tensor<128xf32>
    %1726 = stablehlo.divide %1722, %1725 : tensor<128xf32>
    %1727 = stablehlo.subtract %arg0, %1726 : tensor<128xf32>
    %1728 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1729 = stablehlo.multiply %1728, %1151 : tensor<32x128xf32>
    %1730 = stablehlo.sqrt %1413 : tensor<32x128xf32>
    %cst_501 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1731 = stablehlo.broadcast_in_dim %cst_501, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1732 = stablehlo.add %1730, %1731 : tensor<32x128xf32>
    %1733 = stablehlo.divide %1729, %1732 : tensor<32x128xf32>
    %1734 = stablehlo.subtract %arg1, %1733 : tensor<32x128xf32>
    %1735 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1736 = stablehlo.multiply %1735, %1156 : tensor<32xf32>
    %1737 = stablehlo.sqrt %1419 : tensor<32xf32>
    %cst_502 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1738 = stablehlo.broadcast_in_dim %cst_502, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1739 = stablehlo.add %1737, %1738 : tensor<32xf32>
    %1740 = stablehlo.divide %1736, %1739 : tensor<32xf32>
    %1741 = stablehlo.subtract %arg2, %1740 : tensor<32xf32>
    %1742 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1743 = stablehlo.multiply %1742, %1161 : tensor<128x32xf32>
    %1744 = stablehlo.sqrt %1425 : tensor<128x32xf32>
    %cst_503 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1745 = stablehlo.broadcast_in_dim %cst_503, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1746 = stablehlo.add %1744, %1745 : tensor<128x32xf32>
    %1747 = stablehlo.divide %1743, %1746 : tensor<128x32xf32>
    %1748 = stablehlo.subtract %arg3, %1747 : tensor<128x32xf32>
    %1749 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1750 = stablehlo.multiply %1749, %1166 : tensor<32xf32>
    %1751 = stablehlo.sqrt %1431 : tensor<32xf32>
    %cst_504 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1752 = stablehlo.broadcast_in_dim %cst_504, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1753 = stablehlo.add %1751, %1752 : tensor<32xf32>
    %1754 = stablehlo.divide %1750, %1753 : tensor<32xf32>
    %1755 = stablehlo.subtract %arg4, %1754 : tensor<32xf32>
    %1756 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1757 = stablehlo.multiply %1756, %1171 : tensor<32xf32>
    %1758 = stablehlo.sqrt %1437 : tensor<32xf32>
    %cst_505 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1759 = stablehlo.broadcast_in_dim %cst_505, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1760 = stablehlo.add %1758, %1759 : tensor<32xf32>
    %1761 = stablehlo.divide %1757, %1760 : tensor<32xf32>
    %1762 = stablehlo.subtract %arg5, %1761 : tensor<32xf32>
    %1763 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1764 = stablehlo.multiply %1763, %1176 : tensor<32xf32>
    %1765 = stablehlo.sqrt %1443 : tensor<32xf32>
    %cst_506 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1766 = stablehlo.broadcast_in_dim %cst_506, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1767 = stablehlo.add %1765, %1766 : tensor<32xf32>
    %1768 = stablehlo.divide %1764, %1767 : tensor<32xf32>
    %1769 = stablehlo.subtract %arg6, %1768 : tensor<32xf32>
    %1770 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1771 = stablehlo.multiply %1770, %1181 : tensor<32xf32>
    %1772 = stablehlo.sqrt %1449 : tensor<32xf32>
    %cst_507 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1773 = stablehlo.broadcast_in_dim %cst_507, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1774 = stablehlo.add %1772, %1773 : tensor<32xf32>
    %1775 = stablehlo.divide %1771, %1774 : tensor<32xf32>
    %1776 = stablehlo.subtract %arg7, %1775 : tensor<32xf32>
    %1777 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1778 = stablehlo.multiply %1777, %1186 : tensor<32xf32>
    %1779 = stablehlo.sqrt %1455 : tensor<32xf32>
    %cst_508 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1780 = stablehlo.broadcast_in_dim %cst_508, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1781 = stablehlo.add %1779, %1780 : tensor<32xf32>
    %1782 = stablehlo.divide %1778, %1781 : tensor<32xf32>
    %1783 = stablehlo.subtract %arg8, %1782 : tensor<32xf32>
    %1784 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1785 = stablehlo.multiply %1784, %1191 : tensor<32x32xf32>
    %1786 = stablehlo.sqrt %1461 : tensor<32x32xf32>
    %cst_509 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1787 = stablehlo.broadcast_in_dim %cst_509, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1788 = stablehlo.add %1786, %1787 : tensor<32x32xf32>
    %1789 = stablehlo.divide %1785, %1788 : tensor<32x32xf32>
    %1790 = stablehlo.subtract %arg9, %1789 : tensor<32x32xf32>
    %1791 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1792 = stablehlo.multiply %1791, %1196 : tensor<96xf32>
    %1793 = stablehlo.sqrt %1467 : tensor<96xf32>
    %cst_510 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1794 = stablehlo.broadcast_in_dim %cst_510, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1795 = stablehlo.add %1793, %1794 : tensor<96xf32>
    %1796 = stablehlo.divide %1792, %1795 : tensor<96xf32>
    %1797 = stablehlo.subtract %arg10, %1796 : tensor<96xf32>
    %1798 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1799 = stablehlo.multiply %1798, %1201 : tensor<32x96xf32>
    %1800 = stablehlo.sqrt %1473 : tensor<32x96xf32>
    %cst_511 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1801 = stablehlo.broadcast_in_dim %cst_511, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1802 = stablehlo.add %1800, %1801 : tensor<32x96xf32>
    %1803 = stablehlo.divide %1799, %1802 : tensor<32x96xf32>
    %1804 = stablehlo.subtract %arg11, %1803 : tensor<32x96xf32>
    %1805 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1806 = stablehlo.multiply %1805, %1206 : tensor<128xf32>
    %1807 = stablehlo.sqrt %1479 : tensor<128xf32>
    %cst_512 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1808 = stablehlo.broadcast_in_dim %cst_512, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1809 = stablehlo.add %1807, %1808 : tensor<128xf32>
    %1810 = stablehlo.divide %1806, %1809 : tensor<128xf32>
    %1811 = stablehlo.subtract %arg12, %1810 : tensor<128xf32>
    %1812 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1813 = stablehlo.multiply %1812, %1211 : tensor<32x128xf32>
    %1814 = stablehlo.sqrt %1485 : tensor<32x128xf32>
    %cst_513 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1815 = stablehlo.broadcast_in_dim %cst_513, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1816 = stablehlo.add %1814, %1815 : tensor<32x128xf32>
    %1817 = stablehlo.divide %1813, %1816 : tensor<32x128xf32>
    %1818 = stablehlo.subtract %arg13, %1817 : tensor<32x128xf32>
    %1819 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1820 = stablehlo.multiply %1819, %1216 : tensor<32xf32>
    %1821 = stablehlo.sqrt %1491 : tensor<32xf32>
    %cst_514 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1822 = stablehlo.broadcast_in_dim %cst_514, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1823 = stablehlo.add %1821, %1822 : tensor<32xf32>
    %1824 = stablehlo.divide %1820, %1823 : tensor<32xf32>
    %1825 = stablehlo.subtract %arg14, %1824 : tensor<32xf32>
    %1826 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1827 = stablehlo.multiply %1826, %1221 : tensor<128x32xf32>
    %1828 = stablehlo.sqrt %1497 : tensor<128x32xf32>
    %cst_515 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1829 = stablehlo.broadcast_in_dim %cst_515, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1830 = stablehlo.add %1828, %1829 : tensor<128x32xf32>
    %1831 = stablehlo.divide %1827, %1830 : tensor<128x32xf32>
    %1832 = stablehlo.subtract %arg15, %1831 : tensor<128x32xf32>
    %1833 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1834 = stablehlo.multiply %1833, %1226 : tensor<32xf32>
    %1835 = stablehlo.sqrt %1503 : tensor<32xf32>
    %cst_516 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1836 = stablehlo.broadcast_in_dim %cst_516, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1837 = stablehlo.add %1835, %1836 : tensor<32xf32>
    %1838 = stablehlo.divide %1834, %1837 : tensor<32xf32>
    %1839 = stablehlo.subtract %arg16, %1838 : tensor<32xf32>
    %1840 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1841 = stablehlo.multiply %1840, %1231 : tensor<32xf32>
    %1842 = stablehlo.sqrt %1509 : tensor<32xf32>
    %cst_517 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1843 = stablehlo.broadcast_in_dim %cst_517, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1844 = stablehlo.add %1842, %1843 : tensor<32xf32>
    %1845 = stablehlo.divide %1841, %1844 : tensor<32xf32>
    %1846 = stablehlo.subtract %arg17, %1845 : tensor<32xf32>
    %1847 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1848 = stablehlo.multiply %1847, %1236 : tensor<32xf32>
    %1849 = stablehlo.sqrt %1515 : tensor<32xf32>
    %cst_518 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1850 = stablehlo.broadcast_in_dim %cst_518, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1851 = stablehlo.add %1849, %1850 : tensor<32xf32>
    %1852 = stablehlo.divide %1848, %1851 : tensor<32xf32>
    %1853 = stablehlo.subtract %arg18, %1852 : tensor<32xf32>
    %1854 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1855 = stablehlo.multiply %1854, %1241 : tensor<32xf32>
    %1856 = stablehlo.sqrt %1521 : tensor<32xf32>
    %cst_519 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1857 = stablehlo.broadcast_in_dim %cst_519, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1858 = stablehlo.add %1856, %1857 : tensor<32xf32>
    %1859 = stablehlo.divide %1855, %1858 : tensor<32xf32>
    %1860 = stablehlo.subtract %arg19, %1859 : tensor<32xf32>
    %1861 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1862 = stablehlo.multiply %1861, %1246 : tensor<32xf32>
    %1863 = stablehlo.sqrt %1527 : tensor<32xf32>
    %cst_520 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1864 = stablehlo.broadcast_in_dim %cst_520, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1865 = stablehlo.add %1863, %1864 : tensor<32xf32>
    %1866 = stablehlo.divide %1862, %1865 : tensor<32xf32>
    %1867 = stablehlo.subtract %arg20, %1866 : tensor<32xf32>
    %1868 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1869 = stablehlo.multiply %1868, %1251 : tensor<32x32xf32>
    %1870 = stablehlo.sqrt %1533 : tensor<32x32xf32>
    %cst_521 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1871 = stablehlo.broadcast_in_dim %cst_521, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1872 = stablehlo.add %1870, %1871 : tensor<32x32xf32>
    %1873 = stablehlo.divide %1869, %1872 : tensor<32x32xf32>
    %1874 = stablehlo.subtract %arg21, %1873 : tensor<32x32xf32>
    %1875 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1876 = stablehlo.multiply %1875, %1256 : tensor<96xf32>
    %1877 = stablehlo.sqrt %1539 : tensor<96xf32>
    %cst_522 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1878 = stablehlo.broadcast_in_dim %cst_522, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1879 = stablehlo.add %1877, %1878 : tensor<96xf32>
    %1880 = stablehlo.divide %1876, %1879 : tensor<96xf32>
    %1881 = stablehlo.subtract %arg22, %1880 : tensor<96xf32>
    %1882 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1883 = stablehlo.multiply %1882, %1261 : tensor<32x96xf32>
    %1884 = stablehlo.sqrt %1545 : tensor<32x96xf32>
    %cst_523 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1885 = stablehlo.broadcast_in_dim %cst_523, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1886 = stablehlo.add %1884, %1885 : tensor<32x96xf32>
    %1887 = stablehlo.divide %1883, %1886 : tensor<32x96xf32>
    %1888 = stablehlo.subtract %arg23, %1887 : tensor<32x96xf32>
    %1889 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1890 = stablehlo.multiply %1889, %1266 : tensor<128xf32>
    %1891 = stablehlo.sqrt %1551 : tensor<128xf32>
    %cst_524 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1892 = stablehlo.broadcast_in_dim %cst_524, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1893 = stablehlo.add %1891, %1892 : tensor<128xf32>
    %1894 = stablehlo.divide %1890, %1893 : tensor<128xf32>
    %1895 = stablehlo.subtract %arg24, %1894 : tensor<128xf32>
    %1896 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1897 = stablehlo.multiply %1896, %1271 : tensor<32x128xf32>
    %1898 = stablehlo.sqrt %1557 : tensor<32x128xf32>
    %cst_525 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1899 = stablehlo.broadcast_in_dim %cst_525, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1900 = stablehlo.add %1898, %1899 : tensor<32x128xf32>
    %1901 = stablehlo.divide %1897, %1900 : tensor<32x128xf32>
    %1902 = stablehlo.subtract %arg25, %1901 : tensor<32x128xf32>
    %1903 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1904 = stablehlo.multiply %1903, %1276 : tensor<32xf32>
    %1905 = stablehlo.sqrt %1563 : tensor<32xf32>
    %cst_526 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1906 = stablehlo.broadcast_in_dim %cst_526, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1907 = stablehlo.add %1905, %1906 : tensor<32xf32>
    %1908 = stablehlo.divide %1904, %1907 : tensor<32xf32>
    %1909 = stablehlo.subtract %arg26, %1908 : tensor<32xf32>
    %1910 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1911 = stablehlo.multiply %1910, %1281 : tensor<128x32xf32>
    %1912 = stablehlo.sqrt %1569 : tensor<128x32xf32>
    %cst_527 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1913 = stablehlo.broadcast_in_dim %cst_527, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1914 = stablehlo.add %1912, %1913 : tensor<128x32xf32>
    %1915 = stablehlo.divide %1911, %1914 : tensor<128x32xf32>
    %1916 = stablehlo.subtract %arg27, %1915 : tensor<128x32xf32>
    %1917 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1918 = stablehlo.multiply %1917, %1286 : tensor<32xf32>
    %1919 = stablehlo.sqrt %1575 : tensor<32xf32>
    %cst_528 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1920 = stablehlo.broadcast_in_dim %cst_528, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1921 = stablehlo.add %1919, %1920 : tensor<32xf32>
    %1922 = stablehlo.divide %1918, %1921 : tensor<32xf32>
    %1923 = stablehlo.subtract %arg28, %1922 : tensor<32xf32>
    %1924 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1925 = stablehlo.multiply %1924, %1291 : tensor<32xf32>
    %1926 = stablehlo.sqrt %1581 : tensor<32xf32>
    %cst_529 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1927 = stablehlo.broadcast_in_dim %cst_529, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1928 = stablehlo.add %1926, %1927 : tensor<32xf32>
    %1929 = stablehlo.divide %1925, %1928 : tensor<32xf32>
    %1930 = stablehlo.subtract %arg29, %1929 : tensor<32xf32>
    %1931 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1932 = stablehlo.multiply %1931, %1296 : tensor<32xf32>
    %1933 = stablehlo.sqrt %1587 : tensor<32xf32>
    %cst_530 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1934 = stablehlo.broadcast_in_dim %cst_530, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1935 = stablehlo.add %1933, %1934 : tensor<32xf32>
    %1936 = stablehlo.divide %1932, %1935 : tensor<32xf32>
    %1937 = stablehlo.subtract %arg30, %1936 : tensor<32xf32>
    %1938 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1939 = stablehlo.multiply %1938, %1301 : tensor<32xf32>
    %1940 = stablehlo.sqrt %1593 : tensor<32xf32>
    %cst_531 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1941 = stablehlo.broadcast_in_dim %cst_531, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1942 = stablehlo.add %1940, %1941 : tensor<32xf32>
    %1943 = stablehlo.divide %1939, %1942 : tensor<32xf32>
    %1944 = stablehlo.subtract %arg31, %1943 : tensor<32xf32>
    %1945 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1946 = stablehlo.multiply %1945, %1306 : tensor<32xf32>
    %1947 = stablehlo.sqrt %1599 : tensor<32xf32>
    %cst_532 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1948 = stablehlo.broadcast_in_dim %cst_532, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1949 = stablehlo.add %1947, %1948 : tensor<32xf32>
    %1950 = stablehlo.divide %1946, %1949 : tensor<32xf32>
    %1951 = stablehlo.subtract %arg32, %1950 : tensor<32xf32>
    %1952 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1953 = stablehlo.multiply %1952, %1311 : tensor<32x32xf32>
    %1954 = stablehlo.sqrt %1605 : tensor<32x32xf32>
    %cst_533 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1955 = stablehlo.broadcast_in_dim %cst_533, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %1956 = stablehlo.add %1954, %1955 : tensor<32x32xf32>
    %1957 = stablehlo.divide %1953, %1956 : tensor<32x32xf32>
    %1958 = stablehlo.subtract %arg33, %1957 : tensor<32x32xf32>
    %1959 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1960 = stablehlo.multiply %1959, %1316 : tensor<96xf32>
    %1961 = stablehlo.sqrt %1611 : tensor<96xf32>
    %cst_534 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1962 = stablehlo.broadcast_in_dim %cst_534, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %1963 = stablehlo.add %1961, %1962 : tensor<96xf32>
    %1964 = stablehlo.divide %1960, %1963 : tensor<96xf32>
    %1965 = stablehlo.subtract %arg34, %1964 : tensor<96xf32>
    %1966 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1967 = stablehlo.multiply %1966, %1321 : tensor<32x96xf32>
    %1968 = stablehlo.sqrt %1617 : tensor<32x96xf32>
    %cst_535 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1969 = stablehlo.broadcast_in_dim %cst_535, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %1970 = stablehlo.add %1968, %1969 : tensor<32x96xf32>
    %1971 = stablehlo.divide %1967, %1970 : tensor<32x96xf32>
    %1972 = stablehlo.subtract %arg35, %1971 : tensor<32x96xf32>
    %1973 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1974 = stablehlo.multiply %1973, %1326 : tensor<128xf32>
    %1975 = stablehlo.sqrt %1623 : tensor<128xf32>
    %cst_536 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1976 = stablehlo.broadcast_in_dim %cst_536, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %1977 = stablehlo.add %1975, %1976 : tensor<128xf32>
    %1978 = stablehlo.divide %1974, %1977 : tensor<128xf32>
    %1979 = stablehlo.subtract %arg36, %1978 : tensor<128xf32>
    %1980 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1981 = stablehlo.multiply %1980, %1331 : tensor<32x128xf32>
    %1982 = stablehlo.sqrt %1629 : tensor<32x128xf32>
    %cst_537 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1983 = stablehlo.broadcast_in_dim %cst_537, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1984 = stablehlo.add %1982, %1983 : tensor<32x128xf32>
    %1985 = stablehlo.divide %1981, %1984 : tensor<32x128xf32>
    %1986 = stablehlo.subtract %arg37, %1985 : tensor<32x128xf32>
    %1987 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1988 = stablehlo.multiply %1987, %1336 : tensor<32xf32>
    %1989 = stablehlo.sqrt %1635 : tensor<32xf32>
    %cst_538 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1990 = stablehlo.broadcast_in_dim %cst_538, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %1991 = stablehlo.add %1989, %1990 : tensor<32xf32>
    %1992 = stablehlo.divide %1988, %1991 : tensor<32xf32>
    %1993 = stablehlo.subtract %arg38, %1992 : tensor<32xf32>
    %1994 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1995 = stablehlo.multiply %1994, %1341 : tensor<128x32xf32>
    %1996 = stablehlo.sqrt %1641 : tensor<128x32xf32>
    %cst_539 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %1997 = stablehlo.broadcast_in_dim %cst_539, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %1998 = stablehlo.add %1996, %1997 : tensor<128x32xf32>
    %1999 = stablehlo.divide %1995, %1998 : tensor<128x32xf32>
    %2000 = stablehlo.subtract %arg39, %1999 : tensor<128x32xf32>
    %2001 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2002 = stablehlo.multiply %2001, %1346 : tensor<32xf32>
    %2003 = stablehlo.sqrt %1647 : tensor<32xf32>
    %cst_540 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %2004 = stablehlo.broadcast_in_dim %cst_540, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2005 = stablehlo.add %2003, %2004 : tensor<32xf32>
    %2006 = stablehlo.divide %2002, %2005 : tensor<32xf32>
    %2007 = stablehlo.subtract %arg40, %2006 : tensor<32xf32>
    %2008 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2009 = stablehlo.multiply %2008, %1351 : tensor<32xf32>
    %2010 = stablehlo.sqrt %1653 : tensor<32xf32>
    %cst_541 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %2011 = stablehlo.broadcast_in_dim %cst_541, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2012 = stablehlo.add %2010, %2011 : tensor<32xf32>
    %2013 = stablehlo.divide %2009, %2012 : tensor<32xf32>
    %2014 = stablehlo.subtract %arg41, %2013 : tensor<32xf32>
    %2015 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2016 = stablehlo.multiply %2015, %1356 : tensor<32xf32>
    %2017 = stablehlo.sqrt %1659 : tensor<32xf32>
    %cst_542 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %2018 = stablehlo.broadcast_in_dim %cst_542, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2019 = stablehlo.add %2017, %2018 : tensor<32xf32>
    %2020 = stablehlo.divide %2016, %2019 : tensor<32xf32>
    %2021 = stablehlo.subtract %arg42, %2020 : tensor<32xf32>
    %2022 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2023 = stablehlo.multiply %2022, %1361 : tensor<32xf32>
    %2024 = stablehlo.sqrt %1665 : tensor<32xf32>
    %cst_543 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %2025 = stablehlo.broadcast_in_dim %cst_543, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2026 = stablehlo.add %2024, %2025 : tensor<32xf32>
    %2027 = stablehlo.divide %2023, %2026 : tensor<32xf32>
    %2028 = stablehlo.subtract %arg43, %2027 : tensor<32xf32>
    %2029 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2030 = stablehlo.multiply %2029, %1366 : tensor<32xf32>
    %2031 = stablehlo.sqrt %1671 : tensor<32xf32>
    %cst_544 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %2032 = stablehlo.broadcast_in_dim %cst_544, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2033 = stablehlo.add %2031, %2032 : tensor<32xf32>
    %2034 = stablehlo.divide %2030, %2033 : tensor<32xf32>
    %2035 = stablehlo.subtract %arg44, %2034 : tensor<32xf32>
    %2036 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %2037 = stablehlo.multiply %2036, %1371 : tensor<32x32xf32>
    %2038 = stablehlo.sqrt %1677 : tensor<32x32xf32>
    %cst_545 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %2039 = stablehlo.broadcast_in_dim %cst_545, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %2040 = stablehlo.add %2038, %2039 : tensor<32x32xf32>
    %2041 = stablehlo.divide %2037, %2040 : tensor<32x32xf32>
    %2042 = stablehlo.subtract %arg45, %2041 : tensor<32x32xf32>
    %2043 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %2044 = stablehlo.multiply %2043, %1376 : tensor<96xf32>
    %2045 = stablehlo.sqrt %1683 : tensor<96xf32>
    %cst_546 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %2046 = stablehlo.broadcast_in_dim %cst_546, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %2047 = stablehlo.add %2045, %2046 : tensor<96xf32>
    %2048 = stablehlo.divide %2044, %2047 : tensor<96xf32>
    %2049 = stablehlo.subtract %arg46, %2048 : tensor<96xf32>
    %2050 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %2051 = stablehlo.multiply %2050, %1381 : tensor<32x96xf32>
    %2052 = stablehlo.sqrt %1689 : tensor<32x96xf32>
    %cst_547 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %2053 = stablehlo.broadcast_in_dim %cst_547, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %2054 = stablehlo.add %2052, %2053 : tensor<32x96xf32>
    %2055 = stablehlo.divide %2051, %2054 : tensor<32x96xf32>
    %2056 = stablehlo.subtract %arg47, %2055 : tensor<32x96xf32>
    %2057 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2058 = stablehlo.multiply %2057, %1386 : tensor<32xf32>
    %2059 = stablehlo.sqrt %1695 : tensor<32xf32>
    %cst_548 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %2060 = stablehlo.broadcast_in_dim %cst_548, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2061 = stablehlo.add %2059, %2060 : tensor<32xf32>
    %2062 = stablehlo.divide %2058, %2061 : tensor<32xf32>
    %2063 = stablehlo.subtract %arg48, %2062 : tensor<32xf32>
    %2064 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2065 = stablehlo.multiply %2064, %1391 : tensor<32xf32>
    %2066 = stablehlo.sqrt %1701 : tensor<32xf32>
    %cst_549 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %2067 = stablehlo.broadcast_in_dim %cst_549, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %2068 = stablehlo.add %2066, %2067 : tensor<32xf32>
    %2069 = stablehlo.divide %2065, %2068 : tensor<32xf32>
    %2070 = stablehlo.subtract %arg49, %2069 : tensor<32xf32>
    %2071 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %2072 = stablehlo.multiply %2071, %1396 : tensor<8x32xf32>
    %2073 = stablehlo.sqrt %1707 : tensor<8x32xf32>
    %cst_550 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %2074 = stablehlo.broadcast_in_dim %cst_550, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %2075 = stablehlo.add %2073, %2074 : tensor<8x32xf32>
    %2076 = stablehlo.divide %2072, %2075 : tensor<8x32xf32>
    %2077 = stablehlo.subtract %arg50, %2076 : tensor<8x32xf32>
    %2078 = stablehlo.broadcast_in_dim %1720, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %2079 = stablehlo.multiply %2078, %1401 : tensor<64x32xf32>
    %2080 = stablehlo.sqrt %1713 : tensor<64x32xf32>
    %cst_551 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %2081 = stablehlo.broadcast_in_dim %cst_551, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %2082 = stablehlo.add %2080, %2081 : tensor<64x32xf32>
    %2083 = stablehlo.divide %2079, %2082 : tensor<64x32xf32>
    %2084 = stablehlo.subtract %arg51, %2083 : tensor<64x32xf32>
    return %1727, %1734, %1741, %1748, %1755, %1762, %1769, %1776, %1783, %1790, %1797, %1804, %1811, %1818, %1825, %1832, %1839, %1846, %1853, %1860, %1867, %1874, %1881, %1888, %1895, %1902, %1909, %1916, %1923, %1930, %1937, %1944, %1951, %1958, %1965, %1972, %1979, %1986, %1993, %2000, %2007, %2014, %2021, %2028, %2035, %2042, %2049, %2056, %2063, %2070, %2077, %2084, %1146, %1151, %1156, %1161, %1166, %1171, %1176, %1181, %1186, %1191, %1196, %1201, %1206, %1211, %1216, %1221, %1226, %1231, %1236, %1241, %1246, %1251, %1256, %1261, %1266, %1271, %1276, %1281, %1286, %1291, %1296, %1301, %1306, %1311, %1316, %1321, %1326, %1331, %1336, %1341, %1346, %1351, %1356, %1361, %1366, %1371, %1376, %1381, %1386, %1391, %1396, %1401, %1407, %1413, %1419, %1425, %1431, %1437, %1443, %1449, %1455, %1461, %1467, %1473, %1479, %1485, %1491, %1497, %1503, %1509, %1515, %1521, %1527, %1533, %1539, %1545, %1551, %1557, %1563, %1569, %1575, %1581, %1587, %1593, %1599, %1605, %1611, %1617, %1623, %1629, %1635, %1641, %1647, %1653, %1659, %1665, %1671, %1677, %1683, %1689, %1695, %1701, %1707, %1713, %1140, %536 : tensor<128xf32>, tensor<32x128xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<96xf32>, tensor<32x96xf32>, tensor<128xf32>, tensor<32x128xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<96xf32>, tensor<32x96xf32>, tensor<128xf32>, tensor<32x128xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<96xf32>, tensor<32x96xf32>, tensor<128xf32>, tensor<32x128xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<96xf32>, tensor<32x96xf32>, tensor<32xf32>, tensor<32xf32>, tensor<8x32xf32>, tensor<64x32xf32>, tensor<128xf32>, tensor<32x128xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<96xf32>, tensor<32x96xf32>, tensor<128xf32>, tensor<32x128xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<96xf32>, tensor<32x96xf32>, tensor<128xf32>, tensor<32x128xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<96xf32>, tensor<32x96xf32>, tensor<128xf32>, tensor<32x128xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<96xf32>, tensor<32x96xf32>, tensor<32xf32>, tensor<32xf32>, tensor<8x32xf32>, tensor<64x32xf32>, tensor<128xf32>, tensor<32x128xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<96xf32>, tensor<32x96xf32>, tensor<128xf32>, tensor<32x128xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<96xf32>, tensor<32x96xf32>, tensor<128xf32>, tensor<32x128xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<96xf32>, tensor<32x96xf32>, tensor<128xf32>, tensor<32x128xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<96xf32>, tensor<32x96xf32>, tensor<32xf32>, tensor<32xf32>, tensor<8x32xf32>, tensor<64x32xf32>, tensor<i32>, tensor<f32>
  }
  func.func private @_take(%arg0: tensor<64x32xf32>, %arg1: tensor<8x8xi32>) -> (tensor<8x8x32xf32>, tensor<8x8x1xi32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x8xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %c_0 = stablehlo.constant dense<64> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<8x8xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<8x8xi32>
    %4 = call @_where(%1, %3, %arg1) : (tensor<8x8xi1>, tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<8x8xi32>) -> tensor<8x8x1xi32>
    %c_1 = stablehlo.constant dense<63> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<8x8x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<8x8x1xi32>, tensor<8x8x1xi32>) -> tensor<8x8x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x1x1xi32>) -> tensor<8x8x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<8x8x1xi32>, tensor<8x8x1xi32>) -> tensor<8x8x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<8x8x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [2] : (tensor<8x8x1xi1>, tensor<i1>) -> tensor<8x8xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<64x32xf32>, tensor<8x8x1xi32>) -> tensor<8x8x32xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<8x8xi1>) -> tensor<8x8x32xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %16 = stablehlo.select %14, %13, %15 : tensor<8x8x32xi1>, tensor<8x8x32xf32>
    return %16, %5 : tensor<8x8x32xf32>, tensor<8x8x1xi32>
  }
  func.func private @_where(%arg0: tensor<8x8xi1>, %arg1: tensor<8x8xi32>, %arg2: tensor<8x8xi32>) -> tensor<8x8xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<8x8xi1>, tensor<8x8xi32>
    return %0 : tensor<8x8xi32>
  }
  func.func private @tril(%arg0: tensor<8x8xi1>) -> tensor<8x8xi1> {
    %0 = stablehlo.iota dim = 0 : tensor<8x8xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x8xi32>
    %2 = stablehlo.add %0, %1 : tensor<8x8xi32>
    %3 = stablehlo.iota dim = 1 : tensor<8x8xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %c_0 = stablehlo.constant dense<false> : tensor<i1>
    %5 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<8x8xi1>, tensor<8x8xi1>
    return %6 : tensor<8x8xi1>
  }
  func.func private @_where_0(%arg0: tensor<8x8xi1>, %arg1: tensor<8x2x8x8xf32>, %arg2: tensor<f32>) -> (tensor<8x2x8x8xf32>, tensor<8x2x8x8xi1>) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [2, 3] : (tensor<8x8xi1>) -> tensor<8x2x8x8xi1>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<8x2x8x8xf32>
    %2 = stablehlo.select %0, %arg1, %1 : tensor<8x2x8x8xi1>, tensor<8x2x8x8xf32>
    return %2, %0 : tensor<8x2x8x8xf32>, tensor<8x2x8x8xi1>
  }
  func.func private @log_softmax(%arg0: tensor<8x8x64xf32>) -> (tensor<8x8x64xf32>, tensor<8x8x64xf32>, tensor<8x8x1xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [2] : (tensor<8x8x64xf32>, tensor<f32>) -> tensor<8x8xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<8x8xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x64xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<8x8x64xf32>
    %6 = stablehlo.exponential %5 : tensor<8x8x64xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<8x8x64xf32>, tensor<f32>) -> tensor<8x8xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %9 = stablehlo.log %8 : tensor<8x8x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x64xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<8x8x64xf32>
    return %11, %6, %8 : tensor<8x8x64xf32>, tensor<8x8x64xf32>, tensor<8x8x1xf32>
  }
  func.func private @take_along_axis(%arg0: tensor<8x8x64xf32>, %arg1: tensor<8x8x1xi32>) -> (tensor<8x8x1xf32>, tensor<8x8x1x1xi32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x8x1xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<8x8x1xi32>, tensor<8x8x1xi32>) -> tensor<8x8x1xi1>
    %c_0 = stablehlo.constant dense<64> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<8x8x1xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<8x8x1xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<8x8x1xi1>, tensor<8x8x1xi32>
    %5 = stablehlo.reshape %4 : (tensor<8x8x1xi32>) -> tensor<8x8x1x1xi32>
    %c_1 = stablehlo.constant dense<63> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<8x8x1x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<8x8x1x1xi32>, tensor<8x8x1x1xi32>) -> tensor<8x8x1x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [3] : (tensor<1xi32>) -> tensor<1x1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<1x1x1x1xi32>) -> tensor<8x8x1x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<8x8x1x1xi32>, tensor<8x8x1x1xi32>) -> tensor<8x8x1x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<8x8x1x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [3] : (tensor<8x8x1x1xi1>, tensor<i1>) -> tensor<8x8x1xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [2], operand_batching_dims = [0, 1], start_indices_batching_dims = [0, 1], start_index_map = [2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<8x8x64xf32>, tensor<8x8x1x1xi32>) -> tensor<8x8x1xf32>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %15 = stablehlo.select %12, %13, %14 : tensor<8x8x1xi1>, tensor<8x8x1xf32>
    return %15, %5 : tensor<8x8x1xf32>, tensor<8x8x1x1xi32>
  }
  func.func private @take_along_axis_1(%arg0: tensor<8x8x1x1xi32>, %arg1: tensor<8x8x1xf32>) -> tensor<8x8x64xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %1 = "stablehlo.scatter"(%0, %arg0, %arg1) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [2], input_batching_dims = [0, 1], scatter_indices_batching_dims = [0, 1], scatter_dims_to_operand_dims = [2], index_vector_dim = 3>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %2 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<8x8x64xf32>, tensor<8x8x1x1xi32>, tensor<8x8x1xf32>) -> tensor<8x8x64xf32>
    return %1 : tensor<8x8x64xf32>
  }
  func.func private @log_softmax_2(%arg0: tensor<8x8x64xf32>, %arg1: tensor<8x8x1xf32>, %arg2: tensor<8x8x64xf32>) -> tensor<8x8x64xf32> {
    %0 = stablehlo.negate %arg2 : tensor<8x8x64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<8x8x64xf32>, tensor<f32>) -> tensor<8x8xf32>
    %2 = stablehlo.reshape %1 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<8x8x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x64xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<8x8x64xf32>
    %7 = stablehlo.add %arg2, %6 : tensor<8x8x64xf32>
    return %7 : tensor<8x8x64xf32>
  }
  func.func private @_where_3(%arg0: tensor<8x2x8x8xi1>, %arg1: tensor<8x2x8x8xf32>) -> tensor<8x2x8x8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x2x8x8xf32>
    %1 = stablehlo.select %arg0, %arg1, %0 : tensor<8x2x8x8xi1>, tensor<8x2x8x8xf32>
    return %1 : tensor<8x2x8x8xf32>
  }
  func.func private @_take_4(%arg0: tensor<8x8x1xi32>, %arg1: tensor<8x8x32xf32>) -> tensor<64x32xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %1 = "stablehlo.scatter"(%0, %arg0, %arg1) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %2 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<64x32xf32>, tensor<8x8x1xi32>, tensor<8x8x32xf32>) -> tensor<64x32xf32>
    return %1 : tensor<64x32xf32>
  }
}
