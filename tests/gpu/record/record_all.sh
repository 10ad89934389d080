#!/usr/bin/env bash
# Record issue 20's test inputs on a device machine (one call; 2 GPUs for the DDP pair):
# a JAX step, torch.compile traces, a CUDA C++ program under ncu, a 2-rank DDP job whose rank 1's
# host is late. Each lands as a .tar.gz in OUT (the device tool brings back 8 files at most).
#   bash tests/gpu/record/record_all.sh "$OUT"
set -uo pipefail
out=${1:?output folder}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$repo/src:$repo
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

echo "== jax"
timeout 180 python3 "$here/jax_step.py" "$work/jax" 2>&1 | tail -3
(cd "$work" && tar czf "$out/jax_step.tar.gz" jax) && ls -la "$out/jax_step.tar.gz"

echo "== torch.compile"
timeout 240 python3 "$here/compiled_step.py" "$work/compiled" 2>&1 | tail -3
gzip -f "$work"/compiled/*.json
(cd "$work" && tar czf "$out/compiled.tar.gz" compiled) && ls -la "$out/compiled.tar.gz"

echo "== CUDA C++ under ncu"
mkdir -p "$work/ncu"
nvcc -O2 -arch=sm_90 -o "$work/ncu/tiny_grid" "$here/tiny_grid.cu" && "$work/ncu/tiny_grid"
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
timeout 120 ncu --csv --clock-control none --section LaunchStats --section SpeedOfLight \
    --section Occupancy --metrics "$metrics" "$work/ncu/tiny_grid" > "$work/ncu/tiny_grid_details.csv"
timeout 120 ncu --csv --page raw --clock-control none --metrics "$metrics" \
    "$work/ncu/tiny_grid" > "$work/ncu/tiny_grid_raw.csv"
cp "$here/tiny_grid.cu" "$work/ncu/"
rm -f "$work/ncu/tiny_grid"
(cd "$work" && tar czf "$out/ncu_tiny_grid.tar.gz" ncu) && ls -la "$out/ncu_tiny_grid.tar.gz"

if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
  echo "== DDP, rank 1's host late by 25 ms each step"
  timeout 300 python3 -m gpuscope run --output-dir "$work/ddp" --tools torch_profiler -- \
      python3 -m torch.distributed.run --nproc-per-node 2 "$repo/tests/gpu/ddp_step.py" \
      --steps 12 --extra-matmuls 0 --host-delay-ms 25 2>&1 | tail -4
  (cd "$work" && tar czf "$out/ddp_late_host.tar.gz" ddp) && ls -la "$out/ddp_late_host.tar.gz"
fi
