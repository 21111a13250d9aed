//===- Array.h - dense host arrays, .npy files, comparison -------*- C++
//-*-===//
//
// The values a launcher feeds a compiled program and reads back: dense
// row-major arrays named by an element type, stored as NumPy .npy files. Part
// of the runtime (no LLVM), so that zero-launch and zero-run read, write and
// compare values the same way.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_ARRAY_H
#define ZERO_RUNTIME_ARRAY_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace zero::rt {

/// Bytes per element of an element type named as in MLIR (f32, f64, f16,
/// bf16, i1, i8, i16, i32, i64, index); 0 for a name it does not know. An i1
/// takes a byte.
int64_t getElementBytes(std::string_view dtype);

/// A dense row-major array. A scalar has an empty shape.
struct Array {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<char> bytes;

  int64_t getNumElements() const;
};

/// Elements of a shape: the product of its dimensions (1 for a scalar).
int64_t getNumElements(const std::vector<int64_t> &shape);

/// Element `i` of `array` as a double (integers sign-extended, i1 as 0 or 1).
double getElementAsDouble(const Array &array, int64_t i);
/// The values of `array` as launchers print them: " v0 v1 ..." (%.6g) for up
/// to 32 elements, else " N elements, sum S" (%.9g).
std::string formatValues(const Array &array);

/// Stores `value` as one element of `dtype` at `to`: floats rounded to
/// nearest, ties to even (bf16 and f16 from the double in one rounding),
/// integers truncated to their low bytes, i1 as 0 or 1.
void storeElement(std::string_view dtype, double value, char *to);

/// Fills `array` (its dtype and shape set) with values uniform in [low,
/// high) (integers: [low, high]; i1: 0 or 1), from SplitMix64, the same
/// stream on every machine: seeded by `seed`, the argument's `index` and,
/// for a value that differs per rank, `rank` (else -1). zero-run and
/// zero-launch generate arguments with it. The stream is counted, so
/// `array` may hold the elements from `firstElement` on of a larger value
/// (a shard, generated without the whole).
void fillUniform(Array &array, uint64_t seed, unsigned index, int32_t rank,
                 double low, double high, int64_t firstElement = 0);

/// "(7, 13)", as NumPy prints a shape.
std::string formatShape(const std::vector<int64_t> &shape);

/// Writes `array` as a .npy file (format 1.0). bf16 is written as two-byte
/// void elements ('|V2'), which NumPy loads as raw 16-bit values. Returns an
/// error message, empty on success.
std::string writeNpy(const std::string &path, const Array &array);
/// Reads a .npy file into `array`, whose dtype and shape say what the file
/// must hold (checked). Returns an error message naming the file, empty on
/// success.
std::string readNpy(const std::string &path, Array &array);

/// How far apart two arrays of the same dtype and shape are.
struct Difference {
  int64_t differing = 0;
  /// Largest distance in units in the last place (floats) or absolute value
  /// (integers). NaN against NaN counts as equal, NaN against a number as
  /// infinitely far.
  uint64_t maxUlp = 0;
  int64_t firstIndex = -1;
};
Difference compare(const Array &a, const Array &b);

/// Part `groupIndex` of `whole` flattened and cut into parts of
/// `shardElements` (the layout of #zero.shard), elements past the end zero.
Array takeShard(const Array &whole, int64_t shardElements, int64_t groupIndex);
/// Zeroes the elements of shard `groupIndex` that lie past the end of a whole
/// tensor of `wholeElements` (padding, of unspecified value), so that two
/// shards compare on their real elements only.
void zeroShardPadding(Array &shard, int64_t wholeElements, int64_t groupIndex);

} // namespace zero::rt

#endif // ZERO_RUNTIME_ARRAY_H
