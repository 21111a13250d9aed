//===- Report.cpp - per-rank communication report -------------------------===//

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/FileUtilities.h"
#include "zero/Analysis/Communication.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace zero {
#define GEN_PASS_DEF_ZEROREPORT
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {
/// Traffic of one collective kind in one function.
struct KindTraffic {
  int64_t count = 0;
  int64_t bytesPerRank = 0;
  int64_t unknown = 0; // collectives whose bytes could not be sized
};

struct FunctionTraffic {
  std::string name;
  llvm::MapVector<StringRef, KindTraffic> kinds;
  KindTraffic total;
};

FunctionTraffic measureFunction(FunctionOpInterface func) {
  FunctionTraffic traffic;
  traffic.name = func.getName().str();
  func.walk([&](CollectiveOpInterface op) {
    KindTraffic &kind = traffic.kinds[op->getName().stripDialect()];
    MeshOp mesh = op.lookupMesh();
    std::optional<int64_t> count = getExecutionCount(op);
    std::optional<int64_t> bytes =
        mesh ? getBytesSentPerRank(op, op.getGroupSize(mesh)) : std::nullopt;
    for (KindTraffic *t : {&kind, &traffic.total}) {
      t->count += count.value_or(1);
      if (bytes && count)
        t->bytesPerRank += *bytes * *count;
      else
        ++t->unknown;
    }
  });
  return traffic;
}

void printText(ArrayRef<FunctionTraffic> functions, raw_ostream &os) {
  for (const FunctionTraffic &f : functions) {
    os << "zero-report: @" << f.name << "\n";
    os << llvm::formatv("  {0,-16}{1,8}{2,24}\n", "collective", "count",
                        "bytes sent per rank");
    auto row = [&](StringRef name, const KindTraffic &t) {
      os << llvm::formatv("  {0,-16}{1,8}{2,24}", name, t.count,
                          t.bytesPerRank);
      if (t.unknown)
        os << "  (+" << t.unknown << " of unknown size)";
      os << "\n";
    };
    for (auto &[kind, traffic] : f.kinds)
      row(kind, traffic);
    row("total", f.total);
  }
}

llvm::json::Object toJson(const KindTraffic &t) {
  return llvm::json::Object{{"count", t.count},
                            {"bytes_per_rank", t.bytesPerRank},
                            {"unknown", t.unknown}};
}

void printJson(ArrayRef<FunctionTraffic> functions, raw_ostream &os) {
  llvm::json::Array array;
  for (const FunctionTraffic &f : functions) {
    llvm::json::Object kinds;
    for (auto &[kind, traffic] : f.kinds)
      kinds[kind] = toJson(traffic);
    array.push_back(llvm::json::Object{{"function", f.name},
                                       {"collectives", std::move(kinds)},
                                       {"total", toJson(f.total)}});
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                   {"functions", std::move(array)}}))
     << "\n";
}

struct ZeroReportPass : public zero::impl::ZeroReportBase<ZeroReportPass> {
  using Base::Base;

  void runOnOperation() override {
    if (format != "text" && format != "json") {
      getOperation().emitError("zero-report: unknown format '")
          << format << "' (expected 'text' or 'json')";
      return signalPassFailure();
    }
    SmallVector<FunctionTraffic> functions;
    getOperation().walk([&](FunctionOpInterface func) {
      if (!func.isExternal())
        functions.push_back(measureFunction(func));
    });

    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(outputFile, &error);
    if (!file) {
      getOperation().emitError("zero-report: ") << error;
      return signalPassFailure();
    }
    if (format == "json")
      printJson(functions, file->os());
    else
      printText(functions, file->os());
    file->keep();
    markAllAnalysesPreserved();
  }
};
} // namespace
