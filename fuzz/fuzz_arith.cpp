// libFuzzer target: the symbolic arithmetic. The bytes describe a small expression over three
// variables with ranges (+, -, *, truncating / and %, min, max, constants); it is built as an
// Arith, which simplifies as it goes (using the ranges), and evaluated at points inside the
// ranges against the same expression computed directly on 64-bit integers with C's semantics.
// Points where the direct computation divides by zero or overflows are skipped, and so are
// expressions whose values may exceed 2^40 anywhere in the ranges. A simplified
// value that differs, an exception other than ArithError, a crash or a sanitizer report is a
// finding.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "ir/arith.h"

using weft::Arith;

namespace {

struct Bytes {
  const uint8_t* data;
  size_t size;
  size_t at = 0;
  uint8_t next() { return at < size ? data[at++] : 0; }
};

// An expression tree kept beside its Arith, to compute it directly.
struct Node {
  int op;  // 0 constant, 1 variable, 2 + 3 - 4 * 5 / 6 % 7 min 8 max
  int64_t value = 0;
  int variable = 0;
  int left = -1, right = -1;
};

const char* const kNames[] = {"x", "y", "z"};

int build(Bytes& in, std::vector<Node>& nodes, int depth) {
  const uint8_t byte = in.next();
  Node node;
  node.op = depth >= 4 ? byte % 2 : byte % 9;
  if (node.op == 0) node.value = static_cast<int64_t>(in.next() % 33) - 8;
  if (node.op == 1) node.variable = in.next() % 3;
  if (node.op >= 2) {
    node.left = build(in, nodes, depth + 1);
    node.right = build(in, nodes, depth + 1);
  }
  nodes.push_back(node);
  return static_cast<int>(nodes.size()) - 1;
}

Arith symbolic(const std::vector<Node>& nodes, int i, const std::vector<Arith>& variables) {
  const Node& n = nodes[static_cast<size_t>(i)];
  if (n.op == 0) return Arith(n.value);
  if (n.op == 1) return variables[static_cast<size_t>(n.variable)];
  const Arith a = symbolic(nodes, n.left, variables);
  const Arith b = symbolic(nodes, n.right, variables);
  switch (n.op) {
    case 2:
      return a + b;
    case 3:
      return a - b;
    case 4:
      return a * b;
    case 5:
      return a / b;
    case 6:
      return a % b;
    case 7:
      return weft::min(a, b);
    default:
      return weft::max(a, b);
  }
}

std::optional<int64_t> direct(const std::vector<Node>& nodes, int i, const int64_t* point) {
  const Node& n = nodes[static_cast<size_t>(i)];
  if (n.op == 0) return n.value;
  if (n.op == 1) return point[n.variable];
  const std::optional<int64_t> a = direct(nodes, n.left, point);
  const std::optional<int64_t> b = direct(nodes, n.right, point);
  if (!a || !b) return std::nullopt;
  int64_t r = 0;
  switch (n.op) {
    case 2:
      if (__builtin_add_overflow(*a, *b, &r)) return std::nullopt;
      return r;
    case 3:
      if (__builtin_sub_overflow(*a, *b, &r)) return std::nullopt;
      return r;
    case 4:
      if (__builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
      return r;
    case 5:
      if (*b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
      return *a / *b;
    case 6:
      if (*b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
      return *a % *b;
    case 7:
      return std::min(*a, *b);
    default:
      return std::max(*a, *b);
  }
}

// The expression as text, to read a finding (WEFT_FUZZ_VERBOSE=1).
std::string describe(const std::vector<Node>& nodes, int i) {
  const Node& n = nodes[static_cast<size_t>(i)];
  if (n.op == 0) return std::to_string(n.value);
  if (n.op == 1) return kNames[n.variable];
  const std::string a = describe(nodes, n.left), b = describe(nodes, n.right);
  static const char* const infix[] = {"", "", " + ", " - ", " * ", " / ", " % "};
  if (n.op <= 6) return "(" + a + infix[n.op] + b + ")";
  return std::string(n.op == 7 ? "min(" : "max(") + a + ", " + b + ")";
}

// A bound on the magnitude of every value the subtree takes inside the ranges (saturating).
double magnitude(const std::vector<Node>& nodes, int i, const int64_t* lo, const int64_t* hi) {
  const Node& n = nodes[static_cast<size_t>(i)];
  if (n.op == 0) return std::abs(static_cast<double>(n.value));
  if (n.op == 1)
    return static_cast<double>(std::max(std::abs(lo[n.variable]), std::abs(hi[n.variable])));
  const double a = magnitude(nodes, n.left, lo, hi);
  const double b = magnitude(nodes, n.right, lo, hi);
  switch (n.op) {
    case 2:
    case 3:
      return a + b;
    case 4:
      return a * b;
    case 5:
      return a;
    case 6:
      return std::min(a, b);
    default:
      return std::max(a, b);
  }
}

// The subtrees' largest magnitude bound.
double largestMagnitude(const std::vector<Node>& nodes, const int64_t* lo, const int64_t* hi) {
  double largest = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    largest = std::max(largest, magnitude(nodes, static_cast<int>(i), lo, hi));
  }
  return largest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in{data, size};
  int64_t lo[3], hi[3];
  std::vector<Arith> variables;
  for (int v = 0; v < 3; ++v) {
    lo[v] = in.next() % 12;
    hi[v] = lo[v] + in.next() % 40;
    variables.push_back(Arith::var(kNames[v], weft::VarKind::Tuning, Arith(lo[v]), Arith(hi[v])));
  }
  std::vector<Node> nodes;
  const int root = build(in, nodes, 0);
  // Index arithmetic stays far below 2^40 (weft refuses sizes that overflow 32-bit indices);
  // beyond it a canonical form may overflow 64 bits where the tree as written does not.
  if (largestMagnitude(nodes, lo, hi) > 0x1p40) return 0;
  if (std::getenv("WEFT_FUZZ_VERBOSE")) {
    std::fprintf(stderr, "x in [%lld, %lld], y in [%lld, %lld], z in [%lld, %lld]: %s\n",
                 static_cast<long long>(lo[0]), static_cast<long long>(hi[0]),
                 static_cast<long long>(lo[1]), static_cast<long long>(hi[1]),
                 static_cast<long long>(lo[2]), static_cast<long long>(hi[2]),
                 describe(nodes, root).c_str());
  }
  Arith simplified;
  try {
    simplified = symbolic(nodes, root, variables);
  } catch (const weft::ArithError&) {
    return 0;  // a division by a provable zero, refused
  }
  for (int p = 0; p < 8; ++p) {
    int64_t point[3];
    weft::ArithBinding binding;
    for (int v = 0; v < 3; ++v) {
      point[v] = lo[v] + in.next() % (hi[v] - lo[v] + 1);
      binding[kNames[v]] = point[v];
    }
    const std::optional<int64_t> expected = direct(nodes, root, point);
    if (!expected) continue;
    std::optional<int64_t> got;
    try {
      got = weft::tryEvaluate(simplified, binding);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "finding: evaluate threw %s\n", error.what());
      std::abort();
    }
    if (!got || *got != *expected) {
      std::fprintf(stderr, "finding: %s at x=%lld y=%lld z=%lld is %s, the expression is %lld\n",
                   simplified.toString().c_str(), static_cast<long long>(point[0]),
                   static_cast<long long>(point[1]), static_cast<long long>(point[2]),
                   got ? std::to_string(*got).c_str() : "undefined",
                   static_cast<long long>(*expected));
      std::abort();
    }
  }
  return 0;
}
