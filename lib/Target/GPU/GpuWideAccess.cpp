//===- GpuWideAccess.cpp - 16-byte loads and stores in elementwise loops --===//
//
// A GPU moves memory fastest in 16-byte accesses per thread. A 1-D
// elementwise loop (an optimizer's update: element i of every buffer in,
// element i of every buffer out) becomes a loop over groups of V elements
// whose body loads V elements of each buffer at once (vector.load), runs the
// scalar body V times on the lanes, and stores V results at once; V = 16
// bytes over the widest element. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "zero/Target/GPU/Passes.h"

#include <numeric>

namespace zero {
#define GEN_PASS_DEF_ZEROGPUWIDEACCESS
#include "zero/Target/GPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

constexpr int64_t kAccessBytes = 16;

/// What a loop's body reads and writes at its own index.
struct Plan {
  int64_t lanes = 0;
  int64_t trips = 0;
  /// The buffers accessed, each once.
  SmallVector<Value> buffers;
};

/// Why `loop` cannot get wide accesses ("" when it can), filling `plan`.
std::string planWideAccess(scf::ParallelOp loop, Plan &plan) {
  if (loop.getNumLoops() != 1 || loop.getNumResults() != 0)
    return "not a 1-D loop without results";
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[0]);
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[0]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[0]);
  if (!lb || !ub || !step || *lb != 0 || *step != 1)
    return "bounds not static from 0 by 1";
  Value iv = loop.getInductionVars()[0];
  int64_t widest = 0;
  llvm::SmallPtrSet<Value, 8> stored;
  for (Operation &op : loop.getBody()->without_terminator()) {
    Value buffer;
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      buffer = load.getMemRef();
      indices = load.getIndices();
      if (stored.contains(buffer))
        return "a load follows a store to the same buffer";
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      buffer = store.getMemRef();
      indices = store.getIndices();
      if (!stored.insert(buffer).second)
        return "a buffer is stored twice";
    } else if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op)) {
      return "the body has control flow or other memory accesses";
    } else {
      continue;
    }
    auto type = cast<MemRefType>(buffer.getType());
    if (indices.size() != 1 || indices[0] != iv)
      return "an access is not at the loop's own index";
    auto [strides, offset] = type.getStridesAndOffset();
    if (strides[0] != 1)
      return "an accessed buffer is not contiguous";
    // Whole bytes only (an i1 mask is not).
    if (!type.getElementType().isIntOrFloat() ||
        type.getElementTypeBitWidth() % 8 != 0)
      return "an element is not a whole number of bytes";
    widest = std::max<int64_t>(widest, type.getElementTypeBitWidth() / 8);
    if (!llvm::is_contained(plan.buffers, buffer))
      plan.buffers.push_back(buffer);
  }
  if (plan.buffers.empty())
    return "no buffer access";
  plan.lanes = kAccessBytes / widest;
  if (plan.lanes < 2 || *ub % plan.lanes != 0)
    return "the trip count is not a multiple of the lanes";
  plan.trips = *ub;
  return "";
}

/// A number that divides `value` (an index), as far as its definition
/// shows: constants, products and sums of such.
int64_t knownDivisor(Value value) {
  if (std::optional<int64_t> c = getConstantIntValue(value))
    return *c == 0 ? int64_t(1) << 40 : std::abs(*c);
  if (auto mul = value.getDefiningOp<arith::MulIOp>())
    return knownDivisor(mul.getLhs()) * knownDivisor(mul.getRhs());
  if (auto add = value.getDefiningOp<arith::AddIOp>())
    return std::gcd(knownDivisor(add.getLhs()), knownDivisor(add.getRhs()));
  return 1;
}

/// A number of elements that divides the offset of `buffer`'s first
/// element from its allocation's start, or 0 when the allocation's own
/// alignment is unknown. Allocations and the function's arguments start on
/// 16-byte boundaries at least: the GPU runtime's allocations are 256-byte
/// aligned, malloc's 16, and a GPU artifact's caller must pass 16-byte
/// aligned buffers (zero-launch does).
int64_t offsetDivisor(Value buffer) {
  int64_t divisor = int64_t(1) << 40;
  while (true) {
    if (auto subview = buffer.getDefiningOp<memref::SubViewOp>()) {
      // The view's first element: the source's, plus offset_d * stride_d.
      auto [strides, offset] =
          cast<MemRefType>(subview.getSource().getType()).getStridesAndOffset();
      for (auto [d, ofr] : llvm::enumerate(subview.getMixedOffsets())) {
        int64_t term;
        if (auto value = dyn_cast<Value>(ofr))
          term = knownDivisor(value);
        else
          term = std::abs(getConstantIntValue(ofr).value_or(1));
        term = term == 0 ? int64_t(1) << 40 : term;
        if (ShapedType::isDynamic(strides[d]))
          return 1;
        divisor = std::gcd(divisor, term * std::abs(strides[d]));
      }
      buffer = subview.getSource();
      continue;
    }
    if (isa_and_nonnull<memref::CollapseShapeOp, memref::ExpandShapeOp,
                        memref::CastOp>(buffer.getDefiningOp())) {
      buffer = buffer.getDefiningOp()->getOperand(0);
      continue;
    }
    break;
  }
  auto type = cast<MemRefType>(buffer.getType());
  auto [strides, offset] = type.getStridesAndOffset();
  if (ShapedType::isDynamic(offset))
    return 0;
  if (offset != 0)
    divisor = std::gcd(divisor, std::abs(offset));
  if (auto alloc = buffer.getDefiningOp<memref::AllocOp>())
    return !alloc.getAlignment() || *alloc.getAlignment() >= kAccessBytes
               ? divisor
               : 0;
  if (auto argument = dyn_cast<BlockArgument>(buffer))
    if (isa<FunctionOpInterface>(argument.getOwner()->getParentOp()))
      return divisor;
  return 0;
}

/// Whether `buffer`'s first element lies on a boundary of `lanes` elements.
bool isAligned(Value buffer, int64_t lanes) {
  int64_t divisor = offsetDivisor(buffer);
  return divisor != 0 && divisor % lanes == 0;
}

/// The wide loop: groups of `plan.lanes` elements.
void buildWideLoop(OpBuilder &b, scf::ParallelOp loop, const Plan &plan) {
  Location loc = loop.getLoc();
  int64_t lanes = plan.lanes;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value groups = arith::ConstantIndexOp::create(b, loc, plan.trips / lanes);
  Block *body = loop.getBody();
  Value iv = loop.getInductionVars()[0];
  scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{groups}, ValueRange{one},
      [&](OpBuilder &nb, Location, ValueRange ivs) {
        Value first = arith::MulIOp::create(
            nb, loc, ivs[0], arith::ConstantIndexOp::create(nb, loc, lanes));
        // Each buffer's lanes, loaded once before any lane's body runs.
        llvm::DenseMap<Value, Value> wideLoads;
        for (Operation &op : body->without_terminator())
          if (auto load = dyn_cast<memref::LoadOp>(op);
              load && !wideLoads.count(load.getMemRef())) {
            auto type = VectorType::get({lanes}, load.getType());
            int64_t bytes = load.getType().getIntOrFloatBitWidth() / 8;
            wideLoads[load.getMemRef()] = vector::LoadOp::create(
                nb, loc, type, load.getMemRef(), ValueRange{first},
                /*nontemporal=*/false, llvm::MaybeAlign(lanes * bytes));
          }
        // The scalar body once per lane; each store's values gathered.
        llvm::MapVector<memref::StoreOp, SmallVector<Value>> laneValues;
        for (int64_t lane = 0; lane < lanes; ++lane) {
          IRMapping mapping;
          mapping.map(iv, arith::AddIOp::create(
                              nb, loc, first,
                              arith::ConstantIndexOp::create(nb, loc, lane)));
          for (Operation &op : body->without_terminator()) {
            if (auto load = dyn_cast<memref::LoadOp>(op)) {
              mapping.map(load.getResult(),
                          vector::ExtractOp::create(
                              nb, loc, wideLoads[load.getMemRef()], lane));
            } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
              laneValues[store].push_back(
                  mapping.lookupOrDefault(store.getValueToStore()));
            } else {
              nb.clone(op, mapping);
            }
          }
        }
        for (auto &[store, values] : laneValues) {
          auto type = VectorType::get({lanes}, values.front().getType());
          int64_t bytes = type.getElementTypeBitWidth() / 8;
          Value wide = vector::FromElementsOp::create(nb, loc, type, values);
          vector::StoreOp::create(nb, loc, wide, store.getMemRef(),
                                  ValueRange{first}, /*nontemporal=*/false,
                                  llvm::MaybeAlign(lanes * bytes));
        }
      });
}

struct ZeroGpuWideAccessPass
    : public zero::impl::ZeroGpuWideAccessBase<ZeroGpuWideAccessPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation()->walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    for (scf::ParallelOp loop : loops) {
      Plan plan;
      if (!planWideAccess(loop, plan).empty())
        continue;
      if (!llvm::all_of(plan.buffers, [&](Value buffer) {
            return isAligned(buffer, plan.lanes);
          }))
        continue;
      OpBuilder b(loop);
      buildWideLoop(b, loop, plan);
      loop.erase();
    }
  }
};

} // namespace
