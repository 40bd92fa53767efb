// Views of layout primitives inside generation: the environment binding params to views,
// layoutView (a layout primitive over the views of its arguments), inverseLayout and
// invertChain (the view through which a value must be written so that a rearrangement of it
// lands in a destination: writing join(x) into D writes x through split(D)), and genView (the
// view of a value that is only read, computing it first when it is not a layout of other
// values). The index arithmetic itself is in views.h.
#include "codegen/generator.h"
#include "codegen/tuple_memory.h"

namespace weft::opencl {

// ---- views ---------------------------------------------------------------------------
void Generator::bind(const Expr& param, ViewPtr view) { env_[param.paramId()] = std::move(view); }

ViewPtr Generator::lookup(const Expr& param) {
  auto it = env_.find(param.paramId());
  if (it == env_.end()) fail(param, "parameter '" + param.paramName() + "' is not bound");
  return it->second;
}

// The view of a layout primitive over the views of its arguments.
ViewPtr Generator::layoutView(const Expr& e, const std::function<ViewPtr(const Expr&)>& viewOf) {
  if (e.isParam()) return lookup(e);
  if (e.isLiteral()) return scalarView(literal(e), typeOf(e));
  if (!e.isPrim()) fail(e, "a function is not a value");
  const auto& nats = e.nats();
  switch (e.primOp()) {
    case Op::Split:
      return splitView(viewOf(e.args()[0]), nats[0]);
    case Op::Join:
      return joinView(viewOf(e.args()[0]));
    case Op::Slide:
    case Op::SlideStrict:
      return slideView(viewOf(e.args()[0]), nats[0], nats[1]);
    case Op::Pad:
      return padView(viewOf(e.args()[0]), nats[0], nats[1], e.attribute().boundary,
                     e.attribute().padValue);
    case Op::Crop:
      return cropView(viewOf(e.args()[0]), nats[0], nats[1]);
    case Op::Transpose:
      return transposeView(viewOf(e.args()[0]));
    case Op::Reorder:
      return reorderView(viewOf(e.args()[0]), e.attribute().indexFunction, e.attribute().stride);
    case Op::AsVector: {
      auto width = nats[0].constant();
      if (!width) fail(e, "asVector needs a constant width");
      return asVectorView(viewOf(e.args()[0]), *width);
    }
    case Op::AsScalar:
      return asScalarView(viewOf(e.args()[0]));
    case Op::Zip:
    case Op::Tuple: {
      std::vector<ViewPtr> components;
      for (const Expr& a : e.args()) components.push_back(viewOf(a));
      return zipView(std::move(components), typeOf(e));
    }
    case Op::ArrayOf: {
      std::vector<ViewPtr> elements;
      for (const Expr& a : e.args()) elements.push_back(viewOf(a));
      return elementsView(std::move(elements));
    }
    case Op::Get:
      return getView(viewOf(e.args()[0]), static_cast<int>(*nats[0].constant()));
    case Op::Id:
      return viewOf(e.args()[0]);
    case Op::Fill:
      return fillView(viewOf(e.args()[0]), nats[0]);
    case Op::Map: {
      if (!isLayoutMap(e)) break;
      Expr f = e.funs()[0];
      auto elementOf = [this, f, viewOf](const ViewPtr& element) {
        bind(f.params()[0], element);
        return layoutView(f.body(), viewOf);
      };
      return mapView(viewOf(e.args()[0]), typeOf(f.body()), elementOf);
    }
    default:
      break;
  }
  fail(e, std::string(e.primInfo().name) + " is not a layout primitive");
}

namespace {

// slide(n, n, x) that covers x exactly (slideStrict, or windows of one element): split(n, x).
bool slideIsSplit(const Expr& e) {
  const std::optional<int64_t> size = e.nats()[0].constant();
  const std::optional<int64_t> step = e.nats()[1].constant();
  return size && step && *size == *step && (e.isPrim(Op::SlideStrict) || *size == 1);
}

}  // namespace

// When `e` only rearranges its first argument in an invertible way, the view through which
// that argument must be written so that e's value lands in `dest`; null otherwise.
ViewPtr Generator::inverseLayout(const Expr& e, const ViewPtr& dest) {
  if (!e.isPrim()) return nullptr;
  switch (e.primOp()) {
    case Op::Join:
      return splitView(dest, typeOf(e.args()[0]).arrayElement().arrayLength());
    case Op::Split:
      return joinView(dest);
    case Op::Transpose:
      return transposeView(dest);
    case Op::Reorder: {
      // A reorder is a permutation: reverse is its own inverse, and LIFT's stride s over n
      // elements (i -> i / (n / s) + s * (i % (n / s))) is undone by stride n / s.
      const IndexFunction function = e.attribute().indexFunction;
      if (function == IndexFunction::Reverse) return reorderView(dest, function, Arith(1));
      const Arith n = typeOf(e.args()[0]).arrayLength();
      return reorderView(dest, function, n / e.attribute().stride);
    }
    case Op::AsScalar:
      return asVectorView(dest, typeOf(e.args()[0]).arrayElement().vectorWidth());
    case Op::AsVector:
      return asScalarView(dest);
    case Op::Crop:
      return uncropView(dest, e.nats()[0], e.nats()[1]);
    case Op::Slide:
    case Op::SlideStrict:
      // Windows that neither overlap nor leave elements out are a split: written through join.
      return slideIsSplit(e) ? joinView(dest) : nullptr;
    case Op::Id:
      return dest;
    case Op::Map: {
      if (!isLayoutMap(e)) return nullptr;
      Expr f = e.funs()[0];
      // Every step from the lambda's param up to its body must be invertible.
      if (!invertibleChain(f.body(), f.params()[0])) return nullptr;
      Type elementType = typeOf(e.args()[0]).arrayElement();
      return mapView(dest, elementType, [this, f](const ViewPtr& element) {
        return invertChain(f.body(), f.params()[0], element);
      });
    }
    default:
      return nullptr;
  }
}

bool Generator::invertibleChain(const Expr& body, const Expr& param) {
  if (body.isParam()) return body.paramId() == param.paramId();
  if (!body.isPrim()) return false;
  switch (body.primOp()) {
    case Op::Join:
    case Op::Split:
    case Op::Transpose:
    case Op::Reorder:
    case Op::AsScalar:
    case Op::AsVector:
    case Op::Crop:
    case Op::Id:
      return invertibleChain(body.args()[0], param);
    case Op::Slide:
    case Op::SlideStrict:
      return slideIsSplit(body) && invertibleChain(body.args()[0], param);
    case Op::Map:
      return isLayoutMap(body) && invertibleChain(body.args()[0], param) &&
             invertibleChain(body.funs()[0].body(), body.funs()[0].params()[0]);
    default:
      return false;
  }
}

// A chain of invertible layout steps (join, split, transpose, maps of them) with a transpose
// in it, over a kernel's parallel map: overlapped tiles laid out tile by tile. Read by later
// kernels, such a value is stored in its own order (the kernel writes through the inverse
// views, as for an output), so that readers index it directly instead of through tile-order
// arithmetic (which PoCL compiles into gathers: Canny's suppression reading the magnitude).
bool Generator::reorderedKernelResult(const Expr& e) {
  bool transposes = false;
  Expr node = e;
  while (node.isPrim() && node.primOp() != Op::MapGlb && node.primOp() != Op::MapWrg) {
    switch (node.primOp()) {
      case Op::Transpose:
        transposes = true;
        break;
      case Op::Join:
      case Op::Split:
      case Op::Id:
        break;
      case Op::Map:
        if (!isLayoutMap(node) ||
            !invertibleChain(node.funs()[0].body(), node.funs()[0].params()[0])) {
          return false;
        }
        transposes =
            transposes || containsOp(node.funs()[0], [](Op op) { return op == Op::Transpose; });
        break;
      default:
        return false;
    }
    node = node.args()[0];
  }
  return transposes && node.isPrim();
}

ViewPtr Generator::invertChain(const Expr& body, const Expr& param, const ViewPtr& out) {
  if (body.isParam()) return out;
  return invertChain(body.args()[0], param, inverseLayout(body, out));
}

// The view of a value read inside a kernel.
ViewPtr Generator::genView(const Expr& e) {
  if (!computes(e)) return layoutView(e, [this](const Expr& a) { return genView(a); });
  const Type& type = typeOf(e);
  if (type.isScalar() || type.isVector()) {
    std::string value = genScalar(e);
    std::string name = fresh("v");
    emitter_.line(cTypeName(type) + " " + name + " = " + value + ";");
    noteTemporary(type);
    return variableView(name, type);
  }
  Op op = e.primOp();
  if (isLayoutLike(e)) return layoutView(e, [this](const Expr& a) { return genView(a); });
  if (op == Op::Let) {
    bind(e.funs()[0].params()[0], genView(e.args()[0]));
    return genView(e.funs()[0].body());
  }
  if (op == Op::Apply && e.funs()[0].isLambda()) {
    bindArguments(e.funs()[0], e.args());
    return genView(e.funs()[0].body());
  }
  return materialize(e);
}

}  // namespace weft::opencl
