//===- HostArray.cpp - dense arrays on the host, and .npy files -----------===//

#include "zero/Execution/HostArray.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace zero::exec;

int64_t HostArray::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t HostArray::getElementBytes(Type type) {
  if (type.isIndex())
    return 8;
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits < 8 ? 1 : bits / 8;
}

std::string zero::exec::getDtypeName(Type type) {
  if (type.isIndex())
    return "index";
  if (type.isBF16())
    return "bf16";
  if (auto f = dyn_cast<FloatType>(type))
    return "f" + std::to_string(f.getWidth());
  if (type.isSignlessInteger())
    return "i" + std::to_string(type.getIntOrFloatBitWidth());
  return "";
}

rt::Array zero::exec::toRuntimeArray(const HostArray &array) {
  return {getDtypeName(array.elementType),
          std::vector<int64_t>(array.shape.begin(), array.shape.end()),
          array.bytes};
}

llvm::Error zero::exec::writeNpy(StringRef path, const HostArray &array) {
  std::string error = rt::writeNpy(path.str(), toRuntimeArray(array));
  return error.empty() ? llvm::Error::success()
                       : llvm::createStringError("%s", error.c_str());
}

llvm::Error zero::exec::readNpy(StringRef path, HostArray &array) {
  rt::Array read{getDtypeName(array.elementType),
                 std::vector<int64_t>(array.shape.begin(), array.shape.end()),
                 {}};
  std::string error = rt::readNpy(path.str(), read);
  if (!error.empty())
    return llvm::createStringError("%s", error.c_str());
  array.bytes = std::move(read.bytes);
  return llvm::Error::success();
}

Difference zero::exec::compare(const HostArray &a, const HostArray &b) {
  return rt::compare(toRuntimeArray(a), toRuntimeArray(b));
}
