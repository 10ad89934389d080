"""A tiny PyTorch workload that calls cuBLAS, cuBLASLt, cuDNN and NCCL (one rank) — the program
`libtrace_gpu_check.py` runs under gpuscope's library tracers. Prints one line to stdout."""

from __future__ import annotations

import os

import torch
import torch.distributed as dist

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.benchmark = False
torch.manual_seed(0)

a = torch.randn(256, 512, device="cuda")
b = torch.randn(512, 128, device="cuda")
c = a @ b  # fp32 GEMM
ch = a.half() @ b.half()  # fp16 GEMM
z = torch.bmm(torch.randn(8, 64, 32, device="cuda"), torch.randn(8, 32, 16, device="cuda"))
linear = torch.nn.Linear(512, 256).cuda().half()
o = linear(a.half())  # addmm with bias: the cuBLASLt epilogue path

conv = torch.nn.Conv2d(3, 8, 3, padding=1).cuda()
x = torch.randn(2, 3, 32, 32, device="cuda", requires_grad=True)
conv(x).sum().backward()  # cuDNN forward, backward-data, backward-filter

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29517")
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)  # one-rank AllReduce, 1,048,576 fp32
dist.destroy_process_group()
torch.cuda.synchronize()
print("libtrace workload done", tuple(c.shape), tuple(ch.shape), tuple(z.shape), tuple(o.shape))
