// The default lowering (codegen/lowering.h): maps become mapGlb or mapSeq, reduces become
// reduceSeq, so that any high-level definition can be generated without optimisation.
//
// Which maps get threads follows how code generation (codegen/kernel_split.cpp) turns the top
// of a definition into kernels. The walk carries where it is:
//   Host        what the definition's result (or a temporary buffer) is written from: the body,
//               and below it layouts that can be written through (join, split, transpose,
//               asVector, asScalar, id, maps of such layouts) and let bodies. A computing map
//               here becomes a kernel: it starts a parallel nest.
//   HostInput   the data argument of a kernel's outermost map or of a top-level let: values
//               read through views (any layout, tuple, fill) and computed into temporary
//               buffers by earlier kernels; a computing expression here is Host again.
//   Spine(k)    the result of a parallel map's function, reached through layouts that can be
//               written through: a computing map here continues the nest below dimension k.
//   Sequential  anything else: inside a kernel's functions off the spine, and whatever the
//               top holds that is neither (a reduce, pad or zip of a computed value, ...): the
//               generator computes that in a single work-item kernel, so its maps are mapSeq.
// The dimension of a map that starts or continues a nest is the number of parallel levels
// from it down (itself included, at most the dimensions still free), minus one, so the
// innermost parallel map is dimension 0 and dimensions decrease from the outside in; a map
// below the third level is sequential. Slide, pad, crop and zip do not continue a nest: a map
// under them is read through a view, not written in place, so giving it threads of the same
// kernel would let work-items read what others write. A reorder does: it is a permutation,
// written through its inverse.
//
// A map whose function only rearranges data (its body is made of layout and tuple primitives,
// id, fill and such maps over params and literals, e.g. the map(transpose) of slide2D)
// computes nothing: it is a view, which code generation reads or writes through without a
// loop of its own, and it stays a high-level map (as in LIFT, where Map(Transpose()) is never
// lowered) and never takes a dimension. A map whose function already holds mapGlb, mapWrg or
// mapLcl stays sequential too, so the lowering never nests a mapGlb in a mapGlb of the same
// dimension nor mixes its mapGlb with an existing work-group mapping. Low-level primitives
// already present are kept; below an existing top-level mapGlb(d) the result of its function
// may continue the nest with dimensions below d.
//
// A let's value that is a copy nest (maps down to id of each element: the copy hoist-relayout
// and materialize make of a view) is the exception to views staying maps: the let names a value
// to be stored, so it is computed by a kernel of its own, mapGlb over its outer levels (at most
// three, the outermost in the highest dimension) and mapSeq below. A re-layout left a view would
// be read through the same strided view it was made to avoid. A definition whose whole body
// computes nothing (a transpose or a pad of its inputs) is copied the same way: as written it
// would be one work-item's copy of the whole result.
#include "codegen/lowering.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "ir/builders.h"
#include "typecheck/typecheck.h"

namespace weft {

namespace {

constexpr int kMaxDimensions = 3;

bool isPureLayout(const Expr& e);

// A lambda whose body only rearranges its params (or captured values).
bool isPureLayoutFunction(const Expr& f) { return f.isLambda() && isPureLayout(f.body()); }

// Whether `e` computes nothing: it is built from params, literals, layout and tuple
// primitives, id, fill and high-level maps of such functions only. This is the test code
// generation applies (a view, not statements), so both agree on what stays a plain map.
bool isPureLayout(const Expr& e) {
  if (!e.isPrim()) return true;
  const Op op = e.primOp();
  const bool layoutLike =
      isRearrangingPrimitive(op) || (op == Op::Map && isPureLayoutFunction(e.funs()[0]));
  return layoutLike && std::all_of(e.args().begin(), e.args().end(), isPureLayout);
}

// Whether the function holds a mapGlb, mapWrg or mapLcl anywhere.
bool holdsThreadMapping(const Expr& f) {
  bool found = false;
  forEachNode(f, [&](const Expr& node) {
    if (node.isPrim(Op::MapGlb) || node.isPrim(Op::MapWrg) || node.isPrim(Op::MapLcl)) {
      found = true;
    }
  });
  return found;
}

// A high-level map the lowering may give threads.
bool mayBeParallel(const Expr& e) {
  return e.isPrim(Op::Map) && !isPureLayoutFunction(e.funs()[0]) &&
         !holdsThreadMapping(e.funs()[0]);
}

// The map that continues a nest from the result expression `e`, if any.
Expr spineMap(const Expr& e) {
  if (!e.isPrim()) return Expr();
  if (isWrittenThroughPrimitive(e.primOp())) return spineMap(e.args()[0]);
  if (mayBeParallel(e)) return e;
  return Expr();
}

// The number of parallel levels of the nest that `map` starts (itself included), uncapped.
int nestDepth(const Expr& map) {
  const Expr& f = map.funs()[0];
  if (!f.isLambda()) return 1;
  Expr next = spineMap(f.body());
  return next ? 1 + nestDepth(next) : 1;
}

// Whether the view map `e` can be written through: its function's body reaches its param
// only through layouts that can be written through (code generation inverts such chains).
bool writableChain(const Expr& body, const Expr& param) {
  if (body.isParam()) return body.paramId() == param.paramId();
  if (!body.isPrim()) return false;
  if (isWrittenThroughPrimitive(body.primOp())) return writableChain(body.args()[0], param);
  if (body.isPrim(Op::Map) && isPureLayoutFunction(body.funs()[0])) {
    const Expr& f = body.funs()[0];
    return f.params().size() == 1 && writableChain(f.body(), f.params()[0]) &&
           writableChain(body.args()[0], param);
  }
  return false;
}

bool isWritableViewMap(const Expr& e) {
  if (!e.isPrim(Op::Map) || !isPureLayoutFunction(e.funs()[0])) return false;
  const Expr& f = e.funs()[0];
  return f.params().size() == 1 && writableChain(f.body(), f.params()[0]);
}

// Primitives through which the host level writes its destination.
bool writableAtHost(const Expr& e) {
  return isWrittenThroughPrimitive(e.primOp()) || isWritableViewMap(e);
}

// Values read through views, whatever their arguments.
bool isViewLike(const Expr& e) {
  const Op op = e.primOp();
  return isRearrangingPrimitive(op) || (op == Op::Map && isPureLayoutFunction(e.funs()[0]));
}

enum class Where { Host, HostInput, Spine, Sequential };

struct Place {
  Where where = Where::Host;
  int freeDimensions = kMaxDimensions;  // Spine: dimensions below the enclosing mapGlb
};

constexpr Place kHost{Where::Host, kMaxDimensions};
constexpr Place kHostInput{Where::HostInput, kMaxDimensions};
constexpr Place kSequential{Where::Sequential, 0};

// Where a nest continues below a mapGlb of dimension `dim`.
Place below(int dim) { return dim > 0 ? Place{Where::Spine, dim} : kSequential; }

class Lowering {
 public:
  Expr lower(const Expr& e, Place place) {
    switch (e.kind()) {
      case ExprKind::Param:
      case ExprKind::Literal:
      case ExprKind::UserFun:  // a scalar body: nothing to lower
        return e;
      case ExprKind::Lambda:
        return e.withBody(lower(e.body(), place));
      case ExprKind::Prim:
        switch (place.where) {
          case Where::Host:
            return lowerAtHost(e);
          case Where::HostInput:
            // Views of computed values read them from buffers; a computed value is written
            // to one by the host level.
            if (isViewLike(e)) return rebuild(e, e.funs(), kHostInput);
            return lowerAtHost(e);
          case Where::Spine:
          case Where::Sequential:
            return lowerInKernel(e, place);
        }
    }
    return e;
  }

  // The copy nest `e`: mapGlb(dim) at this level while dim >= 0, mapSeq below; the data of
  // its outermost map lowered as a kernel's input.
  Expr lowerCopyNest(const Expr& e, int dim, bool outermost = true) {
    const Expr& f = e.funs()[0];
    Expr body = f.body();
    if (body.isPrim(Op::Map)) body = lowerCopyNest(body, dim - 1, false);
    Expr data = outermost ? lower(e.args()[0], kHostInput) : e.args()[0];
    if (dim >= 0) {
      return Expr::prim(Op::MapGlb, {Arith(dim)}, {f.withBody(body)}, {data}, e.attribute(),
                        e.loc());
    }
    return Expr::prim(Op::MapSeq, {}, {f.withBody(body)}, {data}, e.attribute(), e.loc());
  }

 private:
  Expr lowerAtHost(const Expr& e) {
    const Op op = e.primOp();
    if (op == Op::Map) {
      if (mayBeParallel(e)) return parallelMap(e, kMaxDimensions, kHostInput);
      if (isWritableViewMap(e)) return rebuild(e, e.funs(), kHost);
    }
    if (op == Op::MapGlb || op == Op::MapWrg) {
      // An existing kernel: below a mapGlb(d) its result may continue the nest below d.
      std::optional<int64_t> dim = e.nats()[0].constant();
      Place inside = op == Op::MapGlb && dim && *dim > 0 && *dim <= kMaxDimensions
                         ? Place{Where::Spine, static_cast<int>(*dim)}
                         : kSequential;
      return e.withChildren(e.nats(), lowerAll(e.funs(), inside), lowerAll(e.args(), kHostInput));
    }
    if (writableAtHost(e)) return rebuild(e, e.funs(), kHost);
    if (op == Op::Let) {
      std::vector<Expr> values;
      for (const Expr& value : e.args()) {
        const int depth = copyNestDepth(value);
        values.push_back(depth > 0 ? lowerCopyNest(value, std::min(depth, kMaxDimensions) - 1)
                                   : lower(value, kHostInput));
      }
      return e.withChildren(e.nats(), lowerAll(e.funs(), kHost), values);
    }
    // Computed by a single work-item kernel.
    return lowerInKernel(e, kSequential);
  }

  Expr lowerInKernel(const Expr& e, Place place) {
    const Op op = e.primOp();
    if (op == Op::Map) {
      if (isPureLayoutFunction(e.funs()[0])) return rebuild(e, e.funs(), kSequential);
      if (place.where == Where::Spine && mayBeParallel(e)) {
        return parallelMap(e, place.freeDimensions, kSequential);
      }
      return Expr::prim(Op::MapSeq, {}, lowerAll(e.funs(), kSequential),
                        lowerAll(e.args(), kSequential), e.attribute(), e.loc());
    }
    if (op == Op::Reduce) {
      return Expr::prim(Op::ReduceSeq, e.nats(), lowerAll(e.funs(), kSequential),
                        lowerAll(e.args(), kSequential), e.attribute(), e.loc());
    }
    if (isWrittenThroughPrimitive(op)) return rebuild(e, e.funs(), place);
    return e.withChildren(e.nats(), lowerAll(e.funs(), kSequential),
                          lowerAll(e.args(), kSequential));
  }

  // mapGlb with the dimension its nest gives it (at most `freeDimensions` levels); its data
  // argument is lowered at `inputPlace`.
  Expr parallelMap(const Expr& e, int freeDimensions, Place inputPlace) {
    const int dim = std::min(nestDepth(e), freeDimensions) - 1;
    return Expr::prim(Op::MapGlb, {Arith(dim)}, lowerAll(e.funs(), below(dim)),
                      lowerAll(e.args(), inputPlace), e.attribute(), e.loc());
  }

  // `e` with these functions and its data arguments lowered at `place`.
  Expr rebuild(const Expr& e, const std::vector<Expr>& funs, Place place) {
    return e.withChildren(e.nats(), funs, lowerAll(e.args(), place));
  }

  std::vector<Expr> lowerAll(const std::vector<Expr>& exprs, Place place) {
    std::vector<Expr> lowered;
    lowered.reserve(exprs.size());
    for (const Expr& e : exprs) lowered.push_back(lower(e, place));
    return lowered;
  }
};

}  // namespace

namespace {

// The array levels of `type` down to scalar or vector elements; 0 for anything else (tuples
// are stored by the single work-item kernel as before).
int copyableDepth(const Type& type) {
  int depth = 0;
  Type element = type;
  while (element.isArray()) {
    element = element.arrayElement();
    ++depth;
  }
  return element.isScalar() || element.isVector() ? depth : 0;
}

}  // namespace

Definition lowerDefault(const Definition& highLevel) {
  Definition lowered = highLevel;
  if (highLevel.function.isNull()) return lowered;
  Lowering lowering;
  const Expr& body = highLevel.function.body();
  // A body that computes nothing (a transpose, a join, a pad of the inputs) is a view: written
  // as it is, the whole result would be copied by one work-item. It is copied by a kernel of
  // its own instead, mapGlb over its outer levels, as a let's copy nest is.
  if (isPureLayout(body)) {
    Type type;
    try {
      type = typecheckRemembered(highLevel)->typeOf(body);
    } catch (const std::exception&) {
      // not typed here: lowered as written, and generation reports the error
    }
    if (const int depth = type ? copyableDepth(type) : 0; depth > 0) {
      lowered.function = highLevel.function.withBody(
          lowering.lowerCopyNest(copyOf(type, body), std::min(depth, kMaxDimensions) - 1));
      return lowered;
    }
  }
  lowered.function = lowering.lower(highLevel.function, kHost);
  return lowered;
}

}  // namespace weft
