#!/usr/bin/env bash
# Helpers the example's benchmark scripts source (prbot's demo repository; written for it).

# Stop with a message naming every variable in "$@" that the launcher did not set.
check_env_vars() {
    local missing=()
    for name in "$@"; do
        [[ -n "${!name:-}" ]] || missing+=("$name")
    done
    if (( ${#missing[@]} )); then
        echo "missing environment: ${missing[*]}" >&2
        exit 1
    fi
}

# Start the server the recipe ($1) describes for this run's variant, and wait until it answers.
serve_recipe() {
    local recipe=$1
    srt-serve --recipe "$recipe" --concurrency "$CONC" --port 8000 &
    SERVER_PID=$!
    for _ in $(seq 1 180); do
        curl -sf http://127.0.0.1:8000/health >/dev/null && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || { echo "server exited" >&2; exit 1; }
        sleep 10
    done
    echo "server not ready after 30 minutes" >&2
    exit 1
}

# Run the serving benchmark against the local server; the arguments go to the client as given.
run_benchmark_serving() {
    python3 -m benchmark_client \
        --base-url http://127.0.0.1:8000 \
        --max-concurrency "$CONC" \
        --result-dir "$RESULT_DIR" \
        "$@"
}
