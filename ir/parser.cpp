// Parser of the weft text format (grammar in ir/parser.h): hand-written recursive descent over
// the tokens of ir/lexer.h.
//
// Calls are parsed by the argument layout of the primitive table (ir/primitives.def): before
// parsing a call's arguments the parser counts them (top-level commas up to the matching ')'),
// checks the count against the layout and reports a mismatch in words ("split expects a size
// and an array, found 3 arguments"); then each argument is read as what its layout letter says:
// a size (an Arith expression), a boundary, an index function, a function or a data value.
// Binary operators use C precedence by precedence climbing. Names resolve innermost first:
// params of enclosing lambdas, user functions and definitions shadow user functions and
// primitives; anything else is an error. The 2D forms expand through the builders of
// ir/builders.h, so text and C++ agree by construction. A definition's size declarations
// (`def conv[P >= 0](...)`) are read first; while the rest of that definition is parsed, a
// declared name in a type or size argument stands for the declared variable, so every use
// carries the declared range.
#include "ir/parser.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "ir/builders.h"
#include "ir/lexer.h"

namespace weft {

ParseError::ParseError(SourceLoc loc_, const std::string& message_)
    : std::runtime_error(loc_.toString() + ": error: " + message_),
      loc(std::move(loc_)),
      message(message_) {}

namespace {

// The 2D forms: written like primitives, expanded by the builders.
enum class Macro { Map2D, Slide2D, Pad2D };

std::optional<Macro> findMacro(const std::string& name) {
  if (name == "map2D") return Macro::Map2D;
  if (name == "slide2D") return Macro::Slide2D;
  if (name == "pad2D") return Macro::Pad2D;
  return std::nullopt;
}

bool isKeyword(const std::string& name) {
  return name == "def" || name == "fun" || name == "true" || name == "false";
}

// Binary operators by precedence level (higher binds tighter), C's order.
struct BinaryOperator {
  const char* spelling;
  int level;
  Op op;
};
constexpr BinaryOperator binaryOperators[] = {
    {"||", 1, Op::Or}, {"&&", 2, Op::And}, {"==", 3, Op::Eq}, {"!=", 3, Op::Ne}, {"<", 4, Op::Lt},
    {"<=", 4, Op::Le}, {">", 4, Op::Gt},   {">=", 4, Op::Ge}, {"+", 5, Op::Add}, {"-", 5, Op::Sub},
    {"*", 6, Op::Mul}, {"/", 6, Op::Div},  {"%", 6, Op::Mod},
};

const BinaryOperator* findBinary(const Token& token) {
  if (token.kind != TokenKind::Symbol) return nullptr;
  for (const BinaryOperator& b : binaryOperators) {
    if (token.text == b.spelling) return &b;
  }
  return nullptr;
}

std::string joinWords(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " and " : ", ";
    out += words[i];
  }
  return out;
}

std::string countWord(size_t n) {
  static const char* const words[] = {"no", "one", "two", "three", "four", "five", "six"};
  return n < 7 ? words[n] : std::to_string(n);
}

// The words for one letter of a primitive's argument layout (see ir/primitives.def).
const char* layoutWord(char letter) {
  switch (letter) {
    case 'n': return "a size";
    case 'b': return "a boundary";
    case 'i': return "an index function";
    case 'f': return "a function";
    case 'd': return "an array";
    case '+': return "one or more further arguments";
    case '*': return "any further arguments";
  }
  return "an argument";
}

// A primitive's argument layout in words, e.g. "a size and an array".
std::string describeLayout(Op op) {
  const PrimInfo& info = primInfo(op);
  switch (op) {
    case Op::Reduce:
    case Op::ReduceSeq:
    case Op::ReduceSeqUnroll:
      return "an initial value, a function and an array";
    case Op::Let:
      return "a function and a value";
    case Op::Apply:
      return "a function and its arguments";
    case Op::Id:
      return "one value";
    case Op::Fill:
      return "a size and a value";
    case Op::Vectorize:
      return "a vector width, a function and one or more arguments";
    case Op::Slide:
    case Op::SlideStrict:
      return "a size, a step and an array";
    case Op::Pad:
      return "left and right sizes, a boundary and an array";
    case Op::Crop:
      return "left and right sizes and an array";
    case Op::AsVector:
      return "a vector width and an array";
    case Op::MapGlb:
    case Op::MapWrg:
    case Op::MapLcl:
      return "a dimension, a function and an array";
    case Op::ToGlobal:
    case Op::ToLocal:
    case Op::ToPrivate:
      return "a function and one or more arguments";
    case Op::Zip:
      return "two or more arrays";
    case Op::Tuple:
      return "two or more values";
    case Op::ArrayOf:
      return "one or more values of one type";
    case Op::Get:
      return "an index and a tuple";
    default:
      break;
  }
  if (info.category == PrimCategory::Scalar) {
    int n = info.minArgs();
    return n == 1 ? "one operand" : countWord(n) + " operands";
  }
  std::vector<std::string> words;
  for (const char* c = info.layout; *c; ++c) words.push_back(layoutWord(*c));
  return joinWords(words);
}

// Words for the non-data part of a layout, for a primitive used as a function: "a size".
std::string describeLeading(const std::string& layout) {
  std::vector<std::string> words;
  for (char c : layout) {
    if (c != 'd' && c != '+' && c != '*') words.push_back(layoutWord(c));
  }
  if (words.empty()) return "no arguments";
  return joinWords(words);
}

std::string argumentsFound(size_t n) {
  return "found " + std::to_string(n) + (n == 1 ? " argument" : " arguments");
}

bool isDataLetter(char c) { return c == 'd' || c == '+' || c == '*'; }

// One parsed call argument (what its layout letter asked for).
struct CallArgs {
  std::vector<Arith> nats;
  PrimAttribute attribute;
  std::vector<Expr> funs;
  std::vector<Expr> args;
};

class Parser {
 public:
  Parser(const std::string& text, const std::string& fileName)
      : file_(std::make_shared<const std::string>(fileName)), tokens_(tokenize(text, file_)) {}

  Program program() {
    Program result;
    while (!at(TokenKind::End)) {
      if (peek().isIdentifier("fun")) {
        Expr f = userFunDeclaration();
        userFuns_.emplace(f.userFunName(), f);
        result.userFuns.push_back(f);
      } else if (peek().isIdentifier("def")) {
        result.definitions.push_back(definition());
      } else {
        fail(peek(), "'def' or 'fun'");
      }
    }
    return result;
  }

  void addUserFuns(const Program& context) {
    for (const Expr& f : context.userFuns) userFuns_.emplace(f.userFunName(), f);
  }

  Expr wholeExpr() {
    Expr e = expr();
    expectEnd();
    return e;
  }

  Type wholeType() {
    Type t = type();
    expectEnd();
    return t;
  }

  Arith wholeArith() {
    Arith a = arith();
    expectEnd();
    return a;
  }

 private:
  // ---- tokens ------------------------------------------------------------------------------
  const Token& peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  bool at(TokenKind kind) const { return peek().kind == kind; }
  bool atSymbol(const char* s) const { return peek().isSymbol(s); }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool acceptSymbol(const char* s) {
    if (!atSymbol(s)) return false;
    next();
    return true;
  }
  const Token& expectSymbol(const char* s) {
    if (!atSymbol(s)) fail(peek(), std::string("'") + s + "'");
    return next();
  }
  void expectEnd() {
    if (!at(TokenKind::End)) fail(peek(), "end of input");
  }
  const Token& expectIdentifier(const std::string& what) {
    if (!at(TokenKind::Identifier) || isKeyword(peek().text)) fail(peek(), what);
    return next();
  }

  [[noreturn]] void fail(const Token& found, const std::string& expected) const {
    throw ParseError(found.loc, "expected " + expected + ", found " + found.describe());
  }
  [[noreturn]] void error(const SourceLoc& loc, const std::string& message) const {
    throw ParseError(loc, message);
  }

  // ---- scopes ------------------------------------------------------------------------------
  const Expr* lookupParam(const std::string& name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
      if (it->first == name) return &it->second;
    }
    return nullptr;
  }
  const Expr* lookupUserFun(const std::string& name) const {
    auto it = userFuns_.find(name);
    return it == userFuns_.end() ? nullptr : &it->second;
  }
  bool isCallable(const std::string& name) const {
    return lookupUserFun(name) || findPrimitive(name) || findMacro(name);
  }

  struct ScopeGuard {
    Parser& parser;
    size_t size;
    explicit ScopeGuard(Parser& p) : parser(p), size(p.scope_.size()) {}
    ~ScopeGuard() { parser.scope_.resize(size); }
  };

  // ---- declarations ------------------------------------------------------------------------
  void checkNewName(const Token& name) {
    if (findPrimitive(name.text) || findMacro(name.text)) {
      error(name.loc, "'" + name.text + "' is a primitive; choose another name");
    }
    if (lookupUserFun(name.text)) {
      error(name.loc, "'" + name.text + "' is already defined");
    }
  }

  // '(' name ':' type {',' name ':' type} ')'
  std::vector<Expr> typedParams() {
    std::vector<Expr> params;
    expectSymbol("(");
    if (atSymbol(")")) fail(peek(), "a parameter name");
    do {
      const Token& name = expectIdentifier("a parameter name");
      expectSymbol(":");
      Type t = type();
      params.push_back(Expr::param(name.text, t, name.loc));
    } while (acceptSymbol(","));
    expectSymbol(")");
    return params;
  }

  // fun name(x: T, ...): R = expr
  Expr userFunDeclaration() {
    next();  // fun
    const Token& name = expectIdentifier("a user function name");
    checkNewName(name);
    std::vector<Expr> params = typedParams();
    expectSymbol(":");
    Type resultType = type();
    expectSymbol("=");
    ScopeGuard guard(*this);
    for (const Expr& p : params) scope_.emplace_back(p.paramName(), p);
    Expr body = valueExpr();
    return Expr::userFun(name.text, params, resultType, body, name.loc);
  }

  // def name[sizes](x: T, ...) [: R] = expr
  Definition definition() {
    const Token& keyword = next();  // def
    const Token& name = expectIdentifier("a definition name");
    // Definitions are not callable, so only other definitions can clash with them.
    if (declaredDefinitions_.count(name.text)) {
      error(name.loc, "'" + name.text + "' is already defined");
    }
    std::vector<Arith> sizes = sizeDeclarations();
    // The declared variables replace Arith::size for their names until the definition ends.
    declaredSizes_.clear();
    for (const Arith& size : sizes) declaredSizes_.emplace(size.varName(), size);
    struct ClearSizes {
      std::map<std::string, Arith>& sizes;
      ~ClearSizes() { sizes.clear(); }
    } clearSizes{declaredSizes_};
    std::vector<Expr> params = typedParams();
    Type declared;
    if (acceptSymbol(":")) declared = type();
    expectSymbol("=");
    ScopeGuard guard(*this);
    for (const Expr& p : params) scope_.emplace_back(p.paramName(), p);
    Expr body = valueExpr();
    declaredDefinitions_.insert(name.text);
    return Definition{name.text, Expr::lambda(params, body, keyword.loc), declared, name.loc,
                      std::move(sizes)};
  }

  // An optional '[' size {',' size} ']' after a definition's name, where a size is
  // NAME | NAME >= c | c <= NAME | c <= NAME <= d | NAME <= d with integer constants;
  // the lower bound defaults to 1 and must be >= 0, the upper bound defaults to none.
  std::vector<Arith> sizeDeclarations() {
    std::vector<Arith> sizes;
    if (!acceptSymbol("[")) return sizes;
    std::map<std::string, SourceLoc> seen;
    do {
      std::optional<int64_t> lo;
      std::optional<int64_t> hi;
      SourceLoc loTokenLoc;
      SourceLoc hiTokenLoc;
      if (at(TokenKind::Integer) || atSymbol("-")) {  // c <= NAME [<= d]
        loTokenLoc = peek().loc;
        lo = boundConstant();
        expectSymbol("<=");
      }
      const Token& name = expectIdentifier("a size variable name");
      if (auto previous = seen.find(name.text); previous != seen.end()) {
        error(name.loc, "size variable " + name.text + " is declared twice (first at " +
                            previous->second.toString() + ")");
      }
      seen.emplace(name.text, name.loc);
      if (atSymbol(">=") && !lo) {
        next();
        loTokenLoc = peek().loc;
        lo = boundConstant();
      } else if (atSymbol("<=")) {
        next();
        hiTokenLoc = peek().loc;
        hi = boundConstant();
      }
      if (lo && *lo < 0) {
        error(loTokenLoc, "size variable " + name.text + ": lower bound must be >= 0");
      }
      int64_t lower = lo.value_or(1);
      if (hi && *hi < lower) {
        error(hiTokenLoc, "size variable " + name.text + ": upper bound " + std::to_string(*hi) +
                              " is below its lower bound " + std::to_string(lower));
      }
      sizes.push_back(Arith::var(name.text, VarKind::Size, Arith(lower),
                                 hi ? std::optional<Arith>(Arith(*hi)) : std::nullopt));
    } while (acceptSymbol(","));
    if (!atSymbol("]")) fail(peek(), "',' or ']' after a size declaration");
    next();
    return sizes;
  }

  // An integer constant of a size bound, possibly negative (so that a negative lower bound
  // is reported as such rather than as a syntax error).
  int64_t boundConstant() {
    bool negative = acceptSymbol("-");
    if (!at(TokenKind::Integer)) fail(peek(), "an integer bound");
    int64_t value = *integerArith(next()).constant();
    return negative ? -value : value;
  }

  // A size name in a length or size argument: the declared variable, else a size in [1, inf).
  Arith sizeVariable(const std::string& name) const {
    auto declared = declaredSizes_.find(name);
    return declared != declaredSizes_.end() ? declared->second : Arith::size(name);
  }

  // ---- types -------------------------------------------------------------------------------
  Type type() {
    const Token& t = peek();
    if (t.kind == TokenKind::Identifier) {
      if (auto scalar = scalarType(t.text)) {
        next();
        return *scalar;
      }
      fail(t, "a type");
    }
    if (t.isSymbol("(")) {
      next();
      std::vector<Type> elements{type()};
      while (acceptSymbol(",")) elements.push_back(type());
      expectSymbol(")");
      if (elements.size() == 1) return elements[0];
      return Type::tuple(std::move(elements));
    }
    if (t.isSymbol("[")) {
      next();
      Type element = type();
      expectSymbol("]");
      return Type::array(element, arrayLength());
    }
    fail(t, "a type");
  }

  // float int bool, and vectors float4, int8, ...
  static std::optional<Type> scalarType(const std::string& name) {
    static const std::pair<const char*, ScalarKind> scalars[] = {
        {"float", ScalarKind::Float}, {"int", ScalarKind::Int}, {"bool", ScalarKind::Bool}};
    for (const auto& [spelling, kind] : scalars) {
      std::string s = spelling;
      if (name == s) return Type::scalar(kind);
      if (kind != ScalarKind::Bool && name.size() > s.size() && name.compare(0, s.size(), s) == 0) {
        std::string width = name.substr(s.size());
        for (const char* w : {"2", "3", "4", "8", "16"}) {
          if (width == w) return Type::vector(kind, std::stoi(width));
        }
      }
    }
    return std::nullopt;
  }

  // An array length: an integer, a size name or a parenthesised expression.
  Arith arrayLength() {
    const Token& t = peek();
    if (t.kind == TokenKind::Integer) return integerArith(next());
    if (t.kind == TokenKind::Identifier && !isKeyword(t.text)) return sizeVariable(next().text);
    if (t.isSymbol("(")) {
      next();
      Arith a = arith();
      expectSymbol(")");
      return a;
    }
    fail(t, "an array length (a number, a size name or a parenthesised expression)");
  }

  // ---- arithmetic over sizes ---------------------------------------------------------------
  Arith integerArith(const Token& t) {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(t.text.c_str(), &end, 10);
    if (errno == ERANGE) error(t.loc, "integer literal '" + t.text + "' is out of range");
    return Arith(static_cast<int64_t>(v));
  }

  Arith arithBinary(const Token& op, const Arith& a, const Arith& b) {
    try {
      switch (op.text[0]) {
        case '+':
          return a + b;
        case '-':
          return a - b;
        case '*':
          return a * b;
        case '/':
          return a / b;
        default:
          return a % b;
      }
    } catch (const ArithError& e) {
      error(op.loc, e.what());
    }
  }

  // Sums of terms with C precedence: + - below * / %, unary minus, min/max calls and the
  // parenthesised conditional (a < b ? c : d).
  Arith arith() {
    Arith a = arithTerm();
    while (atSymbol("+") || atSymbol("-")) {
      const Token& op = next();
      a = arithBinary(op, a, arithTerm());
    }
    return a;
  }

  Arith arithTerm() {
    Arith a = arithFactor();
    while (atSymbol("*") || atSymbol("/") || atSymbol("%")) {
      const Token& op = next();
      a = arithBinary(op, a, arithFactor());
    }
    return a;
  }

  Arith arithFactor() {
    const Token& t = peek();
    if (t.isSymbol("-")) {
      next();
      return -arithFactor();
    }
    if (t.kind == TokenKind::Integer) return integerArith(next());
    if (t.isSymbol("(")) {
      next();
      Arith a = arith();
      if (acceptSymbol("<")) {  // (a < b ? c : d), as Arith::toString prints conditionals
        Arith b = arith();
        expectSymbol("?");
        Arith then = arith();
        expectSymbol(":");
        Arith otherwise = arith();
        expectSymbol(")");
        return ifLess(a, b, then, otherwise);
      }
      expectSymbol(")");
      return a;
    }
    if (t.kind == TokenKind::Identifier && !isKeyword(t.text)) {
      next();
      if ((t.text == "min" || t.text == "max") && atSymbol("(")) {
        next();
        Arith a = arith();
        expectSymbol(",");
        Arith b = arith();
        expectSymbol(")");
        return t.text == "min" ? min(a, b) : max(a, b);
      }
      return sizeVariable(t.text);
    }
    fail(t, "a size expression");
  }

  // ---- expressions -------------------------------------------------------------------------
  // `x ->` or `(a, b) ->` or `(a: T, ...) ->` ahead?
  bool lambdaAhead() const {
    if (peek().kind == TokenKind::Identifier && peek(1).isSymbol("->")) return true;
    if (!peek().isSymbol("(")) return false;
    size_t i = 1;
    while (true) {
      if (peek(i).kind != TokenKind::Identifier) return false;
      const Token& after = peek(i + 1);
      if (after.isSymbol(":")) return true;  // a typed param: only lambdas have those
      if (after.isSymbol(")")) return peek(i + 2).isSymbol("->");
      if (!after.isSymbol(",")) return false;
      i += 2;
    }
  }

  // An expression that may be a lambda.
  Expr expr() {
    if (lambdaAhead()) return lambda();
    return ternary();
  }

  // An expression that must be a value (not a function).
  Expr valueExpr() {
    const Token& start = peek();
    Expr e = expr();
    requireValue(e, start);
    return e;
  }

  void requireValue(const Expr& e, const Token& start) const {
    if (e.isFunction()) error(start.loc, "expected a value, found a function");
  }

  Expr lambda() {
    const Token& start = peek();
    std::vector<Expr> params;
    if (start.kind == TokenKind::Identifier) {
      const Token& name = expectIdentifier("a parameter name");
      params.push_back(Expr::param(name.text, Type(), name.loc));
    } else {
      expectSymbol("(");
      do {
        const Token& name = expectIdentifier("a parameter name");
        Type t;
        if (acceptSymbol(":")) t = type();
        params.push_back(Expr::param(name.text, t, name.loc));
      } while (acceptSymbol(","));
      expectSymbol(")");
    }
    expectSymbol("->");
    ScopeGuard guard(*this);
    for (const Expr& p : params) scope_.emplace_back(p.paramName(), p);
    Expr body = valueExpr();
    return Expr::lambda(params, body, start.loc);
  }

  // c ? a : b (right associative, as in C)
  Expr ternary() {
    const Token& start = peek();
    Expr condition = binary(1);
    if (!atSymbol("?")) return condition;
    const Token& question = next();
    requireValue(condition, start);
    Expr then = valueExpr();
    expectSymbol(":");
    const Token& otherwiseStart = peek();
    Expr otherwise = ternary();
    requireValue(otherwise, otherwiseStart);
    return Expr::prim(Op::Select, {}, {}, {condition, then, otherwise}, {}, question.loc);
  }

  // Precedence climbing over the binary operators, all left associative.
  Expr binary(int minLevel) {
    const Token& start = peek();
    Expr left = unary();
    while (const BinaryOperator* op = findBinary(peek())) {
      if (op->level < minLevel) break;
      requireValue(left, start);
      const Token& opToken = next();
      const Token& rightStart = peek();
      Expr right = binary(op->level + 1);
      requireValue(right, rightStart);
      left = Expr::prim(op->op, {}, {}, {left, right}, {}, opToken.loc);
    }
    return left;
  }

  Expr unary() {
    const Token& t = peek();
    if (t.isSymbol("-")) {
      next();
      // A minus directly before a number is part of the literal, unless a postfix ._i binds
      // the number first (-2._0 is -(2._0), as in C).
      if ((at(TokenKind::Integer) || at(TokenKind::Float)) && !peek(1).isSymbol(".")) {
        return literal(next(), &t);
      }
      const Token& operandStart = peek();
      Expr operand = unary();
      requireValue(operand, operandStart);
      return Expr::prim(Op::Neg, {}, {}, {operand}, {}, t.loc);
    }
    if (t.isSymbol("!")) {
      next();
      const Token& operandStart = peek();
      Expr operand = unary();
      requireValue(operand, operandStart);
      return Expr::prim(Op::Not, {}, {}, {operand}, {}, t.loc);
    }
    return postfix(primary());
  }

  // e._0._1
  Expr postfix(Expr e) {
    while (atSymbol(".")) {
      const Token& dot = next();
      const Token& field = peek();
      if (field.kind != TokenKind::Identifier || field.text.size() < 2 || field.text[0] != '_' ||
          field.text.find_first_not_of("0123456789", 1) != std::string::npos) {
        fail(field, "a tuple component like _0");
      }
      next();
      if (e.isFunction()) error(dot.loc, "expected a tuple, found a function");
      errno = 0;
      long long index = std::strtoll(field.text.c_str() + 1, nullptr, 10);
      if (errno == ERANGE) error(field.loc, "tuple component '" + field.text + "' is out of range");
      e = Expr::prim(Op::Get, {Arith(static_cast<int64_t>(index))}, {}, {e}, {}, dot.loc);
    }
    return e;
  }

  // A numeric literal; `minus` is the '-' token directly before it, if any.
  Expr literal(const Token& t, const Token* minus) {
    const SourceLoc& loc = minus ? minus->loc : t.loc;
    if (t.kind == TokenKind::Integer) {
      errno = 0;
      unsigned long long magnitude = std::strtoull(t.text.c_str(), nullptr, 10);
      const unsigned long long limit =
          static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()) + (minus ? 1 : 0);
      if (errno == ERANGE || magnitude > limit) {
        error(t.loc, "integer literal '" + t.text + "' is out of range");
      }
      int64_t value =
          minus ? static_cast<int64_t>(0ULL - magnitude) : static_cast<int64_t>(magnitude);
      return Expr::intLiteral(value, loc);
    }
    double value = floatValue(t);
    return Expr::floatLiteral(minus ? -value : value, loc);
  }

  // The value of a float (or integer) token; overflow gives infinity, as in C.
  static double floatValue(const Token& t) {
    std::string digits = t.text;
    if (!digits.empty() && (digits.back() == 'f' || digits.back() == 'F')) digits.pop_back();
    return std::strtod(digits.c_str(), nullptr);
  }

  Expr primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::Integer:
      case TokenKind::Float:
        return literal(next(), nullptr);
      case TokenKind::Identifier:
        return identifierExpr();
      case TokenKind::Symbol:
        if (t.isSymbol("(")) return parenthesised();
        break;
      case TokenKind::End:
        break;
    }
    fail(t, "an expression");
  }

  // (e) or a tuple (a, b, ...)
  Expr parenthesised() {
    const Token& open = next();
    const Token& first = peek();
    Expr e = expr();
    if (!atSymbol(",")) {
      expectSymbol(")");
      return e;
    }
    requireValue(e, first);
    std::vector<Expr> elements{e};
    while (acceptSymbol(",")) elements.push_back(valueExpr());
    expectSymbol(")");
    return Expr::prim(Op::Tuple, {}, {}, std::move(elements), {}, open.loc);
  }

  Expr identifierExpr() {
    const Token& t = peek();
    if (t.text == "true" || t.text == "false") {
      next();
      return Expr::boolLiteral(t.text == "true", t.loc);
    }
    if (isKeyword(t.text)) fail(t, "an expression");
    if (const Expr* p = lookupParam(t.text)) {
      if (peek(1).isSymbol("(")) {
        error(t.loc, "'" + t.text + "' is a parameter, not a function");
      }
      next();
      return *p;
    }
    if (isCallable(t.text)) {
      if (!peek(1).isSymbol("(")) {
        error(t.loc, "'" + t.text + "' is a function; call it with arguments here");
      }
      next();
      return call(t, /*asFunction=*/false);
    }
    error(t.loc, "unknown name '" + t.text + "'");
  }

  // A function argument: a lambda, a user function name, or a primitive or 2D form used as a
  // function (a bare name, or a call without its data arguments), which is eta-expanded.
  Expr functionArg() {
    const Token& t = peek();
    if (t.kind == TokenKind::Identifier && !isKeyword(t.text) && !lookupParam(t.text) &&
        !peek(1).isSymbol("->")) {
      if (const Expr* f = lookupUserFun(t.text)) {
        next();
        return *f;
      }
      if (findPrimitive(t.text) || findMacro(t.text)) {
        next();
        return call(t, /*asFunction=*/true);
      }
    }
    Expr e = expr();
    if (!e.isFunction()) error(t.loc, "expected a function, found " + t.describe());
    return e;
  }

  // Counts the arguments of the call whose '(' was just consumed: top-level commas up to the
  // matching ')'. `complete` is false when the list is cut short (the end of the file or the
  // next declaration comes first); the parse then reports where.
  struct ArgumentCount {
    size_t count = 0;
    bool complete = true;
  };
  ArgumentCount countArguments() const {
    if (peek().isSymbol(")")) return {0, true};
    size_t count = 1;
    int depth = 0;
    for (size_t i = pos_; i < tokens_.size(); ++i) {
      const Token& t = tokens_[i];
      if (t.kind == TokenKind::End || t.isSymbol("=") || t.isIdentifier("def") ||
          t.isIdentifier("fun")) {
        break;
      }
      if (t.isSymbol("(") || t.isSymbol("[")) {
        ++depth;
      } else if (t.isSymbol(")") || t.isSymbol("]")) {
        if (depth == 0) return {count, true};
        --depth;
      } else if (t.isSymbol(",") && depth == 0) {
        ++count;
      }
    }
    return {count, false};
  }

  // The layout a call is read with: the primitive's, or for the 2D forms the overload that
  // matches the argument count.
  struct Callee {
    std::optional<Op> op;
    std::optional<Macro> macro;
    const Expr* userFun = nullptr;
  };

  static std::vector<std::string> layoutsOf(const Callee& callee) {
    if (callee.op) return {primInfo(*callee.op).layout};
    switch (*callee.macro) {
      case Macro::Map2D:
        return {"fd"};
      case Macro::Slide2D:
        return {"nnd", "nnnnd"};
      case Macro::Pad2D:
        return {"nbd", "nnnnbd"};
    }
    return {};
  }

  static std::string describeCallee(const Callee& callee) {
    if (callee.op) return describeLayout(*callee.op);
    switch (*callee.macro) {
      case Macro::Map2D:
        return "a function and an array";
      case Macro::Slide2D:
        return "a size, a step and an array, or two sizes, two steps and an array";
      case Macro::Pad2D:
        return "a size, a boundary and an array, or four sizes, a boundary and an array";
    }
    return "";
  }

  // How many data arguments a layout takes at least, and whether it takes more.
  static size_t minData(const std::string& layout) {
    size_t n = 0;
    for (char c : layout) n += c == 'd' || c == '+';
    return n;
  }
  static bool variadic(const std::string& layout) {
    return layout.find_first_of("+*") != std::string::npos;
  }
  static size_t leadingCount(const std::string& layout) {
    size_t n = 0;
    for (char c : layout) n += !isDataLetter(c);
    return n;
  }

  // name(args) with `name` consumed. With asFunction, the data arguments are left out and the
  // call becomes a lambda over them (eta expansion); the parentheses are then optional.
  Expr call(const Token& name, bool asFunction) {
    Callee callee;
    if (const Expr* f = lookupUserFun(name.text)) {
      callee.userFun = f;
    } else if (auto op = findPrimitive(name.text)) {
      callee.op = op;
    } else {
      callee.macro = findMacro(name.text);
    }
    if (callee.userFun) return userFunCall(name, *callee.userFun);

    bool hasParens = atSymbol("(");
    if (!asFunction || hasParens) expectSymbol("(");
    ArgumentCount count = hasParens ? countArguments() : ArgumentCount{0, true};

    // Choose the layout by the argument count.
    std::vector<std::string> layouts = layoutsOf(callee);
    std::string layout;
    if (asFunction) {
      for (const std::string& l : layouts) {
        if (layout.empty() && leadingCount(l) == count.count) layout = l;
      }
      if (layout.empty() && count.complete) {
        std::string words = describeLeading(layouts[0]);
        for (size_t i = 1; i < layouts.size(); ++i) words += ", or " + describeLeading(layouts[i]);
        error(name.loc, name.text + " used as a function expects " + words + ", " +
                            argumentsFound(count.count));
      }
      if (layout.empty()) layout = layouts[0];
      if (minData(layout) == 0) {
        error(name.loc,
              name.text + " has no fixed data arguments to abstract over; write a lambda here");
      }
    } else {
      // A layout takes exactly its letters' count of arguments, or at least that many
      // ('*' counting none) when it ends in '+' or '*'.
      for (const std::string& l : layouts) {
        size_t least = 0;
        for (char c : l) least += c != '*';
        if (layout.empty() && (variadic(l) ? count.count >= least : count.count == least)) {
          layout = l;
        }
      }
      if (layout.empty() && !count.complete) layout = layouts[0];
      if (layout.empty()) {
        error(name.loc, name.text + " expects " + describeCallee(callee) + ", " +
                            argumentsFound(count.count));
      }
    }

    CallArgs parsed;
    bool first = true;
    auto separator = [&] {
      if (!first) expectSymbol(",");
      first = false;
    };
    for (char letter : layout) {
      if (asFunction && isDataLetter(letter)) continue;
      switch (letter) {
        case 'n':
          separator();
          parsed.nats.push_back(arith());
          break;
        case 'b':
          separator();
          boundary(parsed.attribute);
          break;
        case 'i':
          separator();
          indexFunction(parsed.attribute);
          break;
        case 'f':
          separator();
          parsed.funs.push_back(functionArg());
          break;
        case 'd':
          separator();
          parsed.args.push_back(valueExpr());
          break;
        case '+':
        case '*':
          // At least one more for '+' (already checked by the count); then as many as given.
          if (letter == '+') {
            separator();
            parsed.args.push_back(valueExpr());
          }
          while (atSymbol(",")) {
            separator();
            parsed.args.push_back(valueExpr());
          }
          break;
      }
    }
    if (hasParens) expectSymbol(")");

    if (!asFunction) return build(callee, layout, std::move(parsed), name.loc);

    // Eta expansion: a lambda over fresh params for the data arguments.
    std::vector<Expr> params;
    static const char* const names[] = {"x", "y", "z", "w"};
    size_t n = minData(layout);
    for (size_t i = 0; i < n; ++i) {
      std::string paramName = i < 4 ? names[i] : "x" + std::to_string(i);
      params.push_back(Expr::param(paramName, Type(), name.loc));
    }
    parsed.args = params;
    Expr body = build(callee, layout, std::move(parsed), name.loc);
    return Expr::lambda(params, body, name.loc);
  }

  Expr build(const Callee& callee, const std::string& layout, CallArgs a, const SourceLoc& loc) {
    if (callee.op) {
      return Expr::prim(*callee.op, std::move(a.nats), std::move(a.funs), std::move(a.args),
                        std::move(a.attribute), loc);
    }
    switch (*callee.macro) {
      case Macro::Map2D:
        return map2D(a.funs[0], a.args[0], loc);
      case Macro::Slide2D:
        if (layout == "nnd") return slide2D(a.nats[0], a.nats[1], a.args[0], loc);
        return slide2D(a.nats[0], a.nats[1], a.nats[2], a.nats[3], a.args[0], loc);
      case Macro::Pad2D:
        if (layout == "nbd") return pad2D(a.nats[0], a.attribute, a.args[0], loc);
        return pad2D(a.nats[0], a.nats[1], a.nats[2], a.nats[3], a.attribute, a.args[0], loc);
    }
    throw std::logic_error("unknown callee");
  }

  Expr userFunCall(const Token& name, const Expr& f) {
    expectSymbol("(");
    ArgumentCount count = countArguments();
    size_t arity = f.params().size();
    if (count.complete && count.count != arity) {
      error(name.loc, name.text + " expects " + std::to_string(arity) +
                          (arity == 1 ? " argument, " : " arguments, ") +
                          argumentsFound(count.count));
    }
    std::vector<Expr> args;
    for (size_t i = 0; i < arity; ++i) {
      if (i > 0) expectSymbol(",");
      args.push_back(valueExpr());
    }
    expectSymbol(")");
    return Expr::prim(Op::Apply, {}, {f}, std::move(args), {}, name.loc);
  }

  // clamp | mirror | constant(v)
  void boundary(PrimAttribute& attribute) {
    const Token& t = peek();
    const char* expected = "a boundary (clamp, mirror or constant(v))";
    if (t.isIdentifier("clamp")) {
      next();
      attribute.boundary = Boundary::Clamp;
    } else if (t.isIdentifier("mirror")) {
      next();
      attribute.boundary = Boundary::Mirror;
    } else if (t.isIdentifier("constant")) {
      next();
      expectSymbol("(");
      bool negative = acceptSymbol("-");
      if (!at(TokenKind::Float) && !at(TokenKind::Integer)) fail(peek(), "a number");
      double value = floatValue(next());
      expectSymbol(")");
      attribute.boundary = Boundary::Constant;
      attribute.padValue = negative ? -value : value;
    } else {
      fail(t, expected);
    }
  }

  // stride(s) | reverse
  void indexFunction(PrimAttribute& attribute) {
    const Token& t = peek();
    if (t.isIdentifier("stride")) {
      next();
      expectSymbol("(");
      attribute.indexFunction = IndexFunction::Stride;
      attribute.stride = arith();
      expectSymbol(")");
    } else if (t.isIdentifier("reverse")) {
      next();
      attribute.indexFunction = IndexFunction::Reverse;
    } else {
      fail(t, "an index function (stride(s) or reverse)");
    }
  }

  std::shared_ptr<const std::string> file_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  std::vector<std::pair<std::string, Expr>> scope_;
  std::map<std::string, Expr> userFuns_;
  std::set<std::string> declaredDefinitions_;
  std::map<std::string, Arith> declaredSizes_;  // of the definition being parsed
};

}  // namespace

Program parseProgram(const std::string& text, const std::string& fileName) {
  return Parser(text, fileName).program();
}

Program parseFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ParseError(SourceLoc{std::make_shared<const std::string>(path), 0, 0},
                     "cannot read the file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parseProgram(text.str(), path);
}

Expr parseExpr(const std::string& text, const Program& context, const std::string& fileName) {
  Parser parser(text, fileName);
  parser.addUserFuns(context);
  return parser.wholeExpr();
}

Type parseType(const std::string& text, const std::string& fileName) {
  return Parser(text, fileName).wholeType();
}

Arith parseArith(const std::string& text, const std::string& fileName) {
  return Parser(text, fileName).wholeArith();
}

}  // namespace weft
