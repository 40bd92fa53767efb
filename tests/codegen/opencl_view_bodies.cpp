// A definition whose body computes nothing (a transpose, a join, a pad, a view map, the input
// itself) is copied by one parallel kernel (codegen/lowering.h), not by a single work-item:
// each is checked against the interpreter on random inputs, sizes symbolic and specialised, and
// its kernel has a global size over the view's outer levels. Label opencl.
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

// Runs `text` against the interpreter and returns the global size of its one kernel,
// specialised for `sizes`.
std::vector<std::string> globalSize(const std::string& text, const ArithBinding& sizes) {
  return testing::checkedKernelGlobalSize(context(), text, "view_body.weft", sizes, 5);
}

}  // namespace

TEST_CASE("a transpose of the input is copied in parallel over both dimensions") {
  CHECK(globalSize("def t(a: [[float]N]M) = transpose(a)\n", {{"M", 13}, {"N", 7}}) ==
        std::vector<std::string>{"13", "7"});
}

TEST_CASE("joins, pads, view maps and the input itself are copied in parallel") {
  CHECK(globalSize("def j(a: [[float]N]M) = join(a)\n", {{"M", 5}, {"N", 6}}) ==
        std::vector<std::string>{"30"});
  CHECK(globalSize("def p(a: [float]N) = pad(2, 1, clamp, a)\n", {{"N", 9}}) ==
        std::vector<std::string>{"12"});
  CHECK(globalSize("def v(a: [[[float]N]M]K) = map(m -> transpose(m), a)\n",
                   {{"K", 3}, {"M", 4}, {"N", 5}}) == std::vector<std::string>{"4", "5", "3"});
  CHECK(globalSize("def i(a: [float4]N) = a\n", {{"N", 10}}) == std::vector<std::string>{"10"});
}
