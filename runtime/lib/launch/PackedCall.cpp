//===- PackedCall.cpp - call a compiled entry function --------------------===//

#include "zero/runtime/PackedCall.h"

#include <cstring>

using namespace zero::rt;

int64_t ValueType::getNumElements() const {
  return zero::rt::getNumElements(shape);
}

std::string ValueType::str() const {
  if (!isTensor)
    return dtype;
  std::string text = "tensor<";
  for (int64_t d : shape)
    text += std::to_string(d) + "x";
  return text + dtype + ">";
}

/// Words of a memref descriptor of rank `rank`.
static size_t descriptorWords(size_t rank) { return 3 + 2 * rank; }

/// The size and alignment of a value in the return struct.
static std::pair<size_t, size_t> returnSlot(const ValueType &type) {
  if (type.isTensor)
    return {8 * descriptorWords(type.shape.size()), 8};
  auto bytes = static_cast<size_t>(getElementBytes(type.dtype));
  return {bytes, bytes};
}

PackedCall::PackedCall(std::vector<ValueType> argTypes,
                       std::vector<ValueType> resultTypes)
    : argTypes(std::move(argTypes)), resultTypes(std::move(resultTypes)) {
  size_t numSlots = 0;
  for (const ValueType &type : this->argTypes)
    numSlots += type.isTensor ? descriptorWords(type.shape.size()) : 1;
  slots.assign(numSlots, 0);
  size_t size = 0;
  for (const ValueType &type : this->resultTypes) {
    auto [bytes, align] = returnSlot(type);
    size = (size + align - 1) / align * align;
    resultOffsets.push_back(size);
    size += bytes;
  }
  result.assign((size + 7) / 8 + 1, 0);
}

std::vector<void *> &PackedCall::pack(const std::vector<void *> &inputs) {
  args.clear();
  size_t next = 0;
  for (size_t i = 0; i < argTypes.size(); ++i) {
    const ValueType &type = argTypes[i];
    if (!type.isTensor) {
      std::memcpy(&slots[next], inputs[i], getElementBytes(type.dtype));
      args.push_back(&slots[next++]);
      continue;
    }
    size_t rank = type.shape.size();
    auto address = reinterpret_cast<uint64_t>(inputs[i]);
    slots[next] = slots[next + 1] = address;
    slots[next + 2] = 0;
    int64_t stride = 1;
    for (size_t d = rank; d-- > 0;) {
      slots[next + 3 + d] = type.shape[d];
      slots[next + 3 + rank + d] = stride;
      stride *= type.shape[d];
    }
    for (size_t k = 0; k < descriptorWords(rank); ++k)
      args.push_back(&slots[next + k]);
    next += descriptorWords(rank);
  }
  std::fill(result.begin(), result.end(), 0);
  if (!resultTypes.empty())
    args.push_back(result.data());
  return args;
}

void *PackedCall::unpackResult(size_t i, Array *out, ReadFn read) const {
  const ValueType &type = resultTypes[i];
  const char *at =
      reinterpret_cast<const char *>(result.data()) + resultOffsets[i];
  int64_t elementBytes = getElementBytes(type.dtype);
  if (out) {
    out->dtype = type.dtype;
    out->shape = type.shape;
    out->bytes.resize(type.getNumElements() * elementBytes);
  }
  if (!type.isTensor) {
    if (out)
      std::memcpy(out->bytes.data(), at, elementBytes);
    return nullptr;
  }
  const int64_t *desc = reinterpret_cast<const int64_t *>(at);
  if (out && type.getNumElements() > 0) {
    // The descriptor's strides may be any (a result can be a view): the
    // span it covers is read to the host once, then gathered.
    size_t rank = type.shape.size();
    const int64_t *sizes = desc + 3, *strides = desc + 3 + rank;
    int64_t first = desc[2], last = desc[2];
    for (size_t d = 0; d < rank; ++d)
      (strides[d] < 0 ? first : last) += (sizes[d] - 1) * strides[d];
    std::vector<char> span((last - first + 1) * elementBytes);
    const char *source =
        reinterpret_cast<const char *>(desc[1]) + first * elementBytes;
    if (read)
      read(span.data(), source, span.size());
    else
      std::memcpy(span.data(), source, span.size());
    std::vector<int64_t> index(rank, 0);
    for (int64_t e = 0, n = type.getNumElements(); e < n; ++e) {
      int64_t offset = desc[2] - first;
      for (size_t d = 0; d < rank; ++d)
        offset += index[d] * strides[d];
      std::memcpy(out->bytes.data() + e * elementBytes,
                  span.data() + offset * elementBytes, elementBytes);
      for (size_t d = rank; d-- > 0 && ++index[d] == sizes[d];)
        index[d] = 0;
    }
  }
  return reinterpret_cast<void *>(desc[0]);
}

void *PackedCall::denseResultData(size_t i) const {
  const ValueType &type = resultTypes[i];
  if (!type.isTensor)
    return nullptr;
  const int64_t *desc = reinterpret_cast<const int64_t *>(
      reinterpret_cast<const char *>(result.data()) + resultOffsets[i]);
  size_t rank = type.shape.size();
  const int64_t *sizes = desc + 3, *strides = desc + 3 + rank;
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (sizes[d] != 1 && strides[d] != stride)
      return nullptr;
    stride *= sizes[d];
  }
  return reinterpret_cast<char *>(desc[1]) +
         desc[2] * getElementBytes(type.dtype);
}
