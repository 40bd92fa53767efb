// A reorder is a permutation, so a parallel map's result can be written through it (its
// inverse view: reverse undoes itself, LIFT's stride s over n elements is undone by stride
// n / s) instead of being computed and read back in the same kernel, which code generation
// refuses. The search's reorder-with-stride gives such programs (reorder(stride(M/s), map(f,
// reorder(stride(s), A)))); 17 to 41 structures per program had no valid variant for it. Each
// program is checked against the interpreter on random inputs, sizes symbolic and
// specialised. Label opencl.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "host/program_runner.h"
#include "tests/support/opencl_program_check.h"

using namespace weft;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

// Checks `text` against the interpreter and returns its one kernel's global size, specialised
// for `sizes` (a single work-item kernel, computing everything before reading it back, has 1).
std::vector<std::string> check(const std::string& text, const ArithBinding& sizes) {
  return testing::checkedKernelGlobalSize(context(), text, "reorder.weft", sizes, 3);
}

}  // namespace

TEST_CASE("a map's rows written through a stride reorder") {
  CHECK(check("def f(A: [[float]N]M, b: [float]N): [[float]N]M =\n"
              "  reorder(stride(M / 4), map(r -> map(p -> max(p._0 + p._1, 0.0f), zip(r, b)),\n"
              "                            reorder(stride(4), A)))\n",
              {{"M", 12}, {"N", 5}}) == std::vector<std::string>{"5", "12"});
  // The outer stride alone: the result is the rows permuted.
  CHECK(check("def f(A: [[float]N]M): [[float]N]M =\n"
              "  reorder(stride(3), map(r -> map(x -> x * 2.0f, r), A))\n",
              {{"M", 12}, {"N", 7}}) == std::vector<std::string>{"7", "12"});
}

TEST_CASE("a map's elements written through reverse, and through a reorder in a layout map") {
  CHECK(check("def f(x: [float]N): [float]N = reorder(reverse, map(v -> v + 1.0f, x))\n",
              {{"N", 9}}) == std::vector<std::string>{"9"});
  CHECK(check("def f(A: [[float]N]M): [[float]N]M =\n"
              "  map(r -> reorder(stride(2), r), map(r -> map(x -> x * 3.0f, r), A))\n",
              {{"M", 3}, {"N", 8}}) == std::vector<std::string>{"8", "3"});
  // Inside a parallel map: each row's map written through its row's reverse.
  CHECK(check("def f(x: [[float]N]M) = map(r -> reorder(reverse, map(v -> v + 1.0f, r)), x)\n",
              {{"M", 4}, {"N", 6}}) == std::vector<std::string>{"6", "4"});
}
