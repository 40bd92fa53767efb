// The final emission of a kernel: what it uses and its text. While statements are generated,
// every buffer a read or write reaches is noted (noteView, noteBuffer: views record every
// buffer they could reach, e.g. both components of a zip read through one), every Arith
// printed or reached by a view is noted for its size variables (c, bufferNamesNoting), and
// the emitter records the arrays its lines name (gen_support.h's EmittedArrays, from the
// resolved elements emitted). finishKernel then promotes the private arrays indexed only by
// constants to scalars (scalar_promotion.h), estimates the kernel's private memory, and writes
// its signature: the global buffers its lines name, then its local buffers of symbolic size,
// then the size variables as ints; so an input only a preparation kernel reads (weights before
// their re-layout) is no argument of the per-inference kernels.
#include <algorithm>

#include "codegen/generator.h"
#include "codegen/scalar_promotion.h"

namespace weft::opencl {

namespace {

// Whether a kernel's lines learn the work-item's place only from get_global_id and never wait
// for the rest of the work-group: no other work-item function (a mapGlb striding by
// get_global_size, the interior fast path's get_group_id, a mapLcl's get_local_id) and no
// barrier. Such a kernel computes the same when its launch is split into parts with global
// offsets (KernelPlan::launchableInParts); the text is what the launch runs, so it is what is
// checked.
bool positionOnlyFromGlobalId(const std::vector<std::string>& lines) {
  static const char* const kOtherPlaceFunctions[] = {
      "get_global_size",         "get_global_offset", "get_group_id",
      "get_num_groups",          "get_local_id",      "get_local_size",
      "get_enqueued_local_size", "barrier("};
  for (const std::string& line : lines) {
    for (const char* function : kOtherPlaceFunctions) {
      if (line.find(function) != std::string::npos) return false;
    }
  }
  return true;
}

}  // namespace

void Generator::finishKernel() {
  promotePrivateArrays(emitter_.lines, privateArrays_, emitter_.named.indexedAtRunTime);
  privateArrays_.clear();
  KernelPlan plan;
  plan.name = kernelName_;
  plan.privateScalars = privateArrayScalars_ + maxLiveAccumulatorScalars_ + 2 * widestVector_;
  plan.privateScalarsExpr = Arith(plan.privateScalars) + symbolicPrivateScalars_;
  plan.privateArrayScalars = std::move(privateArraySizes_);
  privateArraySizes_.clear();
  plan.globalAccesses = std::move(globalAccesses_);
  plan.workItemLoops = workItemLoops_;
  workItemLoops_ = 0;
  globalAccesses_.clear();
  notedAccesses_.clear();
  symbolicPrivateScalars_ = Arith(0);
  privateArrayScalars_ = liveAccumulatorScalars_ = maxLiveAccumulatorScalars_ = 0;
  widestVector_ = 0;
  plan.dimensions = launch_.dimensions;
  plan.globalSize = launch_.globalSize;
  plan.hasLocalSize = launch_.usesGroups;
  plan.localSize = launch_.localSize;

  // Only the buffers the kernel's text names (the elements emitted into its lines, recorded in
  // emitter_.named) become arguments: views record every buffer they could reach (a zip's
  // other components, a let-bound array the kernel never reads), and a buffer passed to a
  // kernel that does not touch it would keep it alive (the original weights in the
  // per-inference kernel of the vector family, after their re-layout).
  std::vector<std::string> parameters;
  for (int buffer : usedBuffers_) {
    const BufferPlan& b = program_.buffers[buffer];
    if (emitter_.named.arrays.count(b.name) == 0) continue;
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
  plan.launchableInParts = !launch_.usesGroups && localDeclarations_.empty() &&
                           localArgs_.empty() && positionOnlyFromGlobalId(emitter_.lines);
  kernelSources_.push_back(text);
  plan.staticLocalBytes = staticLocalBytes_;
  program_.kernels.push_back(std::move(plan));
}

void Generator::rememberSizeVar(const Arith& v) {
  for (const Arith& known : allSizeVars_) {
    if (known.varName() == v.varName()) return;
  }
  allSizeVars_.push_back(v);
}

// Every Arith printed into a kernel is noted so that its size variables become arguments.
std::string Generator::c(const Arith& a) {
  mentionedSizes_.push_back(a);
  return a.toC();
}

// Records the buffers and size variables a view refers to (for kernel arguments).
void Generator::noteView(const ViewPtr& view) {
  for (const std::string& buffer : bufferNamesNoting(view)) noteBuffer(buffer);
}

// The buffers a view (its children, a layout map's element view) refers to. The first time
// a view is met since the last finishKernel, its arithmetic is noted in mentionedSizes_ (which
// only finishKernel clears, so noting it again would add nothing); the buffers are
// remembered per view, as usedBuffers_ is reset at each kernel's start. Views are immutable
// and the memo holds them, so a pointer always denotes the view it was noted for.
const std::vector<std::string>& Generator::bufferNamesNoting(const ViewPtr& view) {
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
    addBuffers(bufferNamesNoting(view->elementView(accessView(view->children.front(), Arith(0)))));
  }
  return notedViews_.emplace(view, std::move(buffers)).first->second;
}

void Generator::noteBuffer(const std::string& name, bool written) {
  for (size_t i = 0; i < program_.buffers.size(); ++i) {
    if (program_.buffers[i].name != name) continue;
    usedBuffers_.insert(static_cast<int>(i));
    if (written) writtenBuffers_.insert(static_cast<int>(i));
  }
}

}  // namespace weft::opencl
