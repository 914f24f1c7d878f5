#!/usr/bin/env bash
# The example's mi325x-tw launcher (written for prbot's demo): imports the run's image and
# runs benchmarks/single_node/<scenario>/<prefix>_<precision>_mi325x_<framework>[_mtp].sh in it.
set -euo pipefail

SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
SCRIPT_BASE="${EXP_NAME%%_*}_${PRECISION}_mi325x"
SCRIPT_DIR="benchmarks/single_node/${SCENARIO_SUBDIR:-fixed_seq_len/}"
SCRIPT_FW="${SCRIPT_DIR}${SCRIPT_BASE}_${FRAMEWORK}${SPEC_SUFFIX}.sh"
SCRIPT_FALLBACK="${SCRIPT_DIR}${SCRIPT_BASE}${SPEC_SUFFIX}.sh"
if [[ -f "$SCRIPT_FW" ]]; then
    BENCHMARK_SCRIPT="$SCRIPT_FW"
else
    BENCHMARK_SCRIPT="$SCRIPT_FALLBACK"
fi

SQUASH_FILE="/scratch/squash/$(printf '%s' "$IMAGE" | tr '/:@' '___').sqsh"
JOB_ID=$(salloc --partition=gpu --gres=gpu:8 --exclusive --no-shell --parsable)
trap 'scancel "$JOB_ID"' EXIT

srun --jobid="$JOB_ID" enroot import -o "$SQUASH_FILE" "docker://$IMAGE"
srun --jobid="$JOB_ID" \
    --container-image="$SQUASH_FILE" \
    --container-mounts="$GITHUB_WORKSPACE:/work" \
    --container-workdir=/work \
    bash "$BENCHMARK_SCRIPT"
