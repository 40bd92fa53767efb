// The drop-in export of export/dropin_export.h: evaluates every symbolic size of a compiled
// program once, then writes the kernel source, the C99 host code, the manifest, the CMake
// snippet and the README as text. The host code is straight-line C generated per program (one
// clSetKernelArg per argument, launch sizes as constant tables), so an application's compiler
// sees nothing weft-specific and no loop over an empty table can warn. The kernels are split
// after the metadata's constant inputs (CompiledProgram::preparationKernels): the one-off ones
// go into P_prepare/P_prepare_buffers, the rest into P_run/P_run_buffers, which waits for the
// preparation's last event and refuses an unprepared handle. Kernels take only the buffers they
// use, so P_run never reads a constant input only preparation kernels read (the original
// weights of the vector family): the header and README say the application may release it.
#include "export/dropin_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "export/opencl_error_names.h"

namespace weft::exporting {

namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string>& cKeywords() {
  static const std::set<std::string> words = {
      "auto",    "break",  "case",      "char",    "const",    "continue",  "default",
      "do",      "double", "else",      "enum",    "extern",   "float",     "for",
      "goto",    "if",     "inline",    "int",     "long",     "register",  "restrict",
      "return",  "short",  "signed",    "sizeof",  "static",   "struct",    "switch",
      "typedef", "union",  "unsigned",  "void",    "volatile", "while",     "bool",
      "class",   "new",    "delete",    "this",    "template", "namespace", "operator",
      "private", "public", "protected", "virtual", "friend",   "true",      "false"};
  return words;
}

// Lower-case identifier characters, other runs as '_', no leading digit, never empty.
std::string identifierPart(const std::string& text) {
  std::string out;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.empty()) out = "x";
  if (std::isdigit(static_cast<unsigned char>(out.front()))) out = "_" + out;
  return out;
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

bool isCIdentifier(const std::string& text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front()))) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

std::string commentSafe(std::string text) {
  size_t at = 0;
  while ((at = text.find("*/", at)) != std::string::npos) text.replace(at, 2, "* /");
  at = 0;  // "/*" inside a comment is legal but warned about (-Wcomment)
  while ((at = text.find("/*", at)) != std::string::npos) text.replace(at, 2, "/ *");
  return text;
}

namespace {

int64_t evaluated(const Arith& size, const ArithBinding& sizes, const std::string& what) {
  for (const Arith& variable : size.vars()) {
    if (!sizes.count(variable.varName())) {
      throw DropinError(fmt::format(
          "{} is {}: size variable {} is not bound; a drop-in export fixes every size (bind it, "
          "e.g. --size {}=...)",
          what, size.toString(), variable.varName(), variable.varName()));
    }
  }
  try {
    return evaluate(size, sizes);
  } catch (const ArithError& error) {
    throw DropinError(fmt::format("{} is {}: {}", what, size.toString(), error.what()));
  }
}

int64_t positive(const Arith& size, const ArithBinding& sizes, const std::string& what) {
  int64_t value = evaluated(size, sizes, what);
  if (value <= 0) {
    throw DropinError(fmt::format("{} is {} = {}, not positive", what, size.toString(), value));
  }
  return value;
}

// The row-major shape of data of `type` (vector lanes as the last dimension); empty when the
// type has no such shape (tuples).
std::vector<int64_t> shapeOf(Type type, const ArithBinding& sizes, const std::string& what) {
  std::vector<int64_t> shape;
  while (type && type.isArray()) {
    shape.push_back(evaluated(type.arrayLength(), sizes, what));
    type = type.arrayElement();
  }
  if (!type || type.isTuple()) return {};
  if (type.isVector()) shape.push_back(type.vectorWidth());
  return shape;
}

// Splits the kernels of `out` into preparation and per-inference ones (the constant inputs'
// kernels, CompiledProgram::preparationKernels) and records which buffers each side reads.
void markPreparation(const CompiledProgram& program, const DropinMetadata& metadata,
                     int parameterCount, Emitted& out) {
  for (int index : metadata.constantInputs) {
    if (index < 0 || index >= parameterCount) {
      throw DropinError(
          fmt::format("constant input {} does not exist: the definition has {} "
                      "parameter(s)",
                      index, parameterCount));
    }
    out.inputs[static_cast<size_t>(index)].constant = true;
  }
  std::vector<bool> preparation(program.kernels.size(), false);
  if (!metadata.constantInputs.empty()) {
    preparation = program.preparationKernels(metadata.constantInputs);
  }
  for (size_t k = 0; k < out.kernels.size(); ++k) {
    EmittedKernel& kernel = out.kernels[k];
    kernel.preparation = k < preparation.size() && preparation[k];
    for (size_t a = 0; a < kernel.args.size(); ++a) {
      const EmittedArg& arg = kernel.args[a];
      if (arg.kind != KernelArg::Kind::Buffer) continue;
      EmittedBuffer& buffer = out.buffers[static_cast<size_t>(arg.buffer)];
      if (kernel.preparation && buffer.role == BufferPlan::Role::Temporary &&
          program.kernels[k].args[a].written) {
        buffer.prepared = true;
      }
      for (EmittedInput& input : out.inputs) {
        if (input.buffer != arg.buffer) continue;
        (kernel.preparation ? input.readByPreparation : input.readByRun) = true;
      }
    }
  }
}

}  // namespace

Emitted prepareEmission(const CompiledProgram& program, const ArithBinding& sizes,
                        const DropinMetadata& metadata) {
  if (program.outputBuffer < 0 ||
      program.outputBuffer >= static_cast<int>(program.buffers.size())) {
    throw DropinError("the compiled program '" + program.definitionName + "' has no output buffer");
  }
  Emitted out;
  // Which definition parameters there are: the metadata's names, else the input buffers.
  int parameterCount = static_cast<int>(metadata.inputNames.size());
  for (const BufferPlan& plan : program.buffers) {
    if (plan.role == BufferPlan::Role::Input) {
      parameterCount = std::max(parameterCount, plan.inputIndex + 1);
    }
  }
  std::set<std::string> used = {"handle", "queue", "output", "event_out", "inputs", "err"};
  auto uniqueName = [&](std::string name) {
    if (cKeywords().count(name)) name += "_buffer";
    std::string candidate = name;
    for (int n = 2; used.count(candidate); ++n) candidate = name + "_" + std::to_string(n);
    used.insert(candidate);
    return candidate;
  };
  std::vector<int> order;
  for (int p = 0; p < parameterCount; ++p) {
    EmittedInput input;
    std::string name;
    if (p < static_cast<int>(metadata.inputNames.size())) name = metadata.inputNames[p];
    for (size_t b = 0; b < program.buffers.size(); ++b) {
      const BufferPlan& plan = program.buffers[b];
      if (plan.role == BufferPlan::Role::Input && plan.inputIndex == p) {
        input.buffer = static_cast<int>(b);
        if (name.empty()) name = plan.name.rfind("in_", 0) == 0 ? plan.name.substr(3) : plan.name;
      }
    }
    if (name.empty()) name = "input" + std::to_string(p);
    input.name = uniqueName(identifierPart(name));
    if (input.buffer >= 0) order.push_back(input.buffer);
    out.inputs.push_back(input);
  }
  order.push_back(program.outputBuffer);
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    if (program.buffers[b].role == BufferPlan::Role::Temporary)
      order.push_back(static_cast<int>(b));
  }
  std::map<int, int> emittedIndex;  // plan index -> emitted index
  for (int planIndex : order) {
    const BufferPlan& plan = program.buffers[static_cast<size_t>(planIndex)];
    EmittedBuffer buffer;
    buffer.plan = planIndex;
    buffer.role = plan.role;
    buffer.elementType = plan.element == ScalarKind::Float ? "float32" : "int32";
    if (plan.role == BufferPlan::Role::Input) {
      for (const EmittedInput& input : out.inputs) {
        if (input.buffer == planIndex) buffer.name = input.name;
      }
    } else {
      buffer.name = uniqueName(identifierPart(plan.name));
    }
    buffer.enumName = upper(metadata.prefix) + "_BUFFER_" + upper(buffer.name);
    buffer.bytesMacro = upper(metadata.prefix) + "_BYTES_" + upper(buffer.name);
    buffer.elements = evaluated(plan.elementCount, sizes, "the size of buffer " + plan.name);
    if (buffer.elements < 0) {
      throw DropinError(fmt::format("the size of buffer {} is {} = {}, negative", plan.name,
                                    plan.elementCount.toString(), buffer.elements));
    }
    buffer.bytes = std::max<int64_t>(buffer.elements, 1) * 4;
    if (plan.role != BufferPlan::Role::Temporary) {
      buffer.shape = shapeOf(plan.type, sizes, "the type of buffer " + plan.name);
    }
    int64_t product = 1;
    for (int64_t d : buffer.shape) product *= d;
    if (buffer.shape.empty() || product != buffer.elements) buffer.shape = {buffer.elements};
    emittedIndex[planIndex] = static_cast<int>(out.buffers.size());
    out.buffers.push_back(buffer);
  }
  for (EmittedInput& input : out.inputs) {
    if (input.buffer >= 0) input.buffer = emittedIndex.at(input.buffer);
  }
  out.output = emittedIndex.at(program.outputBuffer);

  for (const KernelPlan& plan : program.kernels) {
    if (plan.dimensions < 1 || plan.dimensions > 3) {
      throw DropinError(fmt::format("kernel {} has {} dimensions; OpenCL allows 1 to 3", plan.name,
                                    plan.dimensions));
    }
    EmittedKernel kernel;
    kernel.name = plan.name;
    kernel.dimensions = plan.dimensions;
    kernel.hasLocal = plan.hasLocalSize;
    for (int d = 0; d < plan.dimensions; ++d) {
      kernel.global[d] =
          positive(plan.globalSize[d], sizes,
                   fmt::format("the global size of kernel {} in dimension {}", plan.name, d));
      if (plan.hasLocalSize) {
        kernel.local[d] =
            positive(plan.localSize[d], sizes,
                     fmt::format("the local size of kernel {} in dimension {}", plan.name, d));
      }
    }
    if (kernel.hasLocal && needsLaunchParts(kernel.dimensions, kernel.global, kernel.local)) {
      if (!plan.launchableInParts) {
        throw DropinError(fmt::format(
            "kernel {}: the local size {} does not divide the global size {}, and the kernel "
            "cannot be launched in parts",
            plan.name, launchText(kernel, true), launchText(kernel, false)));
      }
      kernel.parts = launchParts(kernel.dimensions, kernel.global, kernel.local);
    }
    for (size_t a = 0; a < plan.args.size(); ++a) {
      const KernelArg& arg = plan.args[a];
      std::string what = fmt::format("argument {} of kernel {}", a, plan.name);
      EmittedArg emitted;
      emitted.kind = arg.kind;
      switch (arg.kind) {
        case KernelArg::Kind::Buffer: {
          auto found = emittedIndex.find(arg.buffer);
          if (found == emittedIndex.end()) {
            throw DropinError(what + " names buffer " + std::to_string(arg.buffer) +
                              ", which the compiled program does not have");
          }
          emitted.buffer = found->second;
          emitted.describe = "buffer " + out.buffers[static_cast<size_t>(found->second)].name;
          break;
        }
        case KernelArg::Kind::Size: {
          auto found = sizes.find(arg.sizeName);
          if (found == sizes.end()) {
            throw DropinError(fmt::format(
                "{} is size variable {}, which is not bound (bind it, e.g. --size {}=...)", what,
                arg.sizeName, arg.sizeName));
          }
          if (found->second < INT32_MIN || found->second > INT32_MAX) {
            throw DropinError(fmt::format("{}: size {} = {} does not fit an int", what,
                                          arg.sizeName, found->second));
          }
          emitted.sizeValue = found->second;
          emitted.describe = fmt::format("int {} = {}", arg.sizeName, found->second);
          break;
        }
        case KernelArg::Kind::LocalBuffer:
          emitted.localBytes = positive(arg.localBytes, sizes, "the local memory of " + what);
          emitted.describe = fmt::format("local memory, {} bytes", emitted.localBytes);
          break;
      }
      kernel.args.push_back(emitted);
    }
    out.kernels.push_back(kernel);
  }
  markPreparation(program, metadata, parameterCount, out);
  return out;
}

size_t Emitted::preparationKernelCount() const {
  return static_cast<size_t>(std::count_if(kernels.begin(), kernels.end(),
                                           [](const EmittedKernel& k) { return k.preparation; }));
}

size_t Emitted::runKernelCount() const { return kernels.size() - preparationKernelCount(); }

namespace {

const char* roleName(BufferPlan::Role role) {
  switch (role) {
    case BufferPlan::Role::Input:
      return "input";
    case BufferPlan::Role::Output:
      return "output";
    case BufferPlan::Role::Temporary:
      return "temporary";
  }
  return "?";
}

}  // namespace

const char* bufferRoleName(BufferPlan::Role role) { return roleName(role); }

Json launchPartsJson(const EmittedKernel& kernel) {
  auto first = [&](const std::array<int64_t, 3>& v) {
    return std::vector<int64_t>(v.begin(), v.begin() + kernel.dimensions);
  };
  Json parts = Json::array();
  for (const LaunchPart& part : kernel.parts) {
    parts.push_back({{"offset", first(part.offset)},
                     {"globalSize", first(part.global)},
                     {"localSize", first(part.local)}});
  }
  return parts;
}

Json kernelArgumentsJson(const Emitted& emitted, const EmittedKernel& kernel) {
  Json args = Json::array();
  for (const EmittedArg& arg : kernel.args) {
    switch (arg.kind) {
      case KernelArg::Kind::Buffer:
        args.push_back({{"kind", "buffer"},
                        {"buffer", emitted.buffers[static_cast<size_t>(arg.buffer)].name}});
        break;
      case KernelArg::Kind::Size:
        args.push_back({{"kind", "int"}, {"value", arg.sizeValue}});
        break;
      case KernelArg::Kind::LocalBuffer:
        args.push_back({{"kind", "local"}, {"bytes", arg.localBytes}});
        break;
    }
  }
  return args;
}

std::string launchText(const EmittedKernel& kernel, bool local) {
  std::string text;
  for (int d = 0; d < kernel.dimensions; ++d) {
    text += (d ? " x " : "") + std::to_string(local ? kernel.local[d] : kernel.global[d]);
  }
  return text;
}

std::string parameterListText(const std::vector<std::pair<std::string, int64_t>>& parameters) {
  std::string text;
  for (const auto& [name, value] : parameters) {
    text += (text.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  }
  return text.empty() ? "none" : text;
}

namespace {

// The enqueueing of kernel k (the j-th of its function) in parts, one after another, each
// waiting for the one before and the first for `waitCount` events at `waitEvents`; events[j] is
// the last part's event.
std::string launchInPartsText(const Emitted& emitted, size_t k, size_t j, const std::string& p,
                              const std::string& waitCount, const std::string& waitEvents) {
  const EmittedKernel& kernel = emitted.kernels[k];
  const size_t count = kernel.parts.size();
  auto table = [&](const char* name, auto member) {
    std::string text = fmt::format("    static const size_t {}[{}][3] = {{", name, count);
    for (size_t i = 0; i < count; ++i) {
      const std::array<int64_t, 3>& v = kernel.parts[i].*member;
      text += fmt::format("{}{{{}u, {}u, {}u}}", i ? ", " : "", v[0], v[1], v[2]);
    }
    return text + "};\n";
  };
  std::ostringstream c;
  c << "  /* launched in " << count
    << " parts (its local size does not divide its global size): whole work-groups, then the\n"
       "     rest with a global offset, one after another */\n";
  c << "  {\n";
  c << table("offsets", &LaunchPart::offset) << table("globals", &LaunchPart::global)
    << table("locals", &LaunchPart::local);
  c << "    cl_event part_event = NULL;\n    int part;\n";
  c << "    for (part = 0; part < " << count << "; ++part) {\n";
  c << "      cl_event done = NULL;\n";
  c << "      err = clEnqueueNDRangeKernel(queue, handle->kernels[" << k << "], " << p
    << "_dimensions[" << k << "], offsets[part],\n"
    << "                                   globals[part], locals[part], part == 0 ? " << waitCount
    << " : 1,\n"
    << "                                   part == 0 ? " << waitEvents
    << " : &part_event, &done);\n";
  c << "      if (part_event != NULL) clReleaseEvent(part_event);\n";
  c << "      part_event = done;\n";
  c << "      if (err != CL_SUCCESS) {\n";
  for (size_t i = 0; i < j; ++i) c << "        clReleaseEvent(events[" << i << "]);\n";
  c << "        return err;\n      }\n    }\n";
  c << "    events[" << j << "] = part_event;\n  }\n";
  return c.str();
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// The lines every file's header comment shares (without comment markers).
std::vector<std::string> describeLines(const Emitted& emitted, const DropinMetadata& metadata) {
  std::vector<std::string> lines;
  lines.push_back("program:  " + metadata.program);
  lines.push_back("compiler: " + metadata.compilerVersion);
  if (metadata.tunedOn.empty() && metadata.deviceFingerprint.empty()) {
    lines.push_back("device:   not tuned (parameters chosen by hand)");
  } else {
    std::string fingerprint = metadata.deviceFingerprint.empty()
                                  ? std::string()
                                  : "fingerprint " + metadata.deviceFingerprint;
    lines.push_back("device:   tuned on " +
                    (metadata.tunedOn.empty()
                         ? "the device with " + fingerprint
                         : metadata.tunedOn +
                               (fingerprint.empty() ? std::string() : " (" + fingerprint + ")")));
  }
  if (!metadata.tuning.empty()) lines.push_back("tuning:   " + metadata.tuning);
  lines.push_back("parameters: " + parameterListText(metadata.parameters));
  std::string sizeText;
  for (const auto& [name, value] : metadata.sizes) {
    sizeText += (sizeText.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  }
  if (!sizeText.empty()) lines.push_back("sizes:    " + sizeText);
  lines.push_back("build options: " +
                  (metadata.buildOptions.empty() ? std::string("none") : metadata.buildOptions));
  lines.push_back("kernels (launch order):");
  for (const EmittedKernel& kernel : emitted.kernels) {
    lines.push_back(
        "  " + kernel.name + ": global " + launchText(kernel, false) + ", local " +
        (kernel.hasLocal ? launchText(kernel, true) : "chosen by the driver") +
        (kernel.parts.empty() ? ""
                              : fmt::format(" (launched in {} parts: whole work-groups, then "
                                            "the rest with a global offset)",
                                            kernel.parts.size())) +
        (kernel.preparation ? " (preparation: once, in " + metadata.prefix + "_prepare)" : ""));
  }
  lines.push_back("buffers (row-major):");
  for (const EmittedBuffer& buffer : emitted.buffers) {
    lines.push_back(fmt::format(
        "  {} ({}, {}): {} bytes, shape {}{}", buffer.name, roleName(buffer.role),
        buffer.elementType, buffer.bytes, shapeText(buffer.shape),
        buffer.prepared ? ", written by " + metadata.prefix + "_prepare" : std::string()));
  }
  std::string constants;
  for (const EmittedInput& input : emitted.inputs) {
    if (input.constant) constants += (constants.empty() ? "" : ", ") + input.name;
  }
  lines.push_back("constant inputs (" + metadata.prefix +
                  "_prepare): " + (constants.empty() ? std::string("none") : constants));
  for (const std::string& note : metadata.notes) lines.push_back("note: " + note);
  return lines;
}

std::string blockComment(const std::string& title, const std::vector<std::string>& lines) {
  std::string text = "/* " + commentSafe(title) + "\n *\n";
  for (const std::string& line : lines) {
    text += line.empty() ? " *\n" : " * " + commentSafe(line) + "\n";
  }
  return text + " */\n";
}

// The source as C string literals, one per line, with every character that could be read
// differently escaped ('?' too: C99 trigraphs).
std::string cStringLines(const std::string& text, const std::string& indent) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    bool newline = end != std::string::npos;
    std::string line = text.substr(start, newline ? end - start : std::string::npos);
    std::string literal;
    for (char c : line) {
      unsigned char u = static_cast<unsigned char>(c);
      switch (c) {
        case '\\':
          literal += "\\\\";
          break;
        case '"':
          literal += "\\\"";
          break;
        case '?':
          literal += "\\?";
          break;
        case '\t':
          literal += "\\t";
          break;
        case '\r':
          literal += "\\r";
          break;
        default:
          if (u < 0x20 || u >= 0x7f) {
            literal += fmt::format("\\{:03o}", u);
          } else {
            literal += c;
          }
      }
    }
    out += indent + "\"" + literal + (newline ? "\\n" : "") + "\",\n";
    start = newline ? end + 1 : text.size();
  }
  return out;
}

std::string cString(const std::string& text) {
  std::string literal = cStringLines(text, "");
  // One line without the trailing ",\n"; a text with newlines becomes adjacent literals.
  std::string out;
  std::istringstream lines(literal);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == ',') line.pop_back();
    out += (out.empty() ? "" : " ") + line;
  }
  return out.empty() ? "\"\"" : out;
}

std::string sizeConstant(int64_t value) { return fmt::format("((size_t){}u)", value); }

}  // namespace

namespace {

// P_ERROR_NOT_PREPARED: far from the codes Khronos assigns (0 to -72 and the extensions' -1000s).
constexpr int kNotPreparedCode = -20001;

size_t constantInputCount(const Emitted& emitted) {
  return static_cast<size_t>(std::count_if(emitted.inputs.begin(), emitted.inputs.end(),
                                           [](const EmittedInput& i) { return i.constant; }));
}

// "weights, biases, " (each constant input followed by ", ") for a call in comments.
std::string constantArgumentText(const Emitted& emitted) {
  std::string text;
  for (const EmittedInput& input : emitted.inputs) {
    if (input.constant) text += input.name + ", ";
  }
  return text;
}

std::string constantNamesText(const Emitted& emitted) {
  std::string text = constantArgumentText(emitted);
  return text.empty() ? "none" : text.substr(0, text.size() - 2);
}

// The constant inputs that P_run does not read ("weights": only P_prepare reads them), joined
// with ", "; "" if none. An application may release them once P_prepare has returned.
std::string prepareOnlyNamesText(const Emitted& emitted) {
  std::string text;
  for (const EmittedInput& input : emitted.inputs) {
    if (input.constant && input.buffer >= 0 && !input.readByRun) {
      text += (text.empty() ? "" : ", ") + input.name;
    }
  }
  return text;
}

// Whether buffer b holds a constant input that only P_prepare reads (P_run may get NULL for it).
bool isPrepareOnlyBuffer(const Emitted& emitted, size_t b) {
  for (const EmittedInput& input : emitted.inputs) {
    if (input.buffer == static_cast<int>(b) && input.constant && !input.readByRun) return true;
  }
  return false;
}

// Bytes of the buffers that stay allocated at inference time (every buffer but the constant
// inputs P_run does not read; CompiledProgram::inferenceBytes), and of all buffers.
std::pair<int64_t, int64_t> inferenceAndAllBytes(const Emitted& emitted) {
  int64_t inference = 0, all = 0;
  for (size_t b = 0; b < emitted.buffers.size(); ++b) {
    all += emitted.buffers[b].bytes;
    const bool prepareOnly = isPrepareOnlyBuffer(emitted, b);
    if (!prepareOnly) inference += emitted.buffers[b].bytes;
  }
  return {inference, all};
}

std::string preparedNamesText(const Emitted& emitted) {
  std::string text;
  for (const EmittedBuffer& buffer : emitted.buffers) {
    if (buffer.prepared) text += (text.empty() ? "" : ", ") + buffer.name;
  }
  return text.empty() ? "none" : text;
}

std::string clSource(const CompiledProgram& program, const Emitted& emitted,
                     const DropinMetadata& metadata) {
  std::vector<std::string> lines = describeLines(emitted, metadata);
  lines.insert(lines.begin(), "");
  lines.insert(lines.begin(),
               "OpenCL C kernels with every size and tuning parameter baked in; host code: " +
                   metadata.prefix + ".h / " + metadata.prefix + ".c.");
  return blockComment(metadata.prefix + ".cl, generated by weft emit", lines) + "\n" +
         program.source;
}

std::string header(const Emitted& emitted, const DropinMetadata& metadata) {
  const std::string& p = metadata.prefix;
  const std::string P = upper(p);
  std::ostringstream h;
  std::vector<std::string> lines = {
      "Drop-in host code (C99, OpenCL 1.2 API, nothing but <CL/cl.h> and the ICD loader).",
      "",
      "Use:  " + p + "_t* handle;",
      "      cl_int err = " + p + "_create(context, device, &handle);",
      "      err = " + p + "_prepare(handle, queue, " + constantArgumentText(emitted) +
          "NULL);  -- once, again when those change",
      "      err = " + p + "_run(handle, queue, <inputs...>, output, NULL);  -- per inference",
      "      " + p + "_destroy(handle);",
      "Buffers belong to the application: create them with " + P +
          "_BYTES_* bytes (row-major; element types below).",
      "Every function returns an OpenCL error code; " + p + "_error_name gives its name.",
      ""};
  std::vector<std::string> description = describeLines(emitted, metadata);
  lines.insert(lines.end(), description.begin(), description.end());
  h << blockComment(p + ".h, generated by weft emit", lines);
  h << "#ifndef " << P << "_H\n#define " << P << "_H\n\n";
  h << "#ifndef CL_TARGET_OPENCL_VERSION\n#define CL_TARGET_OPENCL_VERSION 120\n#endif\n";
  h << "#ifdef __APPLE__\n#include <OpenCL/cl.h>\n#else\n#include <CL/cl.h>\n#endif\n";
  h << "#include <stddef.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  h << "/* The handle: the built program, its kernels and its temporary buffers. */\n";
  h << "typedef struct " << p << " " << p << "_t;\n\n";

  size_t maxRank = 1;
  for (const EmittedBuffer& buffer : emitted.buffers)
    maxRank = std::max(maxRank, buffer.shape.size());
  h << "/* Buffers: the inputs in the order of " << p
    << "_run's arguments, the output, then the\n   temporaries the handle owns. */\n";
  h << "typedef enum " << p << "_buffer {\n";
  for (size_t b = 0; b < emitted.buffers.size(); ++b) {
    h << "  " << emitted.buffers[b].enumName << " = " << b << ",\n";
  }
  h << "  " << P << "_BUFFER_COUNT = " << emitted.buffers.size() << "\n} " << p << "_buffer;\n\n";
  h << "#define " << P << "_INPUT_COUNT " << emitted.inputs.size() << " /* arguments of " << p
    << "_run before the output */\n";
  h << "#define " << P << "_OUTPUT_BUFFER " << emitted.buffers[emitted.output].enumName << "\n";
  h << "#define " << P << "_CONSTANT_INPUT_COUNT " << constantInputCount(emitted)
    << " /* arguments of " << p << "_prepare */\n";
  h << "#define " << P << "_KERNEL_COUNT " << emitted.kernels.size() << "\n";
  h << "#define " << P << "_PREPARE_KERNEL_COUNT " << emitted.preparationKernelCount()
    << " /* launched by " << p << "_prepare */\n";
  h << "#define " << P << "_RUN_KERNEL_COUNT " << emitted.runKernelCount() << " /* launched by "
    << p << "_run */\n";
  h << "/* Returned by " << p << "_run before " << p
    << "_prepare has run (outside OpenCL's error codes). */\n";
  h << "#define " << P << "_ERROR_NOT_PREPARED ((cl_int)" << kNotPreparedCode << ")\n";
  h << "#define " << P << "_MAX_RANK " << maxRank << "\n\n";
  h << "/* Bytes of every buffer (shape in the comment). */\n";
  for (const EmittedBuffer& buffer : emitted.buffers) {
    h << "#define " << buffer.bytesMacro << " " << sizeConstant(buffer.bytes) << " /* "
      << roleName(buffer.role) << ", shape " << shapeText(buffer.shape) << " */\n";
  }
  h << "\n";
  h << "/* Bytes of a buffer; 0 for a value that names no buffer. */\n";
  h << "size_t " << p << "_buffer_bytes(" << p << "_buffer buffer);\n";
  h << "/* The buffer's name (the definition's parameter name for inputs). */\n";
  h << "const char* " << p << "_buffer_name(" << p << "_buffer buffer);\n";
  h << "/* Writes the buffer's shape into dims (" << P
    << "_MAX_RANK entries) and returns its rank; 0 for a\n   value that names no buffer. */\n";
  h << "int " << p << "_buffer_shape(" << p << "_buffer buffer, size_t* dims);\n";
  h << "/* 1 when " << p << "_run uses the buffer; 0 for an input only " << p
    << "_prepare reads (the\n   application may release it once " << p
    << "_prepare has returned and pass NULL to " << p << "_run)\n   and for a value that names no "
       "buffer. */\n";
  h << "int " << p << "_run_reads(" << p << "_buffer buffer);\n\n";
  h << "/* Builds the kernels for `device` of `context` (the context is retained until destroy)\n"
       "   and allocates the temporaries. On success *out is the handle. On a failed build the\n"
       "   result is CL_BUILD_PROGRAM_FAILURE and *out is a handle that only holds the build log\n"
       "   ("
    << p << "_build_log; " << p
    << "_run refuses it): destroy it too. On other errors *out is NULL. */\n";
  h << "cl_int " << p << "_create(cl_context context, cl_device_id device, " << p
    << "_t** out);\n\n";
  h << "/* The compiler's log of the build (\"\" when it said nothing or handle is NULL). */\n";
  h << "const char* " << p << "_build_log(const " << p << "_t* handle);\n\n";
  h << "/* The one-off part: enqueues the kernels that depend only on the constant inputs\n"
       "   ("
    << constantNamesText(emitted)
    << ") on `queue`; their results stay in buffers the\n"
       "   handle owns";
  if (emitted.preparationKernelCount() == 0) {
    h << ". This program has no such kernel: it only marks the handle prepared,\n"
         "   and "
      << p << "_run works without it";
  } else {
    h << " (" << preparedNamesText(emitted) << "). Call it once after " << p
      << "_create and\n   again whenever those inputs change (not while a run is in flight); " << p
      << "_run\n   refuses the handle until it has been called (" << P
      << "_ERROR_NOT_PREPARED) and waits for\n   its kernels";
    const std::string prepareOnly = prepareOnlyNamesText(emitted);
    if (!prepareOnly.empty()) {
      h << ". " << p << "_run never reads " << prepareOnly
        << ": once this call has returned, the\n   application may release "
        << (prepareOnly.find(',') == std::string::npos ? "it" : "them")
        << " (clReleaseMemObject: OpenCL keeps a buffer until the\n   commands using it are done)"
        << " and pass NULL to " << p << "_run; the next " << p << "_prepare needs\n   "
        << (prepareOnly.find(',') == std::string::npos ? "it" : "them") << " again";
    }
  }
  h << ". event_out (optional, NULL when nothing was enqueued) receives the\n   last kernel's "
       "event; release it with clReleaseEvent. */\n";
  h << "cl_int " << p << "_prepare(" << p << "_t* handle, cl_command_queue queue";
  for (const EmittedInput& input : emitted.inputs) {
    if (input.constant) h << ", cl_mem " << input.name;
  }
  h << ",\n    cl_event* event_out);\n\n";
  h << "/* The same with all inputs as an array (" << P << "_INPUT_COUNT entries, as for " << p
    << "_run_buffers; only the\n   constant ones are read) and, optionally, one event per kernel ("
    << P << "_PREPARE_KERNEL_COUNT\n   entries, each to be released). */\n";
  h << "cl_int " << p << "_prepare_buffers(" << p
    << "_t* handle, cl_command_queue queue, const cl_mem* inputs,\n    cl_event* "
       "kernel_events);\n\n";
  h << "/* Enqueues the per-inference kernels on `queue` (in-order or not: each waits for the\n"
       "   previous one). Inputs are read, output is written; all are application-owned buffers\n"
       "   of at least "
    << P << "_BYTES_* bytes";
  bool anyPrepareOnly = false;
  for (const EmittedInput& input : emitted.inputs) {
    anyPrepareOnly = anyPrepareOnly || (input.buffer >= 0 && !input.readByRun);
  }
  if (anyPrepareOnly) h << " (inputs only " << p << "_prepare reads may be NULL)";
  h << ". event_out (optional) receives the last\n   kernel's event: the run is complete when it "
       "is; release it with clReleaseEvent. Not\n   thread-safe for one handle (kernel arguments "
       "live in the handle): use one handle per\n   thread. */\n";
  h << "cl_int " << p << "_run(" << p << "_t* handle, cl_command_queue queue";
  for (const EmittedInput& input : emitted.inputs) h << ", cl_mem " << input.name;
  h << ",\n    cl_mem output, cl_event* event_out);\n\n";
  h << "/* The same with the inputs as an array (" << P
    << "_INPUT_COUNT entries) and, optionally, one\n   event per kernel (" << P
    << "_RUN_KERNEL_COUNT entries, each to be released) for per-kernel timing. */\n";
  h << "cl_int " << p << "_run_buffers(" << p
    << "_t* handle, cl_command_queue queue, const cl_mem* inputs,\n    cl_mem output, cl_event* "
       "kernel_events);\n\n";
  h << "/* Releases everything the handle owns; NULL is ignored. */\n";
  h << "void " << p << "_destroy(" << p << "_t* handle);\n\n";
  h << "/* The name of an OpenCL error code, e.g. \"CL_INVALID_WORK_GROUP_SIZE\". */\n";
  h << "const char* " << p << "_error_name(cl_int code);\n\n";
  h << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << P << "_H */\n";
  return h.str();
}

enum class EnqueuePart { Prepare, Run };

// P_prepare_buffers or P_run_buffers: checks, buffer arguments of `kernels` (indices in launch
// order), then one clEnqueueNDRangeKernel each, every kernel waiting for the one before; the
// first run kernel waits for the last preparation kernel (handle->prepared_event) when the
// program has preparation kernels.
std::string enqueueFunction(const Emitted& emitted, const DropinMetadata& metadata,
                            EnqueuePart part, const std::vector<size_t>& kernels,
                            bool needsPreparation) {
  const std::string& p = metadata.prefix;
  const std::string P = upper(p);
  const bool prepare = part == EnqueuePart::Prepare;
  const std::string function = p + (prepare ? "_prepare_buffers" : "_run_buffers");
  std::ostringstream c;
  c << "cl_int " << function << "(" << p
    << "_t* handle, cl_command_queue queue, const cl_mem* inputs,\n    "
    << (prepare ? "" : "cl_mem output, ") << "cl_event* kernel_events) {\n";
  if (!kernels.empty()) {
    c << "  cl_mem buffers[" << emitted.buffers.size() << "];\n";
    c << "  cl_event events[" << kernels.size() << "];\n";
    c << "  cl_int err = CL_SUCCESS;\n";
  }
  c << "  if (handle == NULL || queue == NULL" << (prepare ? "" : " || output == NULL")
    << ") return CL_INVALID_VALUE;\n";
  c << "  if (!handle->ready) return CL_INVALID_PROGRAM_EXECUTABLE;\n";
  if (!prepare && needsPreparation) {
    c << "  if (!handle->prepared) return " << P << "_ERROR_NOT_PREPARED; /* call " << p
      << "_prepare first */\n";
  }
  if (kernels.empty()) {
    c << "  (void)inputs;\n  (void)kernel_events;\n";
    if (prepare) {
      c << "  /* no kernel depends only on the constant inputs: nothing to prepare */\n";
      c << "  handle->prepared = 1;\n";
    } else {
      c << "  (void)output;\n";
    }
    c << "  return CL_SUCCESS;\n}\n\n";
    return c.str();
  }
  bool readsInputs = false;
  for (const EmittedInput& input : emitted.inputs) {
    readsInputs = readsInputs || (prepare ? input.readByPreparation : input.readByRun);
  }
  c << (readsInputs ? "  if (inputs == NULL) return CL_INVALID_VALUE;\n" : "  (void)inputs;\n");
  for (size_t i = 0; i < emitted.inputs.size(); ++i) {
    const EmittedInput& input = emitted.inputs[i];
    if (!(prepare ? input.readByPreparation : input.readByRun)) {
      c << "  /* input " << i << " (" << input.name << ") is not read here */\n";
      continue;
    }
    c << "  if (inputs[" << i << "] == NULL) return CL_INVALID_MEM_OBJECT;\n";
    c << "  buffers[" << emitted.buffers[static_cast<size_t>(input.buffer)].enumName
      << "] = inputs[" << i << "];\n";
  }
  if (!prepare) c << "  buffers[" << emitted.buffers[emitted.output].enumName << "] = output;\n";
  size_t temporary = 0;
  for (const EmittedBuffer& buffer : emitted.buffers) {
    if (buffer.role != BufferPlan::Role::Temporary) continue;
    c << "  buffers[" << buffer.enumName << "] = handle->temporaries[" << temporary++ << "];\n";
  }
  for (size_t k : kernels) {
    const EmittedKernel& kernel = emitted.kernels[k];
    for (size_t a = 0; a < kernel.args.size(); ++a) {
      const EmittedArg& arg = kernel.args[a];
      if (arg.kind != KernelArg::Kind::Buffer) continue;
      c << "  err = clSetKernelArg(handle->kernels[" << k << "], " << a
        << ", sizeof(cl_mem), &buffers["
        << emitted.buffers[static_cast<size_t>(arg.buffer)].enumName << "]);\n";
      c << "  if (err != CL_SUCCESS) return err;\n";
    }
  }
  if (prepare) {
    c << "  /* A failed preparation leaves the handle unprepared. */\n";
    c << "  handle->prepared = 0;\n";
    c << "  if (handle->prepared_event != NULL) {\n    clReleaseEvent(handle->prepared_event);\n"
      << "    handle->prepared_event = NULL;\n  }\n";
  }
  for (size_t j = 0; j < kernels.size(); ++j) {
    const size_t k = kernels[j];
    // What the kernel waits for: the previous kernel, else the preparation, else nothing.
    const bool waits = j > 0 || (!prepare && needsPreparation);
    const std::string waitEvents = j > 0   ? fmt::format("&events[{}]", j - 1)
                                   : waits ? "&handle->prepared_event"
                                           : "NULL";
    const std::string waitList = (waits ? "1, " : "0, ") + waitEvents;
    c << "  /* " << emitted.kernels[k].name << " */\n";
    if (!emitted.kernels[k].parts.empty()) {
      c << launchInPartsText(emitted, k, j, p, waits ? "1" : "0", waitEvents);
      continue;
    }
    c << "  err = clEnqueueNDRangeKernel(queue, handle->kernels[" << k << "], " << p
      << "_dimensions[" << k << "], NULL, " << p << "_global_sizes[" << k << "],\n"
      << "                               " << p << "_has_local_size[" << k << "] ? " << p
      << "_local_sizes[" << k << "] : NULL, " << waitList << ", &events[" << j << "]);\n";
    c << "  if (err != CL_SUCCESS) {\n";
    for (size_t i = 0; i < j; ++i) c << "    clReleaseEvent(events[" << i << "]);\n";
    c << "    return err;\n  }\n";
  }
  const size_t last = kernels.size() - 1;
  if (prepare) {
    c << "  err = clRetainEvent(events[" << last << "]);\n";
    c << "  if (err != CL_SUCCESS) {\n";
    for (size_t i = 0; i < kernels.size(); ++i) c << "    clReleaseEvent(events[" << i << "]);\n";
    c << "    return err;\n  }\n";
    c << "  handle->prepared_event = events[" << last << "];\n  handle->prepared = 1;\n";
  }
  c << "  if (kernel_events != NULL) {\n";
  for (size_t j = 0; j < kernels.size(); ++j) {
    c << "    kernel_events[" << j << "] = events[" << j << "];\n";
  }
  c << "  } else {\n";
  for (size_t j = 0; j < kernels.size(); ++j) c << "    clReleaseEvent(events[" << j << "]);\n";
  c << "  }\n  return CL_SUCCESS;\n}\n\n";
  return c.str();
}

// P_prepare or P_run: the named-argument form of the array function, handing out only the
// last kernel's event (`kernelCount` kernels).
std::string namedArgumentsFunction(const Emitted& emitted, const DropinMetadata& metadata,
                                   EnqueuePart part, size_t kernelCount) {
  const std::string& p = metadata.prefix;
  const bool prepare = part == EnqueuePart::Prepare;
  std::ostringstream c;
  c << "cl_int " << p << (prepare ? "_prepare(" : "_run(") << p
    << "_t* handle, cl_command_queue queue";
  for (const EmittedInput& input : emitted.inputs) {
    if (!prepare || input.constant) c << ", cl_mem " << input.name;
  }
  c << ",\n    " << (prepare ? "" : "cl_mem output, ") << "cl_event* event_out) {\n";
  if (!emitted.inputs.empty()) c << "  cl_mem inputs[" << emitted.inputs.size() << "];\n";
  if (kernelCount > 0) c << "  cl_event events[" << kernelCount << "];\n";
  c << "  cl_int err;\n";
  for (size_t i = 0; i < emitted.inputs.size(); ++i) {
    const EmittedInput& input = emitted.inputs[i];
    c << "  inputs[" << i << "] = " << (!prepare || input.constant ? input.name : "NULL") << ";\n";
  }
  c << "  if (event_out != NULL) *event_out = NULL;\n";
  c << "  err = " << p << (prepare ? "_prepare_buffers" : "_run_buffers") << "(handle, queue, "
    << (emitted.inputs.empty() ? "NULL" : "inputs") << ", " << (prepare ? "" : "output, ")
    << (kernelCount > 0 ? "events" : "NULL") << ");\n";
  c << "  if (err != CL_SUCCESS) return err;\n";
  for (size_t k = 0; k + 1 < kernelCount; ++k) c << "  clReleaseEvent(events[" << k << "]);\n";
  if (kernelCount > 0) {
    c << "  if (event_out != NULL) {\n    *event_out = events[" << kernelCount - 1
      << "];\n  } else {\n    clReleaseEvent(events[" << kernelCount - 1 << "]);\n  }\n";
  }
  c << "  return CL_SUCCESS;\n}\n\n";
  return c.str();
}

std::string source(const Emitted& emitted, const std::string& clText,
                   const DropinMetadata& metadata) {
  const std::string& p = metadata.prefix;
  const std::string P = upper(p);
  const size_t kernelCount = emitted.kernels.size();
  size_t temporaries = 0;
  for (const EmittedBuffer& buffer : emitted.buffers) {
    temporaries += buffer.role == BufferPlan::Role::Temporary;
  }
  const size_t firstTemporary = emitted.buffers.size() - temporaries;
  size_t maxRank = 1;
  for (const EmittedBuffer& buffer : emitted.buffers)
    maxRank = std::max(maxRank, buffer.shape.size());

  std::ostringstream c;
  c << blockComment(p + ".c, generated by weft emit",
                    {"Host code for " + p +
                         ".h: the kernel source is embedded below (the same "
                         "text as " +
                         p + ".cl).",
                     "Plain C99; needs only the OpenCL headers and the ICD loader (-lOpenCL)."});
  c << "#include \"" << p << ".h\"\n\n#include <stdlib.h>\n#include <string.h>\n\n";
  c << "static const char* " << p << "_source[] = {\n" << cStringLines(clText, "    ") << "};\n\n";
  c << "static const char " << p << "_build_options[] = " << cString(metadata.buildOptions)
    << ";\n\n";
  if (kernelCount > 0) {
    c << "static const char* const " << p << "_kernel_names[" << kernelCount << "] = {";
    for (size_t k = 0; k < kernelCount; ++k) {
      c << (k ? ", " : "") << cString(emitted.kernels[k].name);
    }
    c << "};\n";
    c << "static const cl_uint " << p << "_dimensions[" << kernelCount << "] = {";
    for (size_t k = 0; k < kernelCount; ++k) c << (k ? ", " : "") << emitted.kernels[k].dimensions;
    c << "};\n";
    for (const char* which : {"global", "local"}) {
      bool local = std::string(which) == "local";
      c << "static const size_t " << p << "_" << which << "_sizes[" << kernelCount << "][3] = {";
      for (size_t k = 0; k < kernelCount; ++k) {
        const EmittedKernel& kernel = emitted.kernels[k];
        const auto& values = local ? kernel.local : kernel.global;
        c << (k ? ", " : "") << "{" << values[0] << "u, " << values[1] << "u, " << values[2]
          << "u}";
      }
      c << "};\n";
    }
    c << "static const int " << p << "_has_local_size[" << kernelCount << "] = {";
    for (size_t k = 0; k < kernelCount; ++k)
      c << (k ? ", " : "") << (emitted.kernels[k].hasLocal ? 1 : 0);
    c << "};\n\n";
  }
  c << "static const size_t " << p << "_bytes[" << emitted.buffers.size() << "] = {";
  for (size_t b = 0; b < emitted.buffers.size(); ++b) {
    c << (b ? ", " : "") << emitted.buffers[b].bytesMacro;
  }
  c << "};\n";
  c << "static const char* const " << p << "_names[" << emitted.buffers.size() << "] = {";
  for (size_t b = 0; b < emitted.buffers.size(); ++b) {
    c << (b ? ", " : "") << cString(emitted.buffers[b].name);
  }
  c << "};\n";
  c << "static const int " << p << "_run_uses[" << emitted.buffers.size() << "] = {";
  for (size_t b = 0; b < emitted.buffers.size(); ++b) {
    const bool prepareOnly = isPrepareOnlyBuffer(emitted, b);
    c << (b ? ", " : "") << (prepareOnly ? 0 : 1);
  }
  c << "};\n";
  c << "static const int " << p << "_ranks[" << emitted.buffers.size() << "] = {";
  for (size_t b = 0; b < emitted.buffers.size(); ++b) {
    c << (b ? ", " : "") << emitted.buffers[b].shape.size();
  }
  c << "};\n";
  c << "static const size_t " << p << "_shapes[" << emitted.buffers.size() << "][" << maxRank
    << "] = {";
  for (size_t b = 0; b < emitted.buffers.size(); ++b) {
    c << (b ? ", " : "") << "{";
    for (size_t d = 0; d < maxRank; ++d) {
      int64_t value = d < emitted.buffers[b].shape.size() ? emitted.buffers[b].shape[d] : 0;
      c << (d ? ", " : "") << value << "u";
    }
    c << "}";
  }
  c << "};\n\n";

  c << "struct " << p << " {\n  cl_context context;\n  cl_program program;\n";
  c << "  cl_kernel kernels[" << std::max<size_t>(kernelCount, 1) << "];\n";
  c << "  cl_mem temporaries[" << std::max<size_t>(temporaries, 1) << "];\n";
  c << "  char* build_log;\n  int ready; /* built, kernels and temporaries created */\n"
    << "  int prepared; /* the preparation kernels were enqueued */\n"
    << "  cl_event prepared_event; /* the last preparation kernel's (retained), or NULL */\n};\n\n";

  // Queries.
  c << "size_t " << p << "_buffer_bytes(" << p << "_buffer buffer) {\n"
    << "  if ((int)buffer < 0 || (int)buffer >= (int)" << P << "_BUFFER_COUNT) return 0;\n"
    << "  return " << p << "_bytes[buffer];\n}\n\n";
  c << "const char* " << p << "_buffer_name(" << p << "_buffer buffer) {\n"
    << "  if ((int)buffer < 0 || (int)buffer >= (int)" << P << "_BUFFER_COUNT) return \"\";\n"
    << "  return " << p << "_names[buffer];\n}\n\n";
  c << "int " << p << "_buffer_shape(" << p << "_buffer buffer, size_t* dims) {\n"
    << "  int d;\n"
    << "  if ((int)buffer < 0 || (int)buffer >= (int)" << P << "_BUFFER_COUNT) return 0;\n"
    << "  for (d = 0; d < " << p << "_ranks[buffer]; ++d) {\n"
    << "    if (dims != NULL) dims[d] = " << p << "_shapes[buffer][d];\n  }\n"
    << "  return " << p << "_ranks[buffer];\n}\n\n";
  c << "int " << p << "_run_reads(" << p << "_buffer buffer) {\n"
    << "  if ((int)buffer < 0 || (int)buffer >= (int)" << P << "_BUFFER_COUNT) return 0;\n"
    << "  return " << p << "_run_uses[buffer];\n}\n\n";
  c << "const char* " << p << "_build_log(const " << p << "_t* handle) {\n"
    << "  if (handle == NULL || handle->build_log == NULL) return \"\";\n"
    << "  return handle->build_log;\n}\n\n";

  // Error names.
  c << "const char* " << p << "_error_name(cl_int code) {\n  switch (code) {\n";
  for (const OpenclErrorName& error : kOpenclErrorNames) {
    c << "    case " << error.code << ": return \"" << error.name << "\";\n";
  }
  c << "    case " << kNotPreparedCode << ": return \"" << P << "_ERROR_NOT_PREPARED\";\n";
  c << "    default: return \"unknown OpenCL error\";\n  }\n}\n\n";

  // Destroy.
  c << "void " << p << "_destroy(" << p << "_t* handle) {\n";
  c << "  size_t i;\n  if (handle == NULL) return;\n";
  c << "  for (i = 0; i < sizeof handle->kernels / sizeof handle->kernels[0]; ++i) {\n"
    << "    if (handle->kernels[i] != NULL) clReleaseKernel(handle->kernels[i]);\n  }\n";
  c << "  for (i = 0; i < sizeof handle->temporaries / sizeof handle->temporaries[0]; ++i) {\n"
    << "    if (handle->temporaries[i] != NULL) clReleaseMemObject(handle->temporaries[i]);\n  }\n";
  c << "  if (handle->prepared_event != NULL) clReleaseEvent(handle->prepared_event);\n";
  c << "  if (handle->program != NULL) clReleaseProgram(handle->program);\n";
  c << "  if (handle->context != NULL) clReleaseContext(handle->context);\n";
  c << "  free(handle->build_log);\n  free(handle);\n}\n\n";

  // The arguments that never change: sizes and local memory, set once by create.
  c << "static cl_int " << p << "_set_constant_args(" << p << "_t* handle) {\n";
  c << "  cl_int err = CL_SUCCESS;\n";
  bool anyConstant = false;
  for (size_t k = 0; k < kernelCount; ++k) {
    const EmittedKernel& kernel = emitted.kernels[k];
    for (size_t a = 0; a < kernel.args.size(); ++a) {
      const EmittedArg& arg = kernel.args[a];
      if (arg.kind == KernelArg::Kind::Size) {
        anyConstant = true;
        c << "  {\n    const cl_int value = " << arg.sizeValue << "; /* " << arg.describe
          << " */\n    err = clSetKernelArg(handle->kernels[" << k << "], " << a
          << ", sizeof value, &value);\n    if (err != CL_SUCCESS) return err;\n  }\n";
      } else if (arg.kind == KernelArg::Kind::LocalBuffer) {
        anyConstant = true;
        c << "  err = clSetKernelArg(handle->kernels[" << k << "], " << a << ", "
          << sizeConstant(arg.localBytes) << ", NULL); /* " << arg.describe << " */\n"
          << "  if (err != CL_SUCCESS) return err;\n";
      }
    }
  }
  if (!anyConstant) c << "  (void)handle;\n";
  c << "  return err;\n}\n\n";

  // Create.
  c << "cl_int " << p << "_create(cl_context context, cl_device_id device, " << p
    << "_t** out) {\n";
  c << "  " << p << "_t* handle;\n  cl_int err = CL_SUCCESS;\n  cl_int build;\n"
    << "  size_t i;\n  size_t log_size = 0;\n";
  c << "  if (out == NULL) return CL_INVALID_VALUE;\n  *out = NULL;\n";
  c << "  if (context == NULL) return CL_INVALID_CONTEXT;\n";
  c << "  if (device == NULL) return CL_INVALID_DEVICE;\n";
  c << "  handle = (" << p << "_t*)malloc(sizeof *handle);\n";
  c << "  if (handle == NULL) return CL_OUT_OF_HOST_MEMORY;\n";
  c << "  handle->context = NULL;\n  handle->program = NULL;\n  handle->build_log = NULL;\n"
    << "  handle->ready = 0;\n  handle->prepared = 0;\n  handle->prepared_event = NULL;\n";
  c << "  for (i = 0; i < sizeof handle->kernels / sizeof handle->kernels[0]; ++i) "
       "handle->kernels[i] = NULL;\n";
  c << "  for (i = 0; i < sizeof handle->temporaries / sizeof handle->temporaries[0]; ++i) {\n"
    << "    handle->temporaries[i] = NULL;\n  }\n";
  c << "  err = clRetainContext(context);\n"
    << "  if (err != CL_SUCCESS) {\n    free(handle);\n    return err;\n  }\n"
    << "  handle->context = context;\n";
  c << "  handle->program = clCreateProgramWithSource(context, (cl_uint)(sizeof " << p
    << "_source / sizeof " << p << "_source[0]),\n"
    << "                                              " << p << "_source, NULL, &err);\n";
  c << "  if (err != CL_SUCCESS) {\n    " << p << "_destroy(handle);\n    return err;\n  }\n";
  c << "  build = clBuildProgram(handle->program, 1, &device, " << p
    << "_build_options, NULL, NULL);\n";
  c << "  /* The log is kept whether the build succeeded (warnings) or not. */\n";
  c << "  if (clGetProgramBuildInfo(handle->program, device, CL_PROGRAM_BUILD_LOG, 0, NULL,\n"
    << "                            &log_size) == CL_SUCCESS && log_size > 0) {\n"
    << "    handle->build_log = (char*)malloc(log_size + 1);\n"
    << "    if (handle->build_log != NULL) {\n"
    << "      if (clGetProgramBuildInfo(handle->program, device, CL_PROGRAM_BUILD_LOG, log_size,\n"
    << "                                handle->build_log, NULL) == CL_SUCCESS) {\n"
    << "        handle->build_log[log_size] = '\\0';\n      } else {\n"
    << "        handle->build_log[0] = '\\0';\n      }\n    }\n  }\n";
  c << "  if (build != CL_SUCCESS) {\n"
    << "    if (build == CL_BUILD_PROGRAM_FAILURE) {\n      *out = handle; /* for " << p
    << "_build_log */\n    } else {\n      " << p << "_destroy(handle);\n    }\n"
    << "    return build;\n  }\n";
  for (size_t k = 0; k < kernelCount; ++k) {
    c << "  handle->kernels[" << k << "] = clCreateKernel(handle->program, " << p
      << "_kernel_names[" << k << "], &err);\n";
    c << "  if (err != CL_SUCCESS) {\n    " << p << "_destroy(handle);\n    return err;\n  }\n";
  }
  for (size_t t = 0; t < temporaries; ++t) {
    const EmittedBuffer& buffer = emitted.buffers[firstTemporary + t];
    c << "  handle->temporaries[" << t << "] = clCreateBuffer(context, CL_MEM_READ_WRITE, "
      << buffer.bytesMacro << ", NULL, &err);\n";
    c << "  if (err != CL_SUCCESS) {\n    " << p << "_destroy(handle);\n    return err;\n  }\n";
  }
  c << "  err = " << p << "_set_constant_args(handle);\n";
  c << "  if (err != CL_SUCCESS) {\n    " << p << "_destroy(handle);\n    return err;\n  }\n";
  c << "  handle->ready = 1;\n  *out = handle;\n  return CL_SUCCESS;\n}\n\n";

  // Prepare and run, each with arrays then with named arguments.
  std::vector<size_t> preparationKernels, runKernels;
  for (size_t k = 0; k < kernelCount; ++k) {
    (emitted.kernels[k].preparation ? preparationKernels : runKernels).push_back(k);
  }
  const bool needsPreparation = !preparationKernels.empty();
  c << enqueueFunction(emitted, metadata, EnqueuePart::Prepare, preparationKernels,
                       needsPreparation);
  c << namedArgumentsFunction(emitted, metadata, EnqueuePart::Prepare, preparationKernels.size());
  c << enqueueFunction(emitted, metadata, EnqueuePart::Run, runKernels, needsPreparation);
  c << namedArgumentsFunction(emitted, metadata, EnqueuePart::Run, runKernels.size());
  (void)P;
  return c.str();
}

Json manifest(const Emitted& emitted, const DropinMetadata& metadata) {
  Json out;
  out["prefix"] = metadata.prefix;
  out["program"] = metadata.program;
  out["compiler"] = metadata.compilerVersion;
  out["device"] =
      metadata.tunedOn.empty() && metadata.deviceFingerprint.empty()
          ? Json(nullptr)
          : Json{{"name", metadata.tunedOn}, {"fingerprint", metadata.deviceFingerprint}};
  out["tuning"] = metadata.tuning.empty() ? Json(nullptr) : Json(metadata.tuning);
  Json parameters = Json::object();
  for (const auto& [name, value] : metadata.parameters) parameters[name] = value;
  out["parameters"] = parameters;
  Json sizes = Json::object();
  for (const auto& [name, value] : metadata.sizes) sizes[name] = value;
  out["sizes"] = sizes;
  out["buildOptions"] = metadata.buildOptions;
  Json inputs = Json::array();
  for (const EmittedInput& input : emitted.inputs) inputs.push_back(input.name);
  out["runArguments"] = inputs;
  Json constants = Json::array();
  for (const EmittedInput& input : emitted.inputs) {
    if (input.constant) constants.push_back(input.name);
  }
  out["constantInputs"] = constants;  // the arguments of PREFIX_prepare
  Json preparationKernels = Json::array(), preparedBuffers = Json::array();
  for (const EmittedKernel& kernel : emitted.kernels) {
    if (kernel.preparation) preparationKernels.push_back(kernel.name);
  }
  for (const EmittedBuffer& buffer : emitted.buffers) {
    if (buffer.prepared) preparedBuffers.push_back(buffer.name);
  }
  Json releasable = Json::array();
  for (const EmittedInput& input : emitted.inputs) {
    if (input.constant && input.buffer >= 0 && !input.readByRun) {
      releasable.push_back(input.name);
    }
  }
  const auto [inferenceBytes, allBytes] = inferenceAndAllBytes(emitted);
  // releasableInputs: constant inputs PREFIX_run never reads (the application may release them
  // after PREFIX_prepare); inferenceBytes: every buffer's bytes but theirs.
  out["preparation"] = {{"function", metadata.prefix + "_prepare"},
                        {"kernels", preparationKernels},
                        {"buffers", preparedBuffers},
                        {"releasableInputs", releasable},
                        {"inferenceBytes", inferenceBytes},
                        {"allBuffersBytes", allBytes}};
  Json buffers = Json::array();
  for (const EmittedBuffer& buffer : emitted.buffers) {
    buffers.push_back({{"name", buffer.name},
                       {"role", roleName(buffer.role)},
                       {"elementType", buffer.elementType},
                       {"elements", buffer.elements},
                       {"bytes", buffer.bytes},
                       {"shape", buffer.shape},
                       {"macro", buffer.bytesMacro},
                       {"prepared", buffer.prepared}});
  }
  out["buffers"] = buffers;
  Json kernels = Json::array();
  for (const EmittedKernel& kernel : emitted.kernels) {
    const Json args = kernelArgumentsJson(emitted, kernel);
    std::vector<int64_t> global(kernel.global.begin(), kernel.global.begin() + kernel.dimensions);
    Json local = nullptr;
    if (kernel.hasLocal) {
      local = std::vector<int64_t>(kernel.local.begin(), kernel.local.begin() + kernel.dimensions);
    }
    Json entry = {{"name", kernel.name},  {"dimensions", kernel.dimensions},
                  {"globalSize", global}, {"localSize", local},
                  {"arguments", args},    {"preparation", kernel.preparation}};
    if (!kernel.parts.empty()) entry["launchParts"] = launchPartsJson(kernel);
    kernels.push_back(entry);
  }
  out["kernels"] = kernels;
  out["notes"] = metadata.notes;
  out["files"] = {metadata.prefix + ".cl",   metadata.prefix + ".h",     metadata.prefix + ".c",
                  metadata.prefix + ".json", metadata.prefix + ".cmake", "README.md"};
  return out;
}

std::string cmakeSnippet(const DropinMetadata& metadata) {
  const std::string& p = metadata.prefix;
  return fmt::format(
      "# {0}.cmake, generated by weft emit ({1}).\n"
      "# include() it from a project that enables C: it adds the static library target {0}\n"
      "# (the drop-in host code; kernels embedded) linked to OpenCL::OpenCL:\n"
      "#   include(path/to/{0}.cmake)\n"
      "#   target_link_libraries(my_app PRIVATE {0})\n"
      "if(NOT TARGET OpenCL::OpenCL)\n"
      "  find_package(OpenCL REQUIRED)\n"
      "endif()\n"
      "if(NOT TARGET {0})\n"
      "  add_library({0} STATIC ${{CMAKE_CURRENT_LIST_DIR}}/{0}.c)\n"
      "  target_include_directories({0} PUBLIC ${{CMAKE_CURRENT_LIST_DIR}})\n"
      "  target_compile_definitions({0} PUBLIC CL_TARGET_OPENCL_VERSION=120)\n"
      "  set_target_properties({0} PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON)\n"
      "  target_link_libraries({0} PUBLIC OpenCL::OpenCL)\n"
      "endif()\n",
      p, metadata.program);
}

std::string readme(const Emitted& emitted, const DropinMetadata& metadata) {
  const std::string& p = metadata.prefix;
  const std::string P = upper(p);
  std::ostringstream r;
  r << "# " << p << ": drop-in OpenCL kernels from weft\n\n";
  r << "Generated by `weft emit` (" << metadata.compilerVersion << ") for " << metadata.program
    << ".\n\n";
  for (const std::string& line : describeLines(emitted, metadata)) r << "    " << line << "\n";
  r << "\n## Files\n\n";
  r << "- `" << p
    << ".cl`: the kernels, every size and parameter baked in (for reading; the "
       "same text is embedded in `"
    << p << ".c`).\n";
  r << "- `" << p << ".h`, `" << p
    << ".c`: C99 host code; needs only `<CL/cl.h>` and the OpenCL ICD loader.\n";
  r << "- `" << p
    << ".json`: the manifest (kernels with launch sizes and arguments, buffers, the "
       "preparation kernels and the buffers they write, build options, parameters, device "
       "fingerprint, compiler version).\n";
  r << "- `" << p << ".cmake`: adds the static library target `" << p << "`.\n\n";
  r << "## Use\n\n```cmake\ninclude(path/to/" << p
    << ".cmake)\ntarget_link_libraries(my_app PRIVATE " << p << ")\n```\n\n";
  r << "Without CMake: compile `" << p
    << ".c` with any C99 or C++ compiler and link `-lOpenCL`.\n\n";
  r << "```c\n#include \"" << p << ".h\"\n\n"
    << p << "_t* handle = NULL;\ncl_int err = " << p
    << "_create(context, device, &handle);  /* builds the kernels */\n"
    << "if (err != CL_SUCCESS) {\n  fprintf(stderr, \"%s\\n%s\\n\", " << p << "_error_name(err), "
    << p << "_build_log(handle));\n  " << p << "_destroy(handle);  /* NULL is fine */\n}\n";
  r << "/* application-owned buffers of " << P << "_BYTES_* bytes */\n";
  r << "err = " << p << "_prepare(handle, queue, " << constantArgumentText(emitted)
    << "NULL);  /* once */\n";
  r << "err = " << p << "_run(handle, queue";
  for (const EmittedInput& input : emitted.inputs) r << ", " << input.name;
  r << ", output, NULL);\n" << p << "_destroy(handle);\n```\n\n";
  r << "Buffers (row-major, in the order `" << p << "_run` takes them):\n\n";
  r << "| buffer | role | element | shape | bytes |\n|---|---|---|---|---|\n";
  for (const EmittedBuffer& buffer : emitted.buffers) {
    r << "| `" << buffer.name << "` | " << roleName(buffer.role) << " | " << buffer.elementType
      << " | " << shapeText(buffer.shape) << " | " << buffer.bytes << " (`" << buffer.bytesMacro
      << "`) |\n";
  }
  r << "\nTemporaries are allocated by `" << p
    << "_create` and owned by the handle. The "
       "kernels write every element of the output; nothing needs zeroing. `"
    << p
    << "_run` returns after enqueueing; pass `&event` to wait on (or time) the last kernel, or "
       "use `"
    << p
    << "_run_buffers` for one event per kernel. Every function returns an "
       "OpenCL error code (`"
    << p << "_error_name` names it); after a failed build `" << p
    << "_build_log` has the compiler's log. One handle per thread (kernel arguments live in "
       "it).\n\n";
  std::string inParts;
  for (const EmittedKernel& kernel : emitted.kernels) {
    if (!kernel.parts.empty()) inParts += (inParts.empty() ? "`" : ", `") + kernel.name + "`";
  }
  if (!inParts.empty()) {
    r << "Launched in parts: " << inParts
      << ". The local size of each does not divide its global size (OpenCL 1.2 requires it "
         "to), so its whole work-groups are launched first and the rest with a global offset, "
         "one launch after the other. Its event is the last launch's: it completes when the "
         "whole kernel has, but its profiling times cover that launch only. `"
      << p << ".json` lists the launches under `launchParts`.\n\n";
  }
  r << "## Preparation\n\n";
  r << "Constant inputs (the same in every run, e.g. a layer's weights and biases): "
    << constantNamesText(emitted) << ". `" << p
    << "_prepare` takes them and launches the kernels that depend only on them";
  if (emitted.preparationKernelCount() == 0) {
    r << "; this program has none, so it does nothing (it only marks the handle prepared) and `"
      << p << "_run` does not need it.\n\n";
  } else {
    std::string names;
    for (const EmittedKernel& kernel : emitted.kernels) {
      if (kernel.preparation) names += (names.empty() ? "`" : ", `") + kernel.name + "`";
    }
    r << ": " << names << ", writing " << preparedNamesText(emitted)
      << " (temporaries the handle owns). Call it once after `" << p
      << "_create` and again whenever those inputs change (not while a run is in flight). `" << p
      << "_run` launches only the other " << emitted.runKernelCount() << " kernel(s); before `" << p
      << "_prepare` it returns `" << P
      << "_ERROR_NOT_PREPARED`, and its first kernel waits for the last preparation "
         "kernel.";
    const std::string prepareOnly = prepareOnlyNamesText(emitted);
    if (!prepareOnly.empty()) {
      const auto [inference, all] = inferenceAndAllBytes(emitted);
      r << " `" << p << "_run` never reads " << prepareOnly << ": once `" << p
        << "_prepare` has returned, the application may release "
        << (prepareOnly.find(',') == std::string::npos ? "it" : "them")
        << " (`clReleaseMemObject`; OpenCL keeps a buffer until the commands using it are done) "
           "and pass `NULL` in "
        << (prepareOnly.find(',') == std::string::npos ? "its place" : "their places")
        << " to `" << p << "_run` (a later `" << p << "_prepare` needs "
        << (prepareOnly.find(',') == std::string::npos ? "it" : "them")
        << " again). Memory at inference time, every buffer but "
        << (prepareOnly.find(',') == std::string::npos ? "that one" : "those") << ": "
        << inference << " bytes (all buffers: " << all << " bytes).";
    }
    r << "\n\n";
  }
  r << "Layouts: each input is read in the layout of the weft definition's parameter (the "
       "shapes above); any re-layout the kernels need happens on the device, in `"
    << p << "_prepare` when it concerns constant inputs only.\n";
  for (const std::string& note : metadata.notes) r << "\nNote: " << note << "\n";
  return r.str();
}

}  // namespace

std::string dropinPrefix(const std::string& name) {
  std::string part = identifierPart(name);
  if (part.front() == '_') part.erase(0, 1);
  if (part.rfind("weft_", 0) == 0) return part;
  return "weft_" + part;
}

std::vector<DropinFile> emitDropin(const CompiledProgram& program, const ArithBinding& sizes,
                                   const DropinMetadata& metadata) {
  if (!isCIdentifier(metadata.prefix)) {
    throw DropinError("the drop-in prefix '" + metadata.prefix +
                      "' is not a C identifier (letters, digits and '_', no leading digit)");
  }
  if (cKeywords().count(metadata.prefix)) {
    throw DropinError("the drop-in prefix '" + metadata.prefix + "' is a C keyword");
  }
  Emitted emitted = prepareEmission(program, sizes, metadata);
  std::string clText = clSource(program, emitted, metadata);
  const std::string& p = metadata.prefix;
  return {{p + ".cl", clText},
          {p + ".h", header(emitted, metadata)},
          {p + ".c", source(emitted, clText, metadata)},
          {p + ".json", manifest(emitted, metadata).dump(2) + "\n"},
          {p + ".cmake", cmakeSnippet(metadata)},
          {"README.md", readme(emitted, metadata)}};
}

void writeDropin(const std::filesystem::path& folder, const std::vector<DropinFile>& files) {
  std::string failure = writeExportedFiles(folder, files);
  if (!failure.empty()) throw DropinError(failure);
}

std::string writeExportedFiles(const std::filesystem::path& folder,
                               const std::vector<DropinFile>& files) {
  auto makeFolder = [](const std::filesystem::path& path) -> std::string {
    if (path.empty()) return "";
    std::error_code error;
    std::filesystem::create_directories(path, error);
    if (error || !std::filesystem::is_directory(path)) {
      return path.string() + ": cannot create the folder" +
             (error ? " (" + error.message() + ")" : std::string());
    }
    return "";
  };
  std::string failure = makeFolder(folder);
  for (const DropinFile& file : files) {
    if (!failure.empty()) return failure;
    std::filesystem::path path = folder / file.name;
    if (path.parent_path() != folder) failure = makeFolder(path.parent_path());
    if (!failure.empty()) return failure;
    std::ofstream out(path, std::ios::binary);
    out << file.contents;
    out.close();
    if (!out) return path.string() + ": cannot write";
  }
  return failure;
}

}  // namespace weft::exporting
