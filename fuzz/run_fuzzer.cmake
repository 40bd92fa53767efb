# Runs one libFuzzer target as a CTest test: first over the kept findings (fuzz/regressions/,
# each must now pass) and the seed corpus, then fuzzing for SECONDS from the seeds. New inputs
# go to WORK (never into the source tree); a crash is written to WORK/crash-* and fails the test.
# -D FUZZER=... SEEDS=... KEPT=... WORK=... SECONDS=...
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus)
set(kept "")
if(EXISTS ${KEPT})
  file(GLOB kept ${KEPT}/*)
endif()
file(GLOB seeds ${SEEDS}/*)
execute_process(COMMAND ${FUZZER} -runs=0 ${seeds} ${kept} RESULT_VARIABLE replayed)
if(NOT replayed EQUAL 0)
  message(FATAL_ERROR "${FUZZER} fails on a seed or a kept finding")
endif()
execute_process(COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2048
                        -artifact_prefix=${WORK}/ ${WORK}/corpus ${SEEDS}
                RESULT_VARIABLE fuzzed)
if(NOT fuzzed EQUAL 0)
  file(GLOB found ${WORK}/crash-* ${WORK}/leak-* ${WORK}/oom-* ${WORK}/timeout-*)
  # The inputs' bytes in the message too: running the test again empties WORK, and the log is
  # all that is left of a finding on another machine (CI).
  set(bytes "")
  foreach(input ${found})
    file(READ ${input} hex LIMIT 4096 HEX)
    string(APPEND bytes "\n  ${input} (hex): ${hex}")
  endforeach()
  message(FATAL_ERROR "${FUZZER} found a failing input (exit ${fuzzed}): ${found}${bytes}")
endif()
