#!/usr/bin/env bash
# Fuzzes each libFuzzer target of fuzz/ (built by the default build when clang++ is installed)
# for FUZZ_SECONDS seconds (default 120), or until FUZZ_RUNS executions when that is set (then
# FUZZ_SECONDS is only the cap), from its seed corpus and kept findings, one after the other, and writes what each did to bench/results/fuzz.json and fuzz.md: executions, coverage
# (edges and features), the corpus it grew, and its findings (crash, leak, timeout or
# out-of-memory inputs, copied to bench/results/fuzz-findings/ to be fixed and kept in
# fuzz/regressions/<target>/).
# Usage: bash bench/fuzz.sh [BUILD_DIR]   (default build)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
seconds=${FUZZ_SECONDS:-120}
runs=${FUZZ_RUNS:-}
results=$root/bench/results
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Ctrl-C stops the whole run (libFuzzer ends on SIGINT with its own status, which bash would
# otherwise take as the target's end and go on to the next one).
trap 'echo "interrupted"; exit 130' INT
entries=()
for target in text_format npy arith profile_json results_db bundle_results; do
  fuzzer=$build/fuzz/fuzz_$target
  [ -x "$fuzzer" ] || { echo "no $fuzzer: build with clang++ installed (WEFT_FUZZ=ON)"; exit 2; }
  mkdir -p "$work/$target/corpus"
  kept=()
  [ -d "$root/fuzz/regressions/$target" ] && kept=("$root/fuzz/regressions/$target")
  echo "fuzzing $target for $seconds s${runs:+ or $runs executions}"
  "$fuzzer" -max_total_time="$seconds" ${runs:+-runs="$runs"} -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 \
    -artifact_prefix="$work/$target/" "$work/$target/corpus" "$root/fuzz/corpus/$target" \
    "${kept[@]}" >"$work/$target/log" 2>&1
  status=$?
  findings=$(cd "$work/$target" && ls crash-* leak-* timeout-* oom-* 2>/dev/null | tr '\n' ' ')
  if [ -n "$findings" ]; then
    mkdir -p "$results/fuzz-findings"
    for f in $findings; do cp "$work/$target/$f" "$results/fuzz-findings/${target}_$f"; done
  fi
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target/log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$work/$target/log" | tail -1)
  coverage=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  features=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(ls "$work/$target/corpus" | wc -l)
  echo "  $target: exit $status, ${executions:-0} executions, coverage ${coverage:-?} edges, findings: ${findings:-none}"
  entries+=("{\"target\": \"$target\", \"seconds_cap\": $seconds, \"exit\": $status, \"executions\": ${executions:-0}, \"coverage_edges\": ${coverage:-0}, \"features\": ${features:-0}, \"new_corpus_inputs\": $corpus, \"findings\": \"${findings% }\"}")
done
machine=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
{
  echo "{\"benchmark\": \"fuzz\", \"date\": \"$(date -u +%FT%TZ)\", \"machine\": \"$machine\", \"targets\": ["
  (IFS=,; echo "${entries[*]}")
  echo "]}"
} >"$results/fuzz.json"
python3 - "$results/fuzz.json" "$results/fuzz.md" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
lines = [f"# Fuzzing weft's input readers ({data['date']}, {data['machine']})", "",
         "`bash bench/fuzz.sh` (fuzz/README.md): each libFuzzer target with AddressSanitizer and "
         "UndefinedBehaviorSanitizer, from its seed corpus and kept findings.", "",
         "| target | seconds (cap) | executions | coverage (edges) | features | new inputs | findings |",
         "|---|---:|---:|---:|---:|---:|---|"]
for t in data["targets"]:
    lines.append(f"| {t['target']} | {t.get('seconds_cap', t.get('seconds'))} | {t['executions']} | {t['coverage_edges']} | "
                 f"{t['features']} | {t['new_corpus_inputs']} | {t['findings'] or 'none'} |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
cat "$results/fuzz.md"
