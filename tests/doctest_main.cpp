// The main() shared by every weft test executable. doctest generates it from
// DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN; it is compiled once (the CMake object
// library weft_doctest_main) instead of once per test file.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
