//===- Array.cpp - dense host arrays, .npy files, comparison
//---------------===//

#include "zero/runtime/Array.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

using namespace zero::rt;

namespace {
struct ElementInfo {
  const char *dtype;
  int64_t bytes;
  const char *npy;
};
// The .npy type string of each element type. bf16 has none in NumPy: it is
// written as raw two-byte values.
constexpr ElementInfo elementInfos[] = {{"f32", 4, "<f4"}, {"f64", 8, "<f8"},
                                        {"f16", 2, "<f2"}, {"bf16", 2, "|V2"},
                                        {"i1", 1, "|b1"},  {"i8", 1, "|i1"},
                                        {"i16", 2, "<i2"}, {"i32", 4, "<i4"},
                                        {"i64", 8, "<i8"}, {"index", 8, "<i8"}};

const ElementInfo *findElement(std::string_view dtype) {
  for (const ElementInfo &info : elementInfos)
    if (dtype == info.dtype)
      return &info;
  return nullptr;
}
} // namespace

int64_t zero::rt::getElementBytes(std::string_view dtype) {
  const ElementInfo *info = findElement(dtype);
  return info ? info->bytes : 0;
}

int64_t zero::rt::getNumElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t Array::getNumElements() const {
  return zero::rt::getNumElements(shape);
}

/// An IEEE half's bits as a float.
static float halfToFloat(uint16_t bits) {
  int sign = bits >> 15, exponent = (bits >> 10) & 0x1f,
      mantissa = bits & 0x3ff;
  float magnitude = exponent == 0 ? std::ldexp(float(mantissa), -24)
                    : exponent == 31
                        ? (mantissa ? std::numeric_limits<float>::quiet_NaN()
                                    : std::numeric_limits<float>::infinity())
                        : std::ldexp(float(mantissa | 0x400), exponent - 25);
  return sign ? -magnitude : magnitude;
}

/// The bits of `value` in a binary float format with `exponentBits` and
/// `mantissaBits` (bf16: 8 and 7; f16: 5 and 10), rounded once, to nearest
/// with ties to even: the scaled magnitude is rounded to an integer, which
/// is exact in a double.
static uint16_t toNarrowFloat(double value, int exponentBits,
                              int mantissaBits) {
  uint16_t sign = std::signbit(value) ? 1u << (exponentBits + mantissaBits) : 0;
  uint16_t infinity = ((1u << exponentBits) - 1) << mantissaBits;
  if (std::isnan(value))
    return sign | infinity | (1u << (mantissaBits - 1));
  double magnitude = std::fabs(value);
  int bias = (1 << (exponentBits - 1)) - 1;
  int exponent = magnitude == 0 ? 1 - bias : std::ilogb(magnitude);
  if (std::isinf(magnitude) || exponent > bias)
    return sign | infinity;
  // Below the normal range the step is that of the smallest normals.
  exponent = std::max(exponent, 1 - bias);
  double scaled =
      std::nearbyint(std::ldexp(magnitude, mantissaBits - exponent));
  if (scaled >= std::ldexp(1.0, mantissaBits + 1)) { // rounded up a binade
    scaled /= 2;
    ++exponent;
    if (exponent > bias)
      return sign | infinity;
  }
  uint32_t mantissa = static_cast<uint32_t>(scaled);
  // A normal number has the implicit bit set; it becomes the exponent field.
  uint32_t field = mantissa >> mantissaBits ? exponent + bias : 0;
  return sign | (field << mantissaBits) |
         (mantissa & ((1u << mantissaBits) - 1));
}

void zero::rt::storeElement(std::string_view dtype, double value, char *to) {
  if (dtype == "f32") {
    float f = static_cast<float>(value);
    std::memcpy(to, &f, 4);
  } else if (dtype == "f64") {
    std::memcpy(to, &value, 8);
  } else if (dtype == "bf16" || dtype == "f16") {
    uint16_t bits = dtype == "bf16" ? toNarrowFloat(value, 8, 7)
                                    : toNarrowFloat(value, 5, 10);
    std::memcpy(to, &bits, 2);
  } else if (dtype == "i1") {
    *to = value != 0;
  } else {
    auto v = static_cast<int64_t>(value);
    std::memcpy(to, &v, getElementBytes(dtype)); // little-endian: low bytes
  }
}

namespace {
/// SplitMix64: small, fast, and the same on every machine.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * 0x1.0p-53; }
};
} // namespace

void zero::rt::fillUniform(Array &array, uint64_t seed, unsigned index,
                           int32_t rank, double low, double high,
                           int64_t firstElement) {
  int64_t bytes = getElementBytes(array.dtype);
  int64_t count = array.getNumElements();
  array.bytes.assign(count * bytes, 0);
  // Each draw adds one increment to the state: element e's is the start's
  // plus e increments.
  SplitMix64 rng{seed * 0x100000001b3ull + index * 0x9e3779b97f4a7c15ull +
                 (rank >= 0 ? static_cast<uint64_t>(rank + 1) << 40 : 0) +
                 static_cast<uint64_t>(firstElement) * 0x9e3779b97f4a7c15ull};
  bool isFloat = array.dtype[0] == 'f' || array.dtype == "bf16";
  for (int64_t e = 0; e < count; ++e) {
    double u = rng.uniform();
    char *to = array.bytes.data() + e * bytes;
    if (isFloat)
      storeElement(array.dtype, low + u * (high - low), to);
    else if (array.dtype == "i1")
      storeElement(array.dtype, u < 0.5, to);
    else
      storeElement(
          array.dtype,
          static_cast<double>(
              static_cast<int64_t>(low) +
              static_cast<int64_t>(u * (static_cast<int64_t>(high) -
                                        static_cast<int64_t>(low) + 1))),
          to);
  }
}

double zero::rt::getElementAsDouble(const Array &array, int64_t i) {
  int64_t bytes = getElementBytes(array.dtype);
  const char *p = array.bytes.data() + i * bytes;
  if (array.dtype == "f32") {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (array.dtype == "f64") {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  if (array.dtype == "bf16" || array.dtype == "f16") {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    if (array.dtype == "f16")
      return halfToFloat(bits);
    uint32_t wide = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &wide, 4);
    return f;
  }
  int64_t v = 0;
  std::memcpy(&v, p, bytes);            // little-endian: the low bytes
  if (bytes < 8 && array.dtype != "i1") // sign-extend
    v = static_cast<int64_t>(static_cast<uint64_t>(v) << (64 - 8 * bytes)) >>
        (64 - 8 * bytes);
  return static_cast<double>(v);
}

std::string zero::rt::formatValues(const Array &array) {
  char text[64];
  std::string out;
  int64_t n = array.getNumElements();
  if (n <= 32) {
    for (int64_t i = 0; i < n; ++i) {
      std::snprintf(text, sizeof text, " %.6g", getElementAsDouble(array, i));
      out += text;
    }
    return out;
  }
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += getElementAsDouble(array, i);
  std::snprintf(text, sizeof text, " %lld elements, sum %.9g",
                static_cast<long long>(n), sum);
  return text;
}

std::string zero::rt::formatShape(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    text += ",";
  return text + ")";
}

std::string zero::rt::writeNpy(const std::string &path, const Array &array) {
  const ElementInfo *info = findElement(array.dtype);
  if (!info)
    return path + ": no .npy type for " + array.dtype;
  std::string header =
      std::string("{'descr': '") + info->npy +
      "', 'fortran_order': False, 'shape': " + formatShape(array.shape) + ", }";
  // Magic (6) + version (2) + length (2) + header + newline, padded to 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream os(path, std::ios::binary);
  if (!os)
    return "cannot write " + path + ": " + std::strerror(errno);
  auto length = static_cast<uint16_t>(header.size());
  os << "\x93NUMPY" << char(1) << char(0) << char(length & 0xff)
     << char(length >> 8) << header;
  os.write(array.bytes.data(),
           static_cast<std::streamsize>(array.bytes.size()));
  if (!os)
    return "cannot write " + path + ": " + std::strerror(errno);
  return "";
}

/// The text after `'key':` in a .npy header, or empty.
static std::string_view headerField(std::string_view header,
                                    std::string_view key) {
  std::string quoted = "'" + std::string(key) + "'";
  size_t at = header.find(quoted);
  if (at == std::string_view::npos)
    return {};
  std::string_view rest = header.substr(at + quoted.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':'))
    rest.remove_prefix(1);
  return rest;
}

std::string zero::rt::readNpy(const std::string &path, Array &array) {
  auto fail = [&](const std::string &why) { return path + ": " + why; };
  // A regular file only, its size known before anything is read: a
  // directory or a device (/dev/zero) is refused, never read without bound.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return fail(ec ? "cannot read: " + ec.message()
                   : std::string("not a regular file"));
  uintmax_t fileSize = std::filesystem::file_size(path, ec);
  if (ec)
    return fail("cannot read: " + ec.message());
  std::ifstream is(path, std::ios::binary);
  if (!is)
    return fail(std::string("cannot read: ") + std::strerror(errno));
  auto readBytes = [&](std::string &into, size_t n) {
    into.resize(n);
    return static_cast<bool>(
        is.read(into.data(), static_cast<std::streamsize>(n)));
  };

  // Magic, version (1.0, 2.0 or 3.0), header length, header.
  std::string preamble;
  if (fileSize < 10 || !readBytes(preamble, 10) ||
      preamble.compare(0, 6, "\x93NUMPY") != 0)
    return fail("not a .npy file");
  auto byte = [&](const std::string &text, size_t i) {
    return size_t(uint8_t(text[i]));
  };
  int major = preamble[6];
  if (major < 1 || major > 3 || preamble[7] != 0)
    return fail("unsupported .npy version " + std::to_string(major) + "." +
                std::to_string(int(preamble[7])));
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = byte(preamble, 8) | byte(preamble, 9) << 8;
    headerStart = 10;
  } else {
    std::string more;
    if (fileSize < 12 || !readBytes(more, 2))
      return fail("truncated header");
    preamble += more;
    headerLength = byte(preamble, 8) | byte(preamble, 9) << 8 |
                   byte(preamble, 10) << 16 | byte(preamble, 11) << 24;
    headerStart = 12;
  }
  if (fileSize < headerStart + headerLength)
    return fail("truncated header");
  std::string headerText;
  if (!readBytes(headerText, headerLength))
    return fail("truncated header");
  std::string_view header = headerText;

  std::string_view descr = headerField(header, "descr");
  if (descr.empty() || descr[0] != '\'')
    return fail("header has no 'descr'");
  descr = descr.substr(1, descr.find('\'', 1) - 1);
  if (headerField(header, "fortran_order").substr(0, 4) == "True")
    return fail("Fortran-order arrays are not supported");
  std::string_view shapeText = headerField(header, "shape");
  if (shapeText.empty() || shapeText[0] != '(')
    return fail("header has no 'shape'");
  shapeText = shapeText.substr(1, shapeText.find(')') - 1);
  std::vector<int64_t> shape;
  std::stringstream parts{std::string(shapeText)};
  for (std::string part; std::getline(parts, part, ',');) {
    if (part.find_first_not_of(' ') == std::string::npos)
      continue;
    char *end;
    long long d = std::strtoll(part.c_str(), &end, 10);
    if (*end &&
        std::string_view(end).find_first_not_of(' ') != std::string_view::npos)
      return fail("bad shape '(" + std::string(shapeText) + ")'");
    shape.push_back(d);
  }

  const ElementInfo *info = findElement(array.dtype);
  bool descrMatches =
      info && (descr == info->npy || (array.dtype == "bf16" && descr == "<u2"));
  if (!descrMatches)
    return fail("holds '" + std::string(descr) + "' elements, expected " +
                array.dtype + " ('" + (info ? info->npy : "?") + "')");
  if (shape != array.shape)
    return fail("has shape " + formatShape(shape) + ", expected " +
                formatShape(array.shape));
  size_t bytes = array.getNumElements() * info->bytes;
  uintmax_t payload = fileSize - headerStart - headerLength;
  if (payload != bytes)
    return fail("holds " + std::to_string(payload) + " data bytes, expected " +
                std::to_string(bytes));
  std::string data;
  if (!readBytes(data, bytes))
    return fail("cannot read its data");
  array.bytes.assign(data.begin(), data.end());
  return "";
}

/// Maps a float's bits to an integer line where adjacent floats are adjacent.
template <typename UInt> static int64_t orderedBits(UInt bits, unsigned width) {
  UInt sign = UInt(1) << (width - 1);
  if (bits & sign)
    return -static_cast<int64_t>(bits & ~sign);
  return static_cast<int64_t>(bits);
}

template <typename UInt>
static void compareFloats(const Array &a, const Array &b, unsigned mantissaBits,
                          Difference &diff) {
  constexpr unsigned width = 8 * sizeof(UInt);
  const char *pa = a.bytes.data(), *pb = b.bytes.data();
  UInt expMask = ((UInt(1) << (width - 1 - mantissaBits)) - 1) << mantissaBits;
  UInt mantMask = (UInt(1) << mantissaBits) - 1;
  auto isNan = [&](UInt v) {
    return (v & expMask) == expMask && (v & mantMask);
  };
  for (int64_t i = 0, n = a.getNumElements(); i < n; ++i) {
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

Difference zero::rt::compare(const Array &a, const Array &b) {
  Difference diff;
  if (a.dtype == "f32")
    compareFloats<uint32_t>(a, b, 23, diff);
  else if (a.dtype == "f64")
    compareFloats<uint64_t>(a, b, 52, diff);
  else if (a.dtype == "f16")
    compareFloats<uint16_t>(a, b, 10, diff);
  else if (a.dtype == "bf16")
    compareFloats<uint16_t>(a, b, 7, diff);
  else {
    int64_t width = getElementBytes(a.dtype);
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

Array zero::rt::takeShard(const Array &whole, int64_t shardElements,
                          int64_t groupIndex) {
  Array part;
  part.dtype = whole.dtype;
  part.shape = {shardElements};
  int64_t bytes = getElementBytes(whole.dtype);
  part.bytes.assign(shardElements * bytes, 0);
  int64_t begin = groupIndex * shardElements;
  int64_t end = std::min(begin + shardElements, whole.getNumElements());
  if (begin < end)
    std::memcpy(part.bytes.data(), whole.bytes.data() + begin * bytes,
                (end - begin) * bytes);
  return part;
}

void zero::rt::zeroShardPadding(Array &shard, int64_t wholeElements,
                                int64_t groupIndex) {
  int64_t bytes = getElementBytes(shard.dtype);
  int64_t shardElements = shard.getNumElements();
  int64_t real = std::clamp<int64_t>(wholeElements - groupIndex * shardElements,
                                     0, shardElements);
  std::fill(shard.bytes.begin() + real * bytes, shard.bytes.end(), 0);
}
