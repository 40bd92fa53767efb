// Tests for the .npy reader/writer (ir/npy.h). Besides round trips through
// weft's own writer, they check interoperability both ways with real NumPy:
// fixtures are produced at test time by Debian's /usr/bin/python3 with numpy
// (installed by scripts/setup.sh; WEFT_PYTHON overrides the interpreter), and
// NumPy loads and checks files that weft wrote. Every error path is checked
// for a message that names the file and the problem.
#include "ir/npy.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using weft::NpyArray;
using weft::NpyDType;
using weft::NpyError;
using weft::readNpy;
using weft::writeNpy;

namespace {

// A scratch directory for this test process, removed at exit.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("weft_test_npy_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const fs::path& tmp() {
  static TempDir dir;
  return dir.path;
}

std::string tmpFile(const std::string& name) { return (tmp() / name).string(); }

std::string python() {
  const char* p = std::getenv("WEFT_PYTHON");
  return p && *p ? p : "/usr/bin/python3";
}

// Writes `code` to a script file and runs it with the numpy-enabled python,
// passing the scratch directory as argv[1]. Returns the exit status.
int runPython(const std::string& name, const std::string& code) {
  std::string script = tmpFile(name + ".py");
  std::ofstream(script) << code;
  std::string cmd = python() + " '" + script + "' '" + tmp().string() + "'";
  return std::system(cmd.c_str());
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A hand-made .npy file: version 1.0 preamble, `dict` as the header text
// (padded to 64 bytes and ended by '\n' as numpy does), then `data`.
std::string rawNpy(const std::string& dict, const std::string& data, int major = 1) {
  size_t pre = major == 1 ? 10 : 12;
  std::string header = dict;
  size_t total = pre + header.size() + 1;
  header.append((total + 63) / 64 * 64 - total, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  size_t len = header.size();
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  return out + header + data;
}

// `n` little-endian float32 values 0, 1, 2, ...
std::string f32Data(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    float f = static_cast<float>(i);
    s.append(reinterpret_cast<const char*>(&f), 4);
  }
  return s;
}

// The message of the NpyError thrown by readNpy(path).
std::string readError(const std::string& path) {
  try {
    readNpy(path);
  } catch (const NpyError& e) {
    return e.what();
  }
  return "<no error>";
}

// A doctest matcher for "the exception message contains `part`".
doctest::Contains has(const std::string& part) { return doctest::Contains(part.c_str()); }

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

const char* kNumpyFixtures = R"PY(
import sys
import numpy as np
from numpy.lib import format as npfmt
d = sys.argv[1]
np.save(f"{d}/np_f4_2x3.npy", (np.arange(6, dtype="<f4") * 0.5).reshape(2, 3))
np.save(f"{d}/np_i4_3.npy", np.array([-7, 0, 2147483647], dtype="<i4"))
np.save(f"{d}/np_f8_4.npy", np.array([1.5, -2.25, 1e10, 0.1], dtype="<f8"))
np.save(f"{d}/np_i8_3.npy", np.array([-2147483648, 5, 2147483647], dtype="<i8"))
np.save(f"{d}/np_b1_2x2.npy", np.array([[True, False], [False, True]]))
np.save(f"{d}/np_f4_0d.npy", np.array(3.25, dtype="<f4"))
np.save(f"{d}/np_f4_0x4.npy", np.zeros((0, 4), dtype="<f4"))
with open(f"{d}/np_v2_i4_2x3x4.npy", "wb") as f:
    npfmt.write_array(f, np.arange(24, dtype="<i4").reshape(2, 3, 4), version=(2, 0))
np.save(f"{d}/np_fortran.npy", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))
np.save(f"{d}/np_big_endian.npy", np.arange(3, dtype=">f4"))
np.save(f"{d}/np_u2.npy", np.arange(3, dtype="<u2"))
np.save(f"{d}/np_c8.npy", np.arange(3, dtype="<c8"))
np.save(f"{d}/np_i8_overflow.npy", np.array([1, 2**40], dtype="<i8"))
np.save(f"{d}/np_structured.npy", np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")]))
)PY";

// Generates the numpy-written fixtures once per process.
void requireNumpyFixtures() {
  static bool done = false;
  if (done) return;
  REQUIRE_MESSAGE(runPython("make_fixtures", kNumpyFixtures) == 0,
                  "generating fixtures with ", python(), " failed (is python3-numpy installed? "
                  "run scripts/setup.sh)");
  done = true;
}

NpyArray f32Array(std::vector<int64_t> shape, std::vector<float> values) {
  NpyArray a;
  a.dtype = NpyDType::Float32;
  a.shape = std::move(shape);
  a.f32 = std::move(values);
  return a;
}

NpyArray i32Array(std::vector<int64_t> shape, std::vector<int32_t> values) {
  NpyArray a;
  a.dtype = NpyDType::Int32;
  a.shape = std::move(shape);
  a.i32 = std::move(values);
  return a;
}

void checkSame(const NpyArray& a, const NpyArray& b) {
  CHECK(a.dtype == b.dtype);
  CHECK(a.shape == b.shape);
  CHECK(a.f32 == b.f32);
  CHECK(a.i32 == b.i32);
}

}  // namespace

TEST_CASE("elementCount") {
  CHECK(f32Array({}, {1.0f}).elementCount() == 1);
  CHECK(f32Array({0, 4}, {}).elementCount() == 0);
  CHECK(f32Array({2, 3, 4}, std::vector<float>(24)).elementCount() == 24);
}

TEST_CASE("round trip through writeNpy and readNpy") {
  SUBCASE("float32 1-d") {
    NpyArray a = f32Array({5}, {0.0f, -1.5f, 3.25f, 1e30f, -0.0f});
    writeNpy(tmpFile("rt_f32_1d.npy"), a);
    checkSame(readNpy(tmpFile("rt_f32_1d.npy")), a);
  }
  SUBCASE("float32 3-d") {
    std::vector<float> v(2 * 3 * 4);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.125f - 1.0f;
    NpyArray a = f32Array({2, 3, 4}, v);
    writeNpy(tmpFile("rt_f32_3d.npy"), a);
    checkSame(readNpy(tmpFile("rt_f32_3d.npy")), a);
  }
  SUBCASE("float32 0-d") {
    NpyArray a = f32Array({}, {42.5f});
    writeNpy(tmpFile("rt_f32_0d.npy"), a);
    checkSame(readNpy(tmpFile("rt_f32_0d.npy")), a);
  }
  SUBCASE("int32 1-d") {
    NpyArray a = i32Array({4}, {INT32_MIN, -1, 0, INT32_MAX});
    writeNpy(tmpFile("rt_i32_1d.npy"), a);
    checkSame(readNpy(tmpFile("rt_i32_1d.npy")), a);
  }
  SUBCASE("int32 3-d") {
    std::vector<int32_t> v(3 * 1 * 5);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i) * 7 - 50;
    NpyArray a = i32Array({3, 1, 5}, v);
    writeNpy(tmpFile("rt_i32_3d.npy"), a);
    checkSame(readNpy(tmpFile("rt_i32_3d.npy")), a);
  }
  SUBCASE("int32 0-d") {
    NpyArray a = i32Array({}, {-42});
    writeNpy(tmpFile("rt_i32_0d.npy"), a);
    checkSame(readNpy(tmpFile("rt_i32_0d.npy")), a);
  }
  SUBCASE("empty array") {
    NpyArray a = i32Array({0, 3}, {});
    writeNpy(tmpFile("rt_i32_empty.npy"), a);
    checkSame(readNpy(tmpFile("rt_i32_empty.npy")), a);
  }
}

TEST_CASE("written files have numpy's layout: version 1.0, 64-byte aligned data") {
  writeNpy(tmpFile("layout.npy"), f32Array({2, 3}, std::vector<float>(6, 1.0f)));
  std::string bytes = readBytes(tmpFile("layout.npy"));
  REQUIRE(bytes.size() > 10);
  CHECK(bytes.substr(0, 6) == "\x93NUMPY");
  CHECK(bytes[6] == 1);
  CHECK(bytes[7] == 0);
  size_t headerLen = static_cast<unsigned char>(bytes[8]) |
                     (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  CHECK((10 + headerLen) % 64 == 0);
  CHECK(bytes[10 + headerLen - 1] == '\n');
  CHECK(bytes.size() == 10 + headerLen + 6 * 4);
}

TEST_CASE("numpy reads what weft writes") {
  std::vector<float> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.25f;
  writeNpy(tmpFile("ours_f32_2x3x4.npy"), f32Array({2, 3, 4}, v));
  writeNpy(tmpFile("ours_i32_0d.npy"), i32Array({}, {-42}));
  writeNpy(tmpFile("ours_i32_5.npy"), i32Array({5}, {1, 2, 3, 4, INT32_MIN}));
  writeNpy(tmpFile("ours_f32_0x3.npy"), f32Array({0, 3}, {}));
  const char* check = R"PY(
import sys
import numpy as np
d = sys.argv[1]
a = np.load(f"{d}/ours_f32_2x3x4.npy")
assert a.dtype == np.float32 and a.shape == (2, 3, 4), (a.dtype, a.shape)
assert (a == (np.arange(24, dtype=np.float32) * 0.25).reshape(2, 3, 4)).all()
b = np.load(f"{d}/ours_i32_0d.npy")
assert b.dtype == np.int32 and b.shape == () and b == -42, (b.dtype, b.shape, b)
c = np.load(f"{d}/ours_i32_5.npy")
assert c.dtype == np.int32 and c.tolist() == [1, 2, 3, 4, -2**31], c
e = np.load(f"{d}/ours_f32_0x3.npy")
assert e.dtype == np.float32 and e.shape == (0, 3), (e.dtype, e.shape)
)PY";
  CHECK(runPython("check_ours", check) == 0);
}

TEST_CASE("reading files written by numpy") {
  requireNumpyFixtures();

  SUBCASE("<f4 2x3") {
    NpyArray a = readNpy(tmpFile("np_f4_2x3.npy"));
    CHECK(a.dtype == NpyDType::Float32);
    CHECK(a.shape == std::vector<int64_t>{2, 3});
    CHECK(a.f32 == std::vector<float>{0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f});
    CHECK(a.i32.empty());
  }
  SUBCASE("<i4") {
    NpyArray a = readNpy(tmpFile("np_i4_3.npy"));
    CHECK(a.dtype == NpyDType::Int32);
    CHECK(a.shape == std::vector<int64_t>{3});
    CHECK(a.i32 == std::vector<int32_t>{-7, 0, INT32_MAX});
    CHECK(a.f32.empty());
  }
  SUBCASE("<f8 is narrowed to float32") {
    NpyArray a = readNpy(tmpFile("np_f8_4.npy"));
    CHECK(a.dtype == NpyDType::Float32);
    CHECK(a.f32 == std::vector<float>{1.5f, -2.25f, 1e10f, 0.1f});
  }
  SUBCASE("<i8 is narrowed to int32") {
    NpyArray a = readNpy(tmpFile("np_i8_3.npy"));
    CHECK(a.dtype == NpyDType::Int32);
    CHECK(a.i32 == std::vector<int32_t>{INT32_MIN, 5, INT32_MAX});
  }
  SUBCASE("|b1 becomes int32 0/1") {
    NpyArray a = readNpy(tmpFile("np_b1_2x2.npy"));
    CHECK(a.dtype == NpyDType::Int32);
    CHECK(a.shape == std::vector<int64_t>{2, 2});
    CHECK(a.i32 == std::vector<int32_t>{1, 0, 0, 1});
  }
  SUBCASE("0-d") {
    NpyArray a = readNpy(tmpFile("np_f4_0d.npy"));
    CHECK(a.shape.empty());
    CHECK(a.elementCount() == 1);
    CHECK(a.f32 == std::vector<float>{3.25f});
  }
  SUBCASE("empty") {
    NpyArray a = readNpy(tmpFile("np_f4_0x4.npy"));
    CHECK(a.shape == std::vector<int64_t>{0, 4});
    CHECK(a.f32.empty());
  }
  SUBCASE("format version 2.0, 3-d") {
    NpyArray a = readNpy(tmpFile("np_v2_i4_2x3x4.npy"));
    CHECK(a.dtype == NpyDType::Int32);
    CHECK(a.shape == std::vector<int64_t>{2, 3, 4});
    REQUIRE(a.i32.size() == 24);
    for (int i = 0; i < 24; ++i) CHECK(a.i32[i] == i);
  }
}

TEST_CASE("header parsing tolerates any valid Python dict literal") {
  SUBCASE("odd spacing, key order, quotes and trailing commas") {
    std::string p = tmpFile("spacing.npy");
    writeBytes(p, rawNpy("{  \"shape\" :( 2 ,3 , ) ,'fortran_order':False,\t'descr' :  '<f4' ,}",
                         f32Data(6)));
    NpyArray a = readNpy(p);
    CHECK(a.shape == std::vector<int64_t>{2, 3});
    CHECK(a.f32 == std::vector<float>{0, 1, 2, 3, 4, 5});
  }
  SUBCASE("Python 2 long suffixes and a list shape") {
    std::string p = tmpFile("py2.npy");
    writeBytes(p, rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': [3L], }", f32Data(3)));
    CHECK(readNpy(p).shape == std::vector<int64_t>{3});
  }
  SUBCASE("version 2.0 written by hand") {
    std::string p = tmpFile("v2_hand.npy");
    writeBytes(p, rawNpy("{'descr':'<f4','fortran_order':False,'shape':(4,)}", f32Data(4), 2));
    CHECK(readNpy(p).f32 == std::vector<float>{0, 1, 2, 3});
  }
  SUBCASE("0-d shape ()") {
    std::string p = tmpFile("zero_d_hand.npy");
    writeBytes(p, rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", f32Data(1)));
    NpyArray a = readNpy(p);
    CHECK(a.shape.empty());
    CHECK(a.f32.size() == 1);
  }
}

TEST_CASE("errors name the file and the problem") {
  requireNumpyFixtures();

  SUBCASE("missing file") {
    std::string p = tmpFile("does_not_exist.npy");
    CHECK_THROWS_WITH_AS(readNpy(p), has(p + ": cannot open"), NpyError);
  }
  SUBCASE("bad magic") {
    std::string p = tmpFile("bad_magic.npy");
    writeBytes(p, "PK\x03\x04 this is a zip file, not npy");
    CHECK_THROWS_WITH_AS(readNpy(p), has(p + ": not a .npy file (bad magic"),
                         NpyError);
  }
  SUBCASE("empty file") {
    std::string p = tmpFile("empty_file.npy");
    writeBytes(p, "");
    CHECK_THROWS_WITH_AS(readNpy(p), has("bad magic"), NpyError);
  }
  SUBCASE("unsupported format version") {
    std::string p = tmpFile("version9.npy");
    writeBytes(p, std::string("\x93NUMPY\x09\x00", 8) + std::string("\x10\x00", 2));
    CHECK_THROWS_WITH_AS(readNpy(p), has("unsupported .npy format version 9.0"),
                         NpyError);
  }
  SUBCASE("fortran order") {
    std::string p = tmpFile("np_fortran.npy");
    std::string msg = readError(p);
    CHECK(contains(msg, p + ": "));
    CHECK(contains(msg, "fortran_order=True"));
  }
  SUBCASE("big-endian") {
    std::string p = tmpFile("np_big_endian.npy");
    std::string msg = readError(p);
    CHECK(contains(msg, p + ": big-endian data is not supported"));
    CHECK(contains(msg, "'>f4'"));
  }
  SUBCASE("unsupported dtype <u2") {
    std::string p = tmpFile("np_u2.npy");
    std::string msg = readError(p);
    CHECK(contains(msg, p + ": unsupported dtype '<u2'"));
    CHECK(contains(msg, "'<f4'"));  // lists what is supported
  }
  SUBCASE("unsupported dtype <c8") {
    CHECK_THROWS_WITH_AS(readNpy(tmpFile("np_c8.npy")), has("unsupported dtype '<c8'"),
                         NpyError);
  }
  SUBCASE("structured dtype") {
    std::string msg = readError(tmpFile("np_structured.npy"));
    CHECK(contains(msg, "unsupported dtype"));
    CHECK(contains(msg, "'x'"));
  }
  SUBCASE("<i8 value out of int32 range") {
    std::string msg = readError(tmpFile("np_i8_overflow.npy"));
    CHECK(contains(msg, "element 1 = 1099511627776 does not fit in int32"));
  }
  SUBCASE("truncated data") {
    std::string good = readBytes(tmpFile("np_f4_2x3.npy"));
    std::string p = tmpFile("truncated_data.npy");
    writeBytes(p, good.substr(0, good.size() - 5));
    std::string msg = readError(p);
    CHECK(contains(msg, p + ": truncated data"));
    CHECK(contains(msg, "needs 24 bytes"));
    CHECK(contains(msg, "file has 19"));
  }
  SUBCASE("truncated header") {
    std::string good = readBytes(tmpFile("np_f4_2x3.npy"));
    std::string p = tmpFile("truncated_header.npy");
    writeBytes(p, good.substr(0, 30));
    CHECK_THROWS_WITH_AS(readNpy(p), has(p + ": truncated header"), NpyError);
    writeBytes(p, good.substr(0, 9));
    CHECK_THROWS_WITH_AS(readNpy(p), has(p + ": truncated header"), NpyError);
  }
  SUBCASE("malformed headers") {
    std::string p = tmpFile("malformed.npy");
    auto errorFor = [&](const std::string& dict) {
      writeBytes(p, rawNpy(dict, f32Data(6)));
      return readError(p);
    };
    CHECK(contains(errorFor("{'descr': '<f4', 'shape': (6,)}"), "missing key 'fortran_order'"));
    CHECK(contains(errorFor("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}"),
                   "unexpected key 'x'"));
    CHECK(contains(errorFor("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                            "'shape': (6,)}"),
                   "duplicate key 'descr'"));
    CHECK(contains(errorFor("{'descr' '<f4', 'fortran_order': False, 'shape': (6,)}"),
                   "malformed header: expected ':'"));
    CHECK(contains(errorFor("{'descr': '<f4, 'fortran_order': False, 'shape': (6,)}"),
                   "malformed header"));
    CHECK(contains(errorFor("{'descr': '<f4', 'fortran_order': false, 'shape': (6,)}"),
                   "unknown name 'false'"));
    CHECK(contains(errorFor("{'descr': '<f4', 'fortran_order': False, 'shape': (-6,)}"),
                   "bad shape (-6,)"));
    CHECK(contains(errorFor("{'descr': '<f4', 'fortran_order': 0, 'shape': (6,)}"),
                   "'fortran_order' must be True or False"));
    CHECK(contains(errorFor("{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} junk"),
                   "unexpected text after the closing '}'"));
    CHECK(contains(errorFor("{'descr': '<f4', 'fortran_order': False, 'shape': 6}"),
                   "'shape' must be a tuple"));
    CHECK(contains(errorFor("{'descr': '<f4', 'fortran_order': False, 'shape': (6,)}"),
                   "<no error>"));
    CHECK(contains(errorFor("{'descr': " + std::string(40, '(')), "nested too deeply"));
    CHECK(contains(errorFor("('descr', '<f4')"), "malformed header: expected '{'"));
  }
}

TEST_CASE("writeNpy rejects inconsistent arrays") {
  std::string p = tmpFile("inconsistent.npy");
  CHECK_THROWS_WITH_AS(writeNpy(p, f32Array({2, 3}, {1.0f, 2.0f})),
                       has(p + ": cannot write: shape (2, 3) has 6 elements but f32 "
                                             "holds 2"),
                       NpyError);
  NpyArray both = f32Array({1}, {1.0f});
  both.i32 = {1};
  CHECK_THROWS_WITH_AS(writeNpy(p, both), has("i32 is not empty"), NpyError);
  CHECK_THROWS_WITH_AS(writeNpy(p, f32Array({-1}, {})), has("invalid shape"),
                       NpyError);
  CHECK_THROWS_WITH_AS(writeNpy(tmpFile("no_such_dir/x.npy"), f32Array({1}, {1.0f})),
                       has("cannot open for writing"), NpyError);
}
