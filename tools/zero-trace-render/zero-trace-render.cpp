//===- zero-trace-render.cpp - a Chrome trace of zero-run as a PNG --------===//
//
// Draws the timeline that `zero-run --trace` writes (one file, or under mpi
// one per process) as a PNG image: per rank a compute row and a
// communication row over a shared time axis, spans coloured by what they
// are (computation, a wait for a collective, each collective kind), with a
// legend. For documents that cannot embed Perfetto.
//
//   zero-trace-render trace.json -o timeline.png [--width 1200]
//
// The image is written without libraries beyond LLVM's Support: zlib through
// llvm::compression when LLVM has it (stored deflate blocks otherwise), and
// text in a 3x5 pixel font of zero's own.
//
//===----------------------------------------------------------------------===//

#include "zero/Trace/ChromeTrace.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace cl = llvm::cl;
using llvm::StringRef;
using zero::trace::RankTracks;
using zero::trace::readChromeTrace;
using zero::trace::Span;

static cl::OptionCategory category("zero-trace-render options");
static cl::list<std::string> inputs(cl::Positional, cl::OneOrMore,
                                    cl::desc("<trace.json>..."),
                                    cl::cat(category));
static cl::opt<std::string> output("o", cl::Required,
                                   cl::desc("The PNG file to write"),
                                   cl::value_desc("FILE"), cl::cat(category));
static cl::opt<unsigned> imageWidth("width", cl::init(1200),
                                    cl::desc("Image width in pixels"),
                                    cl::cat(category));
static cl::opt<std::string> title("title",
                                  cl::desc("A line of text above the timeline"),
                                  cl::cat(category));

namespace {

struct Color {
  uint8_t r, g, b;
};

constexpr Color kWhite{255, 255, 255}, kText{40, 40, 40}, kGrid{225, 225, 225},
    kRowBack{246, 246, 246};

/// What a span is, by its name, and how it is drawn.
struct Kind {
  StringRef prefix;
  StringRef legend;
  Color color;
};
const Kind kKinds[] = {
    {"compute", "compute", {76, 120, 168}},
    {"wait", "starting or waiting for a collective", {228, 87, 86}},
    {"start", "", {228, 87, 86}},
    {"all_reduce", "all_reduce", {245, 133, 24}},
    {"reduce_scatter", "reduce_scatter", {84, 162, 75}},
    {"all_gather", "all_gather", {178, 121, 162}},
};
constexpr Color kOther{150, 150, 150};

Color colorOf(StringRef name) {
  for (const Kind &kind : kKinds)
    if (name.starts_with(kind.prefix))
      return kind.color;
  return kOther;
}

//===----------------------------------------------------------------------===//
// Pixels and text
//===----------------------------------------------------------------------===//

/// Glyphs of 3x5 pixels, rows from the top, '1' set. Lowercase letters are
/// drawn as capitals.
const std::map<char, StringRef> &glyphs() {
  static const std::map<char, StringRef> table = {
      {'0', "111101101101111"},  {'1', "010110010010111"},
      {'2', "111001111100111"},  {'3', "111001111001111"},
      {'4', "101101111001001"},  {'5', "111100111001111"},
      {'6', "111100111101111"},  {'7', "111001001001001"},
      {'8', "111101111101111"},  {'9', "111101111001111"},
      {'A', "010101111101101"},  {'B', "110101110101110"},
      {'C', "011100100100011"},  {'D', "110101101101110"},
      {'E', "111100110100111"},  {'F', "111100110100100"},
      {'G', "011100101101011"},  {'H', "101101111101101"},
      {'I', "111010010010111"},  {'J', "001001001101010"},
      {'K', "101101110101101"},  {'L', "100100100100111"},
      {'M', "101111111101101"},  {'N', "110101101101101"},
      {'O', "010101101101010"},  {'P', "110101110100100"},
      {'Q', "010101101110011"},  {'R', "110101110101101"},
      {'S', "011100010001110"},  {'T', "111010010010010"},
      {'U', "101101101101111"},  {'V', "101101101101010"},
      {'W', "101101111111101"},  {'X', "101101010101101"},
      {'Y', "101101010010010"},  {'Z', "111001010100111"},
      {'.', "000000000000010"},  {':', "000010000010000"},
      {'-', "000000111000000"},  {'%', "101001010100101"},
      {'/', "001001010100100"},  {'#', "101111101111101"},
      {'(', "001010010010001"},  {')', "100010010010100"},
      {',', "000000000010100"},  {'_', "000000000000111"},
      {'=', "000111000111000"},  {'+', "000010111010000"},
      {'{', "011010110010011"},  {'}', "110010011010110"},
      {'[', "011010010010011"},  {']', "110010010010110"},
      {'<', "001010100010001"},  {'>', "100010001010100"},
      {'\'', "010010000000000"}, {'"', "101101000000000"},
      {'*', "101010111010101"},  {'!', "010010010000010"},
      {'?', "110001010000010"},  {';', "000010000010100"},
      {'&', "010101010101011"},  {'@', "010101111100011"},
      {' ', "000000000000000"},
  };
  return table;
}

class Image {
public:
  Image(unsigned width, unsigned height)
      : width(width), height(height), pixels(width * height * 3, 255) {}

  void fill(int x0, int y0, int x1, int y1, Color c) {
    x0 = std::max(x0, 0);
    y0 = std::max(y0, 0);
    x1 = std::min<int>(x1, width);
    y1 = std::min<int>(y1, height);
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        uint8_t *p = &pixels[(y * width + x) * 3];
        p[0] = c.r;
        p[1] = c.g;
        p[2] = c.b;
      }
  }

  /// Draws `text` with its top left at (x, y), each font pixel `scale`
  /// pixels wide; returns the x after it.
  int text(int x, int y, StringRef text, Color c, int scale = 2) {
    for (char ch : text) {
      auto it = glyphs().find(static_cast<char>(std::toupper(ch)));
      StringRef glyph = it != glyphs().end() ? it->second : glyphs().at('#');
      for (int row = 0; row < 5; ++row)
        for (int col = 0; col < 3; ++col)
          if (glyph[row * 3 + col] == '1')
            fill(x + col * scale, y + row * scale, x + (col + 1) * scale,
                 y + (row + 1) * scale, c);
      x += 4 * scale;
    }
    return x;
  }

  static int textWidth(StringRef text, int scale = 2) {
    return static_cast<int>(text.size()) * 4 * scale;
  }

  /// The image as a PNG file (8-bit RGB, filter 0 on every row).
  std::vector<uint8_t> encodePng() const {
    std::vector<uint8_t> raw;
    raw.reserve((width * 3 + 1) * height);
    for (unsigned y = 0; y < height; ++y) {
      raw.push_back(0);
      raw.insert(raw.end(), pixels.begin() + y * width * 3,
                 pixels.begin() + (y + 1) * width * 3);
    }
    std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    std::vector<uint8_t> header;
    appendBigEndian(header, width);
    appendBigEndian(header, height);
    header.insert(header.end(), {8, 2, 0, 0, 0}); // 8-bit RGB, no interlace
    appendChunk(png, "IHDR", header);
    appendChunk(png, "IDAT", zlibStream(raw));
    appendChunk(png, "IEND", {});
    return png;
  }

private:
  static void appendBigEndian(std::vector<uint8_t> &out, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<uint8_t>(v >> shift));
  }

  static void appendChunk(std::vector<uint8_t> &out, const char type[4],
                          llvm::ArrayRef<uint8_t> data) {
    appendBigEndian(out, data.size());
    std::vector<uint8_t> typed(type, type + 4);
    typed.insert(typed.end(), data.begin(), data.end());
    out.insert(out.end(), typed.begin(), typed.end());
    appendBigEndian(out, llvm::crc32(typed));
  }

  /// A zlib stream of `data`: compressed when LLVM has zlib, else in stored
  /// (uncompressed) deflate blocks, which every PNG reader takes.
  static std::vector<uint8_t> zlibStream(llvm::ArrayRef<uint8_t> data) {
    llvm::SmallVector<uint8_t, 0> compressed;
    if (llvm::compression::zlib::isAvailable()) {
      llvm::compression::zlib::compress(data, compressed);
      return {compressed.begin(), compressed.end()};
    }
    std::vector<uint8_t> out = {0x78, 0x01};
    size_t at = 0;
    do {
      size_t n = std::min<size_t>(data.size() - at, 65535);
      out.push_back(at + n == data.size()); // BFINAL, BTYPE 00
      out.insert(out.end(),
                 {uint8_t(n), uint8_t(n >> 8), uint8_t(~n), uint8_t(~n >> 8)});
      out.insert(out.end(), data.begin() + at, data.begin() + at + n);
      at += n;
    } while (at < data.size());
    uint32_t a = 1, b = 0; // Adler-32
    for (uint8_t byte : data) {
      a = (a + byte) % 65521;
      b = (b + a) % 65521;
    }
    appendBigEndian(out, (b << 16) | a);
    return out;
  }

  unsigned width, height;
  std::vector<uint8_t> pixels;
};

//===----------------------------------------------------------------------===//
// Reading traces
//===----------------------------------------------------------------------===//

/// A round step of about a tenth of `range` seconds: 1, 2 or 5 times a
/// power of ten.
double tickStep(double range) {
  double rough = range / 10;
  double power = std::pow(10, std::floor(std::log10(rough)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * power >= rough)
      return m * power;
  return 10 * power;
}

std::string formatTick(double seconds, double step) {
  if (step >= 1)
    return llvm::formatv("{0:F0} s", seconds).str();
  if (step >= 1e-3)
    return llvm::formatv("{0} ms", std::lround(seconds * 1e3)).str();
  return llvm::formatv("{0} us", std::lround(seconds * 1e6)).str();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "zero-trace-render: a zero-run trace as a PNG "
                              "timeline\n");
  std::map<int64_t, RankTracks> ranks;
  for (const std::string &path : inputs)
    if (std::string error = readChromeTrace(path, ranks); !error.empty()) {
      llvm::errs() << "zero-trace-render: error: " << error << "\n";
      return 1;
    }
  double first = INFINITY, last = -INFINITY;
  for (auto &[pid, rank] : ranks)
    for (auto *track : {&rank.compute, &rank.communication})
      for (const Span &span : *track) {
        first = std::min(first, span.begin);
        last = std::max(last, span.end);
      }
  if (!(last > first)) {
    llvm::errs() << "zero-trace-render: error: the trace has no spans\n";
    return 1;
  }
  if (imageWidth < 300) {
    llvm::errs() << "zero-trace-render: error: --width must be 300 or more\n";
    return 1;
  }

  // Layout: title, axis labels, two rows per rank, the legend.
  const int margin = 12, labelWidth = 150, rowHeight = 16, rowGap = 3,
            rankGap = 10, textHeight = 10;
  int left = margin + labelWidth, right = static_cast<int>(imageWidth) - margin;
  int top = margin + (title.empty() ? 0 : textHeight + 10) + textHeight + 6;
  int rowsHeight =
      static_cast<int>(ranks.size()) * (2 * rowHeight + rowGap + rankGap) -
      rankGap;
  int legendTop = top + rowsHeight + 14;
  int height = legendTop + textHeight + margin;
  Image image(imageWidth, height);
  double range = last - first;
  auto xOf = [&](double t) {
    return left +
           static_cast<int>(std::lround((t - first) / range * (right - left)));
  };

  if (!title.empty())
    image.text(margin, margin, title, kText);
  double step = tickStep(range);
  for (double t = 0; t <= range + 1e-12; t += step) {
    int x = xOf(first + t);
    image.fill(x, top - 2, x + 1, top + rowsHeight, kGrid);
    std::string label = formatTick(t, step);
    int at = std::min(x, right - Image::textWidth(label));
    image.text(at, top - textHeight - 4, label, kText);
  }
  int y = top;
  for (auto &[pid, rank] : ranks) {
    image.text(margin, y + (rowHeight - textHeight) / 2, rank.label, kText);
    for (auto *track : {&rank.compute, &rank.communication}) {
      image.fill(left, y, right, y + rowHeight, kRowBack);
      // Longest first, each at least a pixel wide: a short collective next
      // to a long one stays visible.
      std::vector<const Span *> order;
      for (const Span &span : *track)
        order.push_back(&span);
      llvm::stable_sort(order, [](const Span *a, const Span *b) {
        return a->end - a->begin > b->end - b->begin;
      });
      for (const Span *span : order)
        image.fill(xOf(span->begin), y + 1,
                   std::max(xOf(span->end), xOf(span->begin) + 1),
                   y + rowHeight - 1, colorOf(span->name));
      y += rowHeight + rowGap;
    }
    image.text(left - 52,
               y - 2 * (rowHeight + rowGap) + (rowHeight - textHeight) / 2,
               "comp", kText);
    image.text(left - 52,
               y - (rowHeight + rowGap) + (rowHeight - textHeight) / 2, "comm",
               kText);
    y += rankGap - rowGap;
  }
  int x = left;
  for (const Kind &kind : kKinds) {
    if (kind.legend.empty())
      continue;
    image.fill(x, legendTop, x + textHeight, legendTop + textHeight,
               kind.color);
    x = image.text(x + textHeight + 6, legendTop, kind.legend, kText) + 18;
  }

  std::error_code ec;
  llvm::ToolOutputFile file(output, ec, llvm::sys::fs::OF_None);
  if (ec) {
    llvm::errs() << "zero-trace-render: error: " << output << ": "
                 << ec.message() << "\n";
    return 1;
  }
  std::vector<uint8_t> png = image.encodePng();
  file.os().write(reinterpret_cast<const char *>(png.data()), png.size());
  file.keep();
  llvm::outs() << llvm::formatv("zero-trace-render: {0} rank(s), {1:F3} ms, "
                                "{2}x{3} pixels -> {4}\n",
                                ranks.size(), range * 1e3, imageWidth, height,
                                output);
  return 0;
}
