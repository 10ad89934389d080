"""One training step of a small MLP under each data-parallel wrapper — FSDP2 (`fully_shard`),
FSDP1 (`FullyShardedDataParallel`) and DDP — as a 1-rank NCCL job on one GPU, profiled with
torch.profiler (a schedule: wait 1, warmup 1, active 3). What the traces are for: the ranges each
wrapper records under its own name, which gpuscope reads to phrase its advice for the wrapper the
program uses (analysis/program.py: PARALLEL_WRAPPERS), seen in real traces rather than read
from torch's source.

    python tests/gpu/record/wrappers_one_rank.py OUT      # writes OUT/wrapper_<name>_h200.json.gz
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule


def model() -> nn.Module:
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for _ in range(4):
        layers += [nn.Linear(2048, 2048), nn.GELU()]
    return nn.Sequential(*layers).cuda()


def wrap(name: str, net: nn.Module) -> nn.Module:
    if name == "fsdp2":
        from torch.distributed.fsdp import fully_shard

        for layer in net:
            if isinstance(layer, nn.Linear):
                fully_shard(layer)
        fully_shard(net)
        return net
    if name == "fsdp1":
        from torch.distributed.fsdp import FullyShardedDataParallel

        return FullyShardedDataParallel(net, use_orig_params=True)
    from torch.nn.parallel import DistributedDataParallel

    return DistributedDataParallel(net)


def record(name: str, out: Path) -> Path:
    net = wrap(name, model())
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-4)
    x = torch.randn(256, 2048, device="cuda")
    trace = out / f"wrapper_{name}_h200.json"
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=1, warmup=1, active=3),
        on_trace_ready=lambda p: p.export_chrome_trace(str(trace)),
        record_shapes=True,
    ) as prof:
        for _ in range(5):
            loss = net(x).float().pow(2).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            prof.step()
    packed = trace.with_suffix(".json.gz")
    with trace.open("rb") as raw, gzip.open(packed, "wb", compresslevel=9) as gz:
        shutil.copyfileobj(raw, gz)
    trace.unlink()
    return packed


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29513")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
    torch.cuda.set_device(0)
    for name in ("fsdp2", "fsdp1", "ddp"):
        print(name, record(name, out), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
