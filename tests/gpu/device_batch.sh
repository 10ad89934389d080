#!/usr/bin/env bash
# The GPU checks of a session in one call on a device machine (see tests/gpu/README or the
# device tool's notes): the whole tests/gpu suite, then the samplers' workload marks with NVML.
# Usage (repository root, msgspec wheel in .whl/): bash tests/gpu/device_batch.sh OUT_DIR [TESTS...]
# (no TESTS: all of tests/gpu)
set -uo pipefail
out=${1:?output folder}; shift
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=/tmp/site:$PWD/src:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)"
targets=("$@"); [ ${#targets[@]} -eq 0 ] && targets=(tests/gpu)
timeout "${GPU_TESTS_TIMEOUT:-420}" python3 -m pytest -q -s -p no:cacheprovider -rs \
    --timeout 240 --durations=25 --junitxml="$out/gpu.xml" "${targets[@]}" 2>&1 | tee "$out/gpu_tests.log" | tail -60
echo "== sampler marks (NVML), 3 short runs"
for i in 1 2 3; do
    python3 -m gpuscope run --output-dir /tmp/marks --tools gpu_info_power_profiler,gpu_info_vram_profiler -- true >/dev/null 2>&1
done
python3 - <<'PY'
import csv, glob
for path in sorted(glob.glob("/tmp/marks/*/gpu_info_*_output.csv")):
    rows = list(csv.DictReader(open(path)))
    marks = [r["mark"] for r in rows if r.get("mark")]
    print(path.split("/")[-2], path.split("/")[-1][:22], "rows", len(rows), "marks", marks)
PY
