// `weft compile FILE [--def NAME] [-o out.cl] [--size N=..]... [--no-lower]`: generates OpenCL
// C for a definition and says how to launch it.
//
// The file is parsed and compiled by codegen/compile_pipeline.h: the default lowering unless
// --no-lower says the definition is already low-level, then the kernels are generated with
// the --size values substituted as constants (the other sizes stay symbolic and become kernel
// arguments). The source goes to -o, or to stdout; then the kernels with their launch
// sizes and the buffers with their sizes are printed (CompiledProgram::describe), as `//`
// comments when they follow the source on stdout so that the output stays valid OpenCL C.
// Parse, type and code generation errors propagate to cli/main.cpp (one line, exit code 1).
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/program_loading.h"
#include "codegen/codegen.h"
#include "codegen/compile_pipeline.h"
#include "ir/parser.h"

namespace weft::cli {

namespace {

struct CompileOptions {
  std::string file;
  std::string definition;
  std::string output;
  std::vector<std::string> sizes;
  bool noLower = false;
};

// The size variables a --size may bind: those the function mentions and the declared ones.
std::set<std::string> sizeNames(const Definition& definition) {
  std::set<std::string> names = mentionedSizeNames(definition);
  for (const Arith& declared : definition.sizeDeclarations) names.insert(declared.varName());
  return names;
}

std::string commented(const std::string& text) {
  std::istringstream lines(text);
  std::string line, out;
  while (std::getline(lines, line)) out += "// " + line + "\n";
  return out;
}

void compile(const CompileOptions& options) {
  Program program = parseFile(options.file);
  const Definition& definition =
      chooseFunctionDefinition(program, options.file, options.definition, "compile");
  CompilePipelineOptions passes;
  passes.codegen.specialize = parseSizeOptions(options.sizes, definition, sizeNames(definition));
  passes.lower = !options.noLower;
  const CodegenOptions& codegen = passes.codegen;
  CompiledProgram compiled = compileToOpenCL(definition, {}, passes);

  std::string summary =
      definition.name + ": " + std::to_string(compiled.kernels.size()) + " kernel(s)";
  if (!codegen.specialize.empty()) {
    summary += ", specialised for";
    for (const auto& [name, value] : codegen.specialize) {
      summary += " " + name + "=" + std::to_string(value);
    }
  }
  if (!compiled.openSizes.empty()) {
    summary += ", size arguments";
    for (const Arith& size : compiled.openSizes) summary += " " + size.toString();
  }
  summary += "\n" + compiled.describe(codegen.specialize);

  if (options.output.empty()) {
    std::printf("%s\n%s", compiled.source.c_str(), commented(summary).c_str());
    return;
  }
  std::ofstream out(options.output, std::ios::binary);
  out << compiled.source;
  out.close();
  if (!out) throw std::runtime_error(options.output + ": cannot write the OpenCL source");
  std::printf("%s", summary.c_str());
  std::printf("OpenCL source written to %s\n", options.output.c_str());
}

}  // namespace

void registerCompile(CLI::App& app) {
  auto options = std::make_shared<CompileOptions>();
  CLI::App* command = app.add_subcommand(
      "compile",
      "Generate OpenCL C kernels for a definition of a weft file.\n"
      "The definition is first given the default lowering (outer maps to mapGlb, inner maps\n"
      "to mapSeq, reduce to reduceSeq) unless --no-lower says it is already low-level.\n"
      "--size fixes a size variable at compile time; the others become kernel arguments.\n"
      "Prints the kernels with their launch sizes and the buffers with their sizes.");
  command->footer(
      "Example:\n"
      "  weft compile examples/matmul.weft -o matmul.cl --size M=64 --size N=64 --size K=64\n");
  command->add_option("file", options->file, "the .weft file to compile")->required();
  command->add_option("--def", options->definition,
                      "the definition to compile (default: the last one in the file)");
  command->add_option("-o,--output", options->output,
                      "where to write the OpenCL source (default: stdout)");
  command
      ->add_option("--size", options->sizes,
                   "fix a size variable at compile time, e.g. --size N=1024")
      ->allow_extra_args(false);
  command->add_flag("--no-lower", options->noLower,
                    "generate the definition as written (it must be low-level already)");
  command->callback([options] { compile(*options); });
}

}  // namespace weft::cli
