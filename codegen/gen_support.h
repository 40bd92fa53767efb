// Small pieces shared by the steps of OpenCL generation (codegen/generator.h): the error every
// step raises, the classification of primitives (map and reduce families, parallel maps, layout
// primitives, whether a value computes anything), the C spelling of literals and identifiers,
// and the plain records a kernel's generation keeps (its statement lines, its private arrays,
// the loops it is inside).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "codegen/views.h"
#include "ir/arith.h"
#include "ir/expr.h"

namespace weft::opencl {

// Throws CodegenError, prefixed with the source location of `at` when it is known.
[[noreturn]] void fail(const Expr& at, const std::string& message);

bool isMapFamily(Op op);
bool isReduceFamily(Op op);
bool isParallelMap(Op op);

// A map whose function only rearranges its argument (map(transpose), map(join)) is a layout
// operation: it computes nothing of its own.
bool isLayoutMap(const Expr& e);
// Primitives that only rearrange data (views), whatever their arguments.
bool isLayoutLike(const Expr& e);
// A value computes something (and so needs statements) unless it is built from params,
// literals and layout primitives only.
bool computes(const Expr& e);
// Whether a node of `e` (itself included) is a primitive whose op satisfies `predicate`.
bool containsOp(const Expr& e, const std::function<bool(Op)>& predicate);

// A reduction whose step computes its new accumulator with a nest of mapLcl (through lets):
// element i of the accumulator at each level belongs to the work-item whose local index is i,
// which alone reads and writes it, so it lives in that work-item's private memory (LIFT's
// private memory of a mapLcl; a work-group tile's register accumulators across the steps of a
// reduction whose steps stage data in local memory). Returns the local dimension of each level
// of the nest, outermost first; empty when the step's result is not computed by mapLcl.
std::vector<int> workItemOwnedDims(const Expr& reduce);

// The C text of a float literal: "%.9g" with a "f" suffix ("1.0f", "0.333333343f"), NAN,
// INFINITY.
std::string floatLiteralC(double value);
// The multiplier that replaces a float division by the literal `divisor`: the float nearest
// 1 / divisor, when the divisor is a normal float whose reciprocal is one too (no zero,
// infinity, NaN or subnormal on either side); otherwise nothing. Exact when the divisor is a
// power of two; otherwise within 1.5 ulp of the quotient, inside the 2.5 ulp OpenCL 1.2 allows
// for x / y (section 7.4) without -cl-fp32-correctly-rounded-divide-sqrt. Halide 14 does the
// same (its lowered statement for inp(x) / 3.0f reads inp[...] * 0.333333f).
std::optional<float> reciprocalOfDivisor(double divisor);
// True for the C text of a float zero literal, scalar or broadcast: "0.0f", "-0.0f",
// "(float16)(0.0f)" (what a firing constant-pad read of 0 becomes).
bool isFloatZeroText(const std::string& text);
// A C identifier made of `name`: every character that is not a letter, digit or '_' becomes
// '_'; "v" for an empty name.
std::string cIdentifier(const std::string& name);

// The arrays the lines of an Emitter name, recorded as the resolved elements that name them are
// emitted (never found by reading the lines back): a kernel's buffer arguments are the global
// buffers in `arrays`, and its private arrays not in `indexedAtRunTime` become scalars. A log
// of the insertions lets a caller take back what an expression it drops had recorded.
struct EmittedArrays {
  std::set<std::string> arrays;            // every array named
  std::set<std::string> indexedAtRunTime;  // arrays named other than as `name[literal]`
  void note(const ResolvedElement& element);
  void merge(const EmittedArrays& other);
  size_t mark() const { return log_.size(); }
  void undoTo(size_t mark);  // forgets what was noted since mark()

 private:
  void insert(bool runTime, const std::string& name);
  std::vector<std::pair<bool, std::string>> log_;  // (indexedAtRunTime, name) newly inserted
};

// Statements of one kernel (or helper function) being generated, and the arrays they name.
struct Emitter {
  std::vector<std::string> lines;
  int indent = 1;
  EmittedArrays named;
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

// A private array a kernel declares (`element name[size];`), a candidate for scalar promotion.
struct PrivateArray {
  std::string name;
  std::string element;
  int64_t size;
};

// One loop (or parallel map) the statements being generated are inside.
struct LoopFrame {
  Op op;
  int dimension;
  Arith index;
  Arith tripCount;
  bool repeats;  // the body runs more than once on one work-item (a real or unrolled loop)
  bool rolled = false;  // an unrolled loop generated as a loop (CodegenOptions::unrolledAsLoops)
};

}  // namespace weft::opencl
