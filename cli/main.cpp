// Entry point of the `weft` command: builds the CLI11 app from the subcommands in
// cli/commands.h and turns library errors into one clear line on stderr and exit code 1.
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "workloads/builtin_workloads.h"

#ifndef WEFT_VERSION
#define WEFT_VERSION "dev"
#endif

int main(int argc, char** argv) {
  weft::workloads::registerBuiltinWorkloads();
  CLI::App app{
      "weft: a compiler for data-parallel array programs in the style of LIFT.\n"
      "Programs are written with map, reduce, zip, split, join, slide, pad, transpose, ...\n"
      "over arrays with symbolic lengths.\n\n"
      "The common path: explore a layer's or a program's implementations (each one built, run,\n"
      "checked against the reference and timed on the device), report the fastest and the\n"
      "time/space front, emit the one you choose as a drop-in kernel with host code:\n"
      "  weft explore --layer 8,16,16,8,3,1,1 --samples 12 --db results.db\n"
      "  weft report --db results.db\n"
      "  weft emit --db results.db --layer 8,16,16,8,3,1,1 --pick fastest --out out/\n\n"
      "Check and run a program (a.npy and b.npy: see weft run --help):\n"
      "  weft check examples/conv.weft\n"
      "  weft run examples/dot.weft --in a.npy --in b.npy --out y.npy"};
  app.set_version_flag("--version", WEFT_VERSION);
  app.require_subcommand(1);
  weft::cli::registerCheck(app);
  weft::cli::registerRun(app);
  weft::cli::registerDevices(app);
  weft::cli::registerCompile(app);
  weft::cli::registerRewrite(app);
  weft::cli::registerSpace(app);
  weft::cli::registerExplore(app);
  weft::cli::registerReport(app);
  weft::cli::registerMerge(app);
  weft::cli::registerEmit(app);
  weft::cli::registerBundle(app);
  weft::cli::registerImport(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft: %s\n", e.what());
    return 1;
  }
  return 0;
}
