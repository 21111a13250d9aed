//===- Programs.cpp - generated optimizer steps over real shapes ----------===//

#include "Programs.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace zero::bench;

std::vector<Shape> zero::bench::gpt2Shapes(const Gpt2Config &c) {
  std::vector<Shape> shapes = {{c.vocab, c.width}, {c.context, c.width}};
  int64_t w = c.width;
  for (int l = 0; l < c.layers; ++l) {
    std::vector<Shape> block = {{w}, {w}, {w, 3 * w}, {3 * w}, {w, w},     {w},
                                {w}, {w}, {w, 4 * w}, {4 * w}, {4 * w, w}, {w}};
    shapes.insert(shapes.end(), block.begin(), block.end());
  }
  shapes.push_back({w});
  shapes.push_back({w});
  return shapes;
}

std::vector<Shape> zero::bench::bertBaseShapes() {
  const int64_t w = 768, ff = 3072;
  std::vector<Shape> shapes = {{30522, w}, {512, w}, {2, w}, {w}, {w}};
  for (int l = 0; l < 12; ++l) {
    std::vector<Shape> layer = {{w, w},  {w}, {w, w}, {w}, {w, w},  {w},
                                {w, w},  {w}, {w},    {w}, {ff, w}, {ff},
                                {w, ff}, {w}, {w},    {w}};
    shapes.insert(shapes.end(), layer.begin(), layer.end());
  }
  shapes.push_back({w, w}); // the pooler
  shapes.push_back({w});
  return shapes;
}

std::vector<Shape> zero::bench::resnet50Shapes() {
  std::vector<Shape> shapes = {{64, 3, 7, 7}, {64}, {64}};
  auto convBn = [&](int64_t out, int64_t in, int64_t k) {
    shapes.push_back({out, in, k, k});
    shapes.push_back({out});
    shapes.push_back({out});
  };
  const int64_t blocks[] = {3, 4, 6, 3};
  int64_t in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    int64_t mid = 64 << stage, out = 4 * mid;
    for (int64_t b = 0; b < blocks[stage]; ++b) {
      convBn(mid, in, 1);
      convBn(mid, mid, 3);
      convBn(out, mid, 1);
      if (b == 0)
        convBn(out, in, 1); // the downsampling branch
      in = out;
    }
  }
  shapes.push_back({1000, 2048});
  shapes.push_back({1000});
  return shapes;
}

std::vector<Shape> zero::bench::transformerShapes(int64_t count) {
  Gpt2Config config;
  config.layers = static_cast<int>((count + 11) / 12);
  std::vector<Shape> shapes = gpt2Shapes(config);
  shapes.resize(count);
  return shapes;
}

std::vector<Shape> zero::bench::scaleShapes(const std::vector<Shape> &shapes,
                                            int64_t divisor) {
  std::vector<Shape> scaled = shapes;
  for (Shape &shape : scaled)
    for (int64_t &d : shape)
      d = (d + divisor - 1) / divisor;
  return scaled;
}

int64_t zero::bench::countElements(const std::vector<Shape> &shapes) {
  int64_t total = 0;
  for (const Shape &shape : shapes) {
    int64_t elements = 1;
    for (int64_t d : shape)
      elements *= d;
    total += elements;
  }
  return total;
}

static std::string tensorType(const Shape &shape,
                              const char *element = "f32") {
  std::string t = "tensor<";
  for (int64_t d : shape)
    t += std::to_string(d) + "x";
  return t + element + ">";
}

static std::string joined(const std::vector<int64_t> &values) {
  std::string list;
  for (size_t i = 0; i < values.size(); ++i)
    list += (i ? ", " : "") + std::to_string(values[i]);
  return list;
}

namespace {

/// Writes one optimizer step's text. Value names carry the tensor's index k
/// as a suffix; the state a step reads is `%<w|m|v>k` in a single step and
/// `%<lw|lm|lv>k`, the loop's iteration arguments, in a training loop.
class StepWriter {
public:
  StepWriter(llvm::raw_ostream &os, const std::vector<Shape> &shapes,
             const StepOptions &options)
      : os(os), shapes(shapes), options(options),
        state(options.loopSteps > 0 ? "l" : ""),
        indent(options.loopSteps > 0 ? "    " : "  ") {}

  void write() {
    os << "zero.mesh @dp(shape = [" << joined(options.mesh) << "])\n";
    const char *name = options.loopSteps > 0 ? "train" : "step";
    os << "func.func @" << name << "(";
    for (size_t k = 0; k < shapes.size(); ++k) {
      std::string t = type(k);
      os << "%w" << k << ": " << t << ", %m" << k << ": " << t << ", %v" << k
         << ": " << t << ", ";
      if (options.forwardBatch > 0)
        os << "%x" << k << ": " << dataType(k) << ", ";
      else
        os << "%g" << k << ": " << t << ", ";
    }
    os << "%t: f32) -> (" << stateTypes() << ") {\n";
    if (options.loopSteps > 0)
      writeLoop();
    else {
      writeBody("%t");
      os << "  return " << results() << " : " << stateTypes() << "\n";
    }
    os << "}\n";
  }

private:
  std::string type(size_t k, const char *element = "f32") const {
    return tensorType(shapes[k], element);
  }

  /// Features of tensor k's layer: the product of its dimensions after the
  /// first, or a vector's length.
  int64_t features(size_t k) const {
    const Shape &shape = shapes[k];
    if (shape.size() < 2)
      return shape.empty() ? 1 : shape[0];
    return countElements({Shape(shape.begin() + 1, shape.end())});
  }

  /// A batch of B rows of `columns` values.
  std::string batchType(int64_t columns, const char *element = "f32") const {
    return llvm::formatv("tensor<{0}x{1}x{2}>", options.forwardBatch, columns,
                         element)
        .str();
  }

  /// Tensor k's data: B rows of its layer's features.
  std::string dataType(size_t k) const { return batchType(features(k)); }

  /// The local gradient of tensor k that its all-reduce reads.
  std::string localGradient(size_t k) const {
    return (options.forwardBatch > 0 ? "%gl" : "%g") + std::to_string(k);
  }

  /// `%<name> = linalg.fill 0 into tensor.empty() : type`.
  void writeZeros(const std::string &name, const std::string &type) {
    os << indent << "%" << name << "e = tensor.empty() : " << type << "\n"
       << indent << "%" << name << " = linalg.fill ins(%fzero : f32) outs(%"
       << name << "e : " << type << ") -> " << type << "\n";
  }

  /// `%<result> = linalg.transpose` of a 2-D `value` of rows x columns.
  void writeTranspose(const std::string &result, const std::string &value,
                      int64_t rows, int64_t columns,
                      const char *element = "f32") {
    std::string from =
        llvm::formatv("tensor<{0}x{1}x{2}>", rows, columns, element);
    std::string to =
        llvm::formatv("tensor<{0}x{1}x{2}>", columns, rows, element);
    os << indent << "%" << result << "e = tensor.empty() : " << to << "\n"
       << indent << "%" << result << " = linalg.transpose ins(" << value
       << " : " << from << ") outs(%" << result << "e : " << to
       << ") permutation = [1, 0]\n";
  }

  /// Tensor k's layer forward on its data, from the weight `w`. In mixed
  /// precision the layer reads the weight's bf16 rounding (a scale widened
  /// back to f32; a matmul of bf16 data and weight accumulating in f32).
  void writeForward(size_t k, const std::string &w) {
    std::string n = std::to_string(k), data = dataType(k);
    const Shape &shape = shapes[k];
    const char *element = options.mixedPrecision ? "bf16" : "f32";
    std::string weight = w;
    if (options.mixedPrecision) {
      os << indent << "%wr" << n << " = arith.truncf " << w << " : " << type(k)
         << " to " << type(k, "bf16") << "\n";
      weight = "%wr" + n;
    }
    if (shape.size() < 2) {
      if (options.mixedPrecision) {
        os << indent << "%wx" << n << " = arith.extf " << weight << " : "
           << type(k, "bf16") << " to " << type(k) << "\n";
        weight = "%wx" + n;
      }
      os << indent << "%wbe" << n << " = tensor.empty() : " << data << "\n"
         << indent << "%wb" << n << " = linalg.broadcast ins(" << weight
         << " : " << type(k) << ") outs(%wbe" << n << " : " << data
         << ") dimensions = [0]\n"
         << indent << "%z" << n << " = arith.mulf %x" << n << ", %wb" << n
         << " : " << data << "\n";
      return;
    }
    int64_t rows = shape[0], columns = features(k);
    std::string flat =
        llvm::formatv("tensor<{0}x{1}x{2}>", rows, columns, element);
    if (shape.size() > 2) {
      os << indent << "%fw" << n << " = tensor.collapse_shape " << weight
         << " " << trailingGroups(k) << " : " << type(k, element) << " into "
         << flat << "\n";
      weight = "%fw" + n;
    }
    std::string activations = batchType(rows), input = "%x" + n;
    if (options.mixedPrecision) {
      os << indent << "%xr" << n << " = arith.truncf %x" << n << " : " << data
         << " to " << batchType(columns, "bf16") << "\n";
      input = "%xr" + n;
    }
    writeTranspose("wt" + n, weight, rows, columns, element);
    writeZeros("zf" + n, activations);
    os << indent << "%z" << n << " = linalg.matmul ins(" << input << ", %wt"
       << n << " : " << batchType(columns, element) << ", "
       << llvm::formatv("tensor<{0}x{1}x{2}>", columns, rows, element)
       << ") outs(%zf" << n << " : " << activations << ") -> " << activations
       << "\n"
       << indent << "%zb" << n
       << " = arith.constant dense<0.0> : " << activations << "\n"
       << indent << "%a" << n << " = arith.maximumf %z" << n << ", %zb" << n
       << " : " << activations << "\n";
  }

  /// Tensor k's layer backward: its local gradient `%gl k` from the loss,
  /// half the mean over the batch of the activations' squares.
  void writeBackward(size_t k) {
    std::string n = std::to_string(k), data = dataType(k);
    const Shape &shape = shapes[k];
    std::string inverse =
        llvm::formatv("{0:e}", 1.0 / static_cast<double>(options.forwardBatch));
    if (shape.size() < 2) {
      os << indent << "%ib" << n << " = arith.constant dense<" << inverse
         << "> : " << data << "\n"
         << indent << "%dy" << n << " = arith.mulf %z" << n << ", %ib" << n
         << " : " << data << "\n"
         << indent << "%pr" << n << " = arith.mulf %dy" << n << ", %x" << n
         << " : " << data << "\n";
      writeZeros("gf" + n, type(k));
      os << indent << "%gl" << n << " = linalg.reduce ins(%pr" << n << " : "
         << data << ") outs(%gf" << n << " : " << type(k)
         << ") dimensions = [0]\n"
         << indent << "  (%x: f32, %y: f32) {\n"
         << indent << "    %s = arith.addf %x, %y : f32\n"
         << indent << "    linalg.yield %s : f32\n"
         << indent << "  }\n";
      return;
    }
    int64_t rows = shape[0], columns = features(k);
    std::string activations = batchType(rows);
    std::string flat = llvm::formatv("tensor<{0}x{1}xf32>", rows, columns);
    os << indent << "%ib" << n << " = arith.constant dense<" << inverse
       << "> : " << activations << "\n"
       << indent << "%dy" << n << " = arith.mulf %a" << n << ", %ib" << n
       << " : " << activations << "\n"
       << indent << "%relu" << n << " = arith.cmpf ogt, %z" << n << ", %zb" << n
       << " : " << activations << "\n"
       << indent << "%dz" << n << " = arith.select %relu" << n << ", %dy" << n
       << ", %zb" << n << " : " << batchType(rows, "i1") << ", " << activations
       << "\n";
    writeTranspose("dzt" + n, "%dz" + n, options.forwardBatch, rows);
    writeZeros("gf" + n, flat);
    std::string gradient = shape.size() > 2 ? "%gw" + n : "%gl" + n;
    os << indent << gradient << " = linalg.matmul ins(%dzt" << n << ", %x" << n
       << " : "
       << llvm::formatv("tensor<{0}x{1}xf32>", rows, options.forwardBatch)
       << ", " << data << ") outs(%gf" << n << " : " << flat << ") -> " << flat
       << "\n";
    if (shape.size() > 2)
      os << indent << "%gl" << n << " = tensor.expand_shape %gw" << n << " "
         << trailingGroups(k) << " output_shape [" << joined(shape)
         << "] : " << flat << " into " << type(k) << "\n";
  }

  /// The reassociation of tensor k's dimensions as rows x features:
  /// [[0], [1, ..., r-1]].
  std::string trailingGroups(size_t k) const {
    std::vector<int64_t> rest;
    for (size_t d = 1; d < shapes[k].size(); ++d)
      rest.push_back(static_cast<int64_t>(d));
    return "[[0], [" + joined(rest) + "]]";
  }

  std::string stateTypes() const {
    std::string list;
    for (size_t k = 0; k < shapes.size(); ++k) {
      std::string t = type(k);
      list += (k ? ", " : "") + t + ", " + t + ", " + t;
    }
    return list;
  }

  void writeLoop() {
    os << "  %c0 = arith.constant 0 : index\n"
          "  %c1 = arith.constant 1 : index\n"
          "  %steps = arith.constant "
       << options.loopSteps << " : index\n";
    os << "  %r:" << 3 * shapes.size()
       << " = scf.for %i = %c0 to %steps step %c1 iter_args(";
    for (size_t k = 0; k < shapes.size(); ++k)
      os << (k ? ", " : "") << "%lw" << k << " = %w" << k << ", %lm" << k
         << " = %m" << k << ", %lv" << k << " = %v" << k;
    os << ") -> (" << stateTypes() << ") {\n";
    os << "    %i64 = arith.index_cast %i : index to i64\n"
          "    %if = arith.sitofp %i64 : i64 to f32\n"
          "    %ti = arith.addf %t, %if : f32\n";
    writeBody("%ti");
    os << "    scf.yield " << results() << " : " << stateTypes() << "\n";
    os << "  }\n  return ";
    for (size_t r = 0; r < 3 * shapes.size(); ++r)
      os << (r ? ", " : "") << "%r#" << r;
    os << " : " << stateTypes() << "\n";
  }

  std::string results() const {
    std::string list;
    for (size_t k = 0; k < shapes.size(); ++k) {
      std::string n = std::to_string(k);
      list += std::string(k ? ", " : "") + "%W" + n + ", %M" + n + ", %V" + n;
    }
    return list;
  }

  /// One step: the bias corrections, then per tensor its all-reduce (and,
  /// when clipping, its norm term), then per tensor its update.
  void writeBody(const std::string &t) {
    os << indent << "%one = arith.constant 1.0 : f32\n"
       << indent << "%b1s = arith.constant 0.9 : f32\n"
       << indent << "%b2s = arith.constant 0.999 : f32\n"
       << indent << "%p1 = math.powf %b1s, " << t << " : f32\n"
       << indent << "%p2 = math.powf %b2s, " << t << " : f32\n"
       << indent << "%bc1 = arith.subf %one, %p1 : f32\n"
       << indent << "%bc2 = arith.subf %one, %p2 : f32\n"
       << indent << "%inv1 = arith.divf %one, %bc1 : f32\n"
       << indent << "%inv2 = arith.divf %one, %bc2 : f32\n";
    if (options.clip || options.optimizer == Optimizer::Lamb)
      os << indent << "%zero = arith.constant 0.0 : f32\n"
         << indent << "%e0 = tensor.empty() : tensor<f32>\n"
         << indent
         << "%acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> "
            "tensor<f32>\n";
    // The order gradients are made in: the backward's, last layer first.
    std::vector<size_t> order;
    for (size_t k = 0; k < shapes.size(); ++k)
      order.push_back(k);
    if (options.forwardBatch > 0) {
      os << indent << "%fzero = arith.constant 0.0 : f32\n";
      for (size_t k : order)
        writeForward(k, "%" + state + "w" + std::to_string(k));
      std::reverse(order.begin(), order.end());
    }
    auto writeGradient = [&](size_t k) {
      if (options.forwardBatch > 0)
        writeBackward(k);
      writeAllReduce(k);
    };
    if (!options.clip) {
      for (size_t k : order) {
        writeGradient(k);
        writeUpdate(k, "%G" + std::to_string(k));
      }
      return;
    }
    std::string total = "%acc";
    for (size_t k : order) {
      std::string n = std::to_string(k);
      writeGradient(k);
      total = writeSumOfSquares("%G" + n, "G" + n, k, total);
    }
    os << indent << "%ssq = tensor.extract " << total << "[] : tensor<f32>\n"
       << indent << "%norm = math.sqrt %ssq : f32\n"
       << indent << "%clip_eps = arith.constant 1.0e-6 : f32\n"
       << indent << "%norm_eps = arith.addf %norm, %clip_eps : f32\n"
       << indent << "%ratio = arith.divf %one, %norm_eps : f32\n"
       << indent << "%clip = arith.minimumf %ratio, %one : f32\n";
    for (size_t k : order) {
      std::string n = std::to_string(k), t = type(k);
      os << indent << "%cs" << n << " = tensor.splat %clip : " << t << "\n"
         << indent << "%Gc" << n << " = arith.mulf %G" << n << ", %cs" << n
         << " : " << t << "\n";
      writeUpdate(k, "%Gc" + n);
    }
  }

  void writeAllReduce(size_t k) {
    os << indent << "%G" << k << " = zero.all_reduce " << localGradient(k)
       << " on @dp";
    if (!options.axes.empty())
      os << " axes = [" << joined(options.axes) << "]";
    os << " reduce = mean : " << type(k) << "\n";
  }

  /// `%<tag>sq = value * value`, flattened and summed into a 0-d
  /// accumulator that starts at `init`; returns the new accumulator's name.
  std::string writeSumOfSquares(const std::string &value, const std::string &x,
                                size_t k, const std::string &init) {
    std::string t = type(k);
    std::string squares = "%" + x + "sq";
    os << indent << squares << " = arith.mulf " << value << ", " << value
       << " : " << t << "\n";
    const Shape &shape = shapes[k];
    if (shape.size() > 1) {
      std::vector<int64_t> dims;
      for (size_t d = 0; d < shape.size(); ++d)
        dims.push_back(static_cast<int64_t>(d));
      std::string flat =
          "tensor<" + std::to_string(countElements({shape})) + "xf32>";
      os << indent << "%" << x << "flat = tensor.collapse_shape " << squares
         << " [[" << joined(dims) << "]] : " << t << " into " << flat << "\n";
      squares = "%" + x + "flat";
    }
    std::string sum = "%" + x + "sum";
    os << indent << sum << " = linalg.reduce ins(" << squares << " : tensor<"
       << countElements({shape}) << "xf32>) outs(" << init
       << " : tensor<f32>) dimensions = [0]\n"
       << indent << "  (%x: f32, %y: f32) {\n"
       << indent << "    %s = arith.addf %x, %y : f32\n"
       << indent << "    linalg.yield %s : f32\n"
       << indent << "  }\n";
    return sum;
  }

  /// Tensor k's update from its reduced gradient `g`: new moments `%M k`,
  /// `%V k` and weight `%W k`.
  void writeUpdate(size_t k, const std::string &g) {
    std::string t = type(k), n = std::to_string(k);
    std::string w = "%" + state + "w" + n, m = "%" + state + "m" + n,
                v = "%" + state + "v" + n;
    auto constant = [&](const char *name, const char *value) {
      os << indent << "%" << name << n << " = arith.constant dense<" << value
         << "> : " << t << "\n";
    };
    auto op = [&](const char *result, const char *name, std::string a,
                  std::string b) {
      os << indent << "%" << result << n << " = " << name << " " << a << ", "
         << b << " : " << t << "\n";
    };
    constant("b1_", "0.9");
    constant("c1_", "0.1");
    constant("b2_", "0.999");
    constant("c2_", "0.001");
    constant("eps", "1.0e-8");
    constant("lr", "0.001");
    constant("wd", "0.01");
    os << indent << "%i1_" << n << " = tensor.splat %inv1 : " << t << "\n";
    os << indent << "%i2_" << n << " = tensor.splat %inv2 : " << t << "\n";
    op("ma", "arith.mulf", m, "%b1_" + n);
    op("mb", "arith.mulf", g, "%c1_" + n);
    op("M", "arith.addf", "%ma" + n, "%mb" + n);
    op("va", "arith.mulf", v, "%b2_" + n);
    op("gg", "arith.mulf", g, g);
    op("vb", "arith.mulf", "%gg" + n, "%c2_" + n);
    op("V", "arith.addf", "%va" + n, "%vb" + n);
    op("mh", "arith.mulf", "%M" + n, "%i1_" + n);
    op("vh", "arith.mulf", "%V" + n, "%i2_" + n);
    os << indent << "%sq" << n << " = math.sqrt %vh" << n << " : " << t << "\n";
    op("den", "arith.addf", "%sq" + n, "%eps" + n);
    op("u", "arith.divf", "%mh" + n, "%den" + n);
    op("dec", "arith.mulf", w, "%wd" + n);
    op("upd", "arith.addf", "%u" + n, "%dec" + n);
    if (options.optimizer == Optimizer::AdamW) {
      op("d", "arith.mulf", "%upd" + n, "%lr" + n);
      op("W", "arith.subf", w, "%d" + n);
      return;
    }
    // LAMB: the step scales by ||w|| / ||r||, r the AdamW direction.
    std::string wsum = writeSumOfSquares(w, "nw" + n + "_", k, "%acc");
    std::string rsum = writeSumOfSquares("%upd" + n, "nr" + n + "_", k, "%acc");
    os << indent << "%nws" << n << " = tensor.extract " << wsum
       << "[] : tensor<f32>\n"
       << indent << "%nrs" << n << " = tensor.extract " << rsum
       << "[] : tensor<f32>\n"
       << indent << "%nw" << n << " = math.sqrt %nws" << n << " : f32\n"
       << indent << "%nr" << n << " = math.sqrt %nrs" << n << " : f32\n"
       << indent << "%trust" << n << " = arith.divf %nw" << n << ", %nr" << n
       << " : f32\n"
       << indent << "%lrs" << n << " = arith.constant 0.001 : f32\n"
       << indent << "%stp" << n << " = arith.mulf %lrs" << n << ", %trust" << n
       << " : f32\n"
       << indent << "%stpt" << n << " = tensor.splat %stp" << n << " : " << t
       << "\n";
    op("d", "arith.mulf", "%upd" + n, "%stpt" + n);
    op("W", "arith.subf", w, "%d" + n);
  }

  llvm::raw_ostream &os;
  const std::vector<Shape> &shapes;
  const StepOptions &options;
  std::string state;
  std::string indent;
};

} // namespace

std::string zero::bench::optimizerStep(const std::vector<Shape> &shapes,
                                       const StepOptions &options) {
  std::string s;
  llvm::raw_string_ostream os(s);
  StepWriter(os, shapes, options).write();
  return s;
}

std::string zero::bench::adamwStep(const std::vector<Shape> &shapes,
                                   int64_t meshSize) {
  StepOptions options;
  options.mesh = {meshSize};
  return optimizerStep(shapes, options);
}

std::string zero::bench::mlpTrainingLoop(int layers, int64_t width,
                                         int64_t batch, int steps,
                                         int64_t meshSize, bool losses) {
  std::string out;
  llvm::raw_string_ostream os(out);
  auto t = [](int64_t rows, int64_t cols) {
    return llvm::formatv("tensor<{0}x{1}xf32>", rows, cols).str();
  };
  std::string w = t(width, width), h = t(batch, width);
  std::string mask = llvm::formatv("tensor<{0}x{1}xi1>", batch, width).str();
  // "item(1), item(2), ..., item(layers)".
  auto perLayer = [&](auto item) {
    std::string list;
    for (int l = 1; l <= layers; ++l)
      list += (l > 1 ? ", " : "") + item(l);
    return list;
  };
  std::string weightTypes = perLayer([&](int) { return w; });
  std::string lossType = llvm::formatv("tensor<{0}xf32>", steps).str();
  // What the loop carries and the function returns.
  std::string carriedTypes = weightTypes + (losses ? ", " + lossType : "");
  os << "zero.mesh @dp(shape = [" << meshSize << "])\n";
  os << "func.func @train(";
  os << perLayer(
            [&](int l) { return llvm::formatv("%w{0}_0: {1}", l, w).str(); })
     << ", %x: " << h << ") -> (" << carriedTypes << ") {\n";
  os << "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n";
  os << "  %steps = arith.constant " << steps << " : index\n";
  os << "  %zero = arith.constant 0.0 : f32\n";
  os << "  %zh = arith.constant dense<0.0> : " << h << "\n";
  os << "  %scale = arith.constant dense<"
     << llvm::formatv("{0:e}", 2.0 / (batch * width)) << "> : " << h << "\n";
  os << "  %lr = arith.constant dense<0.01> : " << w << "\n";
  os << "  %eh = tensor.empty() : " << h << "\n";
  os << "  %ew = tensor.empty() : " << w << "\n";
  os << "  %et = tensor.empty() : " << t(width, batch) << "\n";
  os << "  %fh = linalg.fill ins(%zero : f32) outs(%eh : " << h << ") -> " << h
     << "\n";
  os << "  %fw = linalg.fill ins(%zero : f32) outs(%ew : " << w << ") -> " << w
     << "\n";
  if (losses) {
    os << "  %el = tensor.empty() : " << lossType << "\n";
    os << "  %losses0 = linalg.fill ins(%zero : f32) outs(%el : " << lossType
       << ") -> " << lossType << "\n";
    os << "  %es = tensor.empty() : tensor<f32>\n";
    os << "  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> "
          "tensor<f32>\n";
    os << "  %elements = arith.constant "
       << llvm::formatv("{0:e}", static_cast<double>(batch * width))
       << " : f32\n";
  }
  os << "  %r:" << layers + (losses ? 1 : 0)
     << " = scf.for %i = %c0 to %steps step %c1 iter_args(";
  os << perLayer(
            [](int l) { return llvm::formatv("%w{0} = %w{0}_0", l).str(); })
     << (losses ? ", %losses = %losses0" : "") << ") -> (" << carriedTypes
     << ") {\n";
  // Forward.
  os << "    %h0 = arith.addf %x, %zh : " << h << "\n";
  for (int l = 1; l <= layers; ++l) {
    os << "    %z" << l << " = linalg.matmul ins(%h" << l - 1 << ", %w" << l
       << " : " << h << ", " << w << ") outs(%fh : " << h << ") -> " << h
       << "\n";
    if (l < layers) {
      os << "    %p" << l << " = arith.cmpf ogt, %z" << l << ", %zh : " << h
         << "\n";
      os << "    %h" << l << " = arith.select %p" << l << ", %z" << l
         << ", %zh : " << mask << ", " << h << "\n";
    } else {
      os << "    %h" << l << " = arith.addf %z" << l << ", %zh : " << h << "\n";
    }
  }
  // Loss gradient of the mean squared error against the identity.
  os << "    %d = arith.subf %h" << layers << ", %x : " << h << "\n";
  os << "    %g" << layers << " = arith.mulf %d, %scale : " << h << "\n";
  if (losses) {
    // This rank's sum of squares, the ranks' mean, per element.
    os << "    %sq = arith.mulf %d, %d : " << h << "\n";
    os << "    %ls = linalg.reduce { arith.addf } ins(%sq : " << h
       << ") outs(%fs : tensor<f32>) dimensions = [0, 1]\n";
    os << "    %lg = zero.all_reduce %ls on @dp reduce = mean : tensor<f32>\n";
    os << "    %lt = tensor.extract %lg[] : tensor<f32>\n";
    os << "    %loss = arith.divf %lt, %elements : f32\n";
    os << "    %losses2 = tensor.insert %loss into %losses[%i] : " << lossType
       << "\n";
  }
  // Backward: each weight's gradient as soon as its layer is done, then the
  // gradient of the layer below.
  for (int l = layers; l >= 1; --l) {
    os << "    %ht" << l << " = linalg.transpose ins(%h" << l - 1 << " : " << h
       << ") outs(%et : " << t(width, batch) << ") permutation = [1, 0]\n";
    os << "    %dwl" << l << " = linalg.matmul ins(%ht" << l << ", %g" << l
       << " : " << t(width, batch) << ", " << h << ") outs(%fw : " << w
       << ") -> " << w << "\n";
    os << "    %dw" << l << " = zero.all_reduce %dwl" << l
       << " on @dp reduce = mean : " << w << "\n";
    if (l > 1) {
      os << "    %wt" << l << " = linalg.transpose ins(%w" << l << " : " << w
         << ") outs(%ew : " << w << ") permutation = [1, 0]\n";
      os << "    %gz" << l - 1 << " = linalg.matmul ins(%g" << l << ", %wt" << l
         << " : " << h << ", " << w << ") outs(%fh : " << h << ") -> " << h
         << "\n";
      os << "    %g" << l - 1 << " = arith.select %p" << l - 1 << ", %gz"
         << l - 1 << ", %zh : " << mask << ", " << h << "\n";
    }
  }
  for (int l = 1; l <= layers; ++l) {
    os << "    %u" << l << " = arith.mulf %dw" << l << ", %lr : " << w << "\n";
    os << "    %n" << l << " = arith.subf %w" << l << ", %u" << l << " : " << w
       << "\n";
  }
  os << "    scf.yield "
     << perLayer([](int l) { return "%n" + std::to_string(l); })
     << (losses ? ", %losses2" : "") << " : " << carriedTypes << "\n  }\n";
  os << "  return "
     << perLayer([](int l) { return "%r#" + std::to_string(l - 1); })
     << (losses ? ", %r#" + std::to_string(layers) : "") << " : "
     << carriedTypes << "\n}\n";
  return out;
}
