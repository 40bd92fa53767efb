// The address-space rules: they place values in OpenCL memory spaces by wrapping them in
// toPrivate / toLocal / toGlobal together with the copy (id, mapped over the array) that makes
// the value live there, and add-id, which inserts the identity LIFT uses before such a copy.
//
// In the interpreter toX(f, args) = f(args) and id(x) = x, so each rule preserves meaning
// (checked by tests/rewrite/property_rules_address_space.cpp); the conditions below are about
// what the OpenCL generator (codegen/codegen.h) can map, following LIFT (Steuwer et al., CGO
// 2017, section 5: toPrivate/toLocal/toGlobal with id copies):
//   to-private  inside the function of a mapGlb or mapLcl (one work-item), a data argument x
//               of scalars or of an array of known constant size (private arrays need a size
//               known at compile time): f(x) => f(toPrivate(y -> mapSeq(id, y), x)).
//   to-local    a data argument x directly inside a mapWrg's function (in work-group code, not
//               inside a mapLcl or sequential code): f(x) => f(toLocal(y -> mapLcl(0, id, y),
//               x)); the work-items of the group copy x cooperatively (mapLcl(1) over rows and
//               mapLcl(0) within a row for 2D values, mapSeq below), and the generator puts a
//               barrier after the copy.
//   to-global   a kernel-level mapGlb/mapWrg (not inside another parallel map):
//               mapX(f, xs) => toGlobal(ys -> mapX(f, ys), xs): the value it writes lives in
//               global memory.
//   add-id      a data argument x => id(x).
// Values whose elements are tuples are not copied (the generator does not store tuples).
#include <optional>
#include <vector>

#include "ir/builders.h"
#include "rewrite/library.h"

namespace weft::rewrite {

namespace {

bool isAddressSpace(const Expr& e) {
  return e.isPrim(Op::ToGlobal) || e.isPrim(Op::ToLocal) || e.isPrim(Op::ToPrivate);
}

bool sameNode(const Expr& a, const Expr& b) { return a.node() == b.node(); }

// The node is a data argument of its parent primitive (or the whole body), and neither it nor
// its parent is already an address-space wrapper or an id (so the rules do not stack copies).
bool isPlaceableArgument(const RuleApplication& a) {
  if (a.node.isFunction() || isAddressSpace(a.node) || a.node.isPrim(Op::Id)) return false;
  if (a.ancestors.empty()) return true;
  const Expr& parent = a.ancestors.back();
  if (!parent.isPrim() || isAddressSpace(parent) || parent.isPrim(Op::Id)) return false;
  for (const Expr& arg : parent.args()) {
    if (sameNode(arg, a.node)) return true;
  }
  return false;
}

// The ancestors whose function (not data argument) leads to the node, outermost first.
std::vector<Expr> enclosingFunctions(const RuleApplication& a) {
  std::vector<Expr> result;
  for (size_t i = 0; i < a.ancestors.size(); ++i) {
    const Expr& ancestor = a.ancestors[i];
    const Expr& child = i + 1 < a.ancestors.size() ? a.ancestors[i + 1] : a.node;
    if (!ancestor.isPrim()) continue;
    for (const Expr& fun : ancestor.funs()) {
      if (sameNode(fun, child)) {
        result.push_back(ancestor);
        break;
      }
    }
  }
  return result;
}

bool insideCopy(const std::vector<Expr>& enclosing) {
  for (const Expr& e : enclosing) {
    if (isAddressSpace(e) || e.isPrim(Op::Id)) return true;
  }
  return false;
}

bool isSequential(const Expr& e) {
  return e.isPrim(Op::MapSeq) || e.isPrim(Op::MapSeqUnroll) || e.isPrim(Op::Reduce) ||
         e.isPrim(Op::ReduceSeq) || e.isPrim(Op::ReduceSeqUnroll);
}

// Array nesting depth of `t` when its leaves are scalars or vectors; nullopt for tuples.
std::optional<int> storableDepth(const Type& t) {
  if (t.isScalar() || t.isVector()) return 0;
  if (t.isArray()) {
    std::optional<int> inner = storableDepth(t.arrayElement());
    if (!inner) return std::nullopt;
    return *inner + 1;
  }
  return std::nullopt;
}

bool constantSized(const Type& t) {
  if (!t.isArray()) return true;
  return t.arrayLength().constant().has_value() && constantSized(t.arrayElement());
}

// y -> id(y) for depth 0; y -> m(z -> ..., y) for arrays, the map at each level from `mapAt`.
Expr copyFunction(int depth, const std::function<Expr(int level, Expr f, Expr x)>& mapAt,
                  int level = 0) {
  return lam("copy", [&](Expr y) {
    if (depth == 0) return id(std::move(y));
    return mapAt(level, copyFunction(depth - 1, mapAt, level + 1), std::move(y));
  });
}

std::optional<Expr> toPrivateRule(const RuleApplication& a) {
  if (!isPlaceableArgument(a)) return std::nullopt;
  bool inWorkItem = false;
  if (insideCopy(enclosingFunctions(a))) return std::nullopt;
  for (const Expr& e : enclosingFunctions(a)) {
    inWorkItem = inWorkItem || e.isPrim(Op::MapGlb) || e.isPrim(Op::MapLcl);
  }
  if (!inWorkItem) return std::nullopt;
  Type type = a.typeOf(a.node);
  std::optional<int> depth = storableDepth(type);
  if (!depth || !constantSized(type)) return std::nullopt;
  Expr copy = copyFunction(*depth, [](int, Expr f, Expr x) { return mapSeq(f, x); });
  return toPrivate(copy, a.node);
}

std::optional<Expr> toLocalRule(const RuleApplication& a) {
  if (!isPlaceableArgument(a)) return std::nullopt;
  std::vector<Expr> enclosing = enclosingFunctions(a);
  if (insideCopy(enclosing)) return std::nullopt;
  // Work-group code: the innermost enclosing function is a mapWrg's.
  if (enclosing.empty() || !enclosing.back().isPrim(Op::MapWrg)) return std::nullopt;
  for (const Expr& e : enclosing) {
    if (e.isPrim(Op::MapLcl) || e.isPrim(Op::MapGlb) || isSequential(e)) return std::nullopt;
  }
  Type type = a.typeOf(a.node);
  std::optional<int> depth = storableDepth(type);
  if (!depth || *depth == 0) return std::nullopt;
  int levels = *depth;
  Expr copy = copyFunction(levels, [levels](int level, Expr f, Expr x) {
    if (levels == 1) return mapLcl(Arith(0), f, x);
    if (level == 0) return mapLcl(Arith(1), f, x);
    if (level == 1) return mapLcl(Arith(0), f, x);
    return mapSeq(f, x);
  });
  return toLocal(copy, a.node);
}

std::optional<Expr> toGlobalRule(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::MapGlb) && !node.isPrim(Op::MapWrg)) return std::nullopt;
  for (const Expr& e : enclosingFunctions(a)) {
    if (e.isPrim()) return std::nullopt;  // not at kernel level
  }
  if (!a.ancestors.empty() && isAddressSpace(a.ancestors.back())) return std::nullopt;
  std::optional<int> depth = storableDepth(a.typeOf(node));
  if (!depth) return std::nullopt;
  Expr ys = Expr::param("ys");
  Expr body = Expr::prim(node.primOp(), node.nats(), node.funs(), {ys});
  return toGlobal(Expr::lambda({ys}, body), node.args()[0]);
}

std::optional<Expr> addIdRule(const RuleApplication& a) {
  if (!isPlaceableArgument(a) || insideCopy(enclosingFunctions(a))) return std::nullopt;
  if (!storableDepth(a.typeOf(a.node))) return std::nullopt;
  return id(a.node);
}

}  // namespace

void addAddressSpaceRules(std::vector<Rule>& rules) {
  rules.push_back({"to-private",
                   "f(x) => f(toPrivate(y -> mapSeq(id, y), x))  (in a work-item; x of "
                   "constant size)",
                   RuleFamily::AddressSpace,
                   {},
                   toPrivateRule});
  rules.push_back({"to-local",
                   "f(x) => f(toLocal(y -> mapLcl(0, id, y), x))  (in a mapWrg, outside mapLcl)",
                   RuleFamily::AddressSpace,
                   {},
                   toLocalRule});
  rules.push_back({"to-global",
                   "mapX(f, xs) => toGlobal(ys -> mapX(f, ys), xs)  (kernel-level mapGlb/mapWrg)",
                   RuleFamily::AddressSpace,
                   {},
                   toGlobalRule});
  rules.push_back({"add-id", "x => id(x)", RuleFamily::AddressSpace, {}, addIdRule});
}

}  // namespace weft::rewrite
