// Implementation of the .npy reader and writer declared in ir/npy.h.
// An .npy file is: the magic "\x93NUMPY", a version (major, minor byte), the
// header length (uint16 LE in version 1.0, uint32 LE in 2.0/3.0), a header
// that is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by '\n', then the raw element data.
// The header is read with a small recursive-descent parser for Python
// literals (strings, ints, True/False/None, tuples and lists) rather than
// pattern matching, so spacing, key order, quoting style, trailing commas and
// old 'L' integer suffixes are all handled, and anything else yields an error
// that says where the header went wrong.
#include "ir/npy.h"

#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

namespace weft {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr bool kLittleHost = std::endian::native == std::endian::little;
// Far above anything numpy writes (headers are a few hundred bytes); guards
// against allocating gigabytes for a corrupt length field.
constexpr uint32_t kMaxHeaderSize = 16u << 20;

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw NpyError(path + ": " + message);
}

// ---- little-endian encoding ------------------------------------------------

template <class T>
T loadLE(const unsigned char* p) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t,
                               std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>>;
  U v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<U>(p[i]) << (8 * i);
  return std::bit_cast<T>(v);
}

template <class T>
void storeLE(T value, unsigned char* p) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t,
                               std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>>;
  U v = std::bit_cast<U>(value);
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

// ---- Python literal parser for the header -----------------------------------

struct PyValue {
  enum class Kind { String, Int, Bool, None, Tuple, List };
  Kind kind = Kind::None;
  std::string str;
  int64_t integer = 0;
  bool boolean = false;
  std::vector<PyValue> items;
};

// A Python-like rendering, used in error messages.
std::string repr(const PyValue& v) {
  switch (v.kind) {
    case PyValue::Kind::String:
      return "'" + v.str + "'";
    case PyValue::Kind::Int:
      return std::to_string(v.integer);
    case PyValue::Kind::Bool:
      return v.boolean ? "True" : "False";
    case PyValue::Kind::None:
      return "None";
    case PyValue::Kind::Tuple:
    case PyValue::Kind::List: {
      bool tuple = v.kind == PyValue::Kind::Tuple;
      std::string s = tuple ? "(" : "[";
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) s += ", ";
        s += repr(v.items[i]);
      }
      if (tuple && v.items.size() == 1) s += ",";
      return s + (tuple ? ")" : "]");
    }
  }
  return "?";
}

struct HeaderSyntaxError : std::runtime_error {
  using runtime_error::runtime_error;
};

class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  // Parses the whole header: one dict literal, then only whitespace.
  std::vector<std::pair<std::string, PyValue>> parseDict() {
    std::vector<std::pair<std::string, PyValue>> entries;
    skipSpace();
    expect('{');
    while (true) {
      skipSpace();
      if (consume('}')) break;
      PyValue key = parseValue(0);
      if (key.kind != PyValue::Kind::String) error("dict key must be a string, found " + repr(key));
      skipSpace();
      expect(':');
      PyValue value = parseValue(0);
      entries.emplace_back(key.str, std::move(value));
      skipSpace();
      if (consume('}')) break;
      expect(',');
    }
    skipSpace();
    if (pos_ != text_.size()) error("unexpected text after the closing '}'");
    return entries;
  }

 private:
  static constexpr int kMaxDepth = 32;

  [[noreturn]] void error(const std::string& message) const {
    throw HeaderSyntaxError(message + " at offset " + std::to_string(pos_));
  }

  void skipSpace() {
    // numpy pads with spaces and ends with '\n'; very old writers used NULs.
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r' ||
                                   text_[pos_] == '\0'))
      ++pos_;
  }

  bool consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!consume(c)) {
      std::string found = pos_ < text_.size() ? std::string("'") + text_[pos_] + "'" : "end";
      error(std::string("expected '") + c + "', found " + found);
    }
  }

  PyValue parseValue(int depth) {
    if (depth > kMaxDepth) error("literal nested too deeply");
    skipSpace();
    if (pos_ >= text_.size()) error("unexpected end of header");
    char c = text_[pos_];
    if (c == '\'' || c == '"') return parseString();
    if (c == '(' || c == '[') return parseSequence(depth);
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return parseInt();
    if (std::isalpha(static_cast<unsigned char>(c))) return parseName();
    error(std::string("unexpected character '") + c + "'");
  }

  PyValue parseString() {
    char quote = text_[pos_++];
    PyValue v;
    v.kind = PyValue::Kind::String;
    while (true) {
      if (pos_ >= text_.size()) error("unterminated string");
      char c = text_[pos_++];
      if (c == quote) break;
      if (c == '\\') {
        if (pos_ >= text_.size()) error("unterminated string");
        c = text_[pos_++];
      }
      v.str += c;
    }
    return v;
  }

  PyValue parseInt() {
    bool negative = false;
    if (text_[pos_] == '-' || text_[pos_] == '+') negative = text_[pos_++] == '-';
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') error("expected digits");
    uint64_t magnitude = 0;
    const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      magnitude = magnitude * 10 + static_cast<uint64_t>(text_[pos_++] - '0');
      if (magnitude > limit) error("integer too large");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;  // Python 2
    PyValue v;
    v.kind = PyValue::Kind::Int;
    v.integer = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return v;
  }

  PyValue parseName() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    std::string_view name = text_.substr(start, pos_ - start);
    PyValue v;
    if (name == "True" || name == "False") {
      v.kind = PyValue::Kind::Bool;
      v.boolean = name == "True";
    } else if (name == "None") {
      v.kind = PyValue::Kind::None;
    } else {
      pos_ = start;
      error("unknown name '" + std::string(name) + "'");
    }
    return v;
  }

  PyValue parseSequence(int depth) {
    char open = text_[pos_++];
    char close = open == '(' ? ')' : ']';
    PyValue v;
    v.kind = open == '(' ? PyValue::Kind::Tuple : PyValue::Kind::List;
    while (true) {
      skipSpace();
      if (consume(close)) break;
      v.items.push_back(parseValue(depth + 1));
      skipSpace();
      if (consume(close)) break;
      expect(',');
    }
    return v;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// ---- header semantics --------------------------------------------------------

enum class StoredType { F4, I4, F8, I8, B1 };

struct Header {
  StoredType type = StoredType::F4;
  std::vector<int64_t> shape;
};

size_t storedSize(StoredType t) {
  switch (t) {
    case StoredType::F4:
    case StoredType::I4:
      return 4;
    case StoredType::F8:
    case StoredType::I8:
      return 8;
    case StoredType::B1:
      return 1;
  }
  return 0;
}

constexpr const char* kSupported = "supported: '<f4', '<i4', '<f8', '<i8', '|b1'";

StoredType decodeDescr(const std::string& path, const PyValue& descr) {
  if (descr.kind != PyValue::Kind::String)
    fail(path, "unsupported dtype: descr " + repr(descr) +
                   " is a structured or non-simple dtype (" + kSupported + ")");
  const std::string& d = descr.str;
  if (d.size() >= 2) {
    char order = d[0];
    std::string code = d.substr(1);
    bool little = order == '<' || (order == '=' && kLittleHost);
    bool big = order == '>' || (order == '=' && !kLittleHost);
    if (code == "b1" && (order == '|' || little || big)) return StoredType::B1;
    if (big && (code == "f4" || code == "i4" || code == "f8" || code == "i8"))
      fail(path, "big-endian data is not supported (descr '" + d +
                     "'); save it little-endian, e.g. arr.astype('<" + code + "')");
    if (little) {
      if (code == "f4") return StoredType::F4;
      if (code == "i4") return StoredType::I4;
      if (code == "f8") return StoredType::F8;
      if (code == "i8") return StoredType::I8;
    }
  }
  fail(path, "unsupported dtype '" + d + "' (" + kSupported + ")");
}

Header interpretHeader(const std::string& path, std::string_view text) {
  std::vector<std::pair<std::string, PyValue>> entries;
  try {
    entries = HeaderParser(text).parseDict();
  } catch (const HeaderSyntaxError& e) {
    fail(path, std::string("malformed header: ") + e.what());
  }
  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape = nullptr;
  for (const auto& [key, value] : entries) {
    const PyValue** slot = key == "descr"           ? &descr
                           : key == "fortran_order" ? &fortran
                           : key == "shape"         ? &shape
                                                    : nullptr;
    if (!slot) fail(path, "malformed header: unexpected key '" + key + "'");
    if (*slot) fail(path, "malformed header: duplicate key '" + key + "'");
    *slot = &value;
  }
  if (!descr) fail(path, "malformed header: missing key 'descr'");
  if (!fortran) fail(path, "malformed header: missing key 'fortran_order'");
  if (!shape) fail(path, "malformed header: missing key 'shape'");

  if (fortran->kind != PyValue::Kind::Bool)
    fail(path, "malformed header: 'fortran_order' must be True or False, found " + repr(*fortran));

  Header h;
  h.type = decodeDescr(path, *descr);
  if (fortran->boolean)
    fail(path, "fortran_order=True (column-major) arrays are not supported; "
               "save a C-ordered array, e.g. np.ascontiguousarray(arr)");

  if (shape->kind != PyValue::Kind::Tuple && shape->kind != PyValue::Kind::List)
    fail(path, "malformed header: 'shape' must be a tuple, found " + repr(*shape));
  for (const PyValue& dim : shape->items) {
    if (dim.kind != PyValue::Kind::Int || dim.integer < 0)
      fail(path, "malformed header: bad shape " + repr(*shape));
    h.shape.push_back(dim.integer);
  }
  return h;
}

std::string shapeString(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// Product of extents, or nullopt if it (or its size in 8-byte elements)
// would overflow.
std::optional<int64_t> checkedCount(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  const int64_t limit = std::numeric_limits<int64_t>::max() / 8;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > limit / d) return std::nullopt;
    n *= d;
  }
  return n;
}

const char* descrName(StoredType t) {
  switch (t) {
    case StoredType::F4:
      return "<f4";
    case StoredType::I4:
      return "<i4";
    case StoredType::F8:
      return "<f8";
    case StoredType::I8:
      return "<i8";
    case StoredType::B1:
      return "|b1";
  }
  return "?";
}

// Reads exactly `bytes` bytes into dst or fails with a truncation message.
void readData(std::ifstream& in, const std::string& path, char* dst, size_t bytes,
              const Header& h) {
  in.read(dst, static_cast<std::streamsize>(bytes));
  size_t got = static_cast<size_t>(in.gcount());
  if (got != bytes)
    fail(path, "truncated data: shape " + shapeString(h.shape) + " of '" + descrName(h.type) +
                   "' needs " + std::to_string(bytes) + " bytes after the header, file has " +
                   std::to_string(got));
}

}  // namespace

int64_t NpyArray::elementCount() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

NpyArray readNpy(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, not a .npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open for reading: ") + std::strerror(errno));

  unsigned char pre[kMagicSize + 2];
  in.read(reinterpret_cast<char*>(pre), sizeof pre);
  if (static_cast<size_t>(in.gcount()) < kMagicSize ||
      std::memcmp(pre, kMagic, kMagicSize) != 0)
    fail(path, "not a .npy file (bad magic; expected \\x93NUMPY)");
  if (in.gcount() != sizeof pre) fail(path, "truncated header (no format version)");

  int major = pre[kMagicSize], minor = pre[kMagicSize + 1];
  uint32_t headerLen = 0;
  if (major == 1 && minor == 0) {
    unsigned char len[2];
    in.read(reinterpret_cast<char*>(len), 2);
    if (in.gcount() != 2) fail(path, "truncated header (no header length)");
    headerLen = loadLE<uint16_t>(len);
  } else if ((major == 2 || major == 3) && minor == 0) {
    unsigned char len[4];
    in.read(reinterpret_cast<char*>(len), 4);
    if (in.gcount() != 4) fail(path, "truncated header (no header length)");
    headerLen = loadLE<uint32_t>(len);
    if (headerLen > kMaxHeaderSize)
      fail(path, "header length " + std::to_string(headerLen) + " is implausibly large");
  } else {
    fail(path, "unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }

  std::string headerText(headerLen, '\0');
  in.read(headerText.data(), headerLen);
  if (static_cast<uint32_t>(in.gcount()) != headerLen)
    fail(path, "truncated header: expected " + std::to_string(headerLen) + " bytes, found " +
                   std::to_string(in.gcount()));
  Header h = interpretHeader(path, headerText);

  std::optional<int64_t> count = checkedCount(h.shape);
  if (!count) fail(path, "shape " + shapeString(h.shape) + " is too large");
  const size_t n = static_cast<size_t>(*count);

  NpyArray a;
  a.shape = h.shape;
  switch (h.type) {
    case StoredType::F4:
    case StoredType::I4: {
      bool isFloat = h.type == StoredType::F4;
      a.dtype = isFloat ? NpyDType::Float32 : NpyDType::Int32;
      char* dst;
      if (isFloat) {
        a.f32.resize(n);
        dst = reinterpret_cast<char*>(a.f32.data());
      } else {
        a.i32.resize(n);
        dst = reinterpret_cast<char*>(a.i32.data());
      }
      readData(in, path, dst, n * 4, h);
      if constexpr (!kLittleHost) {
        auto* bytes = reinterpret_cast<unsigned char*>(dst);
        for (size_t i = 0; i < n; ++i) {
          if (isFloat)
            a.f32[i] = loadLE<float>(bytes + 4 * i);
          else
            a.i32[i] = loadLE<int32_t>(bytes + 4 * i);
        }
      }
      break;
    }
    case StoredType::F8:
    case StoredType::I8:
    case StoredType::B1: {
      const size_t item = storedSize(h.type);
      std::vector<unsigned char> raw(n * item);
      readData(in, path, reinterpret_cast<char*>(raw.data()), raw.size(), h);
      if (h.type == StoredType::F8) {
        a.dtype = NpyDType::Float32;
        a.f32.resize(n);
        for (size_t i = 0; i < n; ++i)
          a.f32[i] = static_cast<float>(loadLE<double>(raw.data() + 8 * i));
      } else if (h.type == StoredType::I8) {
        a.dtype = NpyDType::Int32;
        a.i32.resize(n);
        for (size_t i = 0; i < n; ++i) {
          int64_t v = loadLE<int64_t>(raw.data() + 8 * i);
          if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
            fail(path, "'<i8' element " + std::to_string(i) + " = " + std::to_string(v) +
                           " does not fit in int32");
          a.i32[i] = static_cast<int32_t>(v);
        }
      } else {
        a.dtype = NpyDType::Int32;
        a.i32.resize(n);
        for (size_t i = 0; i < n; ++i) a.i32[i] = raw[i] != 0 ? 1 : 0;
      }
      break;
    }
  }
  return a;
}

void writeNpy(const std::string& path, const NpyArray& a) {
  std::optional<int64_t> count = checkedCount(a.shape);
  if (!count) fail(path, "cannot write: invalid shape " + shapeString(a.shape));
  const size_t n = static_cast<size_t>(*count);
  const bool isFloat = a.dtype == NpyDType::Float32;
  const size_t have = isFloat ? a.f32.size() : a.i32.size();
  const size_t other = isFloat ? a.i32.size() : a.f32.size();
  if (have != n)
    fail(path, std::string("cannot write: shape ") + shapeString(a.shape) + " has " +
                   std::to_string(n) + " elements but " + (isFloat ? "f32" : "i32") + " holds " +
                   std::to_string(have));
  if (other != 0)
    fail(path, std::string("cannot write: dtype is ") + (isFloat ? "Float32" : "Int32") +
                   " but " + (isFloat ? "i32" : "f32") + " is not empty");

  std::string header = std::string("{'descr': '") + (isFloat ? "<f4" : "<i4") +
                       "', 'fortran_order': False, 'shape': " + shapeString(a.shape) + ", }";
  // Version 1.0 stores the header length in 2 bytes; fall back to 2.0 for
  // (absurdly many-dimensional) headers that do not fit.
  size_t preamble = kMagicSize + 2 + 2;
  int major = 1;
  size_t total = preamble + header.size() + 1;
  if ((total + 63) / 64 * 64 - preamble > std::numeric_limits<uint16_t>::max()) {
    major = 2;
    preamble = kMagicSize + 2 + 4;
    total = preamble + header.size() + 1;
  }
  size_t padded = (total + 63) / 64 * 64;  // data starts 64-byte aligned
  header.append(padded - total, ' ');
  header += '\n';

  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(major);
  out += '\0';
  unsigned char len[4];
  if (major == 1) {
    storeLE(static_cast<uint16_t>(header.size()), len);
    out.append(reinterpret_cast<char*>(len), 2);
  } else {
    storeLE(static_cast<uint32_t>(header.size()), len);
    out.append(reinterpret_cast<char*>(len), 4);
  }
  out += header;

  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) fail(path, std::string("cannot open for writing: ") + std::strerror(errno));
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  const char* data =
      isFloat ? reinterpret_cast<const char*>(a.f32.data()) : reinterpret_cast<const char*>(a.i32.data());
  if constexpr (kLittleHost) {
    f.write(data, static_cast<std::streamsize>(n * 4));
  } else {
    std::vector<unsigned char> bytes(n * 4);
    for (size_t i = 0; i < n; ++i) {
      if (isFloat)
        storeLE(a.f32[i], bytes.data() + 4 * i);
      else
        storeLE(a.i32[i], bytes.data() + 4 * i);
    }
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  f.close();
  if (!f) fail(path, std::string("write failed: ") + std::strerror(errno));
}

std::string shapeToString(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t index = 0; index < shape.size(); ++index) {
    if (index > 0) text += ", ";
    text += std::to_string(shape[index]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

}  // namespace weft
