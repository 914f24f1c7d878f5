#!/usr/bin/env bash
# gpt-oss FP4 on one H200 node with vLLM, fixed sequence lengths.
# Written for prbot's demo; the recipe (CONFIG_FILE) holds the server's settings.
set -euo pipefail

source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP CONC ISL OSL CONFIG_FILE RESULT_DIR RESULT_FILENAME

serve_recipe "$CONFIG_FILE"

run_benchmark_serving \
    --model "$MODEL" \
    --result-filename "$RESULT_FILENAME"
