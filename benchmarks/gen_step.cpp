//===- gen_step.cpp - print a real model's optimizer step -----------------===//
//
// Prints an optimizer step over a real model's parameter shapes as a zero
// program, written per parameter as users write it (see Programs.h):
//
//   zero-gen-step                      # GPT-2 small AdamW: 148 tensors
//   zero-gen-step --model bert --clip  # BERT-base AdamW, global-norm clipping
//   zero-gen-step --model resnet50 --optimizer lamb --mesh 2x4 --axes 1
//   zero-gen-step --model bert --scale 64 --loop 3  # runnable sizes, 3 steps
//   zero-gen-step --layers 2 --width 8 --vocab 97 --context 16  # tiny GPT-2
//   zero-gen-step --tensors 4000       # 4000 transformer-shaped tensors
//   zero-gen-step --model resnet50 --batch 4  # with forward and backward
//
//===----------------------------------------------------------------------===//

#include "Programs.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

using namespace zero::bench;
namespace cl = llvm::cl;

namespace {
enum class Model { Gpt2, Bert, Resnet50 };
} // namespace

static cl::OptionCategory toolOptions("zero-gen-step options");
static cl::opt<Model> model(
    "model", cl::cat(toolOptions), cl::desc("Whose parameter shapes"),
    cl::values(clEnumValN(Model::Gpt2, "gpt2",
                          "GPT-2 (small by default; see --layers, --width, "
                          "--vocab, --context)"),
               clEnumValN(Model::Bert, "bert", "BERT-base: 199 tensors"),
               clEnumValN(Model::Resnet50, "resnet50",
                          "ResNet-50: 161 tensors")),
    cl::init(Model::Gpt2));
static cl::opt<Optimizer> optimizer(
    "optimizer", cl::cat(toolOptions), cl::desc("The update rule"),
    cl::values(clEnumValN(Optimizer::AdamW, "adamw", "AdamW"),
               clEnumValN(Optimizer::Lamb, "lamb",
                          "LAMB: AdamW scaled by ||w|| / ||r|| per tensor")),
    cl::init(Optimizer::AdamW));
static cl::opt<bool>
    clip("clip", cl::cat(toolOptions),
         cl::desc("Clip the gradients' global norm to 1; each gradient's norm "
                  "term follows its all-reduce"));
static cl::opt<int> layers("layers", cl::cat(toolOptions),
                           cl::desc("GPT-2: transformer blocks"), cl::init(12));
static cl::opt<int64_t> width("width", cl::cat(toolOptions),
                              cl::desc("GPT-2: hidden size"), cl::init(768));
static cl::opt<int64_t> vocab("vocab", cl::cat(toolOptions),
                              cl::desc("GPT-2: vocabulary size"),
                              cl::init(50257));
static cl::opt<int64_t> context("context", cl::cat(toolOptions),
                                cl::desc("GPT-2: context length"),
                                cl::init(1024));
static cl::opt<int64_t>
    tensors("tensors", cl::cat(toolOptions),
            cl::desc("Instead of a model: this many tensors of GPT-2 small's "
                     "shapes, repeated"),
            cl::init(0));
static cl::opt<int64_t>
    scale("scale", cl::cat(toolOptions),
          cl::desc("Divide every dimension by this, rounded up (the same "
                   "tensors at sizes that run quickly)"),
          cl::init(1));
static cl::opt<std::string>
    mesh("mesh", cl::cat(toolOptions),
         cl::desc("Shape of the mesh @dp: N, or RxC for a 2-D mesh"),
         cl::init("4"));
static cl::list<int64_t>
    axes("axes", cl::cat(toolOptions), cl::CommaSeparated,
         cl::desc("Mesh axes the gradients are averaged over (default: all)"));
static cl::opt<bool>
    printShapes("shapes", cl::cat(toolOptions),
                cl::desc("Print the parameter shapes, one a line (AxB), in "
                         "place of the program (for a peer that builds the "
                         "same model)"));
static cl::opt<int64_t>
    loop("loop", cl::cat(toolOptions),
         cl::desc("0: one step @step; K: a training loop @train of K steps "
                  "carrying the weights and moments"),
         cl::init(0));

static cl::opt<int64_t> batch(
    "batch", cl::cat(toolOptions),
    cl::desc("0: the step takes each local gradient as an argument; B: it "
             "computes them by a forward and backward of each tensor's layer "
             "over B rows of per-rank data (see Programs.h)"),
    cl::init(0));

static cl::opt<bool> mixedPrecision(
    "mixed-precision", cl::cat(toolOptions),
    cl::desc("With --batch: each layer reads its fp32 master weight's bf16 "
             "rounding (see Programs.h)"));

/// "8" or "2x4" as a mesh shape; empty when malformed.
static std::vector<int64_t> parseMesh(llvm::StringRef text) {
  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, 'x');
  for (llvm::StringRef part : parts) {
    int64_t size;
    if (part.getAsInteger(10, size) || size < 1)
      return {};
    shape.push_back(size);
  }
  return shape;
}

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(argc, argv,
                              "Prints an optimizer step over a model's "
                              "parameter shapes\n");
  StepOptions options;
  options.optimizer = optimizer;
  options.clip = clip;
  options.mesh = parseMesh(mesh);
  options.axes.assign(axes.begin(), axes.end());
  options.loopSteps = loop;
  options.forwardBatch = batch;
  options.mixedPrecision = mixedPrecision;
  if (options.mesh.empty()) {
    llvm::errs() << "zero-gen-step: --mesh must be N or RxC with positive "
                    "sizes, got '"
                 << mesh << "'\n";
    return 1;
  }
  for (int64_t axis : options.axes)
    if (axis < 0 || axis >= static_cast<int64_t>(options.mesh.size())) {
      llvm::errs() << "zero-gen-step: --axes " << axis
                   << " is not an axis of the mesh " << mesh << "\n";
      return 1;
    }
  if (mixedPrecision && batch == 0) {
    llvm::errs() << "zero-gen-step: --mixed-precision needs --batch: the "
                    "weights' roundings are what the forward pass reads\n";
    return 1;
  }
  if (layers < 0 || width < 1 || vocab < 1 || context < 1 || tensors < 0 ||
      scale < 1 || loop < 0 || batch < 0) {
    llvm::errs() << "zero-gen-step: sizes must be positive\n";
    return 1;
  }
  std::vector<Shape> shapes;
  if (tensors > 0)
    shapes = transformerShapes(tensors);
  else if (model == Model::Bert)
    shapes = bertBaseShapes();
  else if (model == Model::Resnet50)
    shapes = resnet50Shapes();
  else
    shapes = gpt2Shapes(Gpt2Config{layers, width, vocab, context});
  shapes = scaleShapes(shapes, scale);
  if (printShapes) {
    for (const Shape &shape : shapes)
      llvm::outs() << llvm::join(llvm::map_range(shape,
                                                 [](int64_t d) {
                                                   return std::to_string(d);
                                                 }),
                                 "x")
                   << "\n";
    return 0;
  }
  llvm::outs() << "// " << (optimizer == Optimizer::Lamb ? "LAMB" : "AdamW")
               << (clip ? " with global-norm clipping" : "") << " over "
               << shapes.size() << " tensors, " << countElements(shapes)
               << " parameters"
               << (batch > 0 ? ", with each layer's forward and backward over "
                               "a batch of " +
                                   std::to_string(batch)
                             : std::string())
               << (mixedPrecision ? " on the weights' bf16 roundings"
                                  : "")
               << "; generated by zero-gen-step.\n"
               << optimizerStep(shapes, options);
  return 0;
}
