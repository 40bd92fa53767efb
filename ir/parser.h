// Parser of the weft text format.
//
// A file holds user functions and definitions, close to the paper's notation:
//
//   fun mult(x: float, y: float): float = x * y
//   def dot(a: [float]N, b: [float]N) =
//     reduce(0.0f, (acc, p) -> acc + mult(p._0, p._1), zip(a, b))
//
// Types: float int bool, vectors float4 int8 ..., tuples (T, U), arrays [T]n where n is an
// arithmetic expression over integers and size names (parenthesised unless atomic, e.g.
// [float](N/4)). Lengths are written with C precedence: + - * / %, min(a, b), max(a, b).
// Identifiers used in lengths that are not otherwise bound are size variables, ranging over
// [1, inf) unless the definition declares their range in brackets after its name:
//   def conv[P >= 0, S >= 1, 1 <= V <= 16, N](...) = ...
// with items NAME, NAME >= c, c <= NAME, NAME <= d and c <= NAME <= d for integer constants
// (lower bound 1 by default and at least 0); every use of a declared name in that definition
// is the declared variable (Definition::sizeDeclarations).
// Expressions: primitive calls by name with the argument layout of ir/primitives.def
// (map(f, x), split(4, x), pad(1, 1, clamp, x), pad(1, 1, constant(0.0f), x),
// reorder(stride(4), x), mapWrg(0, f, x), array(1.0f, 0.0f, -1.0f): an array of the values
// given), user function calls f(a, b), lambdas
// `x -> e` and `(a, b) -> e`, tuples (a, b), projection p._0, scalar operators with C
// precedence including `c ? a : b`, literals 1.5f 1.5 2 true false, and the 2D forms
// map2D(f, x), slide2D(size, step, x), slide2D(size1, size2, step1, step2, x),
// pad2D(l, r, t, b, boundary, x), pad2D(p, boundary, x), which expand into 1D primitives as in
// the paper's section 3.1.1 (ir/builders.h). Where a function is expected, a user function's
// name stands for the UserFun itself (map(mult, x)), and a primitive or 2D form written
// without its data arguments is eta-expanded: map(id, x) is map(x -> id(x), x), map(split(4), x)
// is map(x -> split(4, x), x), reduce(0.0f, add, x) takes (x, y) -> add(x, y).
// Comments: `//` to end of line and `/* */`.
#pragma once

#include <stdexcept>
#include <string>

#include "ir/expr.h"
#include "ir/source_loc.h"

namespace weft {

// A syntax error: `what()` is "file:line:column: error: expected X, found Y".
struct ParseError : std::runtime_error {
  ParseError(SourceLoc loc, const std::string& message);
  SourceLoc loc;
  std::string message;  // without the location prefix
};

// Parses a whole file's text; `fileName` is used in locations.
Program parseProgram(const std::string& text, const std::string& fileName = "<input>");
// Reads and parses a file (throws ParseError with the file name if it cannot be read).
Program parseFile(const std::string& path);
// Parses a single expression (for tests and the command line), a value or a lambda; free
// names that are not primitives must be declared in `context`'s user functions.
Expr parseExpr(const std::string& text, const Program& context = {},
               const std::string& fileName = "<input>");
// Parses a type, e.g. "[[float]4](N/4)".
Type parseType(const std::string& text, const std::string& fileName = "<input>");
// Parses an arithmetic expression over size names (all of kind Size).
Arith parseArith(const std::string& text, const std::string& fileName = "<input>");

}  // namespace weft
