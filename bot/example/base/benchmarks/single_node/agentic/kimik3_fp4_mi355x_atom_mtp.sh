#!/usr/bin/env bash
# Kimi-K3 MXFP4 agentic coding on one MI355X node with ATOM and its MTP draft; the
# DRAM-offload points size the LMCache host tier from the recipe's TOTAL_CPU_DRAM_GB.
# Written for prbot's demo; the recipe (CONFIG_FILE) holds the server's settings.
set -euo pipefail

source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP CONC KV_OFFLOADING CONFIG_FILE RESULT_DIR RESULT_FILENAME

serve_recipe "$CONFIG_FILE"

run_benchmark_serving \
    --model "$MODEL" \
    --use-chat-template \
    --result-filename "$RESULT_FILENAME"
