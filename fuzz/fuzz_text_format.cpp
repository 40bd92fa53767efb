// libFuzzer target: the text format. Every input the parser accepts is type-checked, printed,
// parsed again and printed again: the second parse must accept what the printer wrote, and the
// two printed texts must be equal (the printer and the parser are inverses up to the renaming
// of bound parameters, which the first print already did). Rejections must be ParseError or
// TypeError with a location; any other exception, a crash or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ir/parser.h"
#include "ir/printer.h"
#include "typecheck/typecheck.h"
#include "fuzz/fuzz_support.h"

using weft::fuzzing::finding;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // long inputs only slow the search down
  const std::string text(reinterpret_cast<const char*>(data), size);
  weft::Program program;
  try {
    program = weft::parseProgram(text, "fuzz.weft");
  } catch (const weft::ParseError&) {
    return 0;
  } catch (const weft::TypeError&) {
    return 0;  // the parser type-checks user functions' bodies
  } catch (const std::exception& error) {
    finding(std::string("parseProgram threw something other than a ParseError: ") + error.what(),
            text);
  }
  try {
    weft::typecheckProgram(program);
  } catch (const weft::TypeError&) {
    // Ill-typed programs still print and parse back.
  } catch (const std::exception& error) {
    finding(std::string("typecheck threw something other than a TypeError: ") + error.what(), text);
  }
  const std::string printed = weft::printProgram(program);
  weft::Program again;
  try {
    again = weft::parseProgram(printed, "printed.weft");
  } catch (const std::exception& error) {
    finding(std::string("the printed program does not parse: ") + error.what() +
                "\n--- printed ---\n" + printed,
            text);
  }
  const std::string reprinted = weft::printProgram(again);
  if (reprinted != printed) {
    finding("printing the reparsed program differs:\n--- printed ---\n" + printed +
                "\n--- reprinted ---\n" + reprinted,
            text);
  }
  return 0;
}
