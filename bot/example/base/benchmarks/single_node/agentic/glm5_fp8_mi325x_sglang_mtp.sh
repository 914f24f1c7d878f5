#!/usr/bin/env bash
# GLM-5 FP8 agentic coding on one MI325X node with SGLang and its MTP head; the
# DRAM-offload points spill the radix cache to host memory through HiCache.
# Written for prbot's demo; the recipe (CONFIG_FILE) holds the server's settings.
set -euo pipefail

source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP CONC KV_OFFLOADING CONFIG_FILE RESULT_DIR RESULT_FILENAME

serve_recipe "$CONFIG_FILE"

run_benchmark_serving \
    --model "$MODEL" \
    --use-chat-template \
    --result-filename "$RESULT_FILENAME"
