#!/usr/bin/env bash
# Two 4-rank DDP jobs under `gpuscope run` (4 GPUs): rank 2 computes more before every step
# (8 extra 4096² matmuls on its GPU), and rank 0's host is late by 25 ms after each step's sync.
# Each run directory lands in OUT as a .tar.gz; the analysis of each beside it as JSON.
#   bash tests/gpu/record/record_ddp4.sh "$OUT"
set -uo pipefail
out=${1:?output folder}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$repo/src:$repo
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
record() {  # name, then ddp_step.py's options
  local name=$1; shift
  echo "== $name"
  timeout 240 python3 -m gpuscope run -q --output-dir "$work/$name" --tools torch_profiler -- \
      python3 -m torch.distributed.run --nproc-per-node 4 "$repo/tests/gpu/ddp_step.py" \
      --steps 12 "$@" 2>&1 | tail -3
  (cd "$work" && tar czf "$out/$name.tar.gz" "$name") && ls -la "$out/$name.tar.gz"
  python3 -m gpuscope analyze "$work/$name"/* --json "$out/$name.analysis.json" 2>&1 | tail -45
}
record ddp4_rank2_computes_more --slow-rank 2 --extra-matmuls 8
record ddp4_rank0_host_late --slow-rank 0 --extra-matmuls 0 --host-delay-ms 25
