#!/usr/bin/env bash
# How soon the default cost order reaches a good variant: each distinct VGG-16 layer shape
# explored afresh with 1000 samples (default order, default candidates), then, per layer, the
# samples in measuring order until the first ok variant within 10 % of the best of all 1000, and
# the best of the first 50 against that best. Layers of the same shape (conv3_3 = conv3_2,
# conv4_3 = conv4_2, conv5_2 = conv5_3 = conv5_1) explore the same space with the same seed, so
# each shape is explored once.
# Usage: bash bench/within10.sh [SAMPLES] [DIR] [LAYER ...]
#   SAMPLES: per layer (default 1000); DIR: one database per layer (default
#   bench/results/within10; a database that exists is resumed); LAYER: VGG-16 numbers
#   (default the nine shapes 24 17 10 5 0 19 12 7 2, cheapest first).
# Writes DIR/summary.json and DIR/summary.md from every database in DIR (python3, sqlite3).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
samples=${1:-1000}
dir=${2:-$root/bench/results/within10}
shift $(($# > 2 ? 2 : $#))
layers=("$@")
[ ${#layers[@]} -gt 0 ] || layers=(24 17 10 5 0 19 12 7 2)
mkdir -p "$dir"
for n in "${layers[@]}"; do
  echo "== vgg16:$n, $samples samples ($(date -u +%H:%M:%S))" >&2
  "$root/build/weft" explore --layer "vgg16:$n" --samples "$samples" --seed 1 \
    --db "$dir/vgg16-$n.db" --quiet
done
machine=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
python3 - "$dir" "$samples" "$machine" <<'EOF'
import glob, json, os, sqlite3, sys, datetime
directory, budget, machine = sys.argv[1], int(sys.argv[2]), sys.argv[3]
first = 50
rows = []
for path in sorted(glob.glob(os.path.join(directory, "vgg16-*.db"))):
    db = sqlite3.connect(path)
    for program, device in db.execute("SELECT DISTINCT program, device FROM variants"):
        variants = db.execute(
            "SELECT status, median_ns, strategy, parameters FROM variants "
            "WHERE program = ? AND device = ? ORDER BY id", (program, device)).fetchall()
        ok = [(i, v) for i, v in enumerate(variants) if v[0] == "ok" and v[1]]
        if not ok:
            continue
        best_i, best = min(ok, key=lambda p: p[1][1])
        within = next(i for i, v in ok if v[1] <= 1.10 * best[1]) + 1
        early = [v for i, v in ok if i < first]
        early_best = min(v[1] for v in early) if early else None
        rows.append({
            "database": os.path.basename(path), "program": program, "device": device,
            "samples": len(variants), "ok": len(ok), "best_ms": best[1] / 1e6,
            "best_strategy": best[2], "best_parameters": json.loads(best[3]),
            "sample_of_best": best_i + 1, "samples_to_within_10pct": within,
            "best_of_first_50_ms": early_best / 1e6 if early_best else None,
            "first_50_over_best": early_best / best[1] if early_best else None,
            "met": (("yes" if within <= first else "no") if len(variants) >= budget
                    else f"incomplete ({len(variants)} of {budget}; so far "
                         f"{'yes' if within <= first else 'no'})")})
summary = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine, "samples_per_layer": budget, "first": first, "layers": rows}
with open(os.path.join(directory, "summary.json"), "w") as f:
    json.dump(summary, f, indent=1)
lines = [f"# Samples to within 10 % of the best of {budget}, fresh explorations",
         "", f"{summary['date']}, {machine}; device {rows[0]['device'] if rows else '-'}.",
         "Rows in measuring order (default cost order, default candidates); target: a variant "
         f"within 10 % of the best within the first {first} samples of a {budget}-sample exploration.",
         "", "| layer | samples | ok | best ms | best at sample | best strategy | best of first 50 ms "
         "| first 50 / best | samples to 10 % | met |", "|---|---:|---:|---:|---:|---|---:|---:|---:|---|"]
for r in rows:
    lines.append(f"| {r['program']} | {r['samples']} | {r['ok']} | {r['best_ms']:.3f} | "
                 f"{r['sample_of_best']} | {r['best_strategy']} | {r['best_of_first_50_ms']:.3f} | "
                 f"{r['first_50_over_best']:.3f} | {r['samples_to_within_10pct']} | "
                 f"{r['met']} |")
with open(os.path.join(directory, "summary.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
