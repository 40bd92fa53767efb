// Printer of the weft text format (ir/printer.h), the inverse of the parser.
//
// Bound params get unique names while they are in scope (x, then x_1 for a different x inside
// it), never a primitive's, user function's or keyword's name, and never the name of a free
// param that occurs inside, so every reference resolves to its own binder when parsed back.
// Scalar operators print infix with the fewest parentheses C precedence needs; a negated
// literal prints as -(1.0f) because the parser folds -1.0f into one literal. Float values print
// with the fewest digits that read back to the identical value (9 significant digits always
// suffice for a float literal; pad constants are doubles and may need 17). The 2D forms
// map2D/slide2D/pad2D are recognised in their exact expansion (ir/builders.h) and printed
// short, which parses back to the same tree. In multiline mode a call whose one-line form would
// pass column 90 puts each argument on its own line, indented by two. A definition's size
// declarations print as `def conv[P >= 0, 1 <= V <= 16](...)`, each with only the bounds that
// differ from the default range [1, inf).
#include "ir/printer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

namespace weft {

namespace {

constexpr int kWidth = 90;

// Precedence levels, loosest first (C's order for the operators).
enum Level {
  kLambda = 0,
  kTernary,
  kOr,
  kAnd,
  kEquality,
  kRelational,
  kAdditive,
  kMultiplicative,
  kUnary,
  kPostfix,
  kPrimary,
};

int binaryLevel(Op op) {
  switch (op) {
    case Op::Or:
      return kOr;
    case Op::And:
      return kAnd;
    case Op::Eq:
    case Op::Ne:
      return kEquality;
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge:
      return kRelational;
    case Op::Add:
    case Op::Sub:
      return kAdditive;
    case Op::Mul:
    case Op::Div:
    case Op::Mod:
      return kMultiplicative;
    default:
      return -1;
  }
}

struct Printed {
  std::string text;
  int level = kPrimary;
};

// The column after `text` printed from `column`.
int endColumn(int column, const std::string& text) {
  size_t newline = text.rfind('\n');
  if (newline == std::string::npos) return column + static_cast<int>(text.size());
  return static_cast<int>(text.size() - newline - 1);
}

bool isIdentifierStart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
bool isIdentifierChar(unsigned char c) { return isIdentifierStart(c) || (c >= '0' && c <= '9'); }

// A name the lexer reads as one identifier.
std::string sanitize(const std::string& name) {
  if (name.empty()) return "x";
  std::string out;
  for (char c : name) out += isIdentifierChar(static_cast<unsigned char>(c)) ? c : '_';
  if (!isIdentifierStart(static_cast<unsigned char>(out[0]))) out = "p" + out;
  return out;
}

// The shortest decimal spelling that the parser reads back as `value`; `roundToFloat` for
// literals (Expr::floatLiteral rounds to single precision).
std::string floatText(double value, bool roundToFloat) {
  if (std::isnan(value)) throw std::invalid_argument("cannot print a NaN float constant");
  if (std::isinf(value)) return value > 0 ? "1e999f" : "-1e999f";  // overflows to infinity
  std::string text;
  for (int precision = 1; precision <= 17; ++precision) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    double back = std::strtod(buffer, nullptr);
    if (roundToFloat) back = static_cast<double>(static_cast<float>(back));
    text = buffer;
    if (back == value) break;
  }
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text + "f";
}

std::string literalText(const Expr& e) {
  switch (e.literalKind()) {
    case ScalarKind::Float:
      return floatText(e.literalFloat(), true);
    case ScalarKind::Int:
      return std::to_string(e.literalInt());
    case ScalarKind::Bool:
      return e.literalBool() ? "true" : "false";
  }
  return "";
}

bool isNegativeLiteral(const Expr& e) {
  if (!e.isLiteral()) return false;
  switch (e.literalKind()) {
    case ScalarKind::Float:
      return std::signbit(e.literalFloat());
    case ScalarKind::Int:
      return e.literalInt() < 0;
    case ScalarKind::Bool:
      return false;
  }
  return false;
}

bool isNumericLiteral(const Expr& e) {
  return e.isLiteral() && e.literalKind() != ScalarKind::Bool;
}

std::string boundaryText(const PrimAttribute& a) {
  switch (a.boundary) {
    case Boundary::Clamp:
      return "clamp";
    case Boundary::Mirror:
      return "mirror";
    case Boundary::Constant:
      return "constant(" + floatText(a.padValue, false) + ")";
  }
  return "";
}

std::string indexFunctionText(const PrimAttribute& a) {
  if (a.indexFunction == IndexFunction::Reverse) return "reverse";
  return "stride(" + a.stride.toString() + ")";
}

bool mentionsParam(const Expr& e, uint64_t id) {
  bool found = false;
  forEachNode(e, [&](const Expr& n) { found = found || (n.isParam() && n.paramId() == id); });
  return found;
}

bool isDefaultAttribute(const Expr& e) { return e.attribute() == PrimAttribute{}; }

// A lambda `p -> body` with one untyped param; returns the param.
const Expr* singleUntypedParam(const Expr& f) {
  if (!f.isLambda() || f.params().size() != 1 || !f.params()[0].paramType().isNull()) {
    return nullptr;
  }
  return &f.params()[0];
}

// A Prim `op` with one data argument that is exactly param `p` (and no functions).
bool isPrimOfParam(const Expr& e, Op op, const Expr& p) {
  return e.isPrim(op) && e.funs().empty() && e.args().size() == 1 && e.args()[0].isParam() &&
         e.args()[0].paramId() == p.paramId();
}

// The pieces of the 2D forms, recognised in their exact expansion (ir/builders.h).
struct Map2DForm {
  Expr f, x;
};
std::optional<Map2DForm> matchMap2D(const Expr& e) {
  if (!e.isPrim(Op::Map) || !isDefaultAttribute(e)) return std::nullopt;
  const Expr* row = singleUntypedParam(e.funs()[0]);
  if (!row) return std::nullopt;
  const Expr& inner = e.funs()[0].body();
  if (!inner.isPrim(Op::Map) || !isDefaultAttribute(inner) || !inner.args()[0].isParam() ||
      inner.args()[0].paramId() != row->paramId() ||
      mentionsParam(inner.funs()[0], row->paramId())) {
    return std::nullopt;
  }
  return Map2DForm{inner.funs()[0], e.args()[0]};
}

struct Slide2DForm {
  Arith size1, size2, step1, step2;
  Expr x;
};
std::optional<Slide2DForm> matchSlide2D(const Expr& e) {
  if (!e.isPrim(Op::Map) || !isDefaultAttribute(e)) return std::nullopt;
  const Expr* window = singleUntypedParam(e.funs()[0]);
  if (!window || !isPrimOfParam(e.funs()[0].body(), Op::Transpose, *window) ||
      !isDefaultAttribute(e.funs()[0].body())) {
    return std::nullopt;
  }
  const Expr& outer = e.args()[0];
  if (!outer.isPrim(Op::Slide) || !isDefaultAttribute(outer)) return std::nullopt;
  const Expr& rows = outer.args()[0];
  if (!rows.isPrim(Op::Map) || !isDefaultAttribute(rows)) return std::nullopt;
  const Expr* row = singleUntypedParam(rows.funs()[0]);
  if (!row) return std::nullopt;
  const Expr& inner = rows.funs()[0].body();
  if (!isPrimOfParam(inner, Op::Slide, *row) || !isDefaultAttribute(inner)) return std::nullopt;
  return Slide2DForm{outer.nats()[0], inner.nats()[0], outer.nats()[1], inner.nats()[1],
                     rows.args()[0]};
}

struct Pad2DForm {
  Arith left, right, top, bottom;
  PrimAttribute boundary;
  Expr x;
};
std::optional<Pad2DForm> matchPad2D(const Expr& e) {
  if (!e.isPrim(Op::Transpose) || !isDefaultAttribute(e)) return std::nullopt;
  const Expr& columns = e.args()[0];
  if (!columns.isPrim(Op::Map) || !isDefaultAttribute(columns)) return std::nullopt;
  const Expr* col = singleUntypedParam(columns.funs()[0]);
  if (!col || !isPrimOfParam(columns.funs()[0].body(), Op::Pad, *col)) return std::nullopt;
  const Expr& padCol = columns.funs()[0].body();
  const Expr& transposed = columns.args()[0];
  if (!transposed.isPrim(Op::Transpose) || !isDefaultAttribute(transposed)) return std::nullopt;
  const Expr& rows = transposed.args()[0];
  if (!rows.isPrim(Op::Map) || !isDefaultAttribute(rows)) return std::nullopt;
  const Expr* row = singleUntypedParam(rows.funs()[0]);
  if (!row || !isPrimOfParam(rows.funs()[0].body(), Op::Pad, *row)) return std::nullopt;
  const Expr& padRow = rows.funs()[0].body();
  if (!(padRow.attribute() == padCol.attribute())) return std::nullopt;
  return Pad2DForm{padRow.nats()[0], padRow.nats()[1],   padCol.nats()[0],
                   padCol.nats()[1], padRow.attribute(), rows.args()[0]};
}

// Names that a bound param must not take: keywords, primitives and the 2D forms.
std::set<std::string> reservedNames() {
  std::set<std::string> names{"def", "fun", "true", "false", "map2D", "slide2D", "pad2D"};
  for (const PrimInfo& info : allPrimitives()) names.insert(info.name);
  return names;
}

// One argument of a call, printed on demand at a position; `isText` for sizes and attributes.
struct Arg {
  std::function<Printed(int indent, int column, bool flat)> print;
  bool isText = false;
  bool literal = false;  // a literal value (a constant matrix's entries are packed on lines)
};

class Printer {
 public:
  Printer(bool multiline, std::set<std::string> reserved)
      : multiline_(multiline), reserved_(std::move(reserved)) {}

  // Reserves the names of the params that occur free in `e` (they print as they are).
  void reserveFreeNames(const Expr& e) {
    std::set<uint64_t> bound;
    collectFree(e, bound);
  }

  Printed print(const Expr& e, int indent, int column, bool flat) {
    switch (e.kind()) {
      case ExprKind::Param:
        return {nameOf(e), kPrimary};
      case ExprKind::Literal:
        return {literalText(e), isNegativeLiteral(e) ? kUnary : kPrimary};
      case ExprKind::Lambda:
        return lambda(e, indent, column, flat);
      case ExprKind::UserFun:
        return {e.userFunName(), kPrimary};
      case ExprKind::Prim:
        return prim(e, indent, column, flat);
    }
    return {};
  }

  // Binds params for the duration of printing a scope (definition and user function params).
  std::string bind(const Expr& p) {
    std::string base = sanitize(p.paramName());
    std::string name = base;
    for (int k = 1; reserved_.count(name) || inScope(name); ++k) {
      name = base + "_" + std::to_string(k);
    }
    scope_.emplace_back(p.paramId(), name);
    return name;
  }
  void unbind(size_t count) { scope_.resize(scope_.size() - count); }

  // "name: T" or "name"
  std::string bindTyped(const Expr& p) {
    std::string name = bind(p);
    if (p.paramType().isNull()) return name;
    return name + ": " + p.paramType().toString();
  }

  bool multiline() const { return multiline_; }

 private:
  void collectFree(const Expr& e, std::set<uint64_t>& bound) {
    switch (e.kind()) {
      case ExprKind::Param:
        if (!bound.count(e.paramId())) reserved_.insert(sanitize(e.paramName()));
        return;
      case ExprKind::Literal:
        return;
      case ExprKind::Lambda:
      case ExprKind::UserFun: {
        std::vector<uint64_t> added;
        for (const Expr& p : e.params()) {
          if (bound.insert(p.paramId()).second) added.push_back(p.paramId());
        }
        if (e.isLambda()) collectFree(e.body(), bound);  // user functions are closed
        for (uint64_t id : added) bound.erase(id);
        return;
      }
      case ExprKind::Prim:
        for (const Expr& f : e.funs()) collectFree(f, bound);
        for (const Expr& a : e.args()) collectFree(a, bound);
        return;
    }
  }

  bool inScope(const std::string& name) const {
    for (const auto& entry : scope_) {
      if (entry.second == name) return true;
    }
    return false;
  }

  std::string nameOf(const Expr& p) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
      if (it->first == p.paramId()) return it->second;
    }
    return sanitize(p.paramName());  // free
  }

  Printed lambda(const Expr& e, int indent, int column, bool flat) {
    std::string header;
    const auto& params = e.params();
    bool parens = params.size() > 1 || !params[0].paramType().isNull();
    if (parens) header += "(";
    for (size_t i = 0; i < params.size(); ++i) {
      if (i > 0) header += ", ";
      header += bindTyped(params[i]);
    }
    if (parens) header += ")";
    header += " -> ";
    Printed body = print(e.body(), indent, column + static_cast<int>(header.size()), flat);
    unbind(params.size());
    return {header + body.text, kLambda};
  }

  // `child` at a minimum level, parenthesised when it binds more loosely.
  // Each subtree is printed once on this path, else nested operands would print their
  // subtrees 2^depth times: a flat text does not depend on its column, so it is parenthesized
  // as it is; a multi-line one is printed again one column further in.
  Printed operand(const Expr& child, int minLevel, int indent, int column, bool flat,
                  bool forceParens = false) {
    if (!forceParens) {
      Printed p = print(child, indent, column, flat);
      if (p.level >= minLevel) return p;
      if (flat) return {"(" + p.text + ")", kPrimary};
    }
    Printed inner = print(child, indent, column + 1, flat);
    return {"(" + inner.text + ")", kPrimary};
  }

  // head(arg, arg, ...) on one line if it fits. Otherwise the leading size and attribute
  // arguments stay on the head's line, a single remaining argument follows them there (its own
  // calls break as needed), and several remaining arguments go one per line, indented by two.
  Printed call(const std::string& head, const std::vector<Arg>& args, int indent, int column,
               bool flat) {
    std::string oneLine = head + "(";
    for (size_t i = 0; i < args.size(); ++i) {
      if (i > 0) oneLine += ", ";
      oneLine += args[i].print(0, 0, true).text;
    }
    oneLine += ")";
    if (flat || !multiline_ || column + static_cast<int>(oneLine.size()) <= kWidth ||
        args.empty()) {
      return {oneLine, kPrimary};
    }
    std::string text = head + "(";
    size_t first = 0;
    while (first < args.size() && args[first].isText) {
      text += args[first].print(0, 0, true).text + ", ";
      ++first;
    }
    if (first == args.size()) {  // only sizes and attributes: nothing to break
      text.resize(text.size() - 2);
      return {text + ")", kPrimary};
    }
    if (head == "array" &&
        std::all_of(args.begin(), args.end(), [](const Arg& a) { return a.literal; })) {
      // A row of a constant matrix: as many values per line as fit.
      int lineColumn = column + static_cast<int>(text.size());
      for (size_t i = 0; i < args.size(); ++i) {
        std::string item = args[i].print(0, 0, true).text + (i + 1 < args.size() ? "," : ")");
        if (i > 0 && lineColumn + 1 + static_cast<int>(item.size()) > kWidth) {
          text += "\n" + std::string(indent + 2, ' ');
          lineColumn = indent + 2;
        } else if (i > 0) {
          text += " ";
          ++lineColumn;
        }
        text += item;
        lineColumn += static_cast<int>(item.size());
      }
      return {text, kPrimary};
    }
    if (first + 1 == args.size()) {
      int argColumn = column + static_cast<int>(text.size());
      return {text + args[first].print(indent, argColumn, false).text + ")", kPrimary};
    }
    if (first > 0) text.pop_back();  // the trailing space before the line break
    int argIndent = indent + 2;
    for (size_t i = first; i < args.size(); ++i) {
      text += "\n" + std::string(argIndent, ' ');
      text += args[i].print(argIndent, argIndent, false).text;
      text += i + 1 < args.size() ? "," : ")";
    }
    return {text, kPrimary};
  }

  Arg exprArg(const Expr& e) {
    return {[this, e](int indent, int column, bool flat) { return print(e, indent, column, flat); },
            false, e.isLiteral()};
  }
  static Arg textArg(std::string text) {
    return {[text](int, int, bool) { return Printed{text, kPrimary}; }, true};
  }

  Printed prim(const Expr& e, int indent, int column, bool flat) {
    Op op = e.primOp();
    const PrimInfo& info = e.primInfo();
    const auto& args = e.args();

    int level = binaryLevel(op);
    if (level >= 0 && args.size() == 2) {
      Printed left = operand(args[0], level, indent, column, flat);
      std::string middle = std::string(" ") + info.infix + " ";
      int rightColumn = endColumn(column, left.text) + static_cast<int>(middle.size());
      Printed right = operand(args[1], level + 1, indent, rightColumn, flat);
      return {left.text + middle + right.text, level};
    }
    if ((op == Op::Neg || op == Op::Not) && args.size() == 1) {
      // -(1.0f) and -(-x): the parser folds -1.0f into a literal and there is no -- token.
      if (flat || op != Op::Neg) {
        Printed p = operand(args[0], kUnary, indent, column + 1, flat);
        if (op == Op::Neg && (isNumericLiteral(args[0]) || p.text.starts_with("-"))) {
          p = {"(" + p.text + ")", kPrimary};
        }
        return {std::string(info.infix) + p.text, kUnary};
      }
      const bool force = isNumericLiteral(args[0]) ||
                         print(args[0], indent, column + 1, true).text.starts_with("-");
      Printed p = operand(args[0], kUnary, indent, column + 1, flat, force);
      return {std::string(info.infix) + p.text, kUnary};
    }
    if (op == Op::Select && args.size() == 3) {
      Printed c = operand(args[0], kOr, indent, column, flat);
      int thenColumn = endColumn(column, c.text) + 3;
      Printed t = operand(args[1], kTernary, indent, thenColumn, flat);
      int elseColumn = endColumn(thenColumn, t.text) + 3;
      Printed o = operand(args[2], kTernary, indent, elseColumn, flat);
      return {c.text + " ? " + t.text + " : " + o.text, kTernary};
    }
    if (op == Op::Get && e.nats()[0].isConstant() && *e.nats()[0].constant() >= 0 &&
        args.size() == 1) {
      Printed t = operand(args[0], kPostfix, indent, column, flat);
      return {t.text + "._" + std::to_string(*e.nats()[0].constant()), kPostfix};
    }
    if (op == Op::Tuple) {
      std::vector<Arg> elements;
      for (const Expr& a : args) elements.push_back(exprArg(a));
      return call("", elements, indent, column, flat);
    }
    if (op == Op::Apply && e.funs()[0].isUserFun()) {
      std::vector<Arg> callArgs;
      for (const Expr& a : args) callArgs.push_back(exprArg(a));
      return call(e.funs()[0].userFunName(), callArgs, indent, column, flat);
    }
    if (auto form = matchSlide2D(e)) {
      std::vector<Arg> callArgs;
      if (form->size1 == form->size2 && form->step1 == form->step2) {
        callArgs = {textArg(form->size1.toString()), textArg(form->step1.toString())};
      } else {
        callArgs = {textArg(form->size1.toString()), textArg(form->size2.toString()),
                    textArg(form->step1.toString()), textArg(form->step2.toString())};
      }
      callArgs.push_back(exprArg(form->x));
      return call("slide2D", callArgs, indent, column, flat);
    }
    if (auto form = matchMap2D(e)) {
      return call("map2D", {exprArg(form->f), exprArg(form->x)}, indent, column, flat);
    }
    if (auto form = matchPad2D(e)) {
      std::vector<Arg> callArgs;
      if (form->left == form->right && form->left == form->top && form->left == form->bottom) {
        callArgs = {textArg(form->left.toString())};
      } else {
        callArgs = {textArg(form->left.toString()), textArg(form->right.toString()),
                    textArg(form->top.toString()), textArg(form->bottom.toString())};
      }
      callArgs.push_back(textArg(boundaryText(form->boundary)));
      callArgs.push_back(exprArg(form->x));
      return call("pad2D", callArgs, indent, column, flat);
    }

    // A call in the order of the primitive's layout.
    std::vector<Arg> callArgs;
    size_t nat = 0, fun = 0, arg = 0;
    for (const char* c = info.layout; *c; ++c) {
      switch (*c) {
        case 'n':
          if (nat < e.nats().size()) callArgs.push_back(textArg(e.nats()[nat++].toString()));
          break;
        case 'b':
          callArgs.push_back(textArg(boundaryText(e.attribute())));
          break;
        case 'i':
          callArgs.push_back(textArg(indexFunctionText(e.attribute())));
          break;
        case 'f':
          if (fun < e.funs().size()) callArgs.push_back(exprArg(e.funs()[fun++]));
          break;
        case 'd':
          if (arg < args.size()) callArgs.push_back(exprArg(args[arg++]));
          break;
        default:
          break;
      }
    }
    while (arg < args.size()) callArgs.push_back(exprArg(args[arg++]));
    return call(info.name, callArgs, indent, column, flat);
  }

  bool multiline_;
  std::set<std::string> reserved_;
  std::vector<std::pair<uint64_t, std::string>> scope_;
};

// User functions a program uses, its own list first, each after those its body calls.
// Throws if two different user functions share a name.
std::vector<Expr> collectUserFuns(const Program& program) {
  std::vector<Expr> ordered;
  std::map<std::string, Expr> byName;
  std::function<void(const Expr&)> visitUserFun;
  std::function<void(const Expr&)> visitTree = [&](const Expr& e) {
    forEachNode(e, [&](const Expr& n) {
      if (n.isUserFun()) visitUserFun(n);
    });
  };
  visitUserFun = [&](const Expr& f) {
    auto it = byName.find(f.userFunName());
    if (it != byName.end()) {
      if (it->second.node() != f.node() && !(it->second == f)) {
        throw std::invalid_argument("two different user functions are named '" + f.userFunName() +
                                    "'");
      }
      return;
    }
    byName.emplace(f.userFunName(), f);
    visitTree(f.body());
    ordered.push_back(f);
  };
  for (const Expr& f : program.userFuns) visitUserFun(f);
  for (const Definition& d : program.definitions) visitTree(d.function);
  return ordered;
}

std::string printUserFunWith(const Expr& f, const std::set<std::string>& reserved, bool multiline) {
  if (!f.isUserFun()) throw std::invalid_argument("printUserFun: not a user function");
  Printer printer(multiline, reserved);
  std::string header = "fun " + f.userFunName() + "(";
  for (size_t i = 0; i < f.params().size(); ++i) {
    if (i > 0) header += ", ";
    header += printer.bindTyped(f.params()[i]);
  }
  header += "): " + f.userFunResultType().toString() + " =";
  Printed flatBody = printer.print(f.body(), 0, 0, true);
  if (!multiline || header.size() + 1 + flatBody.text.size() <= static_cast<size_t>(kWidth)) {
    return header + " " + flatBody.text;
  }
  return header + "\n  " + printer.print(f.body(), 2, 2, false).text;
}

// `[P >= 0, 1 <= V <= 16, N]`: each declared size with the bounds that differ from the
// default range [1, inf); empty when nothing is declared.
std::string sizeDeclarationsText(const Definition& d) {
  if (d.sizeDeclarations.empty()) return "";
  std::string out = "[";
  for (size_t i = 0; i < d.sizeDeclarations.size(); ++i) {
    const Arith& size = d.sizeDeclarations[i];
    if (!size.isVar() || size.varKind() != VarKind::Size || !size.varLo().isConstant() ||
        (size.varHi() && !size.varHi()->isConstant())) {
      throw std::invalid_argument("definition '" + d.name + "': size declaration " +
                                  size.toString() + " is not a size variable with constant bounds");
    }
    int64_t lo = *size.varLo().constant();
    if (lo < 0) {
      throw std::invalid_argument("definition '" + d.name + "': size variable " + size.varName() +
                                  " has a negative lower bound");
    }
    std::string text = size.varName();
    if (size.varHi()) {
      text += " <= " + size.varHi()->toString();
      if (lo != 1) text = std::to_string(lo) + " <= " + text;
    } else if (lo != 1) {
      text += " >= " + std::to_string(lo);
    }
    out += (i > 0 ? ", " : "") + text;
  }
  return out + "]";
}

std::string printDefinitionWith(const Definition& d, const std::set<std::string>& reserved,
                                bool multiline) {
  if (d.function.isNull() || !d.function.isLambda()) {
    throw std::invalid_argument("definition '" + d.name + "' is not a lambda");
  }
  Printer printer(multiline, reserved);
  printer.reserveFreeNames(d.function);
  std::string header = "def " + d.name + sizeDeclarationsText(d) + "(";
  for (size_t i = 0; i < d.function.params().size(); ++i) {
    if (i > 0) header += ", ";
    header += printer.bindTyped(d.function.params()[i]);
  }
  header += ")";
  if (!d.declaredType.isNull()) header += ": " + d.declaredType.toString();
  header += " =";
  const Expr& body = d.function.body();
  Printed flatBody = printer.print(body, 0, 0, true);
  if (!multiline || header.size() + 1 + flatBody.text.size() <= static_cast<size_t>(kWidth)) {
    return header + " " + flatBody.text;
  }
  return header + "\n  " + printer.print(body, 2, 2, false).text;
}

std::set<std::string> reservedWithUserFuns(const std::vector<Expr>& userFuns) {
  std::set<std::string> reserved = reservedNames();
  for (const Expr& f : userFuns) reserved.insert(f.userFunName());
  return reserved;
}

// The user functions mentioned in an expression or definition.
std::vector<Expr> userFunsIn(const Expr& e) {
  std::vector<Expr> found;
  forEachNode(e, [&](const Expr& n) {
    if (n.isUserFun()) found.push_back(n);
  });
  return found;
}

}  // namespace

std::string printProgram(const Program& program) {
  std::vector<Expr> userFuns = collectUserFuns(program);
  std::set<std::string> reserved = reservedWithUserFuns(userFuns);
  std::string out;
  for (const Expr& f : userFuns) out += printUserFunWith(f, reserved, true) + "\n";
  for (const Definition& d : program.definitions) {
    if (!out.empty()) out += "\n";
    out += printDefinitionWith(d, reserved, true) + "\n";
  }
  return out;
}

std::string printDefinition(const Definition& definition) {
  return printDefinitionWith(definition, reservedWithUserFuns(userFunsIn(definition.function)),
                             true);
}

std::string printUserFun(const Expr& userFun) {
  return printUserFunWith(userFun, reservedWithUserFuns(userFunsIn(userFun.body())), true);
}

std::string printExpr(const Expr& e, bool multiline) {
  Printer printer(multiline, reservedWithUserFuns(userFunsIn(e)));
  printer.reserveFreeNames(e);
  return printer.print(e, 0, 0, !multiline).text;
}

}  // namespace weft
