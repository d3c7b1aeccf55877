#!/usr/bin/env bash
# The GPU smoke run of the Colab training path (tools/gpu_smoke.py says how): stage here, then the device calls it lists.
exec python3 "$(dirname "$0")/gpu_smoke.py" "$@"
