#!/bin/bash
# One exploration of VGG-16 layer 2 (1000 variants) shared by 8 machines as a Slurm job array:
# every task samples the same 1000 points (same --seed, same --profile) and runs its eighth of
# them (--shard i/8 keeps the points whose index % 8 == i - 1) into its own database. Submit with
#   sbatch examples/slurm/explore_array.sh
# and, once every task has finished, merge the shards and report:
#   weft merge --db results.db results-{1..8}.db
#   weft report --db results.db
# A task that is cut off can be resubmitted alone (sbatch --array=3 ...): it resumes from its
# database. Give every task the same kind of node: the device fingerprint is part of each
# result's key, and --profile fixes the hardware constraints so that every task samples the same
# points (without it each task uses its own device's queried profile).
#SBATCH --job-name=weft-explore
#SBATCH --array=1-8
#SBATCH --cpus-per-task=2
#SBATCH --time=04:00:00
#SBATCH --output=weft-explore-%A_%a.log

set -euo pipefail
WEFT=${WEFT:-build/weft}

"$WEFT" explore --layer vgg16:2 --samples 1000 --seed 1 \
  --shard "${SLURM_ARRAY_TASK_ID}/8" --db "results-${SLURM_ARRAY_TASK_ID}.db" --quiet
