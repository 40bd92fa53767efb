// The four image pipelines of examples/pipelines/ (blur, unsharp mask, Harris, Canny without
// hysteresis) type-check with symbolic sizes, and the reference interpreter's result equals the
// independent C++ references of tests/support/pipeline_reference.h on small random images
// (odd, non-square and degenerate sizes, borders included), within a relative 1e-5 of the
// terms each pixel is formed from. Pixels whose reference decision (unsharp mask's threshold,
// Canny's direction, suppression and thresholds) hangs on a near tie are counted apart as tie
// flips, never hidden by a looser tolerance. The tests also show that they can fail: the same
// programs with zero (constant) instead of clamp padding disagree with the references at the
// borders.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "ir/parser.h"
#include "tests/support/pipeline_programs.h"
#include "tests/support/pipeline_reference.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::testing::pipelines;

namespace {

// The pipeline's text with `from` replaced by `to` (each must occur), parsed.
Definition variantOf(const std::string& name,
                     const std::vector<std::pair<std::string, std::string>>& edits) {
  std::ifstream file(pipelinePath(name));
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const auto& [from, to] : edits) {
    size_t at = 0;
    int count = 0;
    while ((at = text.find(from, at)) != std::string::npos) {
      text.replace(at, from.size(), to);
      at += to.size();
      ++count;
    }
    REQUIRE_MESSAGE(count > 0, "'" << from << "' not found in " << name);
  }
  return parseProgram(text, name + " (variant)").definitions.back();
}

struct Case {
  int width;
  int height;
  uint64_t seed;
  bool blocky;
};

std::vector<Case> smallCases() {
  std::vector<Case> cases;
  for (uint64_t seed : {1, 2, 3}) {
    cases.push_back({13, 9, seed, false});
    cases.push_back({32, 32, seed, false});
    cases.push_back({13, 9, seed + 10, true});
    cases.push_back({32, 32, seed + 10, true});
  }
  // Degenerate sizes: every pixel is a border pixel, windows reach past both edges.
  cases.push_back({1, 1, 4, false});
  cases.push_back({2, 5, 5, false});
  cases.push_back({5, 2, 6, true});
  return cases;
}

Image makeImage(const Case& c, int channels) {
  return c.blocky ? blockyImage(c.width, c.height, channels, c.seed)
                  : randomImage(c.width, c.height, channels, c.seed);
}

std::string describe(const Case& c) {
  return std::to_string(c.width) + "x" + std::to_string(c.height) + " seed " +
         std::to_string(c.seed) + (c.blocky ? " blocky" : " random");
}

void requireAgreement(const Agreement& agreement, const std::string& what) {
  CAPTURE(what);
  CHECK_MESSAGE(agreement.mismatches == 0, agreement.mismatches << " of " << agreement.compared
                                                                << " pixels differ, first "
                                                                << agreement.firstMismatch);
  // Near ties are allowed to flip, but only rarely (the references use the same order of
  // operations as the programs, so the interpreter normally flips none).
  CHECK(agreement.tieFlips * 100 <= agreement.compared);
}

}  // namespace

TEST_CASE("the pipelines type-check with symbolic sizes and keep the image's shape") {
  const std::vector<std::pair<std::string, std::string>> expected = {{"blur", "[[float]W]H"},
                                                                     {"unsharp", "[[[float]W]H]C"},
                                                                     {"harris", "[[float]W]H"},
                                                                     {"canny", "[[int]W]H"}};
  for (const auto& [name, type] : expected) {
    CAPTURE(name);
    const Definition definition = loadPipeline(name);
    const TypedDefinition typed = typecheck(definition);
    CHECK(typed.type.toString() == type);
    CHECK(typed.constraints.empty());
  }
}

TEST_CASE("blur in the interpreter equals the C++ reference") {
  const Definition blur = loadPipeline("blur");
  for (const Case& c : smallCases()) {
    const Image image = makeImage(c, 1);
    const Image expected = blurReference(image);
    const Value got = interpretOnImage(blur, image);
    requireAgreement(compareFloats(flattenToFloats(got), expected.data, c.width, c.height),
                     "blur " + describe(c));
  }
}

TEST_CASE("unsharp mask in the interpreter equals the C++ reference (3 channels)") {
  const Definition unsharp = loadPipeline("unsharp");
  size_t keptInput = 0;
  size_t sharpened = 0;
  size_t tieFlips = 0;
  for (const Case& c : smallCases()) {
    const Image image = makeImage(c, 3);
    const UnsharpResult expected = unsharpReference(image);
    const std::vector<float> got = flattenToFloats(interpretOnImage(unsharp, image));
    const Agreement agreement = compareFloats(got, expected.output.data, c.width, c.height,
                                              expected.scale, expected.fragile);
    requireAgreement(agreement, "unsharp " + describe(c));
    tieFlips += agreement.tieFlips;
    for (size_t i = 0; i < image.data.size(); ++i) {
      (expected.output.data[i] == image.data[i] ? keptInput : sharpened) += 1;
    }
  }
  MESSAGE("unsharp mask: " << keptInput << " pixels keep the input, " << sharpened
                           << " are sharpened, " << tieFlips << " threshold tie flips");
  // Both sides of the select are exercised.
  CHECK(keptInput > 100);
  CHECK(sharpened > 100);
}

TEST_CASE("Harris in the interpreter equals the C++ reference") {
  const Definition harris = loadPipeline("harris");
  for (const Case& c : smallCases()) {
    const Image image = makeImage(c, 1);
    const HarrisResult expected = harrisReference(image);
    const std::vector<float> got = flattenToFloats(interpretOnImage(harris, image));
    requireAgreement(compareFloats(got, expected.output.data, c.width, c.height, expected.scale),
                     "harris " + describe(c));
  }
}

TEST_CASE("Canny in the interpreter equals the C++ reference (labels and suppressed magnitude)") {
  const Definition canny = loadPipeline("canny");
  // The same pipeline stopped after non-maximum suppression, to compare the magnitudes that
  // the labels quantize.
  const Definition cannyThin =
      variantOf("canny", {{"map2D(m -> label(m), thin),", "thin,"},
                          {"def canny(input: [[float]W]H): [[int]W]H",
                           "def cannyThin(input: [[float]W]H): [[float]W]H"}});
  std::vector<size_t> labelCounts(3, 0);
  std::vector<size_t> directionCounts(4, 0);
  size_t labelFlips = 0;
  size_t thinFlips = 0;
  for (const Case& c : smallCases()) {
    const Image image = makeImage(c, 1);
    const CannyResult expected = cannyReference(image);
    const Agreement labels = compareInts(flattenToInts(interpretOnImage(canny, image)),
                                         expected.labels.data, c.width, expected.labelFragile);
    requireAgreement(labels, "canny labels " + describe(c));
    const Agreement thin =
        compareFloats(flattenToFloats(interpretOnImage(cannyThin, image)), expected.thin.data,
                      c.width, c.height, expected.thinScale, expected.thinFragile);
    requireAgreement(thin, "canny thin " + describe(c));
    labelFlips += labels.tieFlips;
    thinFlips += thin.tieFlips;
    for (int32_t label : expected.labels.data) ++labelCounts.at(static_cast<size_t>(label));
    for (int32_t d : expected.direction.data) ++directionCounts.at(static_cast<size_t>(d));
  }
  MESSAGE("canny labels 0/1/2: " << labelCounts[0] << "/" << labelCounts[1] << "/" << labelCounts[2]
                                 << "; directions 0/1/2/3: " << directionCounts[0] << "/"
                                 << directionCounts[1] << "/" << directionCounts[2] << "/"
                                 << directionCounts[3] << "; tie flips: labels " << labelFlips
                                 << ", thin " << thinFlips);
  // Every label and every direction occurs, so each branch is compared.
  for (size_t count : labelCounts) CHECK(count > 50);
  for (size_t count : directionCounts) CHECK(count > 50);
}

TEST_CASE("the comparison sees the borders: zero padding instead of clamp disagrees") {
  const Image image = randomImage(13, 9, 1, 99);
  const Definition blurZero = variantOf("blur", {{"clamp", "constant(0.0f)"}});
  const Agreement blur = compareFloats(flattenToFloats(interpretOnImage(blurZero, image)),
                                       blurReference(image).data, 13, 9);
  CHECK(blur.mismatches > 0);
  // The interior is unaffected: only pixels next to an edge differ.
  CHECK(blur.mismatches <= 2 * 13 + 2 * 9);

  const HarrisResult harris = harrisReference(image);
  const Definition harrisZero = variantOf("harris", {{"clamp", "constant(0.0f)"}});
  CHECK(compareFloats(flattenToFloats(interpretOnImage(harrisZero, image)), harris.output.data, 13,
                      9, harris.scale)
            .mismatches > 0);

  const Image colour = randomImage(13, 9, 3, 98);
  const UnsharpResult unsharp = unsharpReference(colour);
  const Definition unsharpZero = variantOf("unsharp", {{"clamp", "constant(0.0f)"}});
  CHECK(compareFloats(flattenToFloats(interpretOnImage(unsharpZero, colour)), unsharp.output.data,
                      13, 9, unsharp.scale, unsharp.fragile)
            .mismatches > 0);
}

TEST_CASE("the comparison sees a changed threshold, direction or suppression rule in Canny") {
  const Image image = blockyImage(32, 32, 1, 77);
  const CannyResult expected = cannyReference(image);
  const Definition lowerHigh = variantOf("canny", {{"m >= 0.3f", "m >= 0.25f"}});
  CHECK(compareInts(flattenToInts(interpretOnImage(lowerHigh, image)), expected.labels.data, 32,
                    expected.labelFragile)
            .mismatches > 0);
  // Swapping the two diagonals changes which neighbours suppress a diagonal edge.
  const Definition swapped =
      variantOf("canny", {{"gx * gy > 0.0f ? -1.0f : 1.0f", "gx * gy > 0.0f ? 1.0f : -1.0f"}});
  CHECK(compareInts(flattenToInts(interpretOnImage(swapped, image)), expected.labels.data, 32,
                    expected.labelFragile)
            .mismatches > 0);
  // The branch-free suppression: direction 1's first neighbour taken from the other diagonal.
  const Definition wrongNeighbour =
      variantOf("canny", {{"(dir == 1 ? 1.0f : 0.0f) * a", "(dir == 1 ? 1.0f : 0.0f) * c"}});
  CHECK(compareInts(flattenToInts(interpretOnImage(wrongNeighbour, image)), expected.labels.data,
                    32, expected.labelFragile)
            .mismatches > 0);
}
