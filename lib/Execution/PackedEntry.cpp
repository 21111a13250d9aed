//===- PackedEntry.cpp - a program's entry as its packed export -----------===//

#include "zero/Execution/PackedEntry.h"
#include "zero/runtime/Artifact.h"
#include "llvm/Analysis/InstructionSimplify.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace zero;
using llvm::ArrayRef;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

/// The address of the field of a `type` at `address` that `path` indexes.
static llvm::Value *fieldAddress(llvm::IRBuilder<> &b, llvm::Type *type,
                                 llvm::Value *address,
                                 ArrayRef<unsigned> path) {
  if (path.empty())
    return address;
  llvm::SmallVector<llvm::Value *> indices = {b.getInt32(0)};
  for (unsigned i : path)
    indices.push_back(b.getInt32(i));
  return b.CreateInBoundsGEP(type, address, indices);
}

/// Stores `value`, the field of a `type` at `address` that `path` indexes:
/// one store per value an insertvalue chain puts in, so the aggregate is
/// never built. The chain's start (unless poison) is stored first and its
/// insertions after it in their order, so a later one wins as it does in
/// the chain.
static void storeAggregate(llvm::IRBuilder<> &b, llvm::Value *value,
                           llvm::Type *type, llvm::Value *address,
                           llvm::SmallVectorImpl<unsigned> &path) {
  llvm::SmallVector<llvm::InsertValueInst *> chain;
  while (auto *insert = dyn_cast<llvm::InsertValueInst>(value)) {
    chain.push_back(insert);
    value = insert->getAggregateOperand();
  }
  auto *constant = dyn_cast<llvm::Constant>(value);
  if (constant && value->getType()->isAggregateType() &&
      !isa<llvm::PoisonValue, llvm::UndefValue>(value)) {
    // A constant start ({ i64 2, ptr poison }) field by field too: code
    // generation at optnone has no fast path for an aggregate store.
    unsigned count = isa<llvm::StructType>(value->getType())
                         ? value->getType()->getStructNumElements()
                         : value->getType()->getArrayNumElements();
    for (unsigned i = 0; i < count; ++i) {
      path.push_back(i);
      storeAggregate(b, constant->getAggregateElement(i), type, address, path);
      path.pop_back();
    }
  } else if (!isa<llvm::PoisonValue, llvm::UndefValue>(value)) {
    b.CreateStore(value, fieldAddress(b, type, address, path));
  }
  for (llvm::InsertValueInst *insert : llvm::reverse(chain)) {
    size_t depth = path.size();
    path.append(insert->idx_begin(), insert->idx_end());
    storeAggregate(b, insert->getInsertedValueOperand(), type, address, path);
    path.resize(depth);
  }
}

/// Replaces each extractvalue of a field an insertvalue chain put in by
/// that field, then erases what is left unused.
static void foldDescriptorFields(llvm::Function &function) {
  llvm::SimplifyQuery query(function.getDataLayout());
  llvm::SmallVector<llvm::Instruction *> dead;
  for (llvm::Instruction &inst : llvm::instructions(function)) {
    auto *extract = dyn_cast<llvm::ExtractValueInst>(&inst);
    if (!extract)
      continue;
    if (llvm::Value *field = llvm::simplifyInstruction(extract, query)) {
      extract->replaceAllUsesWith(field);
      dead.push_back(extract);
    }
  }
  for (llvm::Instruction *inst : dead)
    llvm::RecursivelyDeleteTriviallyDeadInstructions(inst);
}

/// `entry` rewritten as `void zero_artifact_entry(void **args)`, the
/// convention of MLIR's ExecutionEngine::invokePacked: argument i is read
/// from where args[i] points, and the results are written, laid out as
/// `entry`'s return type, where the last pointer points.
///
/// The body moves into the new function rather than being called from it,
/// because a step's signature is what makes instruction selection grow
/// faster than the program: a step with 1,200 memref results returned one
/// aggregate, and each insertvalue became a node with an operand per scalar
/// of the whole aggregate (8,400); its 9,600 scalar arguments were loaded
/// from the stack at the top and held live through the whole function.
/// Here each argument is loaded just before its first use in the entry
/// block, and each result is stored as its insertvalue puts it in.
llvm::Function &zero::exec::makePackedEntry(llvm::Function &function) {
  // Another function of the program may call the entry: it keeps it.
  llvm::ValueToValueMapTy map;
  llvm::Function &entry =
      function.use_empty() ? function : *llvm::CloneFunction(&function, map);
  llvm::LLVMContext &ctx = entry.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *ptr = b.getPtrTy();
  auto *packed = llvm::Function::Create(
      llvm::FunctionType::get(b.getVoidTy(), {ptr}, false),
      llvm::GlobalValue::ExternalLinkage, rt::kArtifactEntrySymbol,
      entry.getParent());
  packed->setAttributes(llvm::AttributeList::get(
      ctx, entry.getAttributes().getFnAttrs(), llvm::AttributeSet(), {}));
  packed->removeFnAttr(llvm::Attribute::NoInline);
  packed->splice(packed->begin(), &entry);
  llvm::Value *args = packed->getArg(0);
  auto slot = [&](unsigned i) {
    llvm::Value *at = b.CreateConstInBoundsGEP1_64(ptr, args, i);
    return b.CreateLoad(ptr, at);
  };

  // Results first: the descriptors they return are built at the top from
  // arguments, and once stored field by field they are no longer a use.
  llvm::Type *resultType = entry.getReturnType();
  for (llvm::BasicBlock &block : *packed) {
    auto *ret = dyn_cast<llvm::ReturnInst>(block.getTerminator());
    if (!ret)
      continue;
    b.SetInsertPoint(ret);
    if (!resultType->isVoidTy()) {
      llvm::SmallVector<unsigned> path;
      storeAggregate(b, ret->getReturnValue(), resultType,
                     slot(entry.arg_size()), path);
    }
    b.CreateRetVoid();
    llvm::Value *value = ret->getReturnValue();
    ret->eraseFromParent();
    if (auto *inst = dyn_cast_or_null<llvm::Instruction>(value))
      llvm::RecursivelyDeleteTriviallyDeadInstructions(inst);
  }
  // The lowering builds every memref argument's descriptor at the top and
  // takes fields out where they are used: folded, an argument's first use
  // is where it is needed.
  foldDescriptorFields(*packed);

  // Each argument, loaded just before its first use in the block that
  // dominates all its uses (or before that block's end). Every place is
  // chosen before any load goes in, which would renumber the block.
  llvm::DominatorTree dominators(*packed);
  llvm::DenseMap<llvm::Instruction *, unsigned> order;
  for (llvm::Instruction &inst : llvm::instructions(*packed))
    order[&inst] = order.size();
  llvm::SmallVector<std::pair<llvm::Argument *, llvm::Instruction *>> places;
  for (llvm::Argument &arg : entry.args()) {
    if (arg.use_empty())
      continue;
    llvm::BasicBlock *block = nullptr;
    for (llvm::Use &use : arg.uses()) {
      auto *user = cast<llvm::Instruction>(use.getUser());
      llvm::BasicBlock *at = user->getParent();
      if (auto *phi = dyn_cast<llvm::PHINode>(user))
        at = phi->getIncomingBlock(use);
      block = block ? dominators.findNearestCommonDominator(block, at) : at;
    }
    llvm::Instruction *before = block->getTerminator();
    for (llvm::User *user : arg.users()) {
      auto *inst = cast<llvm::Instruction>(user);
      if (inst->getParent() == block && !isa<llvm::PHINode>(inst) &&
          order[inst] < order[before])
        before = inst;
    }
    places.push_back({&arg, before});
  }
  for (auto [arg, before] : places) {
    b.SetInsertPoint(before);
    arg->replaceAllUsesWith(
        b.CreateLoad(arg->getType(), slot(arg->getArgNo()), arg->getName()));
  }
  entry.eraseFromParent();
  return *packed;
}

/// Whether every loop of `function` calls a function: the work of such a
/// function is in its callees (zero-outline-loop-nests' nests, the
/// runtime), and it is a schedule of calls.
static bool isScheduleOfCalls(llvm::Function &function) {
  llvm::DominatorTree dominators(function);
  llvm::LoopInfo loops(dominators);
  return llvm::all_of(loops.getLoopsInPreorder(), [](llvm::Loop *loop) {
    return llvm::any_of(loop->blocks(), [](llvm::BasicBlock *block) {
      return llvm::any_of(*block, [](llvm::Instruction &inst) {
        auto *call = dyn_cast<llvm::CallBase>(&inst);
        return call && !isa<llvm::IntrinsicInst>(call);
      });
    });
  });
}

/// Replaces each store of an aggregate that an insertvalue chain builds or
/// a constant is (a memref descriptor put on the stack for a runtime call)
/// by a store per field, then erases the chain if nothing else uses it.
static void storeAggregatesByField(llvm::Function &function) {
  llvm::SmallVector<llvm::StoreInst *> stores;
  for (llvm::Instruction &inst : llvm::instructions(function))
    if (auto *store = dyn_cast<llvm::StoreInst>(&inst))
      if (store->getValueOperand()->getType()->isAggregateType() &&
          isa<llvm::InsertValueInst, llvm::Constant>(store->getValueOperand()))
        stores.push_back(store);
  llvm::IRBuilder<> b(function.getContext());
  for (llvm::StoreInst *store : stores) {
    b.SetInsertPoint(store);
    llvm::Value *value = store->getValueOperand();
    llvm::SmallVector<unsigned> path;
    storeAggregate(b, value, value->getType(), store->getPointerOperand(),
                   path);
    store->eraseFromParent();
    llvm::RecursivelyDeleteTriviallyDeadInstructions(value);
  }
}

/// The allocas of the scope that `save` (a stacksave) opens, in order, and
/// its `restore`: when the scope ends in one stackrestore in the same block
/// and holds no other scope and only allocas of a constant size.
static std::optional<llvm::SmallVector<llvm::AllocaInst *>>
scopedAllocas(llvm::IntrinsicInst *save, llvm::Instruction *&restore) {
  if (!save->hasOneUse())
    return std::nullopt;
  auto *end = dyn_cast<llvm::IntrinsicInst>(save->user_back());
  if (!end || end->getParent() != save->getParent() ||
      end->getIntrinsicID() != llvm::Intrinsic::stackrestore)
    return std::nullopt;
  llvm::SmallVector<llvm::AllocaInst *> allocas;
  for (llvm::Instruction *inst = save->getNextNode(); inst != end;
       inst = inst->getNextNode()) {
    if (!inst)
      return std::nullopt; // the restore comes before the save
    if (auto *alloca = dyn_cast<llvm::AllocaInst>(inst)) {
      if (!isa<llvm::ConstantInt>(alloca->getArraySize()) ||
          alloca->isUsedWithInAlloca())
        return std::nullopt;
      allocas.push_back(alloca);
      continue;
    }
    if (auto *intrinsic = dyn_cast<llvm::IntrinsicInst>(inst))
      if (intrinsic->getIntrinsicID() == llvm::Intrinsic::stacksave ||
          intrinsic->getIntrinsicID() == llvm::Intrinsic::stackrestore)
        return std::nullopt;
  }
  restore = end;
  return allocas;
}

/// Static slots of a function's entry block, one per type, count and place,
/// that groups of constant-size allocas share when no group outlives the
/// next's start: each group's i-th alloca of a type and count becomes the
/// shared i-th slot of them.
class SharedSlots {
public:
  explicit SharedSlots(llvm::Function &function)
      : entryBlock(function.getEntryBlock()) {}

  /// Replaces `group`'s allocas (each of a constant count) by the slots.
  void share(ArrayRef<llvm::AllocaInst *> group) {
    llvm::DenseMap<std::pair<llvm::Type *, uint64_t>, unsigned> places;
    for (llvm::AllocaInst *alloca : group) {
      uint64_t count =
          cast<llvm::ConstantInt>(alloca->getArraySize())->getZExtValue();
      llvm::Type *type = alloca->getAllocatedType();
      unsigned place = places[{type, count}]++;
      llvm::AllocaInst *&slot = slots[{type, count, place}];
      if (!slot)
        slot = new llvm::AllocaInst(type, alloca->getAddressSpace(),
                                    alloca->getArraySize(), alloca->getAlign(),
                                    "", entryBlock.getFirstInsertionPt());
      slot->setAlignment(std::max(slot->getAlign(), alloca->getAlign()));
      alloca->replaceAllUsesWith(slot);
      alloca->eraseFromParent();
    }
  }

private:
  llvm::BasicBlock &entryBlock;
  llvm::DenseMap<std::tuple<llvm::Type *, uint64_t, unsigned>,
                 llvm::AllocaInst *>
      slots;
};

/// Makes the allocas of each stacksave-stackrestore scope of one block
/// (MLIR's lowering of a copy between layouts puts two descriptors on the
/// stack that way for the runtime's memrefCopy) static: allocas of the
/// entry block, which the scopes share since none outlives its restore.
/// The save and the restore go. Code generation's fast path handles only
/// static allocas: at the first other one it hands the rest of the block,
/// here the whole step, to the slow one.
static void makeScopedAllocasStatic(llvm::Function &function) {
  llvm::SmallVector<llvm::IntrinsicInst *> saves;
  for (llvm::Instruction &inst : llvm::instructions(function))
    if (auto *intrinsic = dyn_cast<llvm::IntrinsicInst>(&inst))
      if (intrinsic->getIntrinsicID() == llvm::Intrinsic::stacksave)
        saves.push_back(intrinsic);
  SharedSlots shared(function);
  for (llvm::IntrinsicInst *save : saves) {
    llvm::Instruction *restore = nullptr;
    auto allocas = scopedAllocas(save, restore);
    if (!allocas)
      continue;
    shared.share(*allocas);
    restore->eraseFromParent();
    save->eraseFromParent();
  }
}

/// The alloca that `pointer` is, or that a GEP of it indexes; else null.
static llvm::AllocaInst *slotOf(llvm::Value *pointer) {
  if (auto *gep = dyn_cast<llvm::GetElementPtrInst>(pointer))
    pointer = gep->getPointerOperand();
  return dyn_cast<llvm::AllocaInst>(pointer);
}

/// Whether `slot`, and each GEP of it, is only stored into, stored into
/// another of `slots`, or passed to `launch`.
static bool
onlyFillsLaunch(llvm::AllocaInst *slot, llvm::CallBase *launch,
                const llvm::SmallPtrSetImpl<llvm::AllocaInst *> &slots) {
  auto fills = [&](llvm::Value *address, llvm::User *user) {
    if (user == launch)
      return true;
    auto *store = dyn_cast<llvm::StoreInst>(user);
    if (!store)
      return false;
    if (store->getValueOperand() != address)
      return true; // a value stored into the slot
    return slots.contains(slotOf(store->getPointerOperand()));
  };
  for (llvm::User *user : slot->users()) {
    if (auto *gep = dyn_cast<llvm::GetElementPtrInst>(user)) {
      if (gep->getPointerOperand() != slot)
        return false;
      for (llvm::User *gepUser : gep->users())
        if (!fills(gep, gepUser))
          return false;
    } else if (!fills(slot, user)) {
      return false;
    }
  }
  return !slot->isUsedWithInAlloca() &&
         isa<llvm::ConstantInt>(slot->getArraySize());
}

/// The allocas a kernel launch fills and passes (MLIR's translation of
/// gpu.launch_func: its arguments' struct and the array of pointers to its
/// fields, at the launch), when nothing else uses them.
static std::optional<llvm::SmallVector<llvm::AllocaInst *>>
launchSlots(llvm::CallBase *launch) {
  llvm::SmallPtrSet<llvm::AllocaInst *, 4> slots;
  llvm::SmallVector<llvm::AllocaInst *> order;
  auto add = [&](llvm::AllocaInst *slot) {
    if (slot && slots.insert(slot).second)
      order.push_back(slot);
  };
  for (llvm::Value *operand : launch->args())
    add(dyn_cast<llvm::AllocaInst>(operand));
  // The struct whose fields' addresses the array holds.
  auto addStoredSlots = [&](llvm::Value *address) {
    for (llvm::User *user : address->users())
      if (auto *store = dyn_cast<llvm::StoreInst>(user))
        if (store->getPointerOperand() == address)
          add(slotOf(store->getValueOperand()));
  };
  for (unsigned i = 0, e = order.size(); i < e; ++i) {
    llvm::AllocaInst *array = order[i];
    addStoredSlots(array);
    for (llvm::User *user : array->users())
      if (isa<llvm::GetElementPtrInst>(user))
        addStoredSlots(user);
  }
  if (order.empty())
    return std::nullopt;
  for (llvm::AllocaInst *slot : order)
    if (!onlyFillsLaunch(slot, launch, slots))
      return std::nullopt;
  return order;
}

void zero::exec::makeLaunchSlotsStatic(llvm::Module &module) {
  llvm::Function *launchKernel = module.getFunction("mgpuLaunchKernel");
  if (!launchKernel)
    return;
  llvm::DenseMap<llvm::Function *, SharedSlots> shared;
  for (llvm::User *user : llvm::make_early_inc_range(launchKernel->users())) {
    auto *launch = dyn_cast<llvm::CallBase>(user);
    if (!launch || launch->getCalledOperand() != launchKernel)
      continue;
    auto slots = launchSlots(launch);
    if (!slots)
      continue;
    llvm::Function &function = *launch->getFunction();
    shared.try_emplace(&function, function).first->second.share(*slots);
  }
}

/// Before optimization: when the entry is a schedule of calls, keeps the
/// optimizer out of it and has code generation select its instructions
/// quickly (FastISel, no machine scheduling: what `optnone` means to both).
/// Such an entry is one block of thousands of calls, where the optimizer
/// and the code generator grow faster than the block: InstCombine asks
/// whether each call's pointers are non-null, and each question renumbers
/// the block that its last rewrite changed (6.3 s of a 400-tensor sharded
/// step's optimization against 2.4 s at 200 tensors), and the scheduler and
/// register allocator grow likewise (7.5 s against 0.5 s), for code that
/// runs once a step. Module passes still see its calls: the constants it
/// passes still reach the nests it calls. What the optimizer would have
/// done that code generation at this level needs is done here first:
/// descriptors stored for runtime calls are stored field by field, on
/// stack slots of the entry block.
void zero::exec::selectEntryQuickly(llvm::Function &entry) {
  if (!isScheduleOfCalls(entry))
    return;
  storeAggregatesByField(entry);
  makeScopedAllocasStatic(entry);
  entry.addFnAttr(llvm::Attribute::OptimizeNone);
  entry.addFnAttr(llvm::Attribute::NoInline);
}
