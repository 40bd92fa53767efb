// OpenCL C generation (codegen/codegen.h): destination-passing generation of statements from a
// low-level weft definition.
//
// The definition is type-checked first; every node's type comes from that side table. Then:
//  - host level: the top of the body is walked; each mapGlb/mapWrg found there becomes one
//    kernel writing its destination buffer. Layout primitives on the way (join, split,
//    transpose, asVector, asScalar) turn the destination view instead of allocating anything.
//    A kernel argument that is itself computed becomes an earlier kernel writing a temporary
//    buffer (so pad -> partial convolution -> reduction -> crop is a chain of kernels). A body
//    with no parallel map at its top runs as a single work-item kernel.
//  - inside a kernel: genWrite(e, dest) emits the statements that compute e into the view
//    dest; genView(e) builds the view of a value that is only read (allocating memory only
//    when e computes an array); genScalar(e) returns a C expression for scalar values.
//  - launch sizes come from a pre-pass over the kernel's parallel maps: a parallel map whose
//    trip count equals its dimension's launch size has no loop, a sequential map of one
//    iteration has no loop, and mapSeqUnroll/reduceSeqUnroll repeat their body.
//  - loop unswitching of pad guards: an innermost sequential loop whose body reads several
//    elements through constant-pad guards that do not depend on the loop's index is emitted
//    once per outcome of up to four such guards, checked before it (a firing guard's reads
//    are the pad value, the others read unguarded); with more guards, twice: unguarded when
//    none fires, guarded otherwise. A float sum's product with a literal zero factor (what a
//    firing zero-pad read gives) is dropped, so border copies skip the padded taps (see
//    floatSumWithProduct for the float semantics this assumes).
//  - a reduce whose initial value is the enclosing reduce step's accumulator (a private array
//    the step reads only there, no loop in between: reduce-nest-inner-level's inner reduce)
//    updates that accumulator in place instead of a copy of its own.
//  - interior fast path: a work-item of mapGlb(0) whose clamp/mirror pad reads are affine in
//    its index is emitted twice under one work-group-uniform check: unclamped when the whole
//    group reads inside the padded array, as before otherwise (withInteriorFastPath).
//  - a float division by a float literal c is a multiplication by the float nearest 1/c
//    (reciprocalOfDivisor): exact when c is a power of two; otherwise within 1.5 ulp of the
//    quotient, inside the 2.5 ulp OpenCL 1.2 allows for x / y (section 7.4) without
//    -cl-fp32-correctly-rounded-divide-sqrt. Halide 14 does the same (its lowered statement for
//    inp(x) / 3.0f reads inp[...] * 0.333333f); on PoCL blur's divisions by 3 cost about 5 %
//    of its time (issue 9).
//  - barriers follow writes of local (or global) memory by mapLcl that other work-items
//    of the group read, and are placed only where every work-item of the group reaches them;
//    a program that would need one elsewhere is rejected.
//  - argument lists: the global buffers the kernel's text names (views record every buffer
//    they could reach, e.g. both components of a zip read through one), then local buffers,
//    then the size variables as ints; so an input only a preparation kernel reads (weights
//    before their re-layout) is no argument of the per-inference kernels.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "codegen/codegen.h"
#include "codegen/views.h"
#include "typecheck/typecheck.h"

namespace weft {

namespace {

// Loop unswitching emits one copy of a loop per outcome of its hoisted pad guards when there
// are at most this many guards (a register block's first and last column, and its first and
// last row) and the copies stay this short in lines; beyond, two copies (guards inside the
// second).
constexpr size_t kMaxGuardsSplit = 4;
constexpr size_t kMaxSplitLines = 2000;

[[noreturn]] void fail(const Expr& at, const std::string& message) {
  std::string where = at && at.loc().known() ? at.loc().toString() + ": " : std::string();
  throw CodegenError(where + "codegen error: " + message);
}

bool isMapFamily(Op op) {
  return op == Op::Map || op == Op::MapSeq || op == Op::MapSeqUnroll || op == Op::MapGlb ||
         op == Op::MapWrg || op == Op::MapLcl;
}
bool isReduceFamily(Op op) {
  return op == Op::Reduce || op == Op::ReduceSeq || op == Op::ReduceSeqUnroll;
}
bool isParallelMap(Op op) { return op == Op::MapGlb || op == Op::MapWrg || op == Op::MapLcl; }

bool computes(const Expr& e);

// A map whose function only rearranges its argument (map(transpose), map(join)) is a layout
// operation: it computes nothing of its own.
bool isLayoutMap(const Expr& e) {
  return e.isPrim(Op::Map) && e.funs()[0].isLambda() && !computes(e.funs()[0].body());
}

// Primitives that only rearrange data (views), whatever their arguments.
bool isLayoutLike(const Expr& e) {
  if (!e.isPrim()) return false;
  PrimCategory category = e.primInfo().category;
  return category == PrimCategory::Layout || category == PrimCategory::Tuple ||
         e.primOp() == Op::Id || e.primOp() == Op::Fill || isLayoutMap(e);
}

// A value computes something (and so needs statements) unless it is built from params,
// literals and layout primitives only.
bool computes(const Expr& e) {
  if (!e.isPrim()) return false;
  if (isLayoutLike(e)) return std::any_of(e.args().begin(), e.args().end(), computes);
  return true;
}

bool containsOp(const Expr& e, const std::function<bool(Op)>& predicate) {
  bool found = false;
  forEachNode(e, [&](const Expr& node) {
    if (node.isPrim() && predicate(node.primOp())) found = true;
  });
  return found;
}

std::string floatLiteralC(double value) {
  if (value != value) return "NAN";
  if (value > 3.5e38) return "INFINITY";
  if (value < -3.5e38) return "(-INFINITY)";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  std::string text = buffer;
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text + "f";
}

// The multiplier that replaces a float division by the literal `divisor` (see the top of the
// file): the float nearest 1 / divisor, when the divisor is a normal float whose reciprocal is
// one too (no zero, infinity, NaN or subnormal on either side); otherwise nothing.
std::optional<float> reciprocalOfDivisor(double divisor) {
  const float d = static_cast<float>(divisor);
  if (!std::isnormal(d)) return std::nullopt;
  const float reciprocal = 1.0f / d;
  if (!std::isnormal(reciprocal)) return std::nullopt;
  return reciprocal;
}

// True for the C text of a float zero literal, scalar or broadcast: "0.0f", "-0.0f",
// "(float16)(0.0f)" (what a firing constant-pad read of 0 becomes).
bool isFloatZeroText(const std::string& text) {
  std::string inner = text;
  size_t open = inner.find(")(");
  if (inner.rfind("(float", 0) == 0 && open != std::string::npos && inner.back() == ')') {
    inner = inner.substr(open + 2, inner.size() - open - 3);
  }
  return inner == "0.0f" || inner == "-0.0f";
}

std::string cIdentifier(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return out.empty() ? "v" : out;
}

// What one kernel launches: per dimension, the trip counts of its parallel maps.
struct LaunchPlan {
  bool usesGroups = false;
  int dimensions = 1;
  std::array<std::vector<Arith>, 3> glb, wrg, lcl;
  std::array<Arith, 3> globalSize{Arith(1), Arith(1), Arith(1)};
  std::array<Arith, 3> groups{Arith(1), Arith(1), Arith(1)};
  std::array<Arith, 3> localSize{Arith(1), Arith(1), Arith(1)};
};

Arith combinedTripCount(const std::vector<Arith>& counts) {
  if (counts.empty()) return Arith(1);
  Arith result = counts.front();
  for (const Arith& c : counts) result = max(result, c);
  return result;
}

// Statements of one kernel (or helper function) being generated.
struct Emitter {
  std::vector<std::string> lines;
  int indent = 1;
  void line(const std::string& text) { lines.push_back(std::string(2 * indent, ' ') + text); }
  void open(const std::string& text) {
    line(text + " {");
    ++indent;
  }
  void close() {
    --indent;
    line("}");
  }
};

struct PrivateArray {
  std::string name;
  std::string element;
  int64_t size;
};

struct LoopFrame {
  Op op;
  int dimension;
  Arith index;
  Arith tripCount;
  bool repeats;  // the body runs more than once on one work-item (a real or unrolled loop)
};

class Generator {
 public:
  Generator(const Definition& definition, const CodegenOptions& options)
      : definition_(definition), options_(options), typed_(typecheck(definition)) {}

  CompiledProgram run() {
    program_.definitionName = definition_.name;
    program_.outputType = typed_.type;
    const auto& params = definition_.function.params();
    for (size_t i = 0; i < params.size(); ++i) {
      const Expr& p = params[i];
      BufferPlan buffer;
      buffer.name = "in_" + cIdentifier(p.paramName());
      buffer.role = BufferPlan::Role::Input;
      buffer.inputIndex = static_cast<int>(i);
      buffer.type = p.paramType();
      buffer.element = storedScalarKindOrFail(p.paramType(), p);
      buffer.elementCount = scalarCount(p.paramType());
      int index = addBuffer(std::move(buffer));
      env_[p.paramId()] = memoryView(program_.buffers[index].name, p.paramType(),
                                      AddressSpace::Global);
    }
    BufferPlan output;
    output.name = "out";
    output.role = BufferPlan::Role::Output;
    output.type = typed_.type;
    output.element = storedScalarKindOrFail(typed_.type, definition_.function);
    output.elementCount = scalarCount(typed_.type);
    program_.outputBuffer = addBuffer(std::move(output));
    genHost(definition_.function.body(), bufferView(program_.outputBuffer));

    std::string source = "// Generated by weft from definition '" + definition_.name + "'.\n";
    for (const std::string& f : helperFunctions_) source += f + "\n";
    for (const std::string& k : kernelSources_) source += k + "\n";
    program_.source = source;
    std::set<std::string> open;
    for (const auto& b : program_.buffers) {
      for (const Arith& v : b.elementCount.vars()) open.insert(v.varName());
    }
    for (const auto& k : program_.kernels) {
      for (const auto& a : k.args) {
        if (a.kind == KernelArg::Kind::Size) open.insert(a.sizeName);
      }
    }
    for (const std::string& name : open) program_.openSizes.push_back(sizeVar(name));
    return std::move(program_);
  }

 private:
  // ---- buffers, names, types -----------------------------------------------------------
  ScalarKind storedScalarKindOrFail(const Type& type, const Expr& at) {
    try {
      return storedScalarKind(type);
    } catch (const CodegenError& e) {
      fail(at, e.what());
    }
  }

  int addBuffer(BufferPlan buffer) {
    program_.buffers.push_back(std::move(buffer));
    return static_cast<int>(program_.buffers.size()) - 1;
  }

  ViewPtr bufferView(int buffer) {
    return memoryView(program_.buffers[buffer].name, program_.buffers[buffer].type,
                      AddressSpace::Global);
  }

  // A new C name; never one of the program's size variables (they are kernel arguments).
  std::string fresh(const std::string& stem) {
    if (reservedNames_.empty()) {
      reservedNames_.insert("out");
      for (const auto& [node, type] : typed_.types) {
        for (const Arith& v : typeVars(type)) reservedNames_.insert(v.varName());
      }
      forEachNode(definition_.function, [&](const Expr& e) {
        if (!e.isPrim()) return;
        for (const Arith& a : e.nats()) {
          for (const Arith& v : a.vars()) reservedNames_.insert(v.varName());
        }
      });
    }
    std::string name;
    do {
      name = stem + std::to_string(++counter_);
    } while (reservedNames_.count(name));
    return name;
  }

  Arith sizeVar(const std::string& name) {
    for (const Arith& v : allSizeVars_) {
      if (v.varName() == name) return v;
    }
    return Arith::size(name);
  }

  const Type& typeOf(const Expr& e) {
    auto it = typed_.types.find(e.node());
    if (it == typed_.types.end()) fail(e, "internal: no type for a node");
    return it->second;
  }

  // ---- host level ------------------------------------------------------------------------
  // Computes `e` into the global destination `dest` with one or more kernels.
  void genHost(const Expr& e, const ViewPtr& dest) {
    if (e.isPrim()) {
      Op op = e.primOp();
      if (op == Op::MapGlb || op == Op::MapWrg) {
        genKernel(e, dest);
        return;
      }
      if (computes(e)) {
        if (ViewPtr through = inverseLayout(e, dest)) {
          genHost(e.args()[0], through);
          return;
        }
        if (op == Op::Let) {
          const Expr& f = e.funs()[0];
          bind(f.params()[0], genHostView(e.args()[0]));
          genHost(f.body(), dest);
          return;
        }
      }
    }
    // No parallel map at the top: one work-item computes everything.
    genKernel(e, dest);
  }

  // A new global temporary buffer of `type`; a type holding tuples gets one per component
  // (recursively) and the zip of their views.
  ViewPtr temporaryBufferView(const Type& type, const Expr& at) {
    if (holdsTuples(type)) {
      std::vector<ViewPtr> components;
      for (size_t k = 0; k < tupleArity(type); ++k) {
        components.push_back(temporaryBufferView(componentType(type, k), at));
      }
      return zipOfComponents(std::move(components), type);
    }
    BufferPlan buffer;
    buffer.name = fresh("tmp");
    buffer.role = BufferPlan::Role::Temporary;
    buffer.type = type;
    buffer.element = storedScalarKindOrFail(type, at);
    buffer.elementCount = scalarCount(type);
    return bufferView(addBuffer(std::move(buffer)));
  }

  // The view of a value read by a kernel; computed values become earlier kernels.
  ViewPtr genHostView(const Expr& e) {
    if (!computes(e) || (isLayoutLike(e) && !reorderedKernelResult(e))) {
      return layoutView(e, [this](const Expr& a) { return genHostView(a); });
    }
    // One temporary buffer (tuples: one per component, a structure of arrays).
    ViewPtr view = temporaryBufferView(typeOf(e), e);
    genHost(e, view);
    return view;
  }

  // ---- kernels -----------------------------------------------------------------------------
  void genKernel(const Expr& e, const ViewPtr& dest) {
    LaunchPlan launch = planLaunch(e);
    // Inputs of the kernel's outermost map are computed (by earlier kernels) before it.
    ViewPtr outerInput;
    if (e.isPrim() && (e.primOp() == Op::MapGlb || e.primOp() == Op::MapWrg)) {
      outerInput = genHostView(e.args()[0]);
    }
    Emitter saved = std::move(emitter_);
    emitter_ = Emitter{};
    usedBuffers_.clear();
    writtenBuffers_.clear();
    localDeclarations_.clear();
    localArgs_.clear();
    launch_ = launch;
    loops_.clear();
    kernelName_ = "weft_" + cIdentifier(definition_.name) + "_k" +
                  std::to_string(program_.kernels.size());
    if (outerInput) {
      genMap(e, outerInput, dest);
    } else {
      genWrite(e, dest);
    }
    finishKernel();
    emitter_ = std::move(saved);
  }

  // The parallel maps that run in this kernel: for a kernel's outermost map, its own and
  // those in its function (its input is computed by earlier kernels).
  void collectLaunch(const Expr& e, LaunchPlan& plan) {
    bool outerMap = e.isPrim() && (e.primOp() == Op::MapGlb || e.primOp() == Op::MapWrg);
    forEachNode(outerMap ? e.funs()[0] : e, [&](const Expr& node) {
      if (!node.isPrim() || !isParallelMap(node.primOp())) return;
      auto dim = node.nats()[0].constant();
      if (!dim || *dim < 0 || *dim > 2) fail(node, "the dimension must be 0, 1 or 2");
      Arith count = typeOf(node.args()[0]).arrayLength();
      size_t d = static_cast<size_t>(*dim);
      if (node.primOp() == Op::MapGlb) plan.glb[d].push_back(count);
      if (node.primOp() == Op::MapWrg) plan.wrg[d].push_back(count);
      if (node.primOp() == Op::MapLcl) plan.lcl[d].push_back(count);
      plan.dimensions = std::max(plan.dimensions, static_cast<int>(d) + 1);
    });
    if (outerMap) {
      size_t d = static_cast<size_t>(*e.nats()[0].constant());
      if (d > 2) fail(e, "the dimension must be 0, 1 or 2");
      (e.primOp() == Op::MapGlb ? plan.glb : plan.wrg)[d].push_back(
          typeOf(e.args()[0]).arrayLength());
      plan.dimensions = std::max(plan.dimensions, static_cast<int>(d) + 1);
    }
  }

  LaunchPlan planLaunch(const Expr& e) {
    LaunchPlan plan;
    collectLaunch(e, plan);
    bool anyGlb = false, anyGroup = false;
    for (int d = 0; d < 3; ++d) {
      anyGlb |= !plan.glb[d].empty();
      anyGroup |= !plan.wrg[d].empty() || !plan.lcl[d].empty();
    }
    if (anyGlb && anyGroup) {
      fail(e, "a kernel cannot mix mapGlb with mapWrg/mapLcl");
    }
    if (anyGroup) {
      bool anyWrg = false;
      for (int d = 0; d < 3; ++d) anyWrg |= !plan.wrg[d].empty();
      if (!anyWrg) fail(e, "mapLcl must be nested in a mapWrg");
    }
    plan.usesGroups = anyGroup;
    for (size_t d = 0; d < 3; ++d) {
      if (anyGroup) {
        plan.groups[d] = combinedTripCount(plan.wrg[d]);
        plan.localSize[d] = combinedTripCount(plan.lcl[d]);
        plan.globalSize[d] = plan.groups[d] * plan.localSize[d];
      } else {
        plan.globalSize[d] = combinedTripCount(plan.glb[d]);
      }
    }
    return plan;
  }

  // One use of a private array's name as a whole C identifier in a line: [begin, end) in the
  // line; `constantIndex` when `[digits]` follows (the use then ends after the `]`).
  struct ArrayUse {
    size_t begin = 0, end = 0;
    bool constantIndex = false;
    std::string index;
  };

  // The uses of `name` in `line`, left to right. A plain scan: std::regex with word boundaries
  // took seconds on the thousands of lines of an unrolled fused tile (issue 9).
  static std::vector<ArrayUse> usesOfArray(const std::string& line, const std::string& name) {
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
    std::vector<ArrayUse> uses;
    size_t at = line.find(name);
    while (at != std::string::npos) {
      const size_t end = at + name.size();
      if ((at > 0 && word(line[at - 1])) || (end < line.size() && word(line[end]))) {
        at = line.find(name, at + 1);
        continue;
      }
      ArrayUse use;
      use.begin = at;
      use.end = end;
      if (end < line.size() && line[end] == '[') {
        size_t digits = end + 1;
        auto digit = [&](size_t i) {
          return std::isdigit(static_cast<unsigned char>(line[i])) != 0;
        };
        while (digits < line.size() && digit(digits)) ++digits;
        if (digits > end + 1 && digits < line.size() && line[digits] == ']') {
          use.constantIndex = true;
          use.index = line.substr(end + 1, digits - end - 1);
          use.end = digits + 1;
        }
      }
      uses.push_back(use);
      at = line.find(name, use.end);
    }
    return uses;
  }

  // Private arrays that are only ever indexed with constants (after unrolling, or because their
  // loops vanished) become separate scalar variables, which compilers keep in registers (as
  // LIFT's UnrollValues does). Arrays indexed at run time, or used through a pointer (vload),
  // stay arrays.
  static void promotePrivateArrays(std::vector<std::string>& lines,
                                   const std::vector<PrivateArray>& arrays) {
    for (const PrivateArray& array : arrays) {
      const std::string declaration = array.element + " " + array.name + "[" +
                                      std::to_string(array.size) + "];";
      bool promotable = true;
      for (const std::string& line : lines) {
        if (line.find(declaration) != std::string::npos) continue;
        for (const ArrayUse& use : usesOfArray(line, array.name)) {
          promotable = promotable && use.constantIndex;
        }
        if (!promotable) break;
      }
      if (!promotable) continue;
      for (std::string& line : lines) {
        size_t at = line.find(declaration);
        if (at != std::string::npos) {
          std::string scalars = array.element + " ";
          for (int64_t i = 0; i < array.size; ++i) {
            scalars += (i ? ", " : "") + array.name + "_" + std::to_string(i);
          }
          line.replace(at, declaration.size(), scalars + ";");
          continue;
        }
        const std::vector<ArrayUse> uses = usesOfArray(line, array.name);
        if (uses.empty()) continue;
        std::string renamed;
        size_t copied = 0;
        for (const ArrayUse& use : uses) {
          renamed += line.substr(copied, use.begin - copied) + array.name + "_" + use.index;
          copied = use.end;
        }
        line = renamed + line.substr(copied);
      }
    }
  }

  void finishKernel() {
    promotePrivateArrays(emitter_.lines, privateArrays_);
    privateArrays_.clear();
    KernelPlan plan;
    plan.name = kernelName_;
    plan.privateScalars = privateArrayScalars_ + maxLiveAccumulatorScalars_ + 2 * widestVector_;
    plan.privateScalarsExpr = Arith(plan.privateScalars) + symbolicPrivateScalars_;
    symbolicPrivateScalars_ = Arith(0);
    privateArrayScalars_ = liveAccumulatorScalars_ = maxLiveAccumulatorScalars_ = 0;
    widestVector_ = 0;
    plan.dimensions = launch_.dimensions;
    plan.globalSize = launch_.globalSize;
    plan.hasLocalSize = launch_.usesGroups;
    plan.localSize = launch_.localSize;

    // Only the buffers the kernel's text names become arguments: views record every buffer
    // they could reach (a zip's other components, a let-bound array the kernel never reads),
    // and a buffer passed to a kernel that does not touch it would keep it alive (the original
    // weights in the per-inference kernel of the vector family, after their re-layout).
    const std::set<std::string> named = identifiersIn(localDeclarations_, emitter_.lines);
    std::vector<std::string> parameters;
    for (int buffer : usedBuffers_) {
      const BufferPlan& b = program_.buffers[buffer];
      if (named.count(b.name) == 0) continue;
      bool readOnly = writtenBuffers_.count(buffer) == 0;
      parameters.push_back(std::string(readOnly ? "const " : "") + "global " +
                           (b.element == ScalarKind::Float ? "float" : "int") + "* restrict " +
                           b.name);
      KernelArg arg;
      arg.kind = KernelArg::Kind::Buffer;
      arg.buffer = buffer;
      arg.written = !readOnly;
      plan.args.push_back(arg);
    }
    for (const auto& [name, bytes, element] : localArgs_) {
      parameters.push_back("local " + element + "* restrict " + name);
      KernelArg arg;
      arg.kind = KernelArg::Kind::LocalBuffer;
      arg.localBytes = bytes;
      plan.args.push_back(arg);
    }
    // Size variables the kernel's text mentions become int arguments.
    std::set<std::string> sizes;
    auto noteSizes = [&](const Arith& a) {
      for (const Arith& v : a.vars()) {
        if (v.varKind() == VarKind::Size || v.varKind() == VarKind::Tuning) {
          sizes.insert(v.varName());
          rememberSizeVar(v);
        }
      }
    };
    for (const Arith& a : mentionedSizes_) noteSizes(a);
    notedViews_.clear();
    for (const std::string& name : sizes) {
      parameters.push_back("int " + name);
      KernelArg arg;
      arg.kind = KernelArg::Kind::Size;
      arg.sizeName = name;
      plan.args.push_back(arg);
    }
    mentionedSizes_.clear();

    std::string text = "kernel void " + plan.name + "(";
    for (size_t i = 0; i < parameters.size(); ++i) {
      text += (i ? ",\n    " : "") + parameters[i];
    }
    text += ") {\n";
    for (const std::string& d : localDeclarations_) text += "  " + d + "\n";
    for (const std::string& l : emitter_.lines) text += l + "\n";
    text += "}\n";
    kernelSources_.push_back(text);
    program_.kernels.push_back(std::move(plan));
  }

  // Every C identifier in the lines (words of letters, digits and '_' not starting with a
  // digit).
  static std::set<std::string> identifiersIn(const std::vector<std::string>& declarations,
                                             const std::vector<std::string>& lines) {
    std::set<std::string> identifiers;
    auto scan = [&](const std::string& line) {
      auto word = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
      };
      for (size_t i = 0; i < line.size();) {
        if (!word(line[i])) {
          ++i;
          continue;
        }
        size_t end = i;
        while (end < line.size() && word(line[end])) ++end;
        if (std::isdigit(static_cast<unsigned char>(line[i])) == 0) {
          identifiers.insert(line.substr(i, end - i));
        }
        i = end;
      }
    };
    for (const std::string& line : declarations) scan(line);
    for (const std::string& line : lines) scan(line);
    return identifiers;
  }

  void rememberSizeVar(const Arith& v) {
    for (const Arith& known : allSizeVars_) {
      if (known.varName() == v.varName()) return;
    }
    allSizeVars_.push_back(v);
  }

  // Every Arith printed into a kernel is noted so that its size variables become arguments.
  std::string c(const Arith& a) {
    mentionedSizes_.push_back(a);
    return a.toC();
  }

  // ---- views ---------------------------------------------------------------------------
  void bind(const Expr& param, ViewPtr view) { env_[param.paramId()] = std::move(view); }

  ViewPtr lookup(const Expr& param) {
    auto it = env_.find(param.paramId());
    if (it == env_.end()) fail(param, "parameter '" + param.paramName() + "' is not bound");
    return it->second;
  }

  // The view of a layout primitive over the views of its arguments.
  ViewPtr layoutView(const Expr& e, const std::function<ViewPtr(const Expr&)>& viewOf) {
    if (e.isParam()) return lookup(e);
    if (e.isLiteral()) return scalarView(literal(e), typeOf(e));
    if (!e.isPrim()) fail(e, "a function is not a value");
    const auto& nats = e.nats();
    switch (e.primOp()) {
      case Op::Split: return splitView(viewOf(e.args()[0]), nats[0]);
      case Op::Join: return joinView(viewOf(e.args()[0]));
      case Op::Slide:
      case Op::SlideStrict: return slideView(viewOf(e.args()[0]), nats[0], nats[1]);
      case Op::Pad:
        return padView(viewOf(e.args()[0]), nats[0], nats[1], e.attribute().boundary,
                       e.attribute().padValue);
      case Op::Crop: return cropView(viewOf(e.args()[0]), nats[0], nats[1]);
      case Op::Transpose: return transposeView(viewOf(e.args()[0]));
      case Op::Reorder:
        return reorderView(viewOf(e.args()[0]), e.attribute().indexFunction,
                           e.attribute().stride);
      case Op::AsVector: {
        auto width = nats[0].constant();
        if (!width) fail(e, "asVector needs a constant width");
        return asVectorView(viewOf(e.args()[0]), *width);
      }
      case Op::AsScalar: return asScalarView(viewOf(e.args()[0]));
      case Op::Zip:
      case Op::Tuple: {
        std::vector<ViewPtr> components;
        for (const Expr& a : e.args()) components.push_back(viewOf(a));
        return zipView(std::move(components), typeOf(e));
      }
      case Op::Get: return getView(viewOf(e.args()[0]), static_cast<int>(*nats[0].constant()));
      case Op::Id: return viewOf(e.args()[0]);
      case Op::Fill: return fillView(viewOf(e.args()[0]), nats[0]);
      case Op::Map: {
        if (!isLayoutMap(e)) break;
        Expr f = e.funs()[0];
        auto elementOf = [this, f, viewOf](const ViewPtr& element) {
          bind(f.params()[0], element);
          return layoutView(f.body(), viewOf);
        };
        return mapView(viewOf(e.args()[0]), typeOf(f.body()), elementOf);
      }
      default: break;
    }
    fail(e, std::string(e.primInfo().name) + " is not a layout primitive");
  }

  // When `e` only rearranges its first argument in an invertible way, the view through which
  // that argument must be written so that e's value lands in `dest`; null otherwise.
  ViewPtr inverseLayout(const Expr& e, const ViewPtr& dest) {
    if (!e.isPrim()) return nullptr;
    switch (e.primOp()) {
      case Op::Join:
        return splitView(dest, typeOf(e.args()[0]).arrayElement().arrayLength());
      case Op::Split: return joinView(dest);
      case Op::Transpose: return transposeView(dest);
      case Op::AsScalar:
        return asVectorView(dest, typeOf(e.args()[0]).arrayElement().vectorWidth());
      case Op::AsVector: return asScalarView(dest);
      case Op::Id: return dest;
      case Op::Map: {
        if (!isLayoutMap(e)) return nullptr;
        Expr f = e.funs()[0];
        // Every step from the lambda's param up to its body must be invertible.
        if (!invertibleChain(f.body(), f.params()[0])) return nullptr;
        Type elementType = typeOf(e.args()[0]).arrayElement();
        return mapView(dest, elementType, [this, f](const ViewPtr& element) {
          return invertChain(f.body(), f.params()[0], element);
        });
      }
      default: return nullptr;
    }
  }

  bool invertibleChain(const Expr& body, const Expr& param) {
    if (body.isParam()) return body.paramId() == param.paramId();
    if (!body.isPrim()) return false;
    switch (body.primOp()) {
      case Op::Join:
      case Op::Split:
      case Op::Transpose:
      case Op::AsScalar:
      case Op::AsVector:
      case Op::Id: return invertibleChain(body.args()[0], param);
      case Op::Map: return isLayoutMap(body) && invertibleChain(body.args()[0], param) &&
                           invertibleChain(body.funs()[0].body(), body.funs()[0].params()[0]);
      default: return false;
    }
  }

  // A chain of invertible layout steps (join, split, transpose, maps of them) with a transpose
  // in it, over a kernel's parallel map: overlapped tiles laid out tile by tile. Read by later
  // kernels, such a value is stored in its own order (the kernel writes through the inverse
  // views, as for an output), so that readers index it directly instead of through tile-order
  // arithmetic (issue 9: Canny's suppression read the magnitude with gathers on PoCL).
  bool reorderedKernelResult(const Expr& e) {
    bool transposes = false;
    Expr node = e;
    while (node.isPrim() && node.primOp() != Op::MapGlb && node.primOp() != Op::MapWrg) {
      switch (node.primOp()) {
        case Op::Transpose: transposes = true; break;
        case Op::Join:
        case Op::Split:
        case Op::Id: break;
        case Op::Map:
          if (!isLayoutMap(node) ||
              !invertibleChain(node.funs()[0].body(), node.funs()[0].params()[0])) {
            return false;
          }
          transposes = transposes || containsOp(node.funs()[0], [](Op op) {
                         return op == Op::Transpose;
                       });
          break;
        default: return false;
      }
      node = node.args()[0];
    }
    return transposes && node.isPrim();
  }

  ViewPtr invertChain(const Expr& body, const Expr& param, const ViewPtr& out) {
    if (body.isParam()) return out;
    return invertChain(body.args()[0], param, inverseLayout(body, out));
  }

  // The view of a value read inside a kernel.
  ViewPtr genView(const Expr& e) {
    if (!computes(e)) return layoutView(e, [this](const Expr& a) { return genView(a); });
    const Type& type = typeOf(e);
    if (type.isScalar() || type.isVector()) {
      std::string value = genScalar(e);
      std::string name = fresh("v");
      emitter_.line(cTypeName(type) + " " + name + " = " + value + ";");
      noteTemporary(type);
      return variableView(name, type);
    }
    Op op = e.primOp();
    if (isLayoutLike(e)) return layoutView(e, [this](const Expr& a) { return genView(a); });
    if (op == Op::Let) {
      bind(e.funs()[0].params()[0], genView(e.args()[0]));
      return genView(e.funs()[0].body());
    }
    if (op == Op::Apply && e.funs()[0].isLambda()) {
      bindArguments(e.funs()[0], e.args());
      return genView(e.funs()[0].body());
    }
    return materialize(e);
  }

  // Which address space a computed array is placed in: toGlobal/toLocal/toPrivate on the way
  // down through maps and layout primitives decide; nullopt if none is named.
  std::optional<AddressSpace> requestedSpace(const Expr& e) {
    if (!e.isPrim()) return std::nullopt;
    switch (e.primOp()) {
      case Op::ToGlobal: return AddressSpace::Global;
      case Op::ToLocal: return AddressSpace::Local;
      case Op::ToPrivate: return AddressSpace::Private;
      case Op::Id:
      case Op::Join:
      case Op::Split:
      case Op::Transpose:
      case Op::AsScalar:
      case Op::AsVector: return requestedSpace(e.args()[0]);
      default: break;
    }
    if (isMapFamily(e.primOp()) || e.primOp() == Op::Let) {
      const Expr& f = e.funs()[0];
      if (f.isLambda()) return requestedSpace(f.body());
    }
    return std::nullopt;
  }

  bool insideKind(Op op) const {
    return std::any_of(loops_.begin(), loops_.end(), [&](const LoopFrame& f) { return f.op == op; });
  }

  // Memory for a value of `type` in `space`, declared in the kernel. Memory written inside
  // parallel maps needs one region per enclosing work-item (local: per mapLcl iteration inside
  // the work-group; global: per mapGlb/mapWrg/mapLcl iteration); sequential iterations of one
  // work-item reuse the same region.
  ViewPtr allocate(const Type& type, AddressSpace space, const Expr& at,
                   const std::string& privateStem = "p") {
    // Tuples are stored as a structure of arrays: one array per component, of the same shape,
    // and the memory's view is the zip of the component views.
    if (holdsTuples(type)) {
      std::vector<ViewPtr> components;
      for (size_t k = 0; k < tupleArity(type); ++k) {
        components.push_back(allocate(componentType(type, k), space, at, privateStem));
      }
      return zipOfComponents(std::move(components), type);
    }
    Arith count = scalarCount(type);
    std::string element = storedScalarKindOrFail(type, at) == ScalarKind::Float ? "float" : "int";
    if (space == AddressSpace::Private) {
      if (!count.constant()) {
        if (!options_.symbolicPrivateArrays) {
          fail(at, "a private array needs a size known at compile time, found " + type.toString());
        }
        // Analysis only: declared with its symbolic length (never compiled), counted apart.
        std::string name = fresh(privateStem);
        symbolicPrivateScalars_ = symbolicPrivateScalars_ + count;
        emitter_.line(element + " " + name + "[" + count.toString() + "];");
        return memoryView(name, type, AddressSpace::Private);
      }
      std::string name = fresh(privateStem);
      privateArrayScalars_ += *count.constant();
      // An array of vectors is declared as one (floatN name[n]): its elements are read and
      // written whole, with no vloadN/vstoreN through a pointer, so that once every index is
      // a constant promotePrivateArrays turns them into vector variables (registers).
      Type innermost = type;
      while (innermost.isArray()) innermost = innermost.arrayElement();
      if (innermost.isVector()) {
        const int64_t width = innermost.vectorWidth();
        const std::string vectorElement = element + std::to_string(width);
        const int64_t vectors = *count.constant() / width;
        emitter_.line(vectorElement + " " + name + "[" + std::to_string(vectors) + "];");
        privateArrays_.push_back({name, vectorElement, vectors});
        return memoryView(name, type, AddressSpace::Private, Arith(0), width);
      }
      emitter_.line(element + " " + name + "[" + std::to_string(*count.constant()) + "];");
      privateArrays_.push_back({name, element, *count.constant()});
      return memoryView(name, type, AddressSpace::Private);
    }
    Arith copies(1);
    Arith offset(0);
    for (auto it = loops_.rbegin(); it != loops_.rend(); ++it) {
      if (space == AddressSpace::Local && it->op == Op::MapWrg) break;
      if (!isParallelMap(it->op)) continue;
      offset = offset + it->index * copies * count;
      copies = copies * it->tripCount;
    }
    Arith total = copies * count;
    std::string name = fresh(space == AddressSpace::Local ? "l" : "g");
    if (space == AddressSpace::Local) {
      if (!launch_.usesGroups) fail(at, "local memory needs mapWrg/mapLcl");
      if (total.constant()) {
        localDeclarations_.push_back("local " + element + " " + name + "[" +
                                     std::to_string(*total.constant()) + "];");
      } else {
        localArgs_.push_back({name, total * 4, element});
      }
    } else {
      BufferPlan buffer;
      buffer.name = name;
      buffer.role = BufferPlan::Role::Temporary;
      buffer.type = type;
      buffer.element = storedScalarKindOrFail(type, at);
      buffer.elementCount = total;
      int index = addBuffer(std::move(buffer));
      usedBuffers_.insert(index);
    }
    return memoryView(name, type, space, offset);
  }

  // Allocates memory for a computed array that is read afterwards, computes it there and, if
  // other work-items of the group wrote it, adds the barrier that makes it visible.
  ViewPtr materialize(const Expr& e) {
    const Type& type = typeOf(e);
    Arith count = storedScalars(type);
    std::optional<AddressSpace> requested = requestedSpace(e);
    bool smallConstant = count.constant() && *count.constant() <= options_.maxPrivateScalars;
    AddressSpace space = requested.value_or(smallConstant ? AddressSpace::Private
                                                          : AddressSpace::Global);
    bool writtenByGroup = containsOp(e, [](Op op) { return op == Op::MapLcl; });
    if (containsOp(e, [](Op op) { return op == Op::MapGlb || op == Op::MapWrg; })) {
      fail(e, "a value computed by mapGlb or mapWrg inside a kernel cannot be read back in the "
              "same kernel; compute it at the top of the definition (its own kernel)");
    }
    if (space == AddressSpace::Private && writtenByGroup) {
      fail(e, "a private array cannot be written by mapLcl (other work-items would write it)");
    }
    ViewPtr view = allocate(type, space, e);
    bool needsBarrier = writtenByGroup && space != AddressSpace::Private;
    if (needsBarrier) requireUniform(e);
    bool inLoop = std::any_of(loops_.begin(), loops_.end(), [](const LoopFrame& f) {
      return f.repeats && f.op != Op::MapLcl;
    });
    // Before overwriting memory that other work-items may still read (a previous iteration).
    if (needsBarrier && inLoop) barrier(space);
    genWrite(e, view);
    if (needsBarrier) barrier(space);
    return view;
  }

  void requireUniform(const Expr& at) {
    if (insideKind(Op::MapLcl)) {
      fail(at, "memory written by mapLcl and read by other work-items needs a barrier, but "
               "here it is written inside another mapLcl, where not every work-item of the "
               "group reaches the barrier");
    }
  }

  void barrier(AddressSpace space) {
    emitter_.line(space == AddressSpace::Local ? "barrier(CLK_LOCAL_MEM_FENCE);"
                                               : "barrier(CLK_GLOBAL_MEM_FENCE);");
  }

  // ---- tuples in memory (structure of arrays) ---------------------------------------------
  // A tuple, or an array nest whose innermost element is a tuple.
  static bool holdsTuples(const Type& type) {
    if (type.isTuple()) return true;
    return type.isArray() && holdsTuples(type.arrayElement());
  }
  static const Type& innermostTuple(const Type& type) {
    return type.isTuple() ? type : innermostTuple(type.arrayElement());
  }
  static size_t tupleArity(const Type& type) { return innermostTuple(type).tupleElements().size(); }
  // The type with its innermost tuple replaced by the tuple's component k.
  static Type componentType(const Type& type, size_t k) {
    if (type.isTuple()) return type.tupleElements().at(k);
    return Type::array(componentType(type.arrayElement(), k), type.arrayLength());
  }
  // Scalars stored for a value, tuples counted as the sum of their components.
  static Arith storedScalars(const Type& type) {
    if (!holdsTuples(type)) return scalarCount(type);
    Arith sum(0);
    for (size_t k = 0; k < tupleArity(type); ++k) sum = sum + storedScalars(componentType(type, k));
    return sum;
  }
  // The view of `type` over one view per component (each of componentType(type, k)): a zip
  // of the components for a tuple or an array of tuples, and for an array of arrays a map over
  // the zip of the outer dimension whose elements are zipped again.
  static ViewPtr zipOfComponents(std::vector<ViewPtr> components, const Type& type) {
    if (type.isTuple() || type.arrayElement().isTuple()) {
      return zipView(std::move(components), type);
    }
    std::vector<Type> rowTypes;
    for (const ViewPtr& c : components) rowTypes.push_back(c->type.arrayElement());
    const size_t arity = components.size();
    const Type rows = Type::array(Type::tuple(rowTypes), type.arrayLength());
    const Type element = type.arrayElement();
    return mapView(zipView(std::move(components), rows), element,
                   [arity, element](const ViewPtr& row) {
                     std::vector<ViewPtr> parts;
                     for (size_t k = 0; k < arity; ++k) {
                       parts.push_back(getView(row, static_cast<int>(k)));
                     }
                     return zipOfComponents(std::move(parts), element);
                   });
  }

  // Writes a tuple-typed value component by component. The components of a tuple expression
  // with scalar or vector components are all evaluated into temporaries before any is stored,
  // as the destination may be one of their operands (a reduction's accumulator).
  void genTupleWrite(const Expr& e, const ViewPtr& dest) {
    const Type& type = typeOf(e);
    const auto& parts = type.tupleElements();
    if (e.isPrim(Op::Tuple)) {
      std::vector<std::optional<std::string>> values(parts.size());
      for (size_t k = 0; k < parts.size(); ++k) {
        if (!parts[k].isScalar() && !parts[k].isVector()) continue;
        std::string name = fresh("tc");
        emitter_.line(cTypeName(parts[k]) + " " + name + " = " + genScalar(e.args()[k]) + ";");
        noteTemporary(parts[k]);
        values[k] = name;
      }
      for (size_t k = 0; k < parts.size(); ++k) {
        ViewPtr component = getView(dest, static_cast<int>(k));
        if (values[k]) {
          assign(component, *values[k], parts[k], e);
        } else {
          genWrite(e.args()[k], component);
        }
      }
      return;
    }
    if (!computes(e)) {
      copy(genView(e), dest, type, e);
      return;
    }
    // (Let, Apply and toGlobal/toLocal/toPrivate of a lambda go through genWrite's own cases.)
    fail(e, "tuples cannot be stored in memory from " +
                std::string(e.isPrim() ? e.primInfo().name : "a function") +
                " yet (only from tuple expressions, lets, applications and stored tuples)");
  }

  // ---- statements --------------------------------------------------------------------------
  void genWrite(const Expr& e, const ViewPtr& dest) {
    const Type& type = typeOf(e);
    if (type.isScalar() || type.isVector()) {
      assign(dest, genScalar(e), type, e);
      return;
    }
    if (type.isTuple()) {
      const bool viaFunction =
          e.isPrim() && computes(e) && !e.isPrim(Op::Tuple) &&
          (e.primOp() == Op::Let || e.primOp() == Op::Apply || e.primOp() == Op::ToGlobal ||
           e.primOp() == Op::ToLocal || e.primOp() == Op::ToPrivate);
      if (!viaFunction) {
        genTupleWrite(e, dest);
        return;
      }
    }
    if (!computes(e)) {
      copy(genView(e), dest, type, e);
      return;
    }
    Op op = e.primOp();
    if (isLayoutMap(e)) {
      if (ViewPtr through = inverseLayout(e, dest)) {
        genWrite(e.args()[0], through);
        return;
      }
    }
    if (isMapFamily(op)) {
      genMap(e, genView(e.args()[0]), dest);
      return;
    }
    if (isReduceFamily(op)) {
      genReduce(e, dest);
      return;
    }
    switch (op) {
      case Op::Let:
        bind(e.funs()[0].params()[0], genView(e.args()[0]));
        genWrite(e.funs()[0].body(), dest);
        return;
      case Op::Apply:
      case Op::ToGlobal:
      case Op::ToLocal:
      case Op::ToPrivate: genApplyWrite(e.funs()[0], e.args(), dest, e); return;
      default:
        if (ViewPtr through = inverseLayout(e, dest)) {
          genWrite(e.args()[0], through);
          return;
        }
        // Other layout primitives over computed values: compute, then copy through the view.
        copy(genView(e), dest, type, e);
        return;
    }
  }

  void bindArguments(const Expr& lambda, const std::vector<Expr>& args) {
    const auto& params = lambda.params();
    if (params.size() != args.size()) fail(lambda, "wrong number of arguments");
    std::vector<ViewPtr> views;
    for (const Expr& a : args) views.push_back(genView(a));
    for (size_t i = 0; i < params.size(); ++i) bind(params[i], views[i]);
  }

  void genApplyWrite(const Expr& f, const std::vector<Expr>& args, const ViewPtr& dest,
                     const Expr& at) {
    // A function that only rearranges its argument (id, toGlobal(id), join, ...): the argument
    // is written straight through the inverse view, with no intermediate copy.
    if (f.isLambda() && args.size() == 1 && computes(args[0]) &&
        invertibleChain(f.body(), f.params()[0])) {
      genWrite(args[0], invertChain(f.body(), f.params()[0], dest));
      return;
    }
    if (f.isLambda()) {
      bindArguments(f, args);
      genWrite(f.body(), dest);
      return;
    }
    const Type& type = typeOf(at);
    assign(dest, genScalar(at), type, at);
  }

  // Applies a function to already-built argument views, writing the result to dest.
  void genApplyViews(const Expr& f, const std::vector<ViewPtr>& args, const ViewPtr& dest,
                     const Expr& at) {
    if (f.isLambda()) {
      for (size_t i = 0; i < args.size(); ++i) bind(f.params()[i], args[i]);
      genWrite(f.body(), dest);
      return;
    }
    std::vector<std::string> values;
    for (const ViewPtr& a : args) values.push_back(readValue(a, at));
    assign(dest, callUserFun(f, values, 0), f.userFunResultType(), at);
  }

  static bool isPrivateArray(const ViewPtr& view) {
    return view->kind == View::Kind::Memory && view->space == AddressSpace::Private;
  }

  std::string readValue(const ViewPtr& view, const Expr& at) {
    std::string expression;
    try {
      expression = resolveElement(view, {}).expression;
    } catch (const CodegenError& e) {
      fail(at, e.what());
    }
    noteView(view);  // a user function applied to a temporary needs it as a kernel argument
    return expression;
  }

  // The lengths whose product is e's length, outermost first, when e flattens nested arrays
  // with join (through zip when every component agrees): join(join(w)) with w: [[[T]C]K]K
  // gives [K, K, C]. A sequential loop over e becomes one loop per factor, so that the
  // indices of the nested arrays need no division or modulo.
  std::vector<Arith> flattenFactors(const Expr& e) {
    if (e.isPrim(Op::Join)) {
      std::vector<Arith> factors = flattenFactors(e.args()[0]);
      factors.push_back(typeOf(e.args()[0]).arrayElement().arrayLength());
      return factors;
    }
    if (e.isPrim(Op::Zip)) {
      std::vector<Arith> first = flattenFactors(e.args()[0]);
      for (const Expr& component : e.args()) {
        if (flattenFactors(component) != first) return {typeOf(e).arrayLength()};
      }
      return first;
    }
    return {typeOf(e).arrayLength()};
  }

  // Emits the loop of one map and returns nothing; `body` gets the index. A sequential loop
  // whose trip count is the product of `factors` is emitted as one nested loop per factor.
  void loop(Op op, int dim, const Arith& tripCount, const Expr& at,
            const std::function<void(const Arith&)>& body,
            const std::vector<Arith>& factors = {}) {
    if ((op == Op::MapSeq || op == Op::ReduceSeq) && factors.size() > 1) {
      Arith product(1);
      for (const Arith& f : factors) product = product * f;
      if (product == tripCount) {
        nestedLoops(op, factors, 0, Arith(0), at, body);
        return;
      }
    }
    bool repeats = !(tripCount == Arith(1));
    auto push = [&](const Arith& index) {
      loops_.push_back({op, dim, index, tripCount, repeats});
    };
    auto pop = [&]() { loops_.pop_back(); };
    if (op == Op::MapSeqUnroll || op == Op::ReduceSeqUnroll) {
      auto n = tripCount.constant();
      if (!n) fail(at, "an unrolled loop needs a constant trip count, found " + tripCount.toString());
      for (int64_t i = 0; i < *n; ++i) {
        emitter_.line("{  // unrolled " + std::to_string(i));
        ++emitter_.indent;
        push(Arith(i));
        body(Arith(i));
        pop();
        emitter_.close();
      }
      return;
    }
    if (isParallelMap(op)) {
      if (op == Op::MapWrg && insideKind(Op::MapLcl)) fail(at, "mapWrg cannot be inside mapLcl");
      if (op == Op::MapLcl && !insideKind(Op::MapWrg)) fail(at, "mapLcl must be nested in a mapWrg");
      for (const LoopFrame& f : loops_) {
        if (f.op == op && f.dimension == dim) {
          fail(at, std::string(primInfo(op).name) + "(" + std::to_string(dim) +
                       ") is nested in another " + primInfo(op).name + " of the same dimension");
        }
      }
      const char* idFunction = op == Op::MapGlb   ? "get_global_id"
                               : op == Op::MapWrg ? "get_group_id"
                                                  : "get_local_id";
      const char* sizeFunction = op == Op::MapGlb   ? "get_global_size"
                                 : op == Op::MapWrg ? "get_num_groups"
                                                    : "get_local_size";
      Arith launchSize = op == Op::MapGlb   ? launch_.globalSize[dim]
                         : op == Op::MapWrg ? launch_.groups[dim]
                                            : launch_.localSize[dim];
      const char* stem = op == Op::MapGlb ? "gl" : op == Op::MapWrg ? "wg" : "lc";
      std::string name = fresh(std::string(stem)) + "_d" + std::to_string(dim);
      Arith index = Arith::var(name, VarKind::ThreadIndex, 0, tripCount - 1);
      if (tripCount == launchSize) {
        repeats = false;
        if (tripCount == Arith(1)) {
          push(Arith(0));
          body(Arith(0));
          pop();
          return;
        }
        emitter_.line("const int " + name + " = " + idFunction + "(" + std::to_string(dim) + ");");
        if (op == Op::MapGlb && dim == 0) {
          withInteriorFastPath(name, index, body);
          return;
        }
        push(index);
        body(index);
        pop();
        return;
      }
      ++loopsEmitted_;
      emitter_.open("for (int " + name + " = " + idFunction + "(" + std::to_string(dim) + "); " +
                    name + " < " + c(tripCount) + "; " + name + " += " + sizeFunction + "(" +
                    std::to_string(dim) + "))");
      push(index);
      body(index);
      pop();
      emitter_.close();
      return;
    }
    // Sequential.
    if (tripCount == Arith(1)) {
      push(Arith(0));
      body(Arith(0));
      pop();
      return;
    }
    std::string name = fresh("i");
    Arith index = Arith::var(name, VarKind::LoopIndex, 0, tripCount - 1);
    const std::string header =
        "for (int " + name + " = 0; " + name + " < " + c(tripCount) + "; ++" + name + ")";
    // The body once into a scratch emitter, recording the guards of constant pads it reads.
    PadGuardRecorder recorder;
    Emitter saved = std::move(emitter_);
    emitter_ = Emitter{};
    emitter_.indent = saved.indent + 1;
    const int loopsBefore = loopsEmitted_;
    const size_t privateBefore = privateArrays_.size(), localBefore = localDeclarations_.size(),
                 localArgsBefore = localArgs_.size();
    {
      PadGuardScope scope(recorder);
      push(index);
      body(index);
      pop();
    }
    Emitter guarded = std::move(emitter_);
    emitter_ = std::move(saved);
    ++loopsEmitted_;
    // Loop unswitching: guards that do not depend on this loop's index (nor on any index
    // bound inside it) are checked once before the loop; when none fires, the loop runs a
    // second copy of the body that reads without them (e.g. a convolution's channel loop
    // over a zero-padded image: the window position's validity does not depend on the
    // channel). Only for innermost loops whose body allocates nothing (it is generated twice)
    // and reads at least two elements through guards (a register block's loads: one guarded
    // read alone gains too little for a second copy of the loop).
    std::vector<std::string> hoisted, hoistedKeys;
    std::set<std::string> keys;
    const bool simpleBody = recorder.guardedReads >= 2 && loopsEmitted_ == loopsBefore + 1 &&
                            privateArrays_.size() == privateBefore &&
                            localDeclarations_.size() == localBefore &&
                            localArgs_.size() == localArgsBefore;
    if (simpleBody) {
      for (const PadGuard& guard : recorder.seen) {
        bool outside = true;
        for (const Arith& v : guard.index.vars()) {
          if (v.varKind() != VarKind::LoopIndex && v.varKind() != VarKind::ThreadIndex) continue;
          bool bound = false;
          for (const LoopFrame& frame : loops_) bound = bound || frame.index.mentions(v.varName());
          outside = outside && bound;
        }
        if (outside && keys.insert(guard.key()).second) {
          hoisted.push_back(guard.conditionC());
          hoistedKeys.push_back(guard.key());
        }
      }
    }
    auto emitGuarded = [&](int extraIndent) {
      emitter_.open(header);
      const std::string pad(2 * static_cast<size_t>(extraIndent), ' ');
      for (const std::string& text : guarded.lines) emitter_.lines.push_back(pad + text);
      emitter_.close();
    };
    if (hoisted.empty()) {
      emitGuarded(0);
      return;
    }
    // Few guards: one copy of the loop per outcome of them, each branch-free (a firing guard's
    // reads are the pad value itself, as if the padded array were in memory); a border
    // work-item then runs as fast as an inner one. More guards: two copies, the second with
    // every guard inside the loop.
    if (hoisted.size() <= kMaxGuardsSplit &&
        guarded.lines.size() << hoisted.size() <= kMaxSplitLines) {
      PadGuardRecorder assume;
      emitGuardOutcomes(header, LoopFrame{op, dim, index, tripCount, repeats}, body, hoisted,
                        hoistedKeys, 0, assume);
      return;
    }
    std::string anyFires;
    for (const std::string& condition : hoisted) {
      anyFires += (anyFires.empty() ? "(" : " || (") + condition + ")";
    }
    emitter_.open("if (!(" + anyFires + "))");
    emitter_.open(header);
    {
      PadGuardRecorder assume;
      assume.assumedInBounds = keys;
      PadGuardScope scope(assume);
      push(index);
      body(index);
      pop();
    }
    emitter_.close();
    --emitter_.indent;
    emitter_.line("} else {");
    ++emitter_.indent;
    emitGuarded(1);
    emitter_.close();
  }

  // Loop unswitching over every outcome of the guards hoisted[from..]: if the guard fires,
  // the loop reads its pad as the pad value, otherwise without the guard; `assume` holds the
  // outcomes of the guards before `from`.
  void emitGuardOutcomes(const std::string& header, const LoopFrame& frame,
                         const std::function<void(const Arith&)>& body,
                         const std::vector<std::string>& hoisted,
                         const std::vector<std::string>& hoistedKeys, size_t from,
                         PadGuardRecorder& assume) {
    if (from == hoisted.size()) {
      emitter_.open(header);
      {
        PadGuardScope scope(assume);
        loops_.push_back(frame);
        body(frame.index);
        loops_.pop_back();
      }
      emitter_.close();
      return;
    }
    const std::string& key = hoistedKeys[from];
    emitter_.open("if (!(" + hoisted[from] + "))");
    assume.assumedInBounds.insert(key);
    emitGuardOutcomes(header, frame, body, hoisted, hoistedKeys, from + 1, assume);
    assume.assumedInBounds.erase(key);
    --emitter_.indent;
    emitter_.line("} else {");
    ++emitter_.indent;
    assume.assumedFiring.insert(key);
    emitGuardOutcomes(header, frame, body, hoisted, hoistedKeys, from + 1, assume);
    assume.assumedFiring.erase(key);
    emitter_.close();
  }

  // The body of a work-item of mapGlb(0) (index `name`, no loop), with an interior fast path:
  // the body is generated once while its clamp and mirror pad reads are recorded; the reads
  // whose index is affine in `name` (and in loop indices of constant ranges, uniform sizes)
  // are checked for the whole work-group at once (its first and last work-item bound the
  // index), and when they stay inside, a second copy of the body reads them without clamps:
  //   if (group inside) { unclamped body } else { body as before }
  // The branch is uniform per work-group, so an implementation vectorising across work-items
  // keeps consecutive loads in the interior (PoCL gathers clamped ones: blurx 4096² about 20 ms
  // as one, 6-9 with the fast path, issue 9). The body is emitted as before when no read
  // qualifies, or when it allocates local or global memory (it would be allocated twice).
  void withInteriorFastPath(const std::string& name, const Arith& index,
                            const std::function<void(const Arith&)>& body) {
    BorderReadRecorder recorder;
    Emitter saved = std::move(emitter_);
    emitter_ = Emitter{};
    emitter_.indent = saved.indent + 1;
    const size_t localBefore = localDeclarations_.size(), localArgsBefore = localArgs_.size(),
                 buffersBefore = program_.buffers.size(), kernelsBefore = program_.kernels.size();
    {
      BorderReadScope scope(recorder);
      loops_.push_back({Op::MapGlb, 0, index, launch_.globalSize[0], false});
      body(index);
      loops_.pop_back();
    }
    Emitter general = std::move(emitter_);
    emitter_ = std::move(saved);
    auto emitGeneral = [&](int extraIndent) {
      for (const std::string& text : general.lines) {
        emitter_.lines.push_back(extraIndent ? text : text.substr(std::min<size_t>(2, text.size())));
      }
    };
    const bool allocatesShared = localDeclarations_.size() != localBefore ||
                                 localArgs_.size() != localArgsBefore ||
                                 program_.buffers.size() != buffersBefore ||
                                 program_.kernels.size() != kernelsBefore;
    const std::string first = name + "_first", last = name + "_last";
    const Arith firstVar = Arith::var(first, VarKind::ThreadIndex, 0, index.varHi());
    const Arith lastVar = Arith::var(last, VarKind::ThreadIndex, 0, index.varHi());
    std::set<std::string> keys;
    // The conditions, as `variable part + constant >= 0`: of those with the same variable
    // part only the one with the least constant is needed (x - 2 >= 0 implies x - 1 >= 0).
    std::vector<Arith> variableParts;
    std::map<Arith, int64_t> leastConstant;
    auto require = [&](const Arith& nonNegative) {
      const int64_t constant = nonNegative.isConstant()                 ? *nonNegative.constant()
                               : nonNegative.kind() == ArithKind::Sum ? nonNegative.sumConstant()
                                                                      : 0;
      const Arith variable = nonNegative - Arith(constant);
      auto [it, inserted] = leastConstant.emplace(variable, constant);
      if (inserted) variableParts.push_back(variable);
      it->second = std::min(it->second, constant);
    };
    if (!allocatesShared) {
      for (const BorderRead& read : recorder.seen) {
        std::optional<std::pair<Arith, Arith>> bounds =
            groupBounds(read.index, index.varName(), firstVar, lastVar);
        if (!bounds) continue;
        keys.insert(read.key());
        if (read.checkLow && !proveNonNegative(bounds->first)) require(bounds->first);
        if (read.checkHigh && !proveLess(bounds->second, read.length)) {
          require(read.length - 1 - bounds->second);
        }
      }
    }
    std::vector<std::string> conditions;
    for (const Arith& variable : variableParts) {
      conditions.push_back(c(variable + Arith(leastConstant.at(variable))) + " >= 0");
    }
    if (keys.empty()) {
      emitGeneral(0);
      return;
    }
    emitter_.line("const int " + first + " = (int)(get_group_id(0) * get_local_size(0));");
    emitter_.line("const int " + last + " = " + first + " + (int)get_local_size(0) - 1;");
    std::string inside;
    for (const std::string& condition : conditions) {
      inside += (inside.empty() ? "" : " && ") + condition;
    }
    if (inside.empty()) inside = "1";
    emitter_.open("if (" + inside + ")");
    // The fast copy's estimates of private memory are those of the general one (the two
    // copies never live at once).
    const int64_t privateScalars = privateArrayScalars_, live = liveAccumulatorScalars_,
                  maxLive = maxLiveAccumulatorScalars_, widest = widestVector_;
    const Arith symbolicScalars = symbolicPrivateScalars_;
    {
      BorderReadRecorder assume;
      assume.assumedInside = keys;
      BorderReadScope scope(assume);
      loops_.push_back({Op::MapGlb, 0, index, launch_.globalSize[0], false});
      body(index);
      loops_.pop_back();
    }
    privateArrayScalars_ = privateScalars;
    liveAccumulatorScalars_ = live;
    maxLiveAccumulatorScalars_ = maxLive;
    widestVector_ = widest;
    symbolicPrivateScalars_ = symbolicScalars;
    --emitter_.indent;
    emitter_.line("} else {");
    ++emitter_.indent;
    emitGeneral(1);
    emitter_.close();
  }

  // The least and greatest value of `index` over the work-items of one work-group, as
  // expressions in `first` and `last` (the group's first and last value of the variable
  // `gid`), when the index is affine in gid and in loop indices of constant ranges (each
  // variable's unit step changes it by a constant) and mentions nothing else that varies
  // within a group; otherwise nothing.
  static std::optional<std::pair<Arith, Arith>> groupBounds(const Arith& index,
                                                            const std::string& gid,
                                                            const Arith& first,
                                                            const Arith& last) {
    if (!index.mentions(gid)) return std::nullopt;
    ArithSubstitution low, high;
    for (const Arith& v : index.vars()) {
      const VarKind kind = v.varKind();
      if (kind == VarKind::Size || kind == VarKind::Tuning) continue;
      Arith lo, hi;
      if (kind == VarKind::ThreadIndex && v.varName() == gid) {
        lo = first;
        hi = last;
      } else if (kind == VarKind::LoopIndex && v.varLo().isConstant() && v.varHi() &&
                 v.varHi()->isConstant()) {
        lo = v.varLo();
        hi = *v.varHi();
      } else {
        return std::nullopt;
      }
      const Arith step = substitute(index, {{v.varName(), v + 1}}) - index;
      const std::optional<int64_t> slope = step.constant();
      if (!slope) return std::nullopt;
      low[v.varName()] = *slope >= 0 ? lo : hi;
      high[v.varName()] = *slope >= 0 ? hi : lo;
    }
    return std::make_pair(substitute(index, low), substitute(index, high));
  }

  // One loop per factor; the flat index is i_0*f_1*...*f_k + ... + i_k.
  void nestedLoops(Op op, const std::vector<Arith>& factors, size_t level, const Arith& outer,
                   const Expr& at, const std::function<void(const Arith&)>& body) {
    if (level == factors.size()) {
      body(outer);
      return;
    }
    loop(op, 0, factors[level], at, [&](const Arith& index) {
      nestedLoops(op, factors, level + 1, outer * factors[level] + index, at, body);
    });
  }

  void genMap(const Expr& e, const ViewPtr& input, const ViewPtr& dest) {
    Op op = e.primOp();
    int dim = isParallelMap(op) ? static_cast<int>(*e.nats()[0].constant()) : 0;
    if (op == Op::Map) op = Op::MapSeq;
    const Expr& f = e.funs()[0];
    Arith n = typeOf(e.args()[0]).arrayLength();
    loop(op, dim, n, e, [&](const Arith& i) {
      genApplyViews(f, {accessView(input, i)}, accessView(dest, i), e);
    }, flattenFactors(e.args()[0]));
  }

  void genReduce(const Expr& e, const ViewPtr& dest) {
    const Expr& init = e.args()[0];
    const Expr& f = e.funs()[0];
    const Expr& xs = e.args()[1];
    const Type& accType = typeOf(init);
    ViewPtr input = genView(xs);
    ViewPtr acc;
    int64_t accumulatorScalars = 0;
    auto enclosing = init.isParam() ? inPlaceAccumulators_.find(init.paramId())
                                    : inPlaceAccumulators_.end();
    const bool inPlace = enclosing != inPlaceAccumulators_.end() &&
                         enclosing->second == loops_.size() && !accType.isScalar() &&
                         !accType.isVector() && isPrivateArray(lookup(init));
    if (inPlace) {
      // The initial value is the accumulator of the enclosing reduce's step, read nowhere else
      // and with no loop in between (reduce-nest-inner-level's inner reduce: (acc, row) ->
      // join(reduce(acc, f, row))): it is updated in place — no second array, no copies, no
      // second share of the register estimate; the step's result is written back to it.
      acc = lookup(init);
    } else if (accType.isScalar() || accType.isVector()) {
      std::string name = fresh("acc");
      emitter_.line(cTypeName(accType) + " " + name + " = " + genScalar(init) + ";");
      acc = variableView(name, accType);
      accumulatorScalars = accType.isVector() ? accType.vectorWidth() : 1;
      noteTemporary(accType);
    } else {
      // Array accumulators live in private memory when small and of known size, else in
      // global memory (one region per work-item).
      Arith count = storedScalars(accType);
      bool small = count.constant() && *count.constant() <= options_.maxPrivateScalars;
      acc = allocate(accType, small ? AddressSpace::Private : AddressSpace::Global, e, "acc");
      genWrite(init, acc);
    }
    Op loopOp = e.primOp() == Op::ReduceSeqUnroll ? Op::ReduceSeqUnroll : Op::ReduceSeq;
    Arith n = typeOf(xs).arrayLength();
    liveAccumulatorScalars_ += accumulatorScalars;
    maxLiveAccumulatorScalars_ = std::max(maxLiveAccumulatorScalars_, liveAccumulatorScalars_);
    // A step that reads its accumulator once may hand it to an inner reduce to update in
    // place (above), when that reduce runs once per step: no loop opened in between.
    const bool handsOver = f.isLambda() && !accType.isScalar() && !accType.isVector() &&
                           isPrivateArray(acc) && paramUses(f.body(), f.params()[0]) == 1;
    loop(loopOp, 0, n, e, [&](const Arith& i) {
      if (handsOver) inPlaceAccumulators_[f.params()[0].paramId()] = loops_.size();
      genApplyViews(f, {acc, accessView(input, i)}, acc, e);
      if (handsOver) inPlaceAccumulators_.erase(f.params()[0].paramId());
    }, flattenFactors(xs));
    liveAccumulatorScalars_ -= accumulatorScalars;
    copy(acc, accessView(dest, Arith(0)), accType, e);
  }

  // Writes `value` (a C expression of a scalar or vector type) to the element `dest`.
  void assign(const ViewPtr& dest, const std::string& value, const Type& type, const Expr& at) {
    ResolvedElement target;
    try {
      target = resolveElement(dest, {});
    } catch (const CodegenError& error) {
      fail(at, error.what());
    }
    if (target.isMemory) noteBuffer(target.base, /*written=*/true);
    if (target.isMemory && target.vectorWidth > 0) {
      emitter_.line("vstore" + std::to_string(target.vectorWidth) + "(" + value + ", 0, " +
                    target.base + " + " + c(target.offset) + ");");
      return;
    }
    if (target.isVariable && value == target.expression) return;  // acc = acc (a zero product)
    if (target.isMemory || target.isVariable) {
      if (target.isMemory) mentionedSizes_.push_back(target.offset);
      noteBuffer(target.base, /*written=*/true);
      emitter_.line(target.expression + " = " + value + ";");
      return;
    }
    if (type.isVector()) {
      // Not contiguous: store lane by lane.
      std::string name = fresh("v");
      emitter_.line(cTypeName(type) + " " + name + " = " + value + ";");
      for (int64_t lane = 0; lane < type.vectorWidth(); ++lane) {
        ResolvedElement laneTarget = resolveElement(dest, {}, {}, Arith(lane));
        if (!laneTarget.isMemory && !laneTarget.isVariable) {
          fail(at, "cannot write through this view (pad, fill or a computed value)");
        }
        if (laneTarget.isMemory) {
          mentionedSizes_.push_back(laneTarget.offset);
          noteBuffer(laneTarget.base, /*written=*/true);
        }
        char suffix[24];
        std::snprintf(suffix, sizeof suffix, ".s%llx", static_cast<unsigned long long>(lane));
        emitter_.line(laneTarget.expression + " = " + name + suffix + ";");
      }
      return;
    }
    fail(at, "cannot write through this view (pad, slide, fill or a computed value)");
  }

  // Copies a value element by element. Copies out of a private array are unrolled (its size is
  // a constant), so that every use of the array has constant indices and promotePrivateArrays
  // can keep it in registers.
  void copy(const ViewPtr& source, const ViewPtr& dest, const Type& type, const Expr& at,
            bool fromPrivate = false) {
    if (type.isScalar() || type.isVector()) {
      assign(dest, read(source, at), type, at);
      return;
    }
    if (type.isTuple()) {
      for (size_t k = 0; k < type.tupleElements().size(); ++k) {
        copy(getView(source, static_cast<int>(k)), getView(dest, static_cast<int>(k)),
             type.tupleElements()[k], at, fromPrivate);
      }
      return;
    }
    // Copies into a private array (an accumulator initialised from memory) are unrolled too.
    const bool privateSource =
        fromPrivate ||
        (source->kind == View::Kind::Memory && source->space == AddressSpace::Private) ||
        (dest->kind == View::Kind::Memory && dest->space == AddressSpace::Private);
    const Op op = privateSource && type.arrayLength().constant() ? Op::MapSeqUnroll : Op::MapSeq;
    loop(op, 0, type.arrayLength(), at, [&](const Arith& i) {
      copy(accessView(source, i), accessView(dest, i), type.arrayElement(), at, privateSource);
    });
  }

  // Reads one element through a view, noting the buffers and sizes it uses.
  std::string read(const ViewPtr& view, const Expr& at, std::vector<int> path = {},
                   std::optional<Arith> lane = std::nullopt) {
    ResolvedElement element;
    try {
      element = resolveElement(view, {}, std::move(path), std::move(lane));
    } catch (const CodegenError& error) {
      fail(at, error.what());
    }
    noteView(view);
    return element.expression;
  }

  // Records the buffers and size variables a view refers to (for kernel arguments).
  void noteView(const ViewPtr& view) {
    for (const std::string& buffer : bufferNamesNoting(view)) noteBuffer(buffer);
  }

  // The buffers a view (its children, a layout map's element view) refers to. The first time
  // a view is met since the last finishKernel, its arithmetic is noted in mentionedSizes_ (which
  // only finishKernel clears, so noting it again would add nothing); the buffers are
  // remembered per view, as usedBuffers_ is reset at each kernel's start. Views are immutable
  // and the memo holds them, so a pointer always denotes the view it was noted for.
  const std::vector<std::string>& bufferNamesNoting(const ViewPtr& view) {
    auto known = notedViews_.find(view);
    if (known != notedViews_.end()) return known->second;
    std::vector<std::string> buffers;
    auto addBuffers = [&](const std::vector<std::string>& names) {
      for (const std::string& name : names) {
        if (std::find(buffers.begin(), buffers.end(), name) == buffers.end()) {
          buffers.push_back(name);
        }
      }
    };
    if (view->kind == View::Kind::Memory) {
      buffers.push_back(view->name);
      mentionedSizes_.push_back(view->offset);
      if (view->type.isArray()) mentionedSizes_.push_back(scalarCount(view->type));
    }
    mentionedSizes_.push_back(view->a);
    mentionedSizes_.push_back(view->b);
    mentionedSizes_.push_back(view->index);
    if (view->type && view->type.isArray()) mentionedSizes_.push_back(view->type.arrayLength());
    for (const ViewPtr& child : view->children) addBuffers(bufferNamesNoting(child));
    // A layout map's element function may reach buffers of its own (a zip with a captured
    // array): note what one element's view mentions.
    if (view->kind == View::Kind::Map && view->elementView && !view->children.empty()) {
      addBuffers(
          bufferNamesNoting(view->elementView(accessView(view->children.front(), Arith(0)))));
    }
    return notedViews_.emplace(view, std::move(buffers)).first->second;
  }

  void noteBuffer(const std::string& name, bool written = false) {
    for (size_t i = 0; i < program_.buffers.size(); ++i) {
      if (program_.buffers[i].name != name) continue;
      usedBuffers_.insert(static_cast<int>(i));
      if (written) writtenBuffers_.insert(static_cast<int>(i));
    }
  }

  // ---- scalar expressions -------------------------------------------------------------------
  std::string literal(const Expr& e) {
    switch (e.literalKind()) {
      case ScalarKind::Float: return floatLiteralC(e.literalFloat());
      case ScalarKind::Int: return std::to_string(e.literalInt());
      case ScalarKind::Bool: return e.literalBool() ? "true" : "false";
    }
    return "0";
  }

  std::string genScalar(const Expr& e) {
    if (e.isLiteral()) return literal(e);
    if (e.isParam()) return read(lookup(e), e);
    if (!e.isPrim()) fail(e, "a function is not a value");
    if (!computes(e)) return read(genView(e), e);
    const auto& args = e.args();
    auto arg = [&](size_t i) { return genScalar(args[i]); };
    auto binary = [&](const char* op) { return "(" + arg(0) + " " + op + " " + arg(1) + ")"; };
    const Type& type = typeOf(e);
    bool isFloat = (type.isScalar() || type.isVector()) && type.scalarKind() == ScalarKind::Float;
    switch (e.primOp()) {
      case Op::Add:
        if (isFloat) {
          if (std::optional<std::string> sum = floatSumWithProduct(e, type)) return *sum;
        }
        return binary("+");
      case Op::Sub: return binary("-");
      case Op::Mul: return binary("*");
      case Op::Div:
        if (isFloat && args[1].isLiteral() && args[1].literalKind() == ScalarKind::Float) {
          if (std::optional<float> reciprocal = reciprocalOfDivisor(args[1].literalFloat())) {
            return "(" + arg(0) + " * " + floatLiteralC(*reciprocal) + ")";
          }
        }
        return binary("/");
      case Op::Mod: return binary("%");
      case Op::Lt: return binary("<");
      case Op::Le: return binary("<=");
      case Op::Gt: return binary(">");
      case Op::Ge: return binary(">=");
      case Op::Eq: return binary("==");
      case Op::Ne: return binary("!=");
      case Op::And: return binary("&&");
      case Op::Or: return binary("||");
      case Op::Neg: return "(-" + arg(0) + ")";
      case Op::Not: return "(!" + arg(0) + ")";
      case Op::Select: return "(" + arg(0) + " ? " + arg(1) + " : " + arg(2) + ")";
      case Op::Min: return std::string(isFloat ? "fmin(" : "min(") + arg(0) + ", " + arg(1) + ")";
      case Op::Max: return std::string(isFloat ? "fmax(" : "max(") + arg(0) + ", " + arg(1) + ")";
      case Op::Abs:
        return isFloat ? "fabs(" + arg(0) + ")" : "((" + cTypeName(type) + ")abs(" + arg(0) + "))";
      case Op::Sqrt: return "sqrt(" + arg(0) + ")";
      case Op::Exp: return "exp(" + arg(0) + ")";
      case Op::Fma: {
        std::string a = arg(0), b = arg(1);
        if (isFloatZeroText(a) || isFloatZeroText(b)) return arg(2);  // see floatSumWithProduct
        return "fma(" + a + ", " + b + ", " + arg(2) + ")";
      }
      case Op::Dot: return dot(arg(0), arg(1), typeOf(args[0]));
      case Op::ToFloat:
      case Op::ToInt:
        if (type.isVector()) return "convert_" + cTypeName(type) + "(" + arg(0) + ")";
        return "((" + cTypeName(type) + ")" + arg(0) + ")";
      case Op::Let: {
        const Expr& f = e.funs()[0];
        bind(f.params()[0], genView(args[0]));
        return genScalar(f.body());
      }
      case Op::Apply:
      case Op::ToGlobal:
      case Op::ToLocal:
      case Op::ToPrivate: return genCall(e.funs()[0], args, 0, e);
      case Op::Vectorize: {
        auto width = e.nats()[0].constant();
        if (!width) fail(e, "vectorize needs a constant width");
        return genCall(e.funs()[0], args, *width, e);
      }
      case Op::Id: return genScalar(args[0]);
      case Op::Get: {
        // A component of a tuple built right here: (a, b)._1 is b.
        const Expr& tuple = args[0];
        size_t index = static_cast<size_t>(*e.nats()[0].constant());
        if (tuple.isPrim(Op::Tuple)) return genScalar(tuple.args().at(index));
        if (!computes(tuple)) return read(genView(e), e);
        break;
      }
      default: break;
    }
    fail(e, std::string(e.primInfo().name) + " does not give a scalar here");
  }

  // a + b * c (or b * c + a) on floats. A product with a literal zero factor (a firing
  // zero-pad read) adds nothing: the sum is a, and a border copy of a convolution's loop skips
  // the padded taps instead of multiplying by 0. That is exact for a finite other factor (up to
  // the sign of a zero sum, which reordered reductions do not keep either) but not for inf or
  // NaN, whose product with 0 is NaN: weft's floats follow Halide's default (non-strict float
  // simplification, x * 0 -> 0) and what oneDNN's direct convolution computes (it skips padded
  // taps), not the letter of pad-then-multiply. On float vectors the sum is fma(b, c, a), a
  // scalar operand broadcast with (floatN)(x): one vector multiply-add instruction whatever the
  // compiler's contraction setting (the register-blocked convolution's inner statement); on
  // scalars the text binary + would give. nullopt when neither operand is a product.
  std::optional<std::string> floatSumWithProduct(const Expr& e, const Type& type) {
    for (size_t side = 0; side < 2; ++side) {
      const Expr& product = e.args()[side];
      if (!product.isPrim(Op::Mul)) continue;
      const Expr& addend = e.args()[1 - side];
      std::string a = genScalar(product.args()[0]);
      std::string b = genScalar(product.args()[1]);
      if (isFloatZeroText(a) || isFloatZeroText(b)) return genScalar(addend);
      if (!type.isVector()) {
        std::string c = genScalar(addend);
        std::string times = "(" + a + " * " + b + ")";
        return side == 0 ? "(" + times + " + " + c + ")" : "(" + c + " + " + times + ")";
      }
      auto broadcast = [&](const Expr& x, const std::string& value) {
        if (typeOf(x).isVector()) return value;
        return "(" + cTypeName(type) + ")(" + value + ")";
      };
      a = broadcast(product.args()[0], a);
      b = broadcast(product.args()[1], b);
      std::string c = broadcast(addend, genScalar(addend));
      noteTemporary(type);
      return "fma(" + a + ", " + b + ", " + c + ")";
    }
    return std::nullopt;
  }

  // dot is built in for widths up to 4; wider vectors add the halves.
  std::string dot(const std::string& a, const std::string& b, const Type& type) {
    if (!type.isVector()) return "(" + a + " * " + b + ")";
    int64_t width = type.vectorWidth();
    noteTemporary(type);
    if (width <= 4) return "dot(" + a + ", " + b + ")";
    std::string left = fresh("dl"), right = fresh("dr");
    emitter_.line(cTypeName(type) + " " + left + " = " + a + ";");
    emitter_.line(cTypeName(type) + " " + right + " = " + b + ";");
    Type half = Type::vector(type.scalarKind(), width / 2);
    return "(" + dot(left + ".lo", right + ".lo", half) + " + " +
           dot(left + ".hi", right + ".hi", half) + ")";
  }

  // A call of a function on scalar arguments; `vectorWidth` > 0 calls its vectorised form.
  std::string genCall(const Expr& f, const std::vector<Expr>& args, int64_t vectorWidth,
                      const Expr& at) {
    std::vector<std::string> values;
    for (const Expr& a : args) values.push_back(genScalar(a));
    if (f.isLambda()) {
      for (size_t i = 0; i < args.size(); ++i) {
        const Type& t = typeOf(args[i]);
        std::string name = fresh("a");
        emitter_.line(cTypeName(t) + " " + name + " = " + values[i] + ";");
        bind(f.params()[i], variableView(name, t));
      }
      return genScalar(f.body());
    }
    (void)at;
    return callUserFun(f, values, vectorWidth);
  }

  std::string callUserFun(const Expr& f, const std::vector<std::string>& values,
                          int64_t vectorWidth) {
    std::string name = emitUserFun(f, vectorWidth);
    std::string text = name + "(";
    for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + values[i];
    return text + ")";
  }

  // Emits a user function (once per width) as an OpenCL function and returns its name.
  std::string emitUserFun(const Expr& f, int64_t vectorWidth) {
    std::string name = "uf_" + cIdentifier(f.userFunName()) +
                       (vectorWidth ? "_v" + std::to_string(vectorWidth) : "");
    if (emittedUserFuns_.count(name)) return name;
    emittedUserFuns_.insert(name);
    auto widen = [&](const Type& t) {
      if (!vectorWidth || !t.isScalar()) return t;
      return Type::vector(t.scalarKind(), vectorWidth);
    };
    Emitter saved = std::move(emitter_);
    emitter_ = Emitter{};
    std::string signature = cTypeName(widen(f.userFunResultType())) + " " + name + "(";
    for (size_t i = 0; i < f.params().size(); ++i) {
      const Expr& p = f.params()[i];
      std::string pname = "p_" + cIdentifier(p.paramName());
      signature += (i ? ", " : "") + cTypeName(widen(p.paramType())) + " " + pname;
      bind(p, variableView(pname, widen(p.paramType())));
    }
    signature += ")";
    // The body's node types are those of its scalar form; OpenCL arithmetic on vectors is
    // element-wise, so the same text serves the vectorised function.
    TypedDefinition bodyTypes = typecheckFunction(f, [&] {
      std::vector<Type> types;
      for (const Expr& p : f.params()) types.push_back(p.paramType());
      return types;
    }());
    for (const auto& [node, type] : bodyTypes.types) typed_.types.emplace(node, type);
    std::string result = genScalar(f.body());
    std::string text = "static " + signature + " {\n";
    for (const std::string& l : emitter_.lines) text += l + "\n";
    text += "  return " + result + ";\n}\n";
    emitter_ = std::move(saved);
    helperFunctions_.push_back(text);
    return name;
  }

  const Definition& definition_;
  CodegenOptions options_;
  TypedDefinition typed_;
  CompiledProgram program_;
  std::unordered_map<uint64_t, ViewPtr> env_;
  int counter_ = 0;
  std::set<std::string> reservedNames_;
  // Per kernel.
  Emitter emitter_;
  std::set<int> usedBuffers_;
  std::set<int> writtenBuffers_;
  // The private-memory estimate of the kernel being generated (KernelPlan::privateScalars):
  // private arrays, the accumulators of the reductions that are live at once (nested reduces
  // add up), and twice the widest vector a temporary holds.
  int64_t privateArrayScalars_ = 0;
  Arith symbolicPrivateScalars_ = Arith(0);  // CodegenOptions::symbolicPrivateArrays
  int64_t liveAccumulatorScalars_ = 0;
  int64_t maxLiveAccumulatorScalars_ = 0;
  int64_t widestVector_ = 0;
  void noteTemporary(const Type& type) {
    if (type.isVector()) widestVector_ = std::max<int64_t>(widestVector_, type.vectorWidth());
  }
  std::vector<PrivateArray> privateArrays_;  // buffers the kernel stores to (the others are const)
  // Accumulator params of the reduce steps being generated that an inner reduce may update in
  // place, with the loop depth of the step's body (genReduce).
  std::map<uint64_t, size_t> inPlaceAccumulators_;
  std::vector<std::string> localDeclarations_;
  struct LocalArg {
    std::string name;
    Arith bytes;
    std::string element;
  };
  std::vector<LocalArg> localArgs_;
  LaunchPlan launch_;
  std::vector<LoopFrame> loops_;
  int loopsEmitted_ = 0;  // `for` loops emitted so far (loop unswitching: innermost loops only)
  std::string kernelName_;
  // The arithmetic printed into (or reached by the views of) the kernel being generated, each
  // expression once and constants left out: finishKernel makes the size variables in it int
  // arguments, in the order first mentioned.
  class MentionedAriths {
   public:
    void push_back(const Arith& a) {
      if (a.isConstant() || !seen_.insert(a).second) return;
      list_.push_back(a);
    }
    void clear() {
      list_.clear();
      seen_.clear();
    }
    std::vector<Arith>::const_iterator begin() const { return list_.begin(); }
    std::vector<Arith>::const_iterator end() const { return list_.end(); }

   private:
    std::vector<Arith> list_;
    std::unordered_set<Arith> seen_;
  };
  MentionedAriths mentionedSizes_;
  // noteView's memo: the views noted since the last finishKernel, with their buffers.
  std::unordered_map<ViewPtr, std::vector<std::string>> notedViews_;
  std::vector<Arith> allSizeVars_;
  // Whole program.
  std::vector<std::string> helperFunctions_;
  std::set<std::string> emittedUserFuns_;
  std::vector<std::string> kernelSources_;
};

}  // namespace

CompiledProgram generateOpenCL(const Definition& lowLevel, const CodegenOptions& options) {
  Definition specialised = lowLevel;
  if (!options.specialize.empty()) {
    ArithSubstitution substitution;
    for (const auto& [name, value] : options.specialize) substitution[name] = Arith(value);
    specialised.function = substituteArith(lowLevel.function, substitution);
    if (specialised.declaredType) {
      specialised.declaredType = substitute(lowLevel.declaredType, substitution);
    }
  }
  ResolveMemoScope memo;  // one generation's resolutions, shared by its unswitched copies
  Generator generator(specialised, options);
  return generator.run();
}

}  // namespace weft
