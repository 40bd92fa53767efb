// Small pieces shared by the steps of OpenCL generation: see gen_support.h.
#include "codegen/gen_support.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "codegen/codegen.h"

namespace weft::opencl {

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

bool isLayoutMap(const Expr& e) {
  return e.isPrim(Op::Map) && e.funs()[0].isLambda() && !computes(e.funs()[0].body());
}

bool isLayoutLike(const Expr& e) {
  if (!e.isPrim()) return false;
  return isRearrangingPrimitive(e.primOp()) || isLayoutMap(e);
}

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

std::vector<int> workItemOwnedDims(const Expr& reduce) {
  std::vector<int> dims;
  if (!reduce.isPrim() || !isReduceFamily(reduce.primOp())) return dims;
  const Expr& step = reduce.funs()[0];
  if (!step.isLambda()) return dims;
  // The result of a function body, through the lets that bind its staged values.
  auto result = [](Expr body) {
    while (body.isPrim(Op::Let) && body.funs()[0].isLambda()) body = body.funs()[0].body();
    return body;
  };
  Expr level = result(step.body());
  while (level.isPrim(Op::MapLcl) && level.funs()[0].isLambda()) {
    const std::optional<int64_t> dim = level.nats()[0].constant();
    if (!dim || std::find(dims.begin(), dims.end(), static_cast<int>(*dim)) != dims.end()) break;
    dims.push_back(static_cast<int>(*dim));
    level = result(level.funs()[0].body());
  }
  return dims;
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

std::optional<float> reciprocalOfDivisor(double divisor) {
  const float d = static_cast<float>(divisor);
  if (!std::isnormal(d)) return std::nullopt;
  const float reciprocal = 1.0f / d;
  if (!std::isnormal(reciprocal)) return std::nullopt;
  return reciprocal;
}

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

void EmittedArrays::insert(bool runTime, const std::string& name) {
  if ((runTime ? indexedAtRunTime : arrays).insert(name).second) log_.emplace_back(runTime, name);
}

void EmittedArrays::note(const ResolvedElement& element) {
  for (const ResolvedElement::ArrayUse& use : element.arrays) {
    insert(false, use.name);
    if (!use.constantIndex) insert(true, use.name);
  }
}

void EmittedArrays::merge(const EmittedArrays& other) {
  for (const auto& [runTime, name] : other.log_) insert(runTime, name);
}

void EmittedArrays::undoTo(size_t mark) {
  while (log_.size() > mark) {
    const auto& [runTime, name] = log_.back();
    (runTime ? indexedAtRunTime : arrays).erase(name);
    log_.pop_back();
  }
}

}  // namespace weft::opencl
