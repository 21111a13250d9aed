// zero-offload-state's offload-device-share=auto: the cost model picks which
// state stays on the device. Each moment's update can start once its
// gradient's all-reduce is done; the rank then starts its copies down on a
// copy stream of its own, and the host's queue runs the updates in that
// order, each pipelined in chunks as the runtime runs it: a chunk's loop
// (its bytes at host-gbps, and chunk-overhead-us each) once that chunk is
// down, its copies up (the link's other direction, link-gbps) while the
// next chunk's loop runs, the chunks as many as make the update shortest.
// The device meanwhile goes on with the next gradient. The model keeps on
// the device the updates that start last, as many as make the step
// shortest (the fewest among equals).
//
// A fast host whose chunks cost nothing hides both updates: nothing stays.
// RUN: zero-opt %s --split-input-file --zero-offload-state='offload=optimizer offload-device-share=auto host-gbps=20 chunk-overhead-us=0' 2>&1 | FileCheck %s --check-prefix=FAST
// With the default chunk overhead (180 us, an H200's), the second update,
// after the last matmul, costs the host more than it saves the device: it
// stays.
// RUN: zero-opt %s --split-input-file --zero-offload-state='offload=optimizer offload-device-share=auto host-gbps=20' 2>&1 | FileCheck %s --check-prefix=OVERHEAD
// A slower host hides the first behind the second gradient's matmul, but
// the second would take longer on the host than on the device: it stays.
// RUN: zero-opt %s --split-input-file --zero-offload-state='offload=optimizer offload-device-share=auto host-gbps=2 chunk-overhead-us=0' 2>&1 | FileCheck %s --check-prefix=MID
// A host slower still is hidden by neither: both stay.
// RUN: zero-opt %s --split-input-file --zero-offload-state='offload=optimizer offload-device-share=auto host-gbps=0.5 chunk-overhead-us=0' 2>&1 | FileCheck %s --check-prefix=SLOW
// A slow link: the first update's copies down and up (0.52 ms each way)
// would not fit behind the second matmul one after another (the model
// before chunks kept both), but in chunks the copies up go while the
// copies down still come: the first hides.
// RUN: zero-opt %s --split-input-file --zero-offload-state='offload=optimizer offload-device-share=auto host-gbps=20 link-gbps=1 chunk-overhead-us=0' 2>&1 | FileCheck %s --check-prefix=PIPELINED
// A slower link makes the copies cost what the slow host did: both stay.
// RUN: zero-opt %s --split-input-file --zero-offload-state='offload=optimizer offload-device-share=auto host-gbps=20 link-gbps=0.5 chunk-overhead-us=0' 2>&1 | FileCheck %s --check-prefix=SLOW
// RUN: zero-opt %s --split-input-file --zero-offload-state='offload=optimizer offload-device-share=auto host-gbps=20 link-gbps=0.5 chunk-overhead-us=0' 2>&1 | FileCheck %s --check-prefix=LINK

// FAST: remark: zero-offload-state: 2 of 4 state arguments of @two_layers in host memory; 0 kept on the device (offload-device-share=auto: 0.00% of the bytes; estimated step 1.533 ms, against 1.533 ms with all offloaded and 1.730 ms with none; the host's update 0.131 ms and the link's copies 0.042 ms a step at host-gbps=20.00 link-gbps=50.00)
// FAST-LABEL: func.func @two_layers(%arg0
// FAST-SAME: : tensor<256x256xf32> {zero.memory = "host"}, %arg1: tensor<256x256xf32>, %arg2: tensor<256x256xf32> {zero.memory = "host"}, %arg3: tensor<256x256xf32>,
// OVERHEAD: remark: zero-offload-state: 1 of 4 state arguments of @two_layers in host memory; 1 kept on the device (offload-device-share=auto: 50.00% of the bytes; estimated step 1.598 ms, against 1.734 ms with all offloaded and 1.730 ms with none
// OVERHEAD-LABEL: func.func @two_layers(%arg0
// OVERHEAD-SAME: : tensor<256x256xf32> {zero.memory = "host"}, %arg1: tensor<256x256xf32>, %arg2: tensor<256x256xf32>, %arg3: tensor<256x256xf32>,
// MID: remark: zero-offload-state: 1 of 4 state arguments of @two_layers in host memory; 1 kept on the device (offload-device-share=auto: 50.00% of the bytes; estimated step 1.598 ms, against 2.123 ms with all offloaded and 1.730 ms with none
// MID-LABEL: func.func @two_layers(%arg0
// MID-SAME: : tensor<256x256xf32> {zero.memory = "host"}, %arg1: tensor<256x256xf32>, %arg2: tensor<256x256xf32>, %arg3: tensor<256x256xf32>,
// PIPELINED: remark: zero-offload-state: 1 of 4 state arguments of @two_layers in host memory; 1 kept on the device (offload-device-share=auto: 50.00% of the bytes; estimated step 1.598 ms, against 1.994 ms with all offloaded and 1.730 ms with none; the host's update 0.131 ms and the link's copies 2.097 ms a step at host-gbps=20.00 link-gbps=1.00)
// PIPELINED-LABEL: func.func @two_layers(%arg0
// PIPELINED-SAME: : tensor<256x256xf32> {zero.memory = "host"}, %arg1: tensor<256x256xf32>, %arg2: tensor<256x256xf32>, %arg3: tensor<256x256xf32>,
// SLOW: remark: zero-offload-state: 0 of 4 state arguments of @two_layers in host memory; 2 kept on the device (offload-device-share=auto: 100.00% of the bytes; estimated step 1.730 ms, against {{.*}} ms with all offloaded and 1.730 ms with none
// LINK: remark: zero-offload-state: 0 of 4 state arguments of @two_layers in host memory; 2 kept on the device (offload-device-share=auto: 100.00% of the bytes; estimated step 1.730 ms, against 2.852 ms with all offloaded and 1.730 ms with none; the host's update 0.131 ms and the link's copies 4.194 ms a step at host-gbps=20.00 link-gbps=0.50)
// SLOW-LABEL: func.func @two_layers(%arg0
// SLOW-NOT: zero.memory
zero.mesh @dp(shape = [2])
func.func @two_layers(%m1: tensor<256x256xf32>, %w1: tensor<256x256xf32>,
                      %m2: tensor<256x256xf32>, %w2: tensor<256x256xf32>,
                      %x: tensor<256x256xf32>)
    -> (tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>,
        tensor<256x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %b = arith.constant dense<0.9> : tensor<256x256xf32>
  %lr = arith.constant dense<0.01> : tensor<256x256xf32>
  %e = tensor.empty() : tensor<256x256xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  // The first layer's gradient, reduced, and its update.
  %g1 = linalg.matmul ins(%x, %w1 : tensor<256x256xf32>, tensor<256x256xf32>) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r1 = zero.all_reduce %g1 on @dp reduce = mean : tensor<256x256xf32>
  %mb1 = arith.mulf %m1, %b : tensor<256x256xf32>
  %m1n = arith.addf %mb1, %r1 : tensor<256x256xf32>
  %s1 = arith.mulf %m1n, %lr : tensor<256x256xf32>
  %w1n = arith.subf %w1, %s1 : tensor<256x256xf32>
  // The second's, from the first layer's new weights.
  %g2 = linalg.matmul ins(%x, %w2 : tensor<256x256xf32>, tensor<256x256xf32>) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r2 = zero.all_reduce %g2 on @dp reduce = mean : tensor<256x256xf32>
  %mb2 = arith.mulf %m2, %b : tensor<256x256xf32>
  %m2n = arith.addf %mb2, %r2 : tensor<256x256xf32>
  %s2 = arith.mulf %m2n, %lr : tensor<256x256xf32>
  %w2n = arith.subf %w2, %s2 : tensor<256x256xf32>
  return %m1n, %w1n, %m2n, %w2n : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>
}

// -----

// The options' bad values are errors that name them.
// RUN: not zero-opt %s --zero-offload-state='offload=optimizer offload-device-share=1.5' 2>&1 | FileCheck %s --check-prefix=SHARE
// SHARE: for the --offload-device-share option: expected 'auto' or a share from 0 to 1, got '1.5'
// RUN: not zero-opt %s --zero-offload-state='offload=optimizer offload-device-share=some' 2>&1 | FileCheck %s --check-prefix=WORD
// WORD: for the --offload-device-share option: expected 'auto' or a share from 0 to 1, got 'some'
// RUN: not zero-opt %s --split-input-file --zero-offload-state='offload=optimizer host-gbps=0' 2>&1 | FileCheck %s --check-prefix=RATE
// RATE: error: zero-offload-state: host-gbps and link-gbps must be positive
// RUN: not zero-opt %s --split-input-file --zero-offload-state='offload=optimizer chunk-overhead-us=-1' 2>&1 | FileCheck %s --check-prefix=OVERHEAD-RATE
// OVERHEAD-RATE: error: zero-offload-state: chunk-overhead-us must not be negative
