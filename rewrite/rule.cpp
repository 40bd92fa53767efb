// The small pieces of rule.h that are not data: family names, the tuning-variable factory of
// RewriteContext and RuleApplication::factor, which takes a factor from the given arguments or
// makes a fresh tuning variable for it.
#include "rewrite/rule.h"

namespace weft::rewrite {

const char* ruleFamilyName(RuleFamily family) {
  switch (family) {
    case RuleFamily::Fusion:
      return "fusion";
    case RuleFamily::Tiling:
      return "tiling";
    case RuleFamily::Reduction:
      return "reduction";
    case RuleFamily::Simplification:
      return "simplification";
    case RuleFamily::Vectorization:
      return "vectorization";
    case RuleFamily::Coalescing:
      return "coalescing";
    case RuleFamily::Lowering:
      return "lowering";
    case RuleFamily::AddressSpace:
      return "address-space";
  }
  return "unknown";
}

Arith RewriteContext::freshTuning(const std::string& stem, Arith lo, std::optional<Arith> hi) {
  ++counter_;
  Arith variable =
      Arith::var(stem + std::to_string(counter_), VarKind::Tuning, std::move(lo), std::move(hi));
  created_.push_back(variable);
  return variable;
}

Arith RewriteContext::freshSwitch(const std::string& stem) {
  return freshTuning(stem, Arith(0), Arith(1));
}

Arith RuleApplication::factor(const std::string& name,
                              const std::function<Arith(RewriteContext&)>& make) const {
  for (const auto& [given, value] : arguments) {
    if (given == name) return value;
  }
  return make(context);
}

std::optional<Arith> RuleApplication::given(const std::string& name) const {
  for (const auto& [factorName, value] : arguments) {
    if (factorName == name) return value;
  }
  return std::nullopt;
}

}  // namespace weft::rewrite
