// The subcommands of the `weft` command line. Each command lives in its own cli/cmd_*.cpp and
// registers itself on the CLI11 app; cli/main.cpp only lists them. Commands are thin: they
// parse options, call the library and print.
#pragma once

#include <CLI/CLI.hpp>

namespace weft::cli {

void registerCheck(CLI::App& app);  // weft check FILE
void registerRun(CLI::App& app);    // weft run FILE --in ... --out ...
void registerDevices(CLI::App& app);  // weft devices [--json]
void registerCompile(CLI::App& app);  // weft compile FILE [-o out.cl] [--size N=..]
void registerRewrite(CLI::App& app);  // weft rules; weft rewrite FILE --list | --apply R@POS
void registerSpace(CLI::App& app);    // weft space FILE [--size N=..] [--samples K --seed S]
void registerExplore(CLI::App& app);  // weft explore --layer SPEC | FILE --samples K --db F
void registerReport(CLI::App& app);   // weft report --db F [--layer SPEC]
void registerMerge(CLI::App& app);    // weft merge --db TARGET SOURCE...
void registerEmit(CLI::App& app);     // weft emit FILE|--layer L --params ...|--db F --pick P --out DIR
void registerBundle(CLI::App& app);   // weft bundle --layer L --samples K --profile P --out DIR
void registerImport(CLI::App& app);   // weft import DIR/results.json --db F

}  // namespace weft::cli
