// Tests of the cache footprint analysis (explore/cache_footprint.h) on kernels whose line loads
// can be counted by hand: a streaming map loads each line once; an untiled matrix product loads
// a line of B per multiply-add when a column of B does not fit in the cache between two rows,
// and each line of B once when the whole of B does, its lines on pages of their own when B's
// rows are a page long (a walk across pages); a window's unrolled taps are one reference
// group, loading each line once, not once per tap; a kernel with barriers is told apart.
#include <doctest/doctest.h>

#include <string>

#include "codegen/codegen.h"
#include "explore/cache_footprint.h"
#include "ir/parser.h"

using namespace weft;
using namespace weft::explore;

namespace {

constexpr double kLine = 64;
constexpr double kFirstLevel = 32 * 1024;

CompiledProgram compile(const std::string& text, const ArithBinding& sizes) {
  CodegenOptions options;
  options.specialize = sizes;
  return generateOpenCL(parseProgram(text, "test.weft").definitions.back(), options);
}

}  // namespace

TEST_CASE("a streaming map loads each line of its input and output once") {
  const ArithBinding sizes = {{"N", 1 << 20}};
  const CompiledProgram program =
      compile("def f(x: [float]N) = mapGlb(0, a -> a * 2.0f, x)", sizes);
  REQUIRE(program.kernels.size() == 1);
  CHECK_FALSE(kernelHasBarriers(program, program.kernels[0]));
  const CacheTraffic traffic =
      cacheTraffic(program.kernels[0], false, sizes, {256, 0, 0}, kFirstLevel, kLine);
  CHECK(traffic.lineLoadsByBuffer.at("in_x") == doctest::Approx((1 << 20) / 16));
  CHECK(traffic.lineLoadsByBuffer.at("out") == doctest::Approx((1 << 20) / 16));
  CHECK(traffic.lineLoads == doctest::Approx(traffic.distinctLines));
}

TEST_CASE("an untiled matrix product loads B again for every row unless B fits") {
  const char* text = R"(
def mm(a: [[float]K]M, b: [[float]N]K) =
  mapGlb(1, row -> mapGlb(0, col -> reduceSeq(0.0f, (acc, p) -> acc + p._0 * p._1,
                                               zip(row, col)), transpose(b)), a)
)";
  const ArithBinding sizes = {{"M", 64}, {"N", 64}, {"K", 1024}};
  const CompiledProgram program = compile(text, sizes);
  REQUIRE(program.kernels.size() == 1);
  // A work-item walks a row of A (64 lines) and a column of B (1024 lines, one per value):
  // more than the 512 lines of 32 KiB, so the next work-item loads its column again.
  const CacheTraffic small =
      cacheTraffic(program.kernels[0], false, sizes, {16, 1, 0}, kFirstLevel, kLine);
  const double multiplyAdds = 64.0 * 64 * 1024;
  CHECK(small.lineLoadsByBuffer.at("in_b") == doctest::Approx(multiplyAdds));
  // A cache of 1 MiB holds all of B (4096 lines): each line loads once.
  const CacheTraffic large =
      cacheTraffic(program.kernels[0], false, sizes, {16, 1, 0}, 1 << 20, kLine);
  CHECK(large.lineLoadsByBuffer.at("in_b") == doctest::Approx(1024.0 * 64 / 16));
  CHECK(large.lineLoadsByBuffer.at("in_a") == doctest::Approx(64.0 * 1024 / 16));
  CHECK(large.distinctLines == doctest::Approx(small.distinctLines));
  // The column's lines lie 64 floats apart, on the same pages: no walk across pages.
  CHECK(small.pageWalkLineLoads == 0);

  // With rows of B 1024 floats long, each line of the column is on a page of its own.
  const ArithBinding wide = {{"M", 16}, {"N", 1024}, {"K", 1024}};
  const CompiledProgram widely = compile(text, wide);
  REQUIRE(widely.kernels.size() == 1);
  const CacheTraffic paged =
      cacheTraffic(widely.kernels[0], false, wide, {16, 1, 0}, kFirstLevel, kLine);
  CHECK(paged.lineLoadsByBuffer.at("in_b") == doctest::Approx(16.0 * 1024 * 1024));
  CHECK(paged.pageWalkLineLoads == doctest::Approx(paged.lineLoadsByBuffer.at("in_b")));
}

TEST_CASE("a window's unrolled taps are one reference group") {
  const ArithBinding sizes = {{"N", 1 << 16}};
  const CompiledProgram program = compile(
      "def f(x: [float]N) = mapGlb(0, w -> reduceSeqUnroll(0.0f, (a, v) -> a + v, w), "
      "slide(3, 1, x))",
      sizes);
  REQUIRE(program.kernels.size() == 1);
  const CacheTraffic traffic =
      cacheTraffic(program.kernels[0], false, sizes, {64, 0, 0}, kFirstLevel, kLine);
  // Three taps one value apart, the window moving one value per work-item: every line of x
  // loads once (plus the window's overhang), not once per tap.
  CHECK(traffic.lineLoadsByBuffer.at("in_x") == doctest::Approx((1 << 16) / 16.0).epsilon(0.01));
}

TEST_CASE("a kernel that stages a tile in local memory has barriers") {
  const ArithBinding sizes = {{"N", 1024}};
  const CompiledProgram program = compile(
      "def f(x: [float]N) = join(mapWrg(0, chunk -> mapLcl(0, a -> a * 2.0f, toLocal(copy -> "
      "mapLcl(0, c -> id(c), copy), chunk)), split(64, x)))",
      sizes);
  REQUIRE(program.kernels.size() == 1);
  CHECK(kernelHasBarriers(program, program.kernels[0]));
  const CacheTraffic traffic =
      cacheTraffic(program.kernels[0], true, sizes, {64, 0, 0}, kFirstLevel, kLine);
  CHECK(traffic.lineLoadsByBuffer.at("in_x") == doctest::Approx(1024 / 16));
}
