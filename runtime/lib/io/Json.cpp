//===- Json.cpp - the runtime's small JSON helpers ------------------------===//

#include "io/Json.h"

std::string zero::rt::jsonString(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      continue;
    out += c;
  }
  return out + "\"";
}
