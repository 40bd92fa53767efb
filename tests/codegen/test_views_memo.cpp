// Tests of the memo of view resolutions (codegen/views.h, ViewContext): a padded, slid and split
// image read under every combination of pad-guard assumptions (as loop unswitching makes them),
// in bounds, firing or neither, and under border-read recording, resolves to the same
// expression and records the same guards through one context's memo as through a fresh context
// each time, whatever order the states come in; the memo interns views rebuilt node for node as
// the same node, not views that differ in one field or a child, nor maps (their element
// functions do not compare); views are not interned when they are made.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "codegen/views.h"
#include "ir/type.h"

using namespace weft;

namespace {

// A 1D image of n floats padded by 1 with zeros (constant: pad guards) or clamped (border
// reads), slid by 3 with step 1: element (i, j) is image[i + j - 1].
ViewPtr window(Boundary boundary, int64_t n) {
  ViewPtr image = memoryView("img", Type::array(Type::scalar(ScalarKind::Float), Arith(n)),
                             AddressSpace::Global);
  return slideView(padView(image, Arith(1), Arith(1), boundary, 0.0), Arith(3), Arith(1));
}

struct Outcome {
  std::string expression;
  std::vector<std::string> guards;
  bool operator==(const Outcome&) const = default;
};

// Resolves window(..)[i][j] for j = 0..2 (a fresh view each time, as code generation builds
// them) in `context` under the assumption `state` (per guard key: 0 neither, 1 in bounds,
// 2 firing).
std::vector<Outcome> resolveAll(ViewContext& context, Boundary boundary, const Arith& i,
                                const std::vector<std::pair<std::string, int>>& state) {
  std::vector<Outcome> out;
  PadGuardRecorder guards;
  BorderReadRecorder borders;
  for (const auto& [key, status] : state) {
    if (status == 1) guards.assumedInBounds.insert(key), borders.assumedInside.insert(key);
    if (status == 2) guards.assumedFiring.insert(key);
  }
  PadGuardScope guardScope(context, guards);
  BorderReadScope borderScope(context, borders);
  for (int64_t j = 0; j < 3; ++j) {
    const size_t before = guards.seen.size() + borders.seen.size();
    ViewPtr element = accessView(accessView(window(boundary, 64), i), Arith(j));
    Outcome o{resolveElement(context, element, {}).expression, {}};
    for (size_t g = 0; g < guards.seen.size(); ++g) o.guards.push_back(guards.seen[g].key());
    for (size_t b = 0; b < borders.seen.size(); ++b) o.guards.push_back(borders.seen[b].key());
    CHECK(guards.seen.size() + borders.seen.size() >= before);
    out.push_back(o);
  }
  return out;
}

}  // namespace

TEST_CASE("memoised resolutions equal fresh ones under every guard assumption, in any order") {
  const Arith i = Arith::var("i7", VarKind::LoopIndex, Arith(0), Arith(63));
  for (Boundary boundary : {Boundary::Constant, Boundary::Clamp}) {
    CAPTURE(static_cast<int>(boundary));
    // The guard keys the reads consult, from one unassumed resolution.
    std::vector<std::string> keys;
    ViewContext once;
    for (const Outcome& o : resolveAll(once, boundary, i, {})) {
      for (const std::string& key : o.guards) {
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      }
    }
    REQUIRE(keys.size() == 2);  // i - 1 < 0 and i + 1 >= 64
    std::vector<std::vector<std::pair<std::string, int>>> states;
    const int statuses = boundary == Boundary::Constant ? 3 : 2;
    for (int a = 0; a < statuses; ++a) {
      for (int b = 0; b < statuses; ++b) states.push_back({{keys[0], a}, {keys[1], b}});
    }
    std::vector<std::vector<Outcome>> fresh;
    for (const auto& state : states) {
      ViewContext alone;  // nothing memoised yet
      fresh.push_back(resolveAll(alone, boundary, i, state));
    }
    CHECK(fresh.front() != fresh.back());  // the assumptions change the code
    std::mt19937 rng(3);
    for (int round = 0; round < 4; ++round) {
      ViewContext shared;
      std::vector<size_t> order(states.size());
      for (size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::shuffle(order.begin(), order.end(), rng);
      for (int pass = 0; pass < 2; ++pass) {  // the second pass hits the memo
        for (size_t k : order) {
          CAPTURE(k);
          CHECK(resolveAll(shared, boundary, i, states[k]) == fresh[k]);
        }
      }
    }
  }
}

TEST_CASE("the memo interns rebuilt views as one node; a changed field or child is not") {
  const Arith i = Arith::var("i7", VarKind::LoopIndex, Arith(0), Arith(63));
  auto identity = [](const ViewPtr& v) { return v; };
  const Type row = Type::array(Type::scalar(ScalarKind::Float), Arith(3));
  // Made twice, a view is two nodes of the same structural hash.
  CHECK(window(Boundary::Constant, 64) != window(Boundary::Constant, 64));
  CHECK(window(Boundary::Constant, 64)->structuralHash ==
        window(Boundary::Constant, 64)->structuralHash);
  ViewContext context;
  auto interned = [&](const ViewPtr& view) { return context.interned(view); };
  CHECK(interned(window(Boundary::Constant, 64)) == interned(window(Boundary::Constant, 64)));
  CHECK(interned(window(Boundary::Constant, 64)) != interned(window(Boundary::Clamp, 64)));
  CHECK(interned(window(Boundary::Constant, 64)) != interned(window(Boundary::Constant, 65)));
  CHECK(interned(accessView(window(Boundary::Clamp, 64), i)) ==
        interned(accessView(window(Boundary::Clamp, 64), i)));
  CHECK(interned(accessView(window(Boundary::Clamp, 64), i)) !=
        interned(accessView(window(Boundary::Clamp, 64), i + 1)));
  ViewPtr mapped = interned(mapView(window(Boundary::Clamp, 64), row, identity));
  CHECK(mapped != interned(mapView(window(Boundary::Clamp, 64), row, identity)));
  // A node the memo already holds stands for itself.
  CHECK(interned(mapped) == mapped);
  ViewPtr node = interned(window(Boundary::Clamp, 64));
  CHECK(interned(node) == node);
}
