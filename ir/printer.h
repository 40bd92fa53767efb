// Printer of the weft text format: the inverse of ir/parser.h.
//
// parseProgram(printProgram(p)) is structurally equal (modulo renaming of bound params) to p
// for every program, including those built by C++ builders and rewrite rules. Bound params
// whose names clash are given unique names (x, x_1, ...). Output is indented so that nested
// calls stay readable.
#pragma once

#include <string>

#include "ir/expr.h"

namespace weft {

std::string printProgram(const Program& program);
std::string printDefinition(const Definition& definition);
std::string printUserFun(const Expr& userFun);
// One expression; `multiline` breaks long calls over indented lines.
std::string printExpr(const Expr& e, bool multiline = false);

}  // namespace weft
