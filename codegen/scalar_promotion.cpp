// Scalar promotion of private arrays: see scalar_promotion.h.
#include "codegen/scalar_promotion.h"

#include <cctype>

namespace weft::opencl {

namespace {

// One use of a private array's name as a whole C identifier in a line: [begin, end) in the
// line; `constantIndex` when `[digits]` follows (the use then ends after the `]`).
struct ArrayUse {
  size_t begin = 0, end = 0;
  bool constantIndex = false;
  std::string index;
};

// The uses of `name` in `line`, left to right. A plain scan rather than std::regex with word
// boundaries, which is too slow on the thousands of lines of an unrolled fused tile.
std::vector<ArrayUse> usesOfArray(const std::string& line, const std::string& name) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  std::vector<ArrayUse> uses;
  size_t at = line.find(name);
  while (at != std::string::npos) {
    const size_t end = at + name.size();
    if ((at > 0 && word(line[at - 1])) || (end < line.size() && word(line[end]))) {
      at = line.find(name, at + 1);
      continue;
    }
    ArrayUse use;
    use.begin = at;
    use.end = end;
    if (end < line.size() && line[end] == '[') {
      size_t digits = end + 1;
      auto digit = [&](size_t i) { return std::isdigit(static_cast<unsigned char>(line[i])) != 0; };
      while (digits < line.size() && digit(digits)) ++digits;
      if (digits > end + 1 && digits < line.size() && line[digits] == ']') {
        use.constantIndex = true;
        use.index = line.substr(end + 1, digits - end - 1);
        use.end = digits + 1;
      }
    }
    uses.push_back(use);
    at = line.find(name, use.end);
  }
  return uses;
}

}  // namespace

void promotePrivateArrays(std::vector<std::string>& lines, const std::vector<PrivateArray>& arrays,
                          const std::set<std::string>& indexedAtRunTime) {
  for (const PrivateArray& array : arrays) {
    if (indexedAtRunTime.count(array.name)) continue;
    const std::string declaration =
        array.element + " " + array.name + "[" + std::to_string(array.size) + "];";
    for (std::string& line : lines) {
      size_t at = line.find(declaration);
      if (at != std::string::npos) {
        std::string scalars = array.element + " ";
        for (int64_t i = 0; i < array.size; ++i) {
          scalars += (i ? ", " : "") + array.name + "_" + std::to_string(i);
        }
        line.replace(at, declaration.size(), scalars + ";");
        continue;
      }
      const std::vector<ArrayUse> uses = usesOfArray(line, array.name);
      if (uses.empty()) continue;
      std::string renamed;
      size_t copied = 0;
      for (const ArrayUse& use : uses) {
        renamed += line.substr(copied, use.begin - copied) + array.name + "_" + use.index;
        copied = use.end;
      }
      line = renamed + line.substr(copied);
    }
  }
}

}  // namespace weft::opencl
