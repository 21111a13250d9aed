//===- PackedEntryTest.cpp - the entry as code generation's fast path takes it
//
// selectEntryQuickly on hand-written LLVM IR: a schedule of calls is marked
// optnone with its descriptors stored field by field and its stack scopes
// made static slots; anything else is left as it is.
//
//===----------------------------------------------------------------------===//

#include "zero/Execution/PackedEntry.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

using namespace llvm;

namespace {

std::unique_ptr<Module> parse(LLVMContext &context, StringRef text) {
  SMDiagnostic error;
  std::unique_ptr<Module> module = parseAssemblyString(text, error, context);
  EXPECT_TRUE(module) << error.getMessage().str();
  return module;
}

/// How many instructions of `function` `predicate` holds for.
template <typename Predicate>
size_t count(Function &function, Predicate predicate) {
  size_t n = 0;
  for (Instruction &inst : instructions(function))
    n += predicate(inst);
  return n;
}

bool isStackScope(Instruction &inst) {
  auto *intrinsic = dyn_cast<IntrinsicInst>(&inst);
  return intrinsic && (intrinsic->getIntrinsicID() == Intrinsic::stacksave ||
                       intrinsic->getIntrinsicID() == Intrinsic::stackrestore);
}

bool storesAggregate(Instruction &inst) {
  auto *store = dyn_cast<StoreInst>(&inst);
  return store && store->getValueOperand()->getType()->isAggregateType();
}

// Two copies as MLIR lowers them for the runtime's memrefCopy: a scope each,
// two descriptors put on the stack, one from an insertvalue chain, one
// constant.
constexpr char kSchedule[] = R"(
declare void @memrefCopy(i64, ptr, ptr)
declare void @nest(ptr)
define void @entry(ptr %p) {
  call void @nest(ptr %p)
  %d0 = insertvalue { i64, ptr } { i64 1, ptr poison }, ptr %p, 1
  %s0 = call ptr @llvm.stacksave.p0()
  %a0 = alloca { i64, ptr }, i64 1, align 8
  store { i64, ptr } %d0, ptr %a0, align 8
  %b0 = alloca { i64, ptr }, i64 1, align 8
  store { i64, ptr } { i64 2, ptr null }, ptr %b0, align 8
  call void @memrefCopy(i64 4, ptr %a0, ptr %b0)
  call void @llvm.stackrestore.p0(ptr %s0)
  %s1 = call ptr @llvm.stacksave.p0()
  %a1 = alloca { i64, ptr }, i64 1, align 8
  store { i64, ptr } %d0, ptr %a1, align 8
  %b1 = alloca { i64, ptr }, i64 1, align 8
  store { i64, ptr } %d0, ptr %b1, align 8
  call void @memrefCopy(i64 4, ptr %a1, ptr %b1)
  call void @llvm.stackrestore.p0(ptr %s1)
  ret void
}
)";

TEST(PackedEntryTest, ScheduleOfCallsTakesTheFastPath) {
  LLVMContext context;
  std::unique_ptr<Module> module = parse(context, kSchedule);
  Function &entry = *module->getFunction("entry");
  zero::exec::selectEntryQuickly(entry);
  EXPECT_FALSE(verifyModule(*module, &errs()));
  EXPECT_TRUE(entry.hasOptNone());
  EXPECT_TRUE(entry.hasFnAttribute(llvm::Attribute::NoInline));
  EXPECT_EQ(count(entry, isStackScope), 0u);
  EXPECT_EQ(count(entry, storesAggregate), 0u);
  // One slot per place in a scope, shared by both scopes, all static.
  EXPECT_EQ(
      count(entry, [](Instruction &inst) { return isa<AllocaInst>(inst); }),
      2u);
  for (Instruction &inst : instructions(entry)) {
    if (auto *alloca = dyn_cast<AllocaInst>(&inst)) {
      EXPECT_TRUE(alloca->isStaticAlloca());
    }
  }
  // The fields, each stored: 1 and %p, 2 and null, then 1 and %p twice.
  EXPECT_EQ(
      count(entry, [](Instruction &inst) { return isa<StoreInst>(inst); }), 8u);
}

TEST(PackedEntryTest, ScopeWithADynamicAllocaStays) {
  LLVMContext context;
  std::unique_ptr<Module> module = parse(context, R"(
declare void @use(ptr)
define void @entry(i64 %n) {
  %s = call ptr @llvm.stacksave.p0()
  %a = alloca float, i64 %n, align 4
  call void @use(ptr %a)
  call void @llvm.stackrestore.p0(ptr %s)
  ret void
}
)");
  Function &entry = *module->getFunction("entry");
  zero::exec::selectEntryQuickly(entry);
  EXPECT_FALSE(verifyModule(*module, &errs()));
  EXPECT_TRUE(entry.hasOptNone());
  EXPECT_EQ(count(entry, isStackScope), 2u);
}

TEST(PackedEntryTest, LoopThatComputesIsLeftToTheOptimizer) {
  LLVMContext context;
  std::unique_ptr<Module> module = parse(context, R"(
define void @entry(ptr %p) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %at = getelementptr float, ptr %p, i64 %i
  store float 0.0, ptr %at
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, 64
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
)");
  Function &entry = *module->getFunction("entry");
  zero::exec::selectEntryQuickly(entry);
  EXPECT_FALSE(entry.hasOptNone());
}

} // namespace
