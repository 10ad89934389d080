"""What kind of program made the trace, told from the trace itself: its framework operators, API
calls, kernel families and markers. Every finding phrases its action for this kind — PyTorch
advice for a C++ or JAX program is advice whose premise the trace contradicts.

Kinds (`Program.kind`): `pytorch`, `jax` (XLA), `ggml` (llama.cpp), `julia` (AMDGPU.jl /
CUDA.jl), `cuda-cpp`, `hip-cpp` (a program calling the runtime itself), `unknown`. Traits refine
a kind: `compiled` (torch.compile / Inductor), `graphs` (CUDA/HIP graph replay),
`serving:vllm`, `serving:sglang`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscope.analysis._unique import unique, unique_inverse
from gpuscope.trace.model import KERNEL, OP, Trace

KINDS = ("pytorch", "jax", "ggml", "julia", "cuda-cpp", "hip-cpp", "unknown")
LABELS = {
    "pytorch": "PyTorch",
    "jax": "JAX / XLA",
    "ggml": "llama.cpp (ggml)",
    "julia": "Julia (GPU arrays)",
    "cuda-cpp": "CUDA C++",
    "hip-cpp": "HIP C++",
    "unknown": "program of unknown kind",
}
TRAIT_LABELS = {
    "compiled": "torch.compile",
    "graphs": "CUDA/HIP graphs",
    "serving:vllm": "vLLM serving",
    "serving:sglang": "SGLang serving",
    "parallel:fsdp2": "FSDP2",
    "parallel:fsdp1": "FSDP1",
    "parallel:ddp": "DDP",
}
KERNEL_SHARE = 0.30  # a kernel family with this share of kernel time names the program

# kernel families that only one kind of program launches (searched in the kernel's name)
_GGML = re.compile(
    r"\b(mul_mat_q|mul_mat_vec_q|mul_mat_vec|flash_attn_ext|k_bin_bcast|quantize_q8_1|"
    r"dequantize_block|quantize_mmq|k_get_rows|soft_max_f\d+|rms_norm_f\d+|rope_(?:norm|neox)|"
    r"cpy_f\d+_f\d+|ggml_)",
    re.IGNORECASE,
)
_XLA = re.compile(
    r"^(?:loop_\w*fusion|input_\w*fusion|wrapped_\w+|gemm_fusion\w*|triton_gemm_\w+|"
    r"fusion(?:_\d+|\.\d+)?|\w+_fusion(?:_\d+)?|cutlass_gemm_fusion\w*)$"
)
# Julia's GPU stacks: array and context types in the kernel's signature; KernelAbstractions
# kernels (`gpu_<name>`) take a CompilerMetadata first (mangled `16CompilerMetadataI…` as rocprof
# v1 records AMDGPU.jl's names)
_JULIA = re.compile(
    r"ROCDeviceArray|CuDeviceArray|ROCKernelContext|CuKernelContext|KernelAbstractions|"
    r"\bjulia_|GPUArrays|oneDeviceArray|CompilerMetadata"
)
# ggml's `enum ggml_type` (ggml/include/ggml.h): its kernels carry the type as a template
# argument, `mul_mat_q<(ggml_type)2, …>` is a Q4_0 matmul
GGML_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0", 9: "Q8_1",
    10: "Q2_K", 11: "Q3_K", 12: "Q4_K", 13: "Q5_K", 14: "Q6_K", 15: "Q8_K", 16: "IQ2_XXS",
    17: "IQ2_XS", 18: "IQ3_XXS", 19: "IQ1_S", 20: "IQ4_NL", 21: "IQ3_S", 22: "IQ2_S",
    23: "IQ4_XS", 24: "I8", 25: "I16", 26: "I32", 27: "I64", 28: "F64", 29: "IQ1_M", 30: "BF16",
    34: "TQ1_0", 35: "TQ2_0", 39: "MXFP4", 40: "NVFP4",
}  # fmt: skip
_GGML_TYPE = re.compile(r"^(?:void\s+)?(mul_mat\w*)<\(ggml_type\)(\d+)")
_ATEN_KERNEL = re.compile(
    r"\bat::(?:native|cuda|<unnamed>|\(anonymous namespace\))::|\bc10::(?:BFloat16|Half|complex)"
)
_INDUCTOR = re.compile(r"^triton_(?:poi|red|per|tem|mm|bmm)_")
_COMPILED_OPS = ("Torch-Compiled Region", "CompiledFunction", "## Call CompiledFxGraph")
_SERVING = (
    ("serving:vllm", re.compile(r"vllm", re.I)),
    ("serving:sglang", re.compile(r"sglang", re.I)),
)
# the ranges each data-parallel wrapper records (torch.distributed's own record_function names,
# seen in 1-rank jobs recorded on an H200: tests/data/recorded/wrapper_*_h200.json.gz): FSDP2
# (`fully_shard`) "FSDP::pre_backward (6)" …, FSDP1 "FullyShardedDataParallel._pre_forward" …,
# DDP "DistributedDataParallel.forward"
PARALLEL_WRAPPERS = (
    ("parallel:fsdp2", "FSDP::"),
    ("parallel:fsdp1", "FullyShardedDataParallel."),
    ("parallel:ddp", "DistributedDataParallel."),
)
_FSDP2_UNIT = re.compile(r"^FSDP::pre_forward \(")
_FSDP1_UNIT, _FSDP1_ROOT = (
    "FullyShardedDataParallel._pre_forward",
    "FullyShardedDataParallel._root_pre_forward",
)
_GRAPH_LAUNCH = re.compile(r"^(?:cuda|hip|cu)GraphLaunch")
_TRAINING = re.compile(r"Backward|autograd::engine")  # a backward pass: PyTorch training
_HIP_API = re.compile(r"^hip[A-Z]|^hsa_")
_CUDA_API = re.compile(r"^cuda[A-Z]|^cu[A-Z]")


@dataclass(frozen=True)
class Program:
    kind: str
    traits: tuple[str, ...] = ()
    evidence: dict[str, Any] = field(default_factory=dict)
    vendor: str = "unknown"

    @property
    def graphs(self) -> str:
        """What the vendor calls a graph: `CUDA graphs`, `HIP graphs`."""
        return {"nvidia": "CUDA graphs", "amd": "HIP graphs"}.get(self.vendor, "CUDA/HIP graphs")

    @property
    def label(self) -> str:
        """`PyTorch (torch.compile, CUDA graphs)`, `CUDA C++`, `JAX / XLA`."""
        names = {**TRAIT_LABELS, "graphs": self.graphs}
        extra = [names[t] for t in self.traits if t in names]
        if any(t.startswith("serving:") for t in self.traits):
            serving = next(TRAIT_LABELS[t] for t in self.traits if t.startswith("serving:"))
            rest = [x for x in extra if x != serving]
            inner = ", ".join([LABELS[self.kind], *rest])
            return f"{serving} ({inner})"
        return f"{LABELS[self.kind]} ({', '.join(extra)})" if extra else LABELS[self.kind]

    def is_(self, *kinds: str) -> bool:
        return self.kind in kinds

    @property
    def wrapper(self) -> str:
        """The data-parallel wrapper whose ranges the trace holds: fsdp2, fsdp1, ddp or ""."""
        found = [t.split(":", 1)[1] for t in self.traits if t.startswith("parallel:")]
        return found[0] if found else ""

    @property
    def fsdp(self) -> bool:
        """Sharded by FSDP (either version): a step no graph capture can replay."""
        return self.wrapper in ("fsdp1", "fsdp2")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "traits": list(self.traits),
                "evidence": self.evidence}  # fmt: skip


def program(trace: Trace) -> Program:
    """The kind of program, with the evidence that decided it."""
    kernels = _kernel_times(trace)
    ops = _names(trace, trace.ops.name[trace.ops.kind == OP])
    host = _names(trace, trace.host.name)
    markers = _names(trace, trace.ops.name[trace.ops.kind != OP])
    kind, evidence = _kind(trace, kernels, ops, host)
    traits = _traits(kernels, ops, host, markers, trace)
    return Program(kind, traits, evidence, trace.meta.vendor)


def _names(trace: Trace, indices: Any) -> set[str]:
    return {trace.names[int(i)] for i in unique(indices)} if len(indices) else set()


def _kernel_times(trace: Trace) -> dict[str, int]:
    """Kernel name → total time (ns; dispatch count where durations are unknown)."""
    gpu = trace.gpu
    rows = gpu.kind == KERNEL
    names, inverse = unique_inverse(gpu.name[rows])
    if not len(names):
        totals = trace.totals
        kept = totals.kind == KERNEL
        return {
            trace.names[int(n)]: int(t)
            for n, t in zip(totals.name[kept], totals.total_ns[kept], strict=True)
        }
    weight = np.where(gpu.dur[rows] >= 0, gpu.dur[rows], 1)
    sums = np.bincount(inverse, weights=weight, minlength=len(names))
    return {trace.names[int(n)]: int(s) for n, s in zip(names, sums, strict=True)}


def _share(kernels: dict[str, int], pattern: re.Pattern[str]) -> float:
    total = sum(kernels.values())
    hit = sum(t for name, t in kernels.items() if pattern.search(name))
    return hit / total if total else 0.0


def _kind(
    trace: Trace, kernels: dict[str, int], ops: set[str], host: set[str]
) -> tuple[str, dict[str, Any]]:
    if trace.meta.format in ("jax", "xplane") or any(o.startswith(("jit_", "pjit")) for o in ops):
        return "jax", {"format": trace.meta.format}
    for kind, pattern in (("ggml", _GGML), ("jax", _XLA), ("julia", _JULIA)):
        share = _share(kernels, pattern)
        if share >= KERNEL_SHARE or (kind == "julia" and share > 0):
            example = next(n for n in kernels if pattern.search(n))
            found = {"kernel_share": round(share, 4), "example_kernel": example}
            if kind == "ggml":
                found["quant_types"] = ggml_types(kernels)
            return kind, found
    aten = sorted(o for o in ops if o.startswith("aten::"))
    if aten:
        return "pytorch", {"framework_ops": len(aten), "example_op": aten[0]}
    native = sorted(n for n in kernels if _ATEN_KERNEL.search(n))
    if native:  # a PyTorch program traced below the framework (rpd, rocprof, nsys)
        return "pytorch", {"aten_kernels": len(native), "example_kernel": native[0]}
    if trace.meta.format == "kineto":  # torch.profiler runs inside a PyTorch program only
        return "pytorch", {"recorded_by": "torch.profiler (Kineto)", "framework_ops": 0}
    runtime = _runtime(trace, host)
    if runtime and (kernels or host):
        return runtime, {"api_calls": sorted(host)[:5], "no_framework_ops": True}
    return "unknown", {}


def ggml_types(kernels: dict[str, int]) -> dict[str, float]:
    """The types ggml's matmul kernels run on (`mul_mat_q<(ggml_type)2,…>` → Q4_0), by their
    share of those kernels' time, largest first."""
    times: dict[str, int] = {}
    for name, ns in kernels.items():
        found = _GGML_TYPE.match(name)
        if found:
            label = GGML_TYPES.get(int(found.group(2)), f"type {found.group(2)}")
            times[label] = times.get(label, 0) + ns
    total = sum(times.values())
    ranked = sorted(times.items(), key=lambda kv: -kv[1])
    return {k: round(v / total, 4) for k, v in ranked} if total else {}


def _runtime(trace: Trace, host: set[str]) -> str:
    """`cuda-cpp` / `hip-cpp` for a program without a framework, by its API calls or vendor."""
    if any(_HIP_API.match(h) for h in host):
        return "hip-cpp"
    if any(_CUDA_API.match(h) for h in host):
        return "cuda-cpp"
    return {"nvidia": "cuda-cpp", "amd": "hip-cpp"}.get(trace.meta.vendor, "")


def _traits(
    kernels: dict[str, int], ops: set[str], host: set[str], markers: set[str], trace: Trace
) -> tuple[str, ...]:
    traits = []
    if _share(kernels, _INDUCTOR) > 0 or ops & set(_COMPILED_OPS) or markers & set(_COMPILED_OPS):
        traits.append("compiled")
    if any(_GRAPH_LAUNCH.match(h) for h in host):
        traits.append("graphs")
    texts = " ".join(sorted(markers | ops))[:200_000]
    traits += [name for name, pattern in _SERVING if pattern.search(texts)]
    if any(_TRAINING.search(n) for n in ops):
        traits.append("training")
    named = markers | ops
    wrapper = next((w for w, prefix in PARALLEL_WRAPPERS
                    if any(n.startswith(prefix) for n in named)), None)  # fmt: skip
    return tuple(traits + ([wrapper] if wrapper else []))


def fsdp_units(trace: Trace, wrapper: str) -> int:
    """How many modules FSDP wraps, from its ranges: FSDP2 names each unit's pre-forward
    ("FSDP::pre_forward (6)"); FSDP1 runs one `_pre_forward` per unit and one
    `_root_pre_forward` per forward (0 when the trace does not say)."""
    ops = trace.ops
    names = {i: trace.names[i] for i in unique(ops.name)}
    if wrapper == "fsdp2":
        return sum(1 for n in names.values() if _FSDP2_UNIT.match(n))
    if wrapper != "fsdp1":
        return 0
    counts = {n: int((ops.name == i).sum()) for i, n in names.items()
              if n in (_FSDP1_UNIT, _FSDP1_ROOT)}  # fmt: skip
    roots = counts.get(_FSDP1_ROOT, 0)
    return round(counts.get(_FSDP1_UNIT, 0) / roots) if roots else 0
