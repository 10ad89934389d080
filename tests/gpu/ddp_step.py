"""A small DDP training loop for tests/gpu/test_multirank_gpu.py: run it under torchrun with two
GPUs. Rank `--slow-rank` does extra matrix products on its GPU before every step (or, with
`--extra-matmuls 0 --host-delay-ms 25`, its host is late), so it reaches each gradient all-reduce
late and the other rank waits inside NCCL for it.

    torchrun --nproc-per-node 2 tests/gpu/ddp_step.py --steps 12
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--slow-rank", type=int, default=1)
    parser.add_argument("--extra-matmuls", type=int, default=8)
    parser.add_argument("--host-delay-ms", type=float, default=0.0,
                        help="the slow rank's host also waits this long before every step, "
                        "after syncing with its GPU (a late host, not more GPU work)")  # fmt: skip
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank, local = dist.get_rank(), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    model = nn.Sequential(nn.Linear(2048, 4096), nn.ReLU(), nn.Linear(4096, 2048)).cuda()
    ddp = DistributedDataParallel(model, device_ids=[local], bucket_cap_mb=8)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(512, 2048, device="cuda")
    extra = torch.randn(4096, 4096, device="cuda") / 64
    for _ in range(args.steps):
        if rank == args.slow_rank:
            for _ in range(args.extra_matmuls):
                extra = torch.tanh(extra @ extra)
            if args.host_delay_ms:
                torch.cuda.synchronize()
                time.sleep(args.host_delay_ms / 1000)
        loss = ddp(x).square().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
