#!/usr/bin/env bash
# Record issue 26's planted programs on a device machine (one call, one GPU): each plant in its
# own process (start-up must be a fresh one), gzipped, in one tarball under OUT.
#   bash tests/gpu/record/record_planted.sh "$OUT" [NAMES...]
set -uo pipefail
out=${1:?output folder}; shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)/planted
mkdir -p "$work"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.max,pcie.link.width.max,pcie.link.gen.current,pcie.link.width.current --format=csv | tee "$work/gpu.csv"
python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)" | tee -a "$work/gpu.csv"
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(input_pipeline item_sync eager_launch compiled_launch pageable_copy pinned_copy startup gpu_bound sleep_then_sync)
for name in "${names[@]}"; do
  timeout 200 python3 "$here/planted.py" "$work" "$name" 2>&1 | tail -2
done
gzip -f "$work"/*.json
ls -la "$work"
(cd "$work/.." && tar czf "$out/planted.tar.gz" planted) && ls -la "$out/planted.tar.gz"
