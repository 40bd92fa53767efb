// The primitive table (ir/primitives.h), built from the rows of ir/primitives.def with the
// type rules and signatures of ir/type_rules.cpp, plus the argument-layout queries the
// parser, printer and Expr::prim validation use.
#include "ir/primitives.h"

#include <cstring>
#include <unordered_map>

#include "ir/type_rules.h"

namespace weft {

namespace {

int countLetter(const char* layout, char letter) {
  int count = 0;
  for (const char* c = layout; *c; ++c) count += *c == letter;
  return count;
}

std::vector<PrimInfo> buildTable() {
  std::vector<PrimInfo> table;
#define WEFT_PRIM(Id, name, category, layout, infix)                                   \
  table.push_back(PrimInfo{Op::Id, name, PrimCategory::category, layout, infix,        \
                           type_rules::signature(Op::Id), &type_rules::Id});
#include "ir/primitives.def"
#undef WEFT_PRIM
  return table;
}

}  // namespace

int PrimInfo::natCount() const { return countLetter(layout, 'n'); }
bool PrimInfo::hasBoundary() const { return countLetter(layout, 'b') > 0; }
bool PrimInfo::hasIndexFunction() const { return countLetter(layout, 'i') > 0; }
int PrimInfo::funCount() const { return countLetter(layout, 'f'); }
int PrimInfo::minArgs() const { return countLetter(layout, 'd') + countLetter(layout, '+'); }
int PrimInfo::maxArgs() const {
  if (std::strchr(layout, '+') || std::strchr(layout, '*')) return -1;
  return countLetter(layout, 'd');
}

const std::vector<PrimInfo>& allPrimitives() {
  static const std::vector<PrimInfo> table = buildTable();
  return table;
}

const PrimInfo& primInfo(Op op) { return allPrimitives().at(static_cast<size_t>(op)); }

bool isLayoutPrimitive(Op op) { return primInfo(op).category == PrimCategory::Layout; }

bool isRearrangingPrimitive(Op op) {
  const PrimCategory category = primInfo(op).category;
  return category == PrimCategory::Layout || category == PrimCategory::Tuple || op == Op::Id ||
         op == Op::Fill;
}

bool isWrittenThroughPrimitive(Op op) {
  switch (op) {
    case Op::Join:
    case Op::Split:
    case Op::Transpose:
    case Op::Reorder:
    case Op::AsVector:
    case Op::AsScalar:
    case Op::Id:
      return true;
    default:
      return false;
  }
}

std::optional<Op> findPrimitive(std::string_view name) {
  static const std::unordered_map<std::string_view, Op> byName = [] {
    std::unordered_map<std::string_view, Op> map;
    for (const PrimInfo& info : allPrimitives()) map.emplace(info.name, info.op);
    return map;
  }();
  auto it = byName.find(name);
  if (it == byName.end()) return std::nullopt;
  return it->second;
}

}  // namespace weft
