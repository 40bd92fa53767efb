#!/usr/bin/env bash
# Fuzzes each libFuzzer target of fuzz/ (built by the default build when clang++ is installed)
# for FUZZ_SECONDS seconds (default 120), or until FUZZ_RUNS executions when that is set (then
# FUZZ_SECONDS is only the cap), from its seed corpus and kept findings, one after the other, and writes what each did to bench/results/fuzz.json and fuzz.md: executions, coverage
# (edges and features), the corpus it grew, and its findings (crash, leak, timeout or
# out-of-memory inputs, copied to bench/results/fuzz-findings/ to be fixed and kept in
# fuzz/regressions/<target>/).
# FUZZ_TARGETS (space-separated) runs only those; the others keep their rows from the earlier
# fuzz.json, each row saying when and on which machine it was taken. FUZZ_FORK=N runs N
# libFuzzer jobs at once (-fork=N, one corpus) and stops them once their executions together
# reach FUZZ_RUNS.
# Usage: bash bench/fuzz.sh [BUILD_DIR]   (default build)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
seconds=${FUZZ_SECONDS:-120}
runs=${FUZZ_RUNS:-}
fork=${FUZZ_FORK:-1}
targets=${FUZZ_TARGETS:-text_format npy arith profile_json results_db bundle_results}
machine=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
results=$root/bench/results
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Ctrl-C stops the whole run (libFuzzer ends on SIGINT with its own status, which bash would
# otherwise take as the target's end and go on to the next one).
trap 'echo "interrupted"; exit 130' INT
entries=()
for target in $targets; do
  fuzzer=$build/fuzz/fuzz_$target
  [ -x "$fuzzer" ] || { echo "no $fuzzer: build with clang++ installed (WEFT_FUZZ=ON)"; exit 2; }
  mkdir -p "$work/$target/corpus"
  kept=()
  [ -d "$root/fuzz/regressions/$target" ] && kept=("$root/fuzz/regressions/$target")
  echo "fuzzing $target for $seconds s${runs:+ or $runs executions}"
  if [ "$fork" -gt 1 ]; then
    # Fork mode prints the jobs' executions together as "#N:"; -runs does not bound them.
    "$fuzzer" -fork="$fork" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$work/$target/" "$work/$target/corpus" "$root/fuzz/corpus/$target" \
      "${kept[@]}" >"$work/$target/log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
      sleep 5
      done_runs=$(grep -E '^#[0-9]+' "$work/$target/log" | tail -1 | sed 's/^#\([0-9]*\).*/\1/')
      # SIGTERM: a background job of a script ignores SIGINT.
      if [ -n "$runs" ] && [ "${done_runs:-0}" -ge "$runs" ]; then kill -TERM "$pid"; fi
    done
    wait "$pid"
    status=$?
    # Its jobs outlive a terminated parent: each names this run's artifact prefix.
    pkill -TERM -f -- "-artifact_prefix=$work/$target/" 2>/dev/null
    [ -n "$runs" ] && [ "${done_runs:-0}" -ge "$runs" ] && status=0
  else
    "$fuzzer" -max_total_time="$seconds" ${runs:+-runs="$runs"} -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 \
      -artifact_prefix="$work/$target/" "$work/$target/corpus" "$root/fuzz/corpus/$target" \
      "${kept[@]}" >"$work/$target/log" 2>&1
    status=$?
  fi
  findings=$(cd "$work/$target" && ls crash-* leak-* timeout-* oom-* 2>/dev/null | tr '\n' ' ')
  if [ -n "$findings" ]; then
    mkdir -p "$results/fuzz-findings"
    for f in $findings; do cp "$work/$target/$f" "$results/fuzz-findings/${target}_$f"; done
  fi
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target/log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$work/$target/log" | tail -1)
  [ -z "$executions" ] && executions=$(sed 's/^#\([0-9]*\).*/\1/' <<<"$last")
  coverage=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  features=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(ls "$work/$target/corpus" | wc -l)
  echo "  $target: exit $status, ${executions:-0} executions, coverage ${coverage:-?} edges, findings: ${findings:-none}"
  entries+=("{\"target\": \"$target\", \"date\": \"$(date -u +%FT%TZ)\", \"machine\": \"$machine\", \"jobs\": $fork, \"seconds_cap\": $seconds, \"exit\": $status, \"executions\": ${executions:-0}, \"coverage_edges\": ${coverage:-0}, \"features\": ${features:-0}, \"new_corpus_inputs\": $corpus, \"findings\": \"${findings% }\"}")
done
new_rows=$(IFS=,; echo "[${entries[*]}]")
python3 - "$results/fuzz.json" "$results/fuzz.md" "$new_rows" <<'PY'
import json, os, sys
path, md, new = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
earlier = json.load(open(path)) if os.path.exists(path) else {"targets": []}
order = ["text_format", "npy", "arith", "profile_json", "results_db", "bundle_results"]
rows = {t["target"]: t for t in earlier.get("targets", [])}
for t in rows.values():  # rows written before each row carried its own date and machine
    t.setdefault("date", earlier.get("date", "?"))
    t.setdefault("machine", earlier.get("machine", "?"))
for t in new:
    rows[t["target"]] = t
targets = sorted(rows.values(), key=lambda t: order.index(t["target"]) if t["target"] in order else 99)
json.dump({"benchmark": "fuzz", "targets": targets}, open(path, "w"), indent=1)
lines = ["# Fuzzing weft's input readers", "",
         "`bash bench/fuzz.sh` (fuzz/README.md): each libFuzzer target with AddressSanitizer and "
         "UndefinedBehaviorSanitizer, from its seed corpus and kept findings. Each row says when "
         "and on which machine it was taken (FUZZ_TARGETS reruns a part).", "",
         "| target | date | machine | jobs | seconds (cap) | executions | coverage (edges) | features | new inputs | findings |",
         "|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
for t in targets:
    lines.append(f"| {t['target']} | {t['date']} | {t['machine']} | {t.get('jobs', 1)} | "
                 f"{t.get('seconds_cap', t.get('seconds'))} | {t['executions']} | {t['coverage_edges']} | "
                 f"{t['features']} | {t['new_corpus_inputs']} | {t['findings'] or 'none'} |")
open(md, "w").write("\n".join(lines) + "\n")
PY
cat "$results/fuzz.md"
