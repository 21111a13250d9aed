//===- Uniformity.h - which values every rank holds alike -------*- C++ -*-===//
//
// A collective completes only when every rank of its group issues it, in the
// same order, with the same shape: a rank that skips one hangs the others, and
// one that issues another shape corrupts them. This analysis finds, for every
// value of a module, the mesh axes along which it can differ between ranks
// (its variance), and, for every op, whether the control that reaches it can
// differ. A collective is proven when neither its control nor its operands'
// shapes can differ: then every rank issues it alike.
//
// Where variance starts:
// - this rank's index (`zero.replica_index`, `shard.process_linear_index`,
//   `shard.process_multi_index`): along the axes it names;
// - this rank's part of a tensor (`zero.reduce_scatter`, `zero.shard_slice`,
//   `shard.reduce_scatter`, `shard.all_slice`, ...): along the group's axes;
// - an argument of a public function that is per-rank (see
//   `getArgumentVariance`).
// Where it ends: an all-reduce or an all-gather gives every member of its
// group the same value, so its result differs only along the axes its
// group does not span. Any other op's results differ where an operand does,
// and a value chosen under control that differs (an `scf.if`'s results, a
// loop's carried values when its trip count differs, a block argument after
// a branch) differs where that control does.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_UNIFORMITY_H
#define ZERO_ANALYSIS_UNIFORMITY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

#include <memory>
#include <string>

namespace zero {

/// The argument attribute that marks an argument as differing between ranks
/// (this rank's data), and the one that marks it as the same on every rank.
inline constexpr llvm::StringLiteral kPerRankAttrName = "zero.per_rank";
inline constexpr llvm::StringLiteral kReplicatedAttrName = "zero.replicated";

/// The module attribute zero-verify-collectives sets when it proved every
/// collective of the module issued alike on every rank; an artifact's
/// description carries it to the runtime.
inline constexpr llvm::StringLiteral kCollectivesUniformAttrName =
    "zero.collectives_uniform";

/// A set of mesh axes (one bit each, over every mesh of the module) along
/// which a value can differ; 0: the same on every rank.
using AxisSet = uint64_t;

/// Why a value differs between ranks: the value it comes from (null at a
/// source), and at a source, what the source is.
struct VarianceCause {
  AxisSet axes = 0;
  mlir::Value from;
  std::string source;
};

/// Control that differs between ranks: the op that decides whether (or how
/// often) an op runs, and the value it decides on.
struct VaryingControl {
  mlir::Operation *decider = nullptr;
  mlir::Value condition;
};

/// `loc` as file:line:column where it has one, else as MLIR prints it.
std::string formatLocation(mlir::Location loc);

/// Is `op` a collective whose every rank of the group must issue it alike:
/// zero's collectives on tensors and on buffers, and upstream shard's.
/// `zero.shard_slice` moves nothing and is not one.
bool isRankCollective(mlir::Operation *op);

class Uniformity {
public:
  /// Analyzes every function of `module`.
  explicit Uniformity(mlir::ModuleOp module);
  ~Uniformity();

  /// Why `value` can differ between ranks; null when it cannot.
  const VarianceCause *getCause(mlir::Value value) const;

  /// The control under which `op` runs, when it can differ between ranks.
  std::optional<VaryingControl> getVaryingControl(mlir::Operation *op) const;

  /// A value whose shape decides the shape of `value` and that can differ
  /// between ranks (a dynamic size), or null when the shape is the same on
  /// every rank.
  mlir::Value getVaryingShapeSource(mlir::Value value) const;

  /// The chain from `value` back to where its variance starts: each value
  /// and, last, the source. At most `limit` links.
  llvm::SmallVector<mlir::Value> getChain(mlir::Value value,
                                          unsigned limit = 16) const;

  /// What the last link of a chain is: "argument 0 of @step, ...".
  std::string describeSource(mlir::Value source) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace zero

#endif // ZERO_ANALYSIS_UNIFORMITY_H
