// Small parametric programs the explore/ tests share: each is built by applying rewrite rules
// without factors (so the rules create tuning variables) or with the builders and hand-made
// tuning variables, and each comes with a brute-force oracle for its valid points.
// Header-only (only .cpp files under tests/explore/ become test executables).
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "ir/parser.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"

namespace weft::testing::explore {

inline Definition applyRules(const std::string& text,
                             const std::vector<std::pair<std::string, std::string>>& steps,
                             rewrite::RewriteContext& context,
                             const std::vector<rewrite::RuleArguments>& arguments = {}) {
  Definition current = parseProgram(text).definitions.back();
  for (size_t i = 0; i < steps.size(); ++i) {
    const rewrite::Rule* rule = rewrite::findRule(steps[i].first);
    REQUIRE_MESSAGE(rule != nullptr, steps[i].first);
    rewrite::RuleArguments args = i < arguments.size() ? arguments[i] : rewrite::RuleArguments{};
    auto next = rewrite::applyAt(current, *rule, rewrite::parsePosition(steps[i].second), args,
                                 context);
    REQUIRE_MESSAGE(next.has_value(), steps[i].first << "@" << steps[i].second);
    current = *next;
  }
  return current;
}

inline const char* kIncrement = "def f(xs: [float]N): [float]N = map(x -> x + 1.0f, xs)\n";

// join(map(map(f), split(chunk1, xs))): chunk1 in [1, N], N % chunk1 = 0.
inline Definition splitOnce(rewrite::RewriteContext& context) {
  return applyRules(kIncrement, {{"split-join", "root"}}, context);
}

// Split twice: chunk1 in [1, N], chunk2 in [1, chunk1], chunk1 | N, chunk2 | chunk1.
inline Definition splitTwice(rewrite::RewriteContext& context) {
  return applyRules(kIncrement, {{"split-join", "root"}, {"split-join", "0.0.0"}}, context);
}

// Work-groups of chunk1 work-items: mapWrg(0) over split(chunk1), mapLcl(0) inside.
inline Definition workGroups(rewrite::RewriteContext& context) {
  return applyRules(kIncrement,
                    {{"split-join", "root"}, {"map-to-mapwrg", "0"}, {"map-to-maplcl", "0.0.0"}},
                    context, {{}, {{"dim", Arith(0)}}, {{"dim", Arith(0)}}});
}

// A 3-point stencil whose windows are tiled: slide(3, 1) => slideStrict tiles of theta1.
inline const char* kStencil1D =
    "def s(xs: [float]N): [float](N - 2) = join(map(w -> reduce(0.0f, (a, x) -> a + x, w), "
    "slide(3, 1, xs)))\n";

// The points of a box of ranges (inclusive) that satisfy `valid`, in lexicographic order.
template <typename Valid>
std::vector<std::vector<int64_t>> bruteForce(const std::vector<std::pair<int64_t, int64_t>>& box,
                                            Valid valid) {
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> point(box.size());
  std::function<void(size_t)> walk = [&](size_t i) {
    if (i == box.size()) {
      if (valid(point)) out.push_back(point);
      return;
    }
    for (int64_t v = box[i].first; v <= box[i].second; ++v) {
      point[i] = v;
      walk(i + 1);
    }
  };
  walk(0);
  return out;
}

}  // namespace weft::testing::explore
