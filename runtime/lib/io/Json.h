//===- Json.h - the runtime's small JSON reader and writer helpers -*- C++
//-*-===//
//
// Enough JSON for what the runtime reads and writes itself: an artifact's
// description (zero-compile writes it), a checkpoint's manifest, a trace.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_JSON_H
#define ZERO_RUNTIME_JSON_H

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace zero::rt {

struct Json {
  enum Kind { Null, Bool, Number, String, List, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> list;
  std::map<std::string, Json> object;

  const Json *get(const std::string &key) const {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &it->second;
  }
};

class JsonReader {
public:
  explicit JsonReader(const std::string &text) : text(text) {}

  /// Reads the whole text as one value; returns an error message or "".
  std::string read(Json &value) {
    if (!parseValue(value))
      return error;
    skipSpace();
    if (at != text.size())
      return fail("text after the value"), error;
    return "";
  }

private:
  bool fail(const std::string &what) {
    if (error.empty())
      error = "offset " + std::to_string(at) + ": " + what;
    return false;
  }
  void skipSpace() {
    while (at < text.size() && std::strchr(" \t\r\n", text[at]))
      ++at;
  }
  bool consume(const char *word) {
    size_t n = std::strlen(word);
    if (text.compare(at, n, word) != 0)
      return false;
    at += n;
    return true;
  }
  bool parseString(std::string &out) {
    if (!consume("\""))
      return fail("expected a string");
    while (at < text.size() && text[at] != '"') {
      char c = text[at++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at >= text.size())
        break;
      char e = text[at++];
      const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
      if (const char *p = std::strchr(from, e); p && e)
        out += to[p - from];
      else
        return fail("unsupported escape in a string");
    }
    return consume("\"") || fail("unterminated string");
  }
  bool parseValue(Json &value) {
    skipSpace();
    if (at >= text.size())
      return fail("expected a value");
    char c = text[at];
    if (c == '{') {
      value.kind = Json::Object;
      ++at;
      skipSpace();
      if (consume("}"))
        return true;
      do {
        skipSpace();
        std::string key;
        if (!parseString(key))
          return false;
        skipSpace();
        if (!consume(":"))
          return fail("expected ':'");
        if (!parseValue(value.object[key]))
          return false;
        skipSpace();
      } while (consume(","));
      return consume("}") || fail("expected '}'");
    }
    if (c == '[') {
      value.kind = Json::List;
      ++at;
      skipSpace();
      if (consume("]"))
        return true;
      do {
        value.list.emplace_back();
        if (!parseValue(value.list.back()))
          return false;
        skipSpace();
      } while (consume(","));
      return consume("]") || fail("expected ']'");
    }
    if (c == '"') {
      value.kind = Json::String;
      return parseString(value.string);
    }
    if (consume("true") || consume("false")) {
      value.kind = Json::Bool;
      value.boolean = text[at - 1] == 'e' && text[at - 2] == 'u';
      return true;
    }
    if (consume("null"))
      return true;
    char *end;
    value.number = std::strtod(text.c_str() + at, &end);
    if (end == text.c_str() + at)
      return fail("expected a value");
    value.kind = Json::Number;
    at = end - text.c_str();
    return true;
  }

  const std::string &text;
  size_t at = 0;
  std::string error;
};

/// `text` as a JSON string literal (control characters dropped).
std::string jsonString(const std::string &text);

} // namespace zero::rt

#endif // ZERO_RUNTIME_JSON_H
