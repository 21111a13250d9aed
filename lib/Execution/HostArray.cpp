//===- HostArray.cpp - dense arrays on the host, and .npy files -----------===//

#include "zero/Execution/HostArray.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>

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

/// The NumPy type string of an element type.
static std::optional<std::string> npyDescr(Type type) {
  if (type.isF32())
    return "<f4";
  if (type.isF64())
    return "<f8";
  if (type.isF16())
    return "<f2";
  if (type.isBF16())
    return "|V2";
  if (type.isInteger(1))
    return "|b1";
  if (type.isInteger(8))
    return "|i1";
  if (type.isInteger(16))
    return "<i2";
  if (type.isInteger(32))
    return "<i4";
  if (type.isInteger(64) || type.isIndex())
    return "<i8";
  return std::nullopt;
}

static std::string typeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

llvm::Error zero::exec::writeNpy(StringRef path, const HostArray &array) {
  std::optional<std::string> descr = npyDescr(array.elementType);
  if (!descr)
    return llvm::createStringError("%s: no .npy type for %s",
                                   path.str().c_str(),
                                   typeName(array.elementType).c_str());
  std::string shape = "(";
  for (int64_t d : array.shape)
    shape += std::to_string(d) + ", ";
  if (array.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (array.shape.size() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" + *descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + newline, padded to 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write %s: %s",
                                   path.str().c_str(), ec.message().c_str());
  os << "\x93NUMPY" << char(1) << char(0);
  uint16_t length = static_cast<uint16_t>(header.size());
  os << char(length & 0xff) << char(length >> 8) << header;
  os.write(array.bytes.data(), array.bytes.size());
  return llvm::Error::success();
}

llvm::Error zero::exec::readNpy(StringRef path, HostArray &array) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   (path + ": " + why).str());
  };
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return fail("cannot read: " + file.getError().message());
  StringRef data = (*file)->getBuffer();
  if (!data.starts_with("\x93NUMPY") || data.size() < 10)
    return fail("not a .npy file");
  uint8_t major = data[6];
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = uint8_t(data[8]) | (uint8_t(data[9]) << 8);
    headerStart = 10;
  } else {
    if (data.size() < 12)
      return fail("truncated header");
    headerLength = uint8_t(data[8]) | (uint8_t(data[9]) << 8) |
                   (uint8_t(data[10]) << 16) |
                   (size_t(uint8_t(data[11])) << 24);
    headerStart = 12;
  }
  if (data.size() < headerStart + headerLength)
    return fail("truncated header");
  StringRef header = data.substr(headerStart, headerLength);
  auto field = [&](StringRef key) -> StringRef {
    size_t at = header.find("'" + key.str() + "'");
    if (at == StringRef::npos)
      return {};
    StringRef rest = header.substr(at + key.size() + 2).ltrim(" :");
    return rest;
  };
  StringRef descr = field("descr");
  if (descr.empty() || descr[0] != '\'')
    return fail("header has no 'descr'");
  descr = descr.drop_front().take_until([](char c) { return c == '\''; });
  if (field("fortran_order").starts_with("True"))
    return fail("Fortran-order arrays are not supported");
  StringRef shapeText = field("shape");
  if (!shapeText.starts_with("("))
    return fail("header has no 'shape'");
  shapeText =
      shapeText.drop_front().take_until([](char c) { return c == ')'; });
  SmallVector<int64_t> shape;
  SmallVector<StringRef> parts;
  shapeText.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    int64_t d;
    if (part.trim().getAsInteger(10, d))
      return fail("bad shape '" + shapeText + "'");
    shape.push_back(d);
  }

  std::optional<std::string> expected = npyDescr(array.elementType);
  bool descrMatches =
      expected &&
      (descr == *expected || (array.elementType.isBF16() && descr == "<u2"));
  if (!descrMatches)
    return fail("holds '" + descr + "' elements, expected " +
                typeName(array.elementType) + " ('" +
                (expected ? *expected : "?") + "')");
  if (ArrayRef<int64_t>(shape) != ArrayRef<int64_t>(array.shape))
    return fail(
        "has shape (" +
        llvm::join(
            llvm::map_range(shape, [](int64_t d) { return std::to_string(d); }),
            ", ") +
        "), expected (" +
        llvm::join(llvm::map_range(array.shape,
                                   [](int64_t d) { return std::to_string(d); }),
                   ", ") +
        ")");
  size_t bytes =
      array.getNumElements() * HostArray::getElementBytes(array.elementType);
  StringRef payload = data.substr(headerStart + headerLength);
  if (payload.size() != bytes)
    return fail("holds " + llvm::Twine(payload.size()) +
                " data bytes, expected " + llvm::Twine(bytes));
  array.bytes.assign(payload.begin(), payload.end());
  return llvm::Error::success();
}

/// Maps a float's bits to an integer line where adjacent floats are adjacent.
template <typename UInt> static int64_t orderedBits(UInt bits, unsigned width) {
  UInt sign = UInt(1) << (width - 1);
  if (bits & sign)
    return -static_cast<int64_t>(bits & ~sign);
  return static_cast<int64_t>(bits);
}

template <typename UInt>
static void compareFloats(const HostArray &a, const HostArray &b,
                          unsigned width, unsigned mantissaBits,
                          Difference &diff) {
  int64_t n = a.getNumElements();
  const char *pa = a.bytes.data(), *pb = b.bytes.data();
  UInt expMask = ((UInt(1) << (width - 1 - mantissaBits)) - 1) << mantissaBits;
  UInt mantMask = (UInt(1) << mantissaBits) - 1;
  auto isNan = [&](UInt v) {
    return (v & expMask) == expMask && (v & mantMask);
  };
  for (int64_t i = 0; i < n; ++i) {
    UInt x, y;
    std::memcpy(&x, pa + i * sizeof(UInt), sizeof(UInt));
    std::memcpy(&y, pb + i * sizeof(UInt), sizeof(UInt));
    if (x == y || (isNan(x) && isNan(y)))
      continue;
    uint64_t ulp =
        isNan(x) || isNan(y)
            ? std::numeric_limits<uint64_t>::max()
            : static_cast<uint64_t>(std::llabs(orderedBits<UInt>(x, width) -
                                               orderedBits<UInt>(y, width)));
    if (diff.firstIndex < 0)
      diff.firstIndex = i;
    ++diff.differing;
    diff.maxUlp = std::max(diff.maxUlp, ulp);
  }
}

Difference zero::exec::compare(const HostArray &a, const HostArray &b) {
  Difference diff;
  Type type = a.elementType;
  if (type.isF32())
    compareFloats<uint32_t>(a, b, 32, 23, diff);
  else if (type.isF64())
    compareFloats<uint64_t>(a, b, 64, 52, diff);
  else if (type.isF16())
    compareFloats<uint16_t>(a, b, 16, 10, diff);
  else if (type.isBF16())
    compareFloats<uint16_t>(a, b, 16, 7, diff);
  else {
    int64_t width = HostArray::getElementBytes(type);
    for (int64_t i = 0; i < a.getNumElements(); ++i) {
      int64_t x = 0, y = 0;
      std::memcpy(&x, a.bytes.data() + i * width, width);
      std::memcpy(&y, b.bytes.data() + i * width, width);
      if (x == y)
        continue;
      if (diff.firstIndex < 0)
        diff.firstIndex = i;
      ++diff.differing;
      diff.maxUlp = std::max<uint64_t>(diff.maxUlp, std::llabs(x - y));
    }
  }
  return diff;
}
