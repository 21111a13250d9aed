// zero-verify-collectives: every collective is issued alike on every rank,
// or the pass fails at it, naming the op that decides, the source of the
// variance and the ops between them (a note at each).
// RUN: not zero-opt %s --split-input-file --zero-verify-collectives 2>&1 >/dev/null | FileCheck %s
// RUN: not zero-opt %s --split-input-file --zero-verify-collectives 2>/dev/null | FileCheck %s --check-prefix=IR
// RUN: zero-opt %s --split-input-file --zero-verify-collectives=mode=warn 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN
// RUN: zero-opt %s --split-input-file --zero-verify-collectives=mode=warn 2>/dev/null | FileCheck %s --check-prefix=WARN-IR

// An SGD step: the gradient's all-reduce runs on every rank. Proven: the
// module says so.
// IR-LABEL: module attributes {zero.collectives_uniform}
// IR: func.func @sgd
// WARN-IR-LABEL: module attributes {zero.collectives_uniform}
// WARN-IR: func.func @sgd
zero.mesh @dp(shape = [4])
func.func @sgd(%w: tensor<16xf32>, %g: tensor<16xf32>) -> tensor<16xf32> {
  %lr = arith.constant dense<0.1> : tensor<16xf32>
  %r = zero.all_reduce %g on @dp reduce = mean : tensor<16xf32>
  %d = arith.mulf %r, %lr : tensor<16xf32>
  %w2 = arith.subf %w, %d : tensor<16xf32>
  return %w2 : tensor<16xf32>
}

// -----

// Skipping a step when this rank's local gradient has an inf, before the
// all-reduce: the gradient argument reaches the all-reduce and is not state,
// so it differs between ranks with no attribute, and so does the condition.
// CHECK: error: 'zero.all_reduce' op is not issued alike on every rank: it runs only where the scf.if at {{.*}}verify-collectives.mlir:[[IF:[0-9]+]]:{{[0-9]+}} takes its branch, and that condition differs between ranks: argument 1 of @skip_on_inf, which differs between ranks: it is what the zero.all_reduce at {{.*}} reduces (a local gradient); mark it zero.replicated if every rank holds it alike; then linalg.generic -> tensor.extract -> arith.cmpf
// CHECK: note: differs between ranks: arith.cmpf
// CHECK: note: which comes from: tensor.extract
// CHECK: note: which comes from: linalg.generic
// CHECK: note: where it starts: argument 1 of @skip_on_inf
// WARN: warning: 'zero.all_reduce' op is not issued alike on every rank: it runs only where the scf.if {{.*}} (the runtime keeps checking that ranks agree)
// WARN-IR-LABEL: module {
// WARN-IR: func.func @skip_on_inf
zero.mesh @dp(shape = [4])
func.func @skip_on_inf(%w: tensor<16xf32>, %g: tensor<16xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %filled = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %bad = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                         iterator_types = ["reduction"]}
      ins(%g : tensor<16xf32>) outs(%filled : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %inf = math.isinf %x : f32
    %one = arith.uitofp %inf : i1 to f32
    %s = arith.addf %acc, %one : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %count = tensor.extract %bad[] : tensor<f32>
  %finite = arith.cmpf oeq, %count, %zero : f32
  %w2 = scf.if %finite -> tensor<16xf32> {
    %r = zero.all_reduce %g on @dp reduce = mean : tensor<16xf32>
    %w3 = arith.subf %w, %r : tensor<16xf32>
    scf.yield %w3 : tensor<16xf32>
  } else {
    scf.yield %w : tensor<16xf32>
  }
  return %w2 : tensor<16xf32>
}

// -----

// The same check after the all-reduce is the same on every rank: the reduced
// gradient is.
// IR-LABEL: module attributes {zero.collectives_uniform}
// IR: func.func @skip_after_reduce
zero.mesh @dp(shape = [4])
func.func @skip_after_reduce(%w: tensor<16xf32>, %g: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %r = zero.all_reduce %g on @dp reduce = mean : tensor<16xf32>
  %x = tensor.extract %r[%c0] : tensor<16xf32>
  %inf = math.isinf %x : f32
  %w2 = scf.if %inf -> tensor<16xf32> {
    scf.yield %w : tensor<16xf32>
  } else {
    %n = zero.all_reduce %w on @dp reduce = max : tensor<16xf32>
    %w3 = arith.subf %n, %r : tensor<16xf32>
    scf.yield %w3 : tensor<16xf32>
  }
  return %w2 : tensor<16xf32>
}

// -----

// A forward and backward: the local gradient is computed from the weight
// and this rank's data. The data reaches the all-reduce and is not state:
// it differs. The weight is state (its next value is returned): it does
// not, so a condition on it is the same on every rank.
// CHECK: error: 'zero.all_reduce' op is not issued alike on every rank: it runs only where the scf.if {{.*}}: argument 1 of @data_decides, which differs between ranks: it flows into the zero.all_reduce at {{.*}} (a local gradient, or this rank's data) and is not state @data_decides returns; mark it zero.replicated if every rank holds it alike; then tensor.extract -> arith.cmpf
// CHECK-NOT: error
zero.mesh @dp(shape = [4])
func.func @data_decides(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %g_local = arith.mulf %w, %x : tensor<4xf32>
  %x0 = tensor.extract %x[%c0] : tensor<4xf32>
  %positive = arith.cmpf ogt, %x0, %zero : f32
  %w2 = scf.if %positive -> tensor<4xf32> {
    %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<4xf32>
    %w3 = arith.subf %w, %g : tensor<4xf32>
    scf.yield %w3 : tensor<4xf32>
  } else {
    scf.yield %w : tensor<4xf32>
  }
  %w0 = tensor.extract %w[%c0] : tensor<4xf32>
  %large = arith.cmpf ogt, %w0, %zero : f32
  %w4 = scf.if %large -> tensor<4xf32> {
    %n = zero.all_reduce %w2 on @dp reduce = max : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  } else {
    scf.yield %w2 : tensor<4xf32>
  }
  return %w4 : tensor<4xf32>
}

// -----

// Only rank 0 all-reduces.
// CHECK: error: 'zero.all_reduce' op is not issued alike on every rank: it runs only where the scf.if {{.*}} takes its branch, and that condition differs between ranks: the result of the zero.replica_index at {{.*}}, this rank's index; then arith.cmpi
zero.mesh @dp(shape = [4])
func.func @rank_zero_only(%g: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %r = zero.replica_index on @dp : index
  %first = arith.cmpi eq, %r, %c0 : index
  %out = scf.if %first -> tensor<16xf32> {
    %s = zero.all_reduce %g on @dp reduce = sum : tensor<16xf32>
    scf.yield %s : tensor<16xf32>
  } else {
    scf.yield %g : tensor<16xf32>
  }
  return %out : tensor<16xf32>
}

// -----

// A loop whose trip count is this rank's index.
// CHECK: error: 'zero.all_gather' op is not issued alike on every rank: it runs in the scf.for at {{.*}}, whose trip count differs between ranks: the result of the zero.replica_index
zero.mesh @dp(shape = [2])
func.func @rank_many_times(%x: tensor<4xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = zero.replica_index on @dp : index
  %init = tensor.empty() : tensor<8xf32>
  %out = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> tensor<8xf32> {
    %g = zero.all_gather %x on @dp : tensor<4xf32> -> tensor<8xf32>
    scf.yield %g : tensor<8xf32>
  }
  return %out : tensor<8xf32>
}

// -----

// A while loop that goes on while this rank's shard of the gradient says so.
// CHECK: error: 'zero.all_reduce' op is not issued alike on every rank: it runs in the scf.while at {{.*}}, whose condition to go on differs between ranks: argument 1 of @while_shard, which differs between ranks: {{.*}}; then zero.reduce_scatter -> tensor.extract -> arith.cmpf
zero.mesh @dp(shape = [2])
func.func @while_shard(%w: tensor<f32>, %g: tensor<8xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %s = zero.reduce_scatter %g on @dp reduce = sum : tensor<8xf32> -> tensor<4xf32>
  %x = tensor.extract %s[%c0] : tensor<4xf32>
  %out = scf.while (%v = %w) : (tensor<f32>) -> tensor<f32> {
    %go = arith.cmpf ogt, %x, %zero : f32
    scf.condition(%go) %v : tensor<f32>
  } do {
  ^bb0(%v2: tensor<f32>):
    %r = zero.all_reduce %v2 on @dp reduce = sum : tensor<f32>
    scf.yield %r : tensor<f32>
  }
  return %out : tensor<f32>
}

// -----

// A branch of the CFG: the all-reduce's block runs under it, its join does
// not.
// CHECK: error: 'zero.all_reduce' op is not issued alike on every rank: it runs only where the cf.cond_br at {{.*}} takes its branch
// CHECK-NOT: error: 'zero.all_gather'
zero.mesh @dp(shape = [2])
func.func @cfg(%w: tensor<4xf32>) -> tensor<8xf32> {
  %c1 = arith.constant 1 : index
  %r = zero.replica_index on @dp : index
  %odd = arith.cmpi eq, %r, %c1 : index
  cf.cond_br %odd, ^reduce, ^join(%w : tensor<4xf32>)
^reduce:
  %s = zero.all_reduce %w on @dp reduce = sum : tensor<4xf32>
  cf.br ^join(%s : tensor<4xf32>)
^join(%v: tensor<4xf32>):
  %g = zero.all_gather %w on @dp : tensor<4xf32> -> tensor<8xf32>
  return %g : tensor<8xf32>
}

// -----

// The join's argument is chosen by the branch: a collective whose control
// depends on it is not proven.
// CHECK: error: 'zero.all_gather' op is not issued alike on every rank: it runs only where the scf.if {{.*}} takes its branch, and that condition differs between ranks: the result of the zero.replica_index {{.*}}; then arith.cmpi -> argument 0 of a block of @cfg_join -> arith.cmpi
zero.mesh @dp(shape = [2])
func.func @cfg_join(%w: tensor<4xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = zero.replica_index on @dp : index
  %odd = arith.cmpi eq, %r, %c1 : index
  cf.cond_br %odd, ^a, ^join(%c0 : index)
^a:
  cf.br ^join(%c1 : index)
^join(%k: index):
  %big = arith.cmpi eq, %k, %c1 : index
  %out = scf.if %big -> tensor<8xf32> {
    %g = zero.all_gather %w on @dp : tensor<4xf32> -> tensor<8xf32>
    scf.yield %g : tensor<8xf32>
  } else {
    %e = tensor.empty() : tensor<8xf32>
    scf.yield %e : tensor<8xf32>
  }
  return %out : tensor<8xf32>
}

// -----

// A shape that differs: the tensor's size is this rank's index.
// CHECK: error: 'zero.all_reduce' op is not issued alike on every rank: the shape of operand 'tensor<?xf32>' differs between ranks: the result of the zero.replica_index
zero.mesh @dp(shape = [2])
func.func @dynamic_size() -> tensor<?xf32> {
  %n = zero.replica_index on @dp : index
  %e = tensor.empty(%n) : tensor<?xf32>
  %s = zero.all_reduce %e on @dp reduce = sum : tensor<?xf32>
  return %s : tensor<?xf32>
}

// -----

// A dynamic size of an argument is the same on every rank (equal batches,
// equal gradients) unless the argument is marked per-rank.
// CHECK: error: 'zero.all_reduce' op is not issued alike on every rank: the shape of operand 'tensor<?xf32>' differs between ranks: argument 1 of @dynamic_per_rank, marked zero.per_rank{{$}}
// CHECK-NOT: error
zero.mesh @dp(shape = [2])
func.func @dynamic_per_rank(%g: tensor<?xf32>, %batch: tensor<?xf32> {zero.per_rank})
    -> (tensor<?xf32>, tensor<?xf32>) {
  %a = zero.all_reduce %g on @dp reduce = sum : tensor<?xf32>
  %b = zero.all_reduce %batch on @dp reduce = sum : tensor<?xf32>
  return %a, %b : tensor<?xf32>, tensor<?xf32>
}

// -----

// Marked arguments: a per-rank flag differs, a replicated one does not.
// CHECK: error: 'zero.all_reduce' op is not issued alike on every rank: it runs only where the scf.if {{.*}}: argument 0 of @marked, marked zero.per_rank{{$}}
// CHECK-NOT: error
zero.mesh @dp(shape = [2])
func.func @marked(%mine: i1 {zero.per_rank}, %all: i1 {zero.replicated},
                  %g: tensor<4xf32>) -> tensor<4xf32> {
  %a = scf.if %mine -> tensor<4xf32> {
    %r = zero.all_reduce %g on @dp reduce = sum : tensor<4xf32>
    scf.yield %r : tensor<4xf32>
  } else {
    scf.yield %g : tensor<4xf32>
  }
  %b = scf.if %all -> tensor<4xf32> {
    %r = zero.all_reduce %a on @dp reduce = sum : tensor<4xf32>
    scf.yield %r : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  return %b : tensor<4xf32>
}

// -----

// A 2x4 mesh: a shard along axis 1 differs along axis 1 only; reduced along
// axis 0 it still does; gathered along axis 1 it is the same everywhere.
// IR-LABEL: module attributes {zero.collectives_uniform}
// IR: func.func @two_axes
// IR-NOT: func.func
zero.mesh @hybrid(shape = [2, 4])
func.func @two_axes(%w: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %s = zero.reduce_scatter %g on @hybrid axes = [1] reduce = sum : tensor<8xf32> -> tensor<2xf32>
  %a = zero.all_reduce %s on @hybrid axes = [0] reduce = sum : tensor<2xf32>
  %full = zero.all_gather %a on @hybrid axes = [1] : tensor<2xf32> -> tensor<8xf32>
  %x = tensor.extract %full[%c0] : tensor<8xf32>
  %inf = math.isinf %x : f32
  %out = scf.if %inf -> tensor<8xf32> {
    scf.yield %w : tensor<8xf32>
  } else {
    %n = zero.all_reduce %w on @hybrid reduce = max : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %out : tensor<8xf32>
}

// -----

// The same without the gather along axis 1: the value still differs there.
// CHECK: error: 'zero.all_reduce' op is not issued alike on every rank: it runs only where the scf.if {{.*}}: argument 1 of @hybrid_partial, which differs between ranks: {{.*}}; then zero.reduce_scatter -> zero.all_reduce -> tensor.extract -> math.isinf
zero.mesh @hybrid(shape = [2, 4])
func.func @hybrid_partial(%w: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %s = zero.reduce_scatter %g on @hybrid axes = [1] reduce = sum : tensor<8xf32> -> tensor<2xf32>
  %a = zero.all_reduce %s on @hybrid axes = [0] reduce = sum : tensor<2xf32>
  %x = tensor.extract %a[%c0] : tensor<2xf32>
  %inf = math.isinf %x : f32
  %out = scf.if %inf -> tensor<8xf32> {
    scf.yield %w : tensor<8xf32>
  } else {
    %n = zero.all_reduce %w on @hybrid reduce = max : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %out : tensor<8xf32>
}

// -----

// A function runs under the control of its calls.
// CHECK: error: 'zero.all_reduce' op is not issued alike on every rank: it runs only where the scf.if {{.*}} takes its branch, and that condition differs between ranks: the result of the zero.replica_index
zero.mesh @dp(shape = [2])
func.func private @reduce(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = zero.all_reduce %x on @dp reduce = sum : tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @caller(%g: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %i = zero.replica_index on @dp : index
  %first = arith.cmpi eq, %i, %c0 : index
  %out = scf.if %first -> tensor<4xf32> {
    %r = func.call @reduce(%g) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %r : tensor<4xf32>
  } else {
    scf.yield %g : tensor<4xf32>
  }
  return %out : tensor<4xf32>
}

// -----

// Upstream's shard dialect: the process index differs.
// CHECK: error: 'shard.all_reduce' op is not issued alike on every rank: it runs only where the scf.if {{.*}}: the result of the shard.process_linear_index at {{.*}}, this rank's index
shard.grid @grid(shape = 4)
func.func @shard_program(%g: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %i = shard.process_linear_index on @grid : index
  %first = arith.cmpi eq, %i, %c0 : index
  %out = scf.if %first -> tensor<4xf32> {
    %r = shard.all_reduce %g on @grid grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
    scf.yield %r : tensor<4xf32>
  } else {
    scf.yield %g : tensor<4xf32>
  }
  return %out : tensor<4xf32>
}

// -----

// Memory: a value that differs, written to a buffer, makes what is loaded
// from it differ.
// CHECK: error: 'zero.all_reduce_buffer' op is not issued alike on every rank: it runs only where the scf.if {{.*}}: the result of the zero.replica_index {{.*}}; then memref.load -> arith.cmpi
zero.mesh @dp(shape = [2])
func.func @through_memory(%g: memref<4xf32>, %out: memref<4xf32>, %flag: memref<index>) {
  %c0 = arith.constant 0 : index
  %i = zero.replica_index on @dp : index
  memref.store %i, %flag[] : memref<index>
  %v = memref.load %flag[] : memref<index>
  %first = arith.cmpi eq, %v, %c0 : index
  scf.if %first {
    zero.all_reduce_buffer %g, %out on @dp reduce = sum : memref<4xf32>, memref<4xf32>
  }
  return
}
