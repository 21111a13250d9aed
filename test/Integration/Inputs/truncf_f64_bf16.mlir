// f64 -> bf16: a truncation with no runtime function on the host.
zero.mesh @dp(shape = [1])
func.func @step(%x: tensor<64xf64>) -> tensor<64xbf16> {
  %b = arith.truncf %x : tensor<64xf64> to tensor<64xbf16>
  return %b : tensor<64xbf16>
}
