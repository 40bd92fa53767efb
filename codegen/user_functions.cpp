// Calls of functions on scalar arguments. A lambda is inlined, its arguments evaluated into
// temporaries first (a tuple or array argument outside vectorize is bound as its view, as let
// binds it: a tuple has no one C value); a user function is emitted once per vector width as a
// static OpenCL function (uf_<name>, uf_<name>_vN for its vectorised form: OpenCL arithmetic on
// vectors is element-wise, so the same text serves both) that the program's text places before the
// kernels, and called. A lambda applied lane-wise (vectorize) is inlined with vector params,
// and the user functions its body calls are called in their vectorised forms, scalar
// arguments broadcast.
#include "codegen/generator.h"

namespace weft::opencl {

// A call of a function on scalar arguments; `vectorWidth` > 0 calls its vectorised form.
std::string Generator::genCall(const Expr& f, const std::vector<Expr>& args, int64_t vectorWidth,
                               const Expr& at) {
  if (f.isLambda()) {
    // Every argument is evaluated before any parameter is bound: an argument may apply the
    // same lambda object (a shared subexpression), which binds its parameters on the way.
    std::vector<ViewPtr> bound;
    for (size_t i = 0; i < args.size(); ++i) {
      const Type& t = typeOf(args[i]);
      if (laneWidth_ == 0 && vectorWidth == 0 && !t.isScalar() && !t.isVector()) {
        bound.push_back(genView(args[i]));
        continue;
      }
      const std::string value = genScalar(args[i]);
      std::string name = fresh("a");
      if (laneWidth_ > 0 && t.isScalar()) {
        // Under vectorize the value is the lanes' vector (node types are the lanes'): declared
        // as one, a scalar from outside broadcast. A condition's lanes are an int vector of
        // -1 (true) and 0 (false), as OpenCL's vector comparisons give them, also where the
        // value is a scalar bool.
        if (t.scalarKind() == ScalarKind::Bool) {
          emitter_.line(laneTypeName(ScalarKind::Int) + " " + name + " = " +
                        laneSelect(value, ScalarKind::Int, "-1", "0") + ";");
        } else {
          emitter_.line(laneTypeName(t.scalarKind()) + " " + name + " = " + value + ";");
        }
      } else {
        emitter_.line(cTypeName(t) + " " + name + " = " + value + ";");
      }
      bound.push_back(variableView(name, t));
    }
    for (size_t i = 0; i < args.size(); ++i) bind(f.params()[i], bound[i]);
    // Under vectorize the body's params are vectors (its types are the lanes'): the user
    // functions it calls are called in their vectorised forms.
    const int64_t outer = laneWidth_;
    if (vectorWidth > 0) laneWidth_ = vectorWidth;
    std::string body = genScalar(f.body());
    laneWidth_ = outer;
    return body;
  }
  (void)at;
  std::vector<std::string> values;
  for (const Expr& a : args) values.push_back(genScalar(a));
  if (laneWidth_ > 0 && vectorWidth == laneWidth_) {
    // Inside a lane-wise lambda an argument may be a scalar (a literal, a value from outside):
    // broadcast, which leaves a vector of the width as it is.
    for (size_t i = 0; i < values.size() && i < f.params().size(); ++i) {
      const Type& p = f.params()[i].paramType();
      if (p.isScalar()) {
        values[i] = "(" + cTypeName(Type::vector(p.scalarKind(), vectorWidth)) + ")(" +
                    values[i] + ")";
      }
    }
  }
  return callUserFun(f, values, vectorWidth);
}

std::string Generator::callUserFun(const Expr& f, const std::vector<std::string>& values,
                                   int64_t vectorWidth) {
  std::string name = emitUserFun(f, vectorWidth);
  std::string text = name + "(";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + values[i];
  return text + ")";
}

// Emits a user function (once per width) as an OpenCL function and returns its name.
std::string Generator::emitUserFun(const Expr& f, int64_t vectorWidth) {
  std::string name = "uf_" + cIdentifier(f.userFunName()) +
                     (vectorWidth ? "_v" + std::to_string(vectorWidth) : "");
  if (emittedUserFuns_.count(name)) return name;
  emittedUserFuns_.insert(name);
  auto widen = [&](const Type& t) {
    if (!vectorWidth || !t.isScalar()) return t;
    return Type::vector(t.scalarKind(), vectorWidth);
  };
  Emitter saved = std::move(emitter_);
  emitter_ = Emitter{};
  std::string signature = cTypeName(widen(f.userFunResultType())) + " " + name + "(";
  for (size_t i = 0; i < f.params().size(); ++i) {
    const Expr& p = f.params()[i];
    std::string pname = "p_" + cIdentifier(p.paramName());
    signature += (i ? ", " : "") + cTypeName(widen(p.paramType())) + " " + pname;
    bind(p, variableView(pname, widen(p.paramType())));
  }
  signature += ")";
  // The body's node types are those of its scalar form; OpenCL arithmetic on vectors is
  // element-wise, so the same text serves the vectorised function.
  TypedDefinition bodyTypes = typecheckFunction(f, [&] {
    std::vector<Type> types;
    for (const Expr& p : f.params()) types.push_back(p.paramType());
    return types;
  }());
  for (const auto& [node, type] : bodyTypes.types) typed_.types.emplace(node, type);
  // The vectorised form's body is generated like the body of a lambda under vectorize.
  const int64_t outerLanes = laneWidth_;
  laneWidth_ = vectorWidth;
  std::string result = genScalar(f.body());
  laneWidth_ = outerLanes;
  std::string text = "static " + signature + " {\n";
  for (const std::string& l : emitter_.lines) text += l + "\n";
  text += "  return " + result + ";\n}\n";
  emitter_ = std::move(saved);
  helperFunctions_.push_back(text);
  return name;
}

}  // namespace weft::opencl
