// What the commands share before they diverge: choosing the definition of a parsed weft file
// (--def NAME or the last one), reading the --size NAME=VALUE options against the size
// variables the definition mentions, NAME=INTEGER items, and a layer's structure choices. Kept in one place so that both commands
// select definitions and reject bad --size values with the same rules and messages.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "ir/arith.h"
#include "ir/expr.h"

namespace weft::cli {

// The definition named `name` of `program` (read from `file`), or the last one when `name`
// is empty; it must be a function. Throws std::runtime_error naming the file; `verb` says
// what the command does with it ("run", "compile") in the message for a file with no `def`.
const Definition& chooseFunctionDefinition(const Program& program, const std::string& file,
                                           const std::string& name, const std::string& verb);

// The size variables and tuning parameters the definition's function mentions: in its
// parameter types (lambda parameters included), size arguments and reorder strides.
std::set<std::string> mentionedSizeNames(const Definition& definition);

// The --size NAME=INTEGER options as a binding. Throws std::runtime_error for a malformed
// option or a NAME not in `known` (the message lists `known`).
ArithBinding parseSizeOptions(const std::vector<std::string>& options, const Definition& definition,
                              const std::set<std::string>& known);

// Checks the --size values before anything runs: each within its declared range (undeclared
// sizes are at least 1), and every input small enough for the kernels' int indexing (at most
// 2^31 - 1 values). Throws std::runtime_error naming the option, the range or the input.
void checkSizeValues(const Definition& definition, const ArithBinding& sizes);

// "NAME=INTEGER" split into its name and value; nullopt when the text is not of that form
// (no '=', an empty name, or a value that is not a whole integer).
std::optional<std::pair<std::string, int64_t>> parseNameEqualsInteger(const std::string& text);


}  // namespace weft::cli
