// Implementation of expression nodes (ir/expr.h): validated construction, accessors,
// alpha-equivalence, hashing, and the generic traversals (param and arithmetic substitution)
// that rewrite rules and the type checker build on.
//
// Hashes are cached at construction and ignore param identities (every param hashes alike),
// which keeps them consistent with alpha-equivalence: equal expressions hash equal.
#include "ir/expr.h"

#include <atomic>
#include <stdexcept>
#include <unordered_map>

namespace weft {

struct ExprNode {
  ExprKind kind = ExprKind::Literal;
  SourceLoc loc;
  // Param
  uint64_t id = 0;
  std::string name;  // Param name, UserFun name
  Type type;         // Param type, UserFun result type
  // Literal
  ScalarKind literalKind = ScalarKind::Int;
  double floatValue = 0.0;
  int64_t intValue = 0;
  // Lambda / UserFun
  std::vector<Expr> params;
  Expr body;
  // Prim
  Op op = Op::Id;
  std::vector<Arith> nats;
  PrimAttribute attribute;
  std::vector<Expr> funs;
  std::vector<Expr> args;
  size_t hash = 0;
};

std::string SourceLoc::toString() const {
  if (!known()) return file ? *file : "<unknown>";
  std::string position = std::to_string(line) + ":" + std::to_string(column);
  return file ? *file + ":" + position : position;
}

bool PrimAttribute::operator==(const PrimAttribute& other) const {
  return boundary == other.boundary && padValue == other.padValue &&
         indexFunction == other.indexFunction && stride == other.stride;
}

namespace {

// Params are identified by a 64-bit id, so there is no overflow in long explorations.
std::atomic<uint64_t> nextParamId{1};

size_t combineHash(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

size_t attributeHash(const PrimAttribute& a) {
  size_t h = static_cast<size_t>(a.boundary);
  h = combineHash(h, std::hash<double>()(a.padValue));
  h = combineHash(h, static_cast<size_t>(a.indexFunction));
  return combineHash(h, a.stride.hash());
}

size_t computeHash(const ExprNode& n) {
  size_t h = static_cast<size_t>(n.kind) * 1000003u;
  switch (n.kind) {
    case ExprKind::Param: break;  // alpha-equivalence: all params hash alike
    case ExprKind::Literal:
      h = combineHash(h, static_cast<size_t>(n.literalKind));
      h = combineHash(h, std::hash<double>()(n.floatValue));
      h = combineHash(h, std::hash<int64_t>()(n.intValue));
      break;
    case ExprKind::UserFun:
      h = combineHash(h, std::hash<std::string>()(n.name));
      [[fallthrough]];
    case ExprKind::Lambda:
      h = combineHash(h, n.params.size());
      h = combineHash(h, n.body.hash());
      break;
    case ExprKind::Prim:
      h = combineHash(h, static_cast<size_t>(n.op));
      for (const Arith& a : n.nats) h = combineHash(h, a.hash());
      h = combineHash(h, attributeHash(n.attribute));
      for (const Expr& f : n.funs) h = combineHash(h, f.hash());
      for (const Expr& a : n.args) h = combineHash(h, a.hash());
      break;
  }
  return h;
}

void requireFunction(const Expr& f, const char* primName) {
  if (f.isNull() || !f.isFunction()) {
    throw std::invalid_argument(std::string(primName) +
                                ": function argument must be a lambda or a user function");
  }
}

}  // namespace

// Builds nodes; the only place that sees Expr's private constructor.
struct ExprFactory {
  static Expr make(ExprNode node) {
    node.hash = computeHash(node);
    return Expr(std::make_shared<const ExprNode>(std::move(node)));
  }
};

Expr Expr::param(std::string name, Type type, SourceLoc loc) {
  ExprNode n;
  n.kind = ExprKind::Param;
  n.id = nextParamId.fetch_add(1);
  n.name = std::move(name);
  n.type = std::move(type);
  n.loc = std::move(loc);
  return ExprFactory::make(std::move(n));
}

Expr Expr::floatLiteral(double value, SourceLoc loc) {
  ExprNode n;
  n.literalKind = ScalarKind::Float;
  n.floatValue = static_cast<double>(static_cast<float>(value));
  n.loc = std::move(loc);
  return ExprFactory::make(std::move(n));
}

Expr Expr::intLiteral(int64_t value, SourceLoc loc) {
  ExprNode n;
  n.literalKind = ScalarKind::Int;
  n.intValue = value;
  n.loc = std::move(loc);
  return ExprFactory::make(std::move(n));
}

Expr Expr::boolLiteral(bool value, SourceLoc loc) {
  ExprNode n;
  n.literalKind = ScalarKind::Bool;
  n.intValue = value ? 1 : 0;
  n.loc = std::move(loc);
  return ExprFactory::make(std::move(n));
}

Expr Expr::lambda(std::vector<Expr> params, Expr body, SourceLoc loc) {
  if (params.empty()) throw std::invalid_argument("a lambda needs at least one parameter");
  for (const Expr& p : params) {
    if (p.isNull() || !p.isParam()) throw std::invalid_argument("lambda parameter is not a param");
  }
  if (body.isNull()) throw std::invalid_argument("lambda without a body");
  ExprNode n;
  n.kind = ExprKind::Lambda;
  n.params = std::move(params);
  n.body = std::move(body);
  n.loc = std::move(loc);
  return ExprFactory::make(std::move(n));
}

Expr Expr::userFun(std::string name, std::vector<Expr> params, Type resultType, Expr body,
                   SourceLoc loc) {
  for (const Expr& p : params) {
    if (p.isNull() || !p.isParam() || p.paramType().isNull()) {
      throw std::invalid_argument("user function '" + name + "': every parameter needs a type");
    }
  }
  if (body.isNull()) throw std::invalid_argument("user function '" + name + "' without a body");
  ExprNode n;
  n.kind = ExprKind::UserFun;
  n.name = std::move(name);
  n.params = std::move(params);
  n.type = std::move(resultType);
  n.body = std::move(body);
  n.loc = std::move(loc);
  return ExprFactory::make(std::move(n));
}

Expr Expr::prim(Op op, std::vector<Arith> nats, std::vector<Expr> funs, std::vector<Expr> args,
                PrimAttribute attribute, SourceLoc loc) {
  const PrimInfo& info = weft::primInfo(op);
  auto fail = [&](const std::string& what, size_t expected, size_t found) {
    throw std::invalid_argument(std::string(info.name) + ": expected " + std::to_string(expected) +
                                " " + what + ", found " + std::to_string(found));
  };
  if (nats.size() != static_cast<size_t>(info.natCount())) {
    fail("size arguments", info.natCount(), nats.size());
  }
  if (funs.size() != static_cast<size_t>(info.funCount())) {
    fail("function arguments", info.funCount(), funs.size());
  }
  if (args.size() < static_cast<size_t>(info.minArgs())) {
    fail("data arguments at least", info.minArgs(), args.size());
  }
  if (info.maxArgs() >= 0 && args.size() > static_cast<size_t>(info.maxArgs())) {
    fail("data arguments at most", info.maxArgs(), args.size());
  }
  for (const Expr& f : funs) requireFunction(f, info.name);
  for (const Expr& a : args) {
    if (a.isNull()) throw std::invalid_argument(std::string(info.name) + ": null argument");
  }
  ExprNode n;
  n.kind = ExprKind::Prim;
  n.op = op;
  n.nats = std::move(nats);
  n.funs = std::move(funs);
  n.args = std::move(args);
  n.attribute = std::move(attribute);
  n.loc = std::move(loc);
  return ExprFactory::make(std::move(n));
}

ExprKind Expr::kind() const { return node_->kind; }
const SourceLoc& Expr::loc() const { return node_->loc; }

namespace {
[[noreturn]] void wrongKind(const char* accessor) {
  throw std::logic_error(std::string("Expr::") + accessor + " on a node of another kind");
}
}  // namespace

uint64_t Expr::paramId() const {
  if (!isParam()) wrongKind("paramId");
  return node_->id;
}
const std::string& Expr::paramName() const {
  if (!isParam()) wrongKind("paramName");
  return node_->name;
}
const Type& Expr::paramType() const {
  if (!isParam()) wrongKind("paramType");
  return node_->type;
}
ScalarKind Expr::literalKind() const {
  if (!isLiteral()) wrongKind("literalKind");
  return node_->literalKind;
}
double Expr::literalFloat() const {
  if (!isLiteral() || node_->literalKind != ScalarKind::Float) wrongKind("literalFloat");
  return node_->floatValue;
}
int64_t Expr::literalInt() const {
  if (!isLiteral() || node_->literalKind != ScalarKind::Int) wrongKind("literalInt");
  return node_->intValue;
}
bool Expr::literalBool() const {
  if (!isLiteral() || node_->literalKind != ScalarKind::Bool) wrongKind("literalBool");
  return node_->intValue != 0;
}
const std::vector<Expr>& Expr::params() const {
  if (!isFunction()) wrongKind("params");
  return node_->params;
}
const Expr& Expr::body() const {
  if (!isFunction()) wrongKind("body");
  return node_->body;
}
const std::string& Expr::userFunName() const {
  if (!isUserFun()) wrongKind("userFunName");
  return node_->name;
}
const Type& Expr::userFunResultType() const {
  if (!isUserFun()) wrongKind("userFunResultType");
  return node_->type;
}
Op Expr::primOp() const {
  if (!isPrim()) wrongKind("primOp");
  return node_->op;
}
const PrimInfo& Expr::primInfo() const { return weft::primInfo(primOp()); }
const std::vector<Arith>& Expr::nats() const {
  if (!isPrim()) wrongKind("nats");
  return node_->nats;
}
const PrimAttribute& Expr::attribute() const {
  if (!isPrim()) wrongKind("attribute");
  return node_->attribute;
}
const std::vector<Expr>& Expr::funs() const {
  if (!isPrim()) wrongKind("funs");
  return node_->funs;
}
const std::vector<Expr>& Expr::args() const {
  if (!isPrim()) wrongKind("args");
  return node_->args;
}

size_t Expr::hash() const { return node_ ? node_->hash : 0; }

namespace {

// Alpha-equivalence: `bound` maps the ids of params bound on the left to those bound at the
// same position on the right. `identity` is true while every mapping is p -> p, so a node
// shared by both sides is equal to itself.
class AlphaEquality {
 public:
  bool equal(const Expr& a, const Expr& b) {
    if (a.node() == b.node() && identityMappings_ == bound_.size()) return true;
    if (a.isNull() || b.isNull()) return false;
    if (a.hash() != b.hash() || a.kind() != b.kind()) return false;
    switch (a.kind()) {
      case ExprKind::Param: {
        auto it = bound_.find(a.paramId());
        uint64_t expected = it == bound_.end() ? a.paramId() : it->second;
        return expected == b.paramId();
      }
      case ExprKind::Literal:
        if (a.literalKind() != b.literalKind()) return false;
        switch (a.literalKind()) {
          case ScalarKind::Float: return a.literalFloat() == b.literalFloat();
          case ScalarKind::Int: return a.literalInt() == b.literalInt();
          case ScalarKind::Bool: return a.literalBool() == b.literalBool();
        }
        return false;
      case ExprKind::UserFun:
        if (a.userFunName() != b.userFunName() ||
            a.userFunResultType() != b.userFunResultType()) {
          return false;
        }
        [[fallthrough]];
      case ExprKind::Lambda: {
        const auto& pa = a.params();
        const auto& pb = b.params();
        if (pa.size() != pb.size()) return false;
        for (size_t i = 0; i < pa.size(); ++i) {
          if (pa[i].paramType() != pb[i].paramType()) return false;
        }
        for (size_t i = 0; i < pa.size(); ++i) bind(pa[i].paramId(), pb[i].paramId());
        bool result = equal(a.body(), b.body());
        for (size_t i = pa.size(); i-- > 0;) unbind(pa[i].paramId());
        return result;
      }
      case ExprKind::Prim:
        if (a.primOp() != b.primOp() || a.nats() != b.nats() ||
            !(a.attribute() == b.attribute()) || a.funs().size() != b.funs().size() ||
            a.args().size() != b.args().size()) {
          return false;
        }
        for (size_t i = 0; i < a.funs().size(); ++i) {
          if (!equal(a.funs()[i], b.funs()[i])) return false;
        }
        for (size_t i = 0; i < a.args().size(); ++i) {
          if (!equal(a.args()[i], b.args()[i])) return false;
        }
        return true;
    }
    return false;
  }

 private:
  void bind(uint64_t left, uint64_t right) {
    auto [it, inserted] = bound_.emplace(left, right);
    if (!inserted) {  // shadowing of the same param id: remember the outer mapping
      shadowed_.emplace_back(left, it->second);
      if (it->second == left) --identityMappings_;
      it->second = right;
    }
    if (left == right) ++identityMappings_;
  }
  void unbind(uint64_t left) {
    auto it = bound_.find(left);
    if (it->second == left) --identityMappings_;
    if (!shadowed_.empty() && shadowed_.back().first == left) {
      it->second = shadowed_.back().second;
      if (it->second == left) ++identityMappings_;
      shadowed_.pop_back();
    } else {
      bound_.erase(it);
    }
  }
  std::unordered_map<uint64_t, uint64_t> bound_;
  std::vector<std::pair<uint64_t, uint64_t>> shadowed_;
  size_t identityMappings_ = 0;
};

}  // namespace

bool Expr::operator==(const Expr& other) const {
  if (node_ == other.node_) return true;
  AlphaEquality equality;
  return equality.equal(*this, other);
}

Expr Expr::withChildren(std::vector<Arith> nats, std::vector<Expr> funs,
                        std::vector<Expr> args) const {
  if (!isPrim()) wrongKind("withChildren");
  bool same = nats == node_->nats && funs.size() == node_->funs.size() &&
              args.size() == node_->args.size();
  for (size_t i = 0; same && i < funs.size(); ++i) same = funs[i].node() == node_->funs[i].node();
  for (size_t i = 0; same && i < args.size(); ++i) same = args[i].node() == node_->args[i].node();
  if (same) return *this;
  return prim(node_->op, std::move(nats), std::move(funs), std::move(args), node_->attribute,
              node_->loc);
}

Expr Expr::withBody(Expr body) const {
  if (!isFunction()) wrongKind("withBody");
  if (body.node() == node_->body.node()) return *this;
  if (isLambda()) return lambda(node_->params, std::move(body), node_->loc);
  return userFun(node_->name, node_->params, node_->type, std::move(body), node_->loc);
}

const Definition* Program::findDefinition(const std::string& name) const {
  for (const Definition& d : definitions) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

const Expr* Program::findUserFun(const std::string& name) const {
  for (const Expr& f : userFuns) {
    if (f.userFunName() == name) return &f;
  }
  return nullptr;
}

namespace {

// Rebuilds a tree bottom-up with a per-node rewrite of leaves; shares unchanged subtrees.
template <typename LeafFn, typename NatFn>
Expr rebuild(const Expr& e, LeafFn&& leaf, NatFn&& nat,
             std::unordered_map<const ExprNode*, Expr>& memo) {
  auto found = memo.find(e.node());
  if (found != memo.end()) return found->second;
  Expr result;
  switch (e.kind()) {
    case ExprKind::Param:
    case ExprKind::Literal: result = leaf(e); break;
    case ExprKind::Lambda:
    case ExprKind::UserFun: {
      std::vector<Expr> params;
      bool paramsChanged = false;
      for (const Expr& p : e.params()) {
        Expr q = leaf(p);
        paramsChanged |= q.node() != p.node();
        params.push_back(q);
      }
      Expr body = rebuild(e.body(), leaf, nat, memo);
      if (!paramsChanged) {
        result = e.withBody(body);
      } else if (e.isLambda()) {
        result = Expr::lambda(params, body, e.loc());
      } else {
        result = Expr::userFun(e.userFunName(), params, e.userFunResultType(), body, e.loc());
      }
      break;
    }
    case ExprKind::Prim: {
      std::vector<Arith> nats;
      for (const Arith& a : e.nats()) nats.push_back(nat(a));
      std::vector<Expr> funs;
      for (const Expr& f : e.funs()) funs.push_back(rebuild(f, leaf, nat, memo));
      std::vector<Expr> args;
      for (const Expr& a : e.args()) args.push_back(rebuild(a, leaf, nat, memo));
      PrimAttribute attribute = e.attribute();
      Arith stride = nat(attribute.stride);
      if (stride != attribute.stride) {
        attribute.stride = stride;
        result = Expr::prim(e.primOp(), nats, funs, args, attribute, e.loc());
      } else {
        result = e.withChildren(nats, funs, args);
      }
      break;
    }
  }
  memo.emplace(e.node(), result);
  return result;
}

}  // namespace

// A param with the same id (identity) but another type; used by arithmetic substitution.
struct ParamRetyper {
  static Expr retype(const Expr& p, Type type) {
    ExprNode n;
    n.kind = ExprKind::Param;
    n.id = p.paramId();
    n.name = p.paramName();
    n.type = std::move(type);
    n.loc = p.loc();
    return ExprFactory::make(std::move(n));
  }
};

Expr substituteParams(const Expr& e, const std::vector<std::pair<Expr, Expr>>& replacements) {
  std::unordered_map<uint64_t, Expr> byId;
  for (const auto& [param, value] : replacements) byId[param.paramId()] = value;
  std::unordered_map<const ExprNode*, Expr> memo;
  return rebuild(
      e,
      [&](const Expr& leaf) {
        if (leaf.isParam()) {
          auto it = byId.find(leaf.paramId());
          if (it != byId.end()) return it->second;
        }
        return leaf;
      },
      [](const Arith& a) { return a; }, memo);
}

Definition withSizesSubstituted(const Definition& definition,
                                const ArithSubstitution& substitution) {
  Definition result = definition;
  result.function = substituteArith(definition.function, substitution);
  if (definition.declaredType) {
    result.declaredType = substitute(definition.declaredType, substitution);
  }
  result.sizeDeclarations.clear();
  for (const Arith& declared : definition.sizeDeclarations) {
    if (!substitution.count(declared.varName())) result.sizeDeclarations.push_back(declared);
  }
  return result;
}

Definition withSizesFixed(const Definition& definition, const ArithSubstitution& substitution) {
  Definition fixed = withSizesSubstituted(definition, substitution);
  for (const auto& [name, value] : substitution) {
    fixed.sizeDeclarations.push_back(Arith::var(name, VarKind::Size, value, value));
  }
  return fixed;
}

Expr substituteArith(const Expr& e, const ArithSubstitution& substitution) {
  if (substitution.empty()) return e;
  std::unordered_map<uint64_t, Expr> retyped;
  std::unordered_map<const ExprNode*, Expr> memo;
  return rebuild(
      e,
      [&](const Expr& leaf) {
        if (!leaf.isParam() || leaf.paramType().isNull()) return leaf;
        auto it = retyped.find(leaf.paramId());
        if (it != retyped.end()) return it->second;
        Type type = substitute(leaf.paramType(), substitution);
        Expr result = type == leaf.paramType() ? leaf : ParamRetyper::retype(leaf, type);
        retyped.emplace(leaf.paramId(), result);
        return result;
      },
      [&](const Arith& a) { return substitute(a, substitution); }, memo);
}

int copyNestDepth(const Expr& e) {
  if (!e.isPrim(Op::Map) || !e.funs()[0].isLambda() || e.funs()[0].params().size() != 1) return 0;
  const Expr& f = e.funs()[0];
  const Expr& body = f.body();
  if (!body.isPrim() || body.args().empty() || !body.args()[0].isParam() ||
      body.args()[0].paramId() != f.params()[0].paramId()) {
    return 0;
  }
  if (body.isPrim(Op::Id)) return 1;
  const int inner = copyNestDepth(body);
  return inner > 0 ? inner + 1 : 0;
}

void forEachNode(const Expr& e, const std::function<void(const Expr&)>& visit) {
  visit(e);
  switch (e.kind()) {
    case ExprKind::Param:
    case ExprKind::Literal: return;
    case ExprKind::Lambda:
    case ExprKind::UserFun:
      for (const Expr& p : e.params()) visit(p);
      forEachNode(e.body(), visit);
      return;
    case ExprKind::Prim:
      for (const Expr& f : e.funs()) forEachNode(f, visit);
      for (const Expr& a : e.args()) forEachNode(a, visit);
      return;
  }
}

int paramUses(const Expr& e, const Expr& param) {
  int uses = 0;
  forEachNode(e, [&](const Expr& n) { uses += n.isParam() && n.paramId() == param.paramId(); });
  return uses;
}

std::vector<Arith> variableOccurrences(const Definition& definition) {
  std::vector<Arith> found;
  auto addArith = [&](const Arith& arith) {
    for (const Arith& variable : arith.vars()) found.push_back(variable);
  };
  auto addType = [&](const Type& type) {
    if (!type.isNull()) {
      for (const Arith& variable : typeVars(type)) found.push_back(variable);
    }
  };
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    switch (e.kind()) {
      case ExprKind::Param:
        addType(e.paramType());
        return;
      case ExprKind::Literal:
      case ExprKind::UserFun:
        return;
      case ExprKind::Lambda:
        for (const Expr& param : e.params()) addType(param.paramType());
        walk(e.body());
        return;
      case ExprKind::Prim:
        for (const Arith& nat : e.nats()) addArith(nat);
        if (e.primInfo().hasIndexFunction()) addArith(e.attribute().stride);
        for (const Expr& f : e.funs()) walk(f);
        for (const Expr& a : e.args()) walk(a);
        return;
    }
  };
  if (!definition.function.isNull()) walk(definition.function);
  addType(definition.declaredType);
  return found;
}

}  // namespace weft
