#!/usr/bin/env bash
# The example's h200-crusoe launcher (written for prbot's demo): imports the run's image and
# runs benchmarks/single_node/<scenario>/<prefix>_<precision>_h200_<framework>[_mtp].sh in it.
set -euo pipefail

if [[ "$SPEC_DECODING" == "mtp" ]]; then
    MTP=_mtp
else
    MTP=
fi
FOLDER="benchmarks/single_node/${SCENARIO_SUBDIR:-fixed_seq_len/}"
STEM="${FOLDER}${EXP_NAME%%_*}_${PRECISION}_h200"
SCRIPT="${STEM}_${FRAMEWORK}${MTP}.sh"
[[ -f "$SCRIPT" ]] || SCRIPT="${STEM}${MTP}.sh"

SQUASH="/scratch/squash/$(printf '%s' "$IMAGE" | tr '/:@' '___').sqsh"
JOB=$(salloc --partition=h200 --gres=gpu:8 --exclusive --no-shell --parsable)
trap 'scancel "$JOB"' EXIT

srun --jobid="$JOB" enroot import -o "$SQUASH" "docker://$IMAGE"
srun --jobid="$JOB" \
    --container-image="$SQUASH" \
    --container-mounts="$GITHUB_WORKSPACE:/work" \
    --container-workdir=/work \
    bash "$SCRIPT"
