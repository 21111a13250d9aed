//===- Programs.cpp - generated optimizer steps over real shapes ----------===//

#include "Programs.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

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

std::vector<Shape> zero::bench::transformerShapes(int64_t count) {
  Gpt2Config config;
  config.layers = static_cast<int>((count + 11) / 12);
  std::vector<Shape> shapes = gpt2Shapes(config);
  shapes.resize(count);
  return shapes;
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

static std::string tensorType(const Shape &shape) {
  std::string t = "tensor<";
  for (int64_t d : shape)
    t += std::to_string(d) + "x";
  return t + "f32>";
}

std::string zero::bench::adamwStep(const std::vector<Shape> &shapes,
                                   int64_t n) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "zero.mesh @dp(shape = [" << n << "])\nfunc.func @step(";
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::string t = tensorType(shapes[i]);
    os << "%w" << i << ": " << t << ", %m" << i << ": " << t << ", %v" << i
       << ": " << t << ", %g" << i << ": " << t << ", ";
  }
  os << "%t: f32) -> (";
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::string t = tensorType(shapes[i]);
    os << (i ? ", " : "") << t << ", " << t << ", " << t;
  }
  os << ") {\n";
  os << "  %one = arith.constant 1.0 : f32\n"
        "  %b1s = arith.constant 0.9 : f32\n"
        "  %b2s = arith.constant 0.999 : f32\n"
        "  %p1 = math.powf %b1s, %t : f32\n"
        "  %p2 = math.powf %b2s, %t : f32\n"
        "  %bc1 = arith.subf %one, %p1 : f32\n"
        "  %bc2 = arith.subf %one, %p2 : f32\n"
        "  %inv1 = arith.divf %one, %bc1 : f32\n"
        "  %inv2 = arith.divf %one, %bc2 : f32\n";
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::string t = tensorType(shapes[i]), k = std::to_string(i);
    auto c = [&](const char *name, const char *value) {
      os << "  %" << name << k << " = arith.constant dense<" << value
         << "> : " << t << "\n";
    };
    c("b1_", "0.9");
    c("c1_", "0.1");
    c("b2_", "0.999");
    c("c2_", "0.001");
    c("eps", "1.0e-8");
    c("lr", "0.001");
    c("wd", "0.01");
    os << "  %i1_" << k << " = tensor.splat %inv1 : " << t << "\n";
    os << "  %i2_" << k << " = tensor.splat %inv2 : " << t << "\n";
    os << "  %G" << k << " = zero.all_reduce %g" << k
       << " on @dp reduce = mean : " << t << "\n";
    auto op = [&](const char *result, const char *name, std::string a,
                  std::string b) {
      os << "  %" << result << k << " = " << name << " " << a << ", " << b
         << " : " << t << "\n";
    };
    op("ma", "arith.mulf", "%m" + k, "%b1_" + k);
    op("mb", "arith.mulf", "%G" + k, "%c1_" + k);
    op("M", "arith.addf", "%ma" + k, "%mb" + k);
    op("va", "arith.mulf", "%v" + k, "%b2_" + k);
    op("gg", "arith.mulf", "%G" + k, "%G" + k);
    op("vb", "arith.mulf", "%gg" + k, "%c2_" + k);
    op("V", "arith.addf", "%va" + k, "%vb" + k);
    op("mh", "arith.mulf", "%M" + k, "%i1_" + k);
    op("vh", "arith.mulf", "%V" + k, "%i2_" + k);
    os << "  %sq" << k << " = math.sqrt %vh" << k << " : " << t << "\n";
    op("den", "arith.addf", "%sq" + k, "%eps" + k);
    op("u", "arith.divf", "%mh" + k, "%den" + k);
    op("dec", "arith.mulf", "%w" + k, "%wd" + k);
    op("upd", "arith.addf", "%u" + k, "%dec" + k);
    op("d", "arith.mulf", "%upd" + k, "%lr" + k);
    op("W", "arith.subf", "%w" + k, "%d" + k);
  }
  os << "  return ";
  for (size_t i = 0; i < shapes.size(); ++i)
    os << (i ? ", " : "") << "%W" << i << ", %M" << i << ", %V" << i;
  os << " : ";
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::string t = tensorType(shapes[i]);
    os << (i ? ", " : "") << t << ", " << t << ", " << t;
  }
  os << "\n}\n";
  return s;
}

std::string zero::bench::mlpTrainingLoop(int layers, int64_t width,
                                         int64_t batch, int steps,
                                         int64_t meshSize) {
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
  os << "zero.mesh @dp(shape = [" << meshSize << "])\n";
  os << "func.func @train(";
  os << perLayer(
            [&](int l) { return llvm::formatv("%w{0}_0: {1}", l, w).str(); })
     << ", %x: " << h << ") -> (" << weightTypes << ") {\n";
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
  os << "  %r:" << layers
     << " = scf.for %i = %c0 to %steps step %c1 iter_args(";
  os << perLayer(
            [](int l) { return llvm::formatv("%w{0} = %w{0}_0", l).str(); })
     << ") -> (" << weightTypes << ") {\n";
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
     << perLayer([](int l) { return "%n" + std::to_string(l); }) << " : "
     << weightTypes << "\n  }\n";
  os << "  return "
     << perLayer([](int l) { return "%r#" + std::to_string(l - 1); }) << " : "
     << weightTypes << "\n}\n";
  return out;
}
