// A position in a source file, carried by expression nodes and constraints so that every
// parse error, type error and unsatisfiable constraint can point at file:line:column.
#pragma once

#include <memory>
#include <string>

namespace weft {

// Where a node came from in a source file (line and column are 1-based; 0 = unknown).
struct SourceLoc {
  std::shared_ptr<const std::string> file;
  int line = 0;
  int column = 0;
  bool known() const { return line > 0; }
  std::string toString() const;  // "file:line:column", "line:column" without file, or "<unknown>"
};

}  // namespace weft
