"""What to do about a cause, phrased for the program that produced the trace (analysis.program).

Every function takes the `Program` and returns one action text: PyTorch knobs for a PyTorch
program, `jax.jit` boundaries and XLA flags for JAX, llama.cpp options for ggml, runtime calls
for a CUDA / HIP C++ program. A cause the program kind has no lever for gets the generic text.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuscope.analysis.program import Program


def host_launch(p: Program, short_kernels: bool) -> str:
    """The host cannot launch work as fast as the GPU runs it."""
    if "graphs" in p.traits and p.is_("jax"):
        return (
            f"XLA already replays the step's kernels as command buffers ({p.graphs}): the host "
            "is late between executables. Put the whole step and its loop under one jax.jit "
            "(lax.scan / lax.fori_loop), and keep Python work and device→host reads "
            "(float(x), np.asarray, .block_until_ready()) out of the loop."
        )
    if "graphs" in p.traits:
        serving = any(t.startswith("serving:") for t in p.traits)
        work = "sampling, scheduling, detokenization" if serving else "data loading, logging"
        return (
            f"Kernels already run as {p.graphs}: the host is late between graph launches. Cut the "
            f"per-step host work around the graph ({work}, Python bookkeeping), overlap it with "
            "the running graph, or capture more of the step."
        )
    if p.is_("pytorch"):
        if "compiled" in p.traits and short_kernels:
            return (
                f'The model is compiled but launched kernel by kernel: torch.compile(mode="reduce-'
                f'overhead") replays it as {p.graphs}; batch more work per call.'
            )
        if short_kernels:
            return (
                f"Most kernels are shorter than their launch: launch them as {p.graphs} "
                '(torch.compile(mode="reduce-overhead"), torch.cuda.graphs) and fuse them '
                "(torch.compile); batch more work per call."
            )
        return (
            "The kernels are long enough, so look at what the host does in the gaps: data "
            "loading (DataLoader workers, pin_memory, prefetch), Python work between steps, "
            "logging or checkpointing; overlap it with GPU work or move it off the critical path."
        )
    return _BY_KIND.get(p.kind, _GENERIC_LAUNCH)(p)


def _jax_launch(p: Program) -> str:
    del p
    return (
        "The host dispatches work one executable at a time: put the whole step under one jax.jit "
        "(and its loops under lax.scan / lax.fori_loop) so XLA runs it as one executable, keep "
        "Python work and device→host reads (float(x), np.asarray, .block_until_ready()) out of "
        "the loop, and let XLA capture kernels as command buffers (XLA_FLAGS="
        "--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUSTOM_CALL)."
    )


def _ggml_launch(p: Program) -> str:
    graphs = (  # llama.cpp builds CUDA graphs by default; HIP graphs only when asked for
        "as HIP graphs (build with -DGGML_HIP_GRAPHS=ON: off by default, experimental)"
        if p.vendor == "amd"
        else f"as {p.graphs} (built by default, used for single-sequence decode; "
        "GGML_CUDA_DISABLE_GRAPHS must stay unset)"
    )
    return (
        "llama.cpp launches many small kernels per token: keep every layer on the GPU "
        f"(-ngl 99), let it replay each token's kernels {graphs}, raise the batch "
        "sizes for prompt processing (-b, -ub) and enable flash attention (-fa)."
    )


def _julia_launch(p: Program) -> str:
    del p
    return (
        "Fuse broadcasts into one kernel (one @. expression, or a kernel written with "
        "KernelAbstractions), avoid scalar indexing (allowscalar(false)) and host round trips "
        "(Array(x)) inside loops, and give each launch more work."
    )


def _cpp_launch(p: Program) -> str:
    api = "hip" if p.is_("hip-cpp") else "cuda"
    return (
        f"Launch fewer, larger kernels (fuse consecutive kernels; grid-stride loops) and capture "
        f"the repeated launch sequence as a graph: {api}StreamBeginCapture … "
        f"{api}GraphInstantiate once, then {api}GraphLaunch per iteration; keep other host work "
        "off the launching thread."
    )


def _generic_launch(p: Program) -> str:
    return (
        f"Launch fewer, larger kernels (fuse them) and replay repeated launch sequences as "
        f"{p.graphs}; keep other host work off the launching thread."
    )


_GENERIC_LAUNCH = _generic_launch
_BY_KIND = {
    "jax": _jax_launch,
    "ggml": _ggml_launch,
    "julia": _julia_launch,
    "cuda-cpp": _cpp_launch,
    "hip-cpp": _cpp_launch,
}


def host_work(p: Program) -> str:
    """One idle gap in which the host did something else (not launching)."""
    where = {
        "pytorch": "a data-loader wait, a checkpoint, a compile, logging",
        "jax": "a jit compilation, a device→host read, data loading, logging",
        "ggml": "model loading, tokenization, sampling on the host",
    }.get(p.kind, "file I/O, allocation, host computation")
    return (
        f"Find what the host did during the gap (the host calls listed; {where}): move it off "
        "the critical path or overlap it with GPU work."
    )


def host_sync(p: Program) -> str:
    """Blocking synchronisations empty the device queue."""
    return _SYNC.get(p.kind, _SYNC["unknown"])


_SYNC = {
    "pytorch": "Remove host syncs from the hot loop: .item(), .cpu(), .tolist(), printing or "
    "branching on GPU values, torch.cuda.synchronize(); keep values on the GPU, use events or "
    "non_blocking copies to pinned memory, and sync at most once per step.",
    "jax": "Stop blocking on results inside the loop: .block_until_ready(), float()/int()/"
    "np.asarray() on device arrays and printing them wait for the device; JAX dispatches "
    "asynchronously, so read results once every N steps.",
    "ggml": "The host synchronizes on every token to sample it: decode several sequences at "
    "once (llama-server -np N with continuous batching) so the GPU has work while one samples.",
    "julia": "synchronize(), Array(x) and scalar indexing block the host: keep results on the "
    "device and synchronize once per iteration at most.",
    "cuda-cpp": "Remove cudaDeviceSynchronize / cudaStreamSynchronize / blocking cudaMemcpy "
    "from the loop: order work with streams and events (cudaEventRecord + "
    "cudaStreamWaitEvent), copy with cudaMemcpyAsync, and synchronize once at the end.",
    "hip-cpp": "Remove hipDeviceSynchronize / hipStreamSynchronize / blocking hipMemcpy from "
    "the loop (hipDeviceSynchronize costs much more than a stream sync on ROCm): order work "
    "with streams and events (hipEventRecord + hipStreamWaitEvent), copy with hipMemcpyAsync, "
    "and synchronize once at the end.",
    "unknown": "Remove blocking synchronisations from the loop: order work with streams and "
    "events, copy asynchronously, and synchronize once per iteration at most.",
}


def host_after_sync(p: Program) -> str:
    """The host blocks in a sync, then works before it launches again: that work cannot
    overlap the GPU."""
    sync = {
        "pytorch": "the .item() / .cpu() / torch.cuda.synchronize()",
        "jax": "the .block_until_ready() / float(x) / np.asarray(x)",
        "cuda-cpp": "the cudaDeviceSynchronize / cudaStreamSynchronize",
        "hip-cpp": "the hipDeviceSynchronize / hipStreamSynchronize",
    }.get(p.kind, "the blocking call")
    work = {  # what a program of that kind does on its host between two steps
        "pytorch": "the host calls and operators in those gaps: data loading, Python "
        "bookkeeping, logging",
        "jax": "the Python between jitted calls: data loading, metrics, logging",
        "cuda-cpp": "the host code between the sync and the next launch: CPU loops over the "
        "results, I/O, MPI calls, allocations",
        "hip-cpp": "the host code between the sync and the next launch: CPU loops over the "
        "results, I/O, MPI calls, allocations",
    }.get(p.kind, "the host calls in those gaps")
    return (
        f"Find the host work that runs after each sync ({work}): shorten it or move it off the "
        f"critical path, and launch the next step's GPU work before {sync} so that the host "
        "work overlaps the GPU instead of following it."
    )


def copies(p: Program) -> str:
    """Host↔device copies cost time on the device's timeline."""
    return _COPIES.get(p.kind, _COPIES["unknown"])


_COPIES = {
    "pytorch": "Keep tensors on the device: avoid .item(), .cpu(), .tolist() and printing "
    "tensors in the loop (each DtoH copy also synchronizes); move inputs once, from pinned "
    "memory (pin_memory=True) with non_blocking=True, so copies overlap compute.",
    "jax": "Keep arrays on the device: no np.asarray / jax.device_get in the loop; put inputs "
    "once (jax.device_put) and prefetch the next batch while the step runs (double buffering).",
    "ggml": "Offload every layer (-ngl 99) so weights and the KV cache stay in GPU memory: a "
    "partial offload copies activations between host and device for every token.",
    "julia": "Move data to the device once (ROCArray(x) / CuArray(x)) and keep it there; no "
    "Array(x) inside the loop.",
    "cuda-cpp": "Copy once and reuse device buffers; copy with cudaMemcpyAsync from page-locked "
    "memory (cudaMallocHost / cudaHostRegister) on its own stream so copies overlap kernels.",
    "hip-cpp": "Copy once and reuse device buffers; copy with hipMemcpyAsync from page-locked "
    "memory (hipHostMalloc / hipHostRegister) on its own stream so copies overlap kernels.",
    "unknown": "Copy once and reuse device buffers; copy asynchronously from page-locked host "
    "memory so copies overlap kernels.",
}


def unified_memory(p: Program) -> str:
    """Managed memory migrated page by page on first touch."""
    if p.is_("hip-cpp"):
        return (
            "Prefetch managed memory before the kernels touch it (hipMemPrefetchAsync to the "
            "device, and back before host access) or advise it (hipMemAdvise "
            "SetPreferredLocation / SetReadMostly); with HSA_XNACK=0 pages do not migrate on "
            "demand at all; or allocate with hipMalloc and copy explicitly."
        )
    return (
        "Prefetch managed memory before the kernels touch it (cudaMemPrefetchAsync to the "
        "device, and back before host access) or advise it (cudaMemAdvise "
        "SetPreferredLocation / SetReadMostly); or allocate with cudaMalloc and copy "
        "explicitly with cudaMemcpyAsync."
    )


def warm_up(p: Program, profiler: str = "") -> str:
    """Profile the steady state, not the start-up: why the first calls are slow for this kind
    of program, and how the profiler that made the trace records a later window."""
    window = _WINDOW.get(profiler, _WINDOW.get(_DEFAULT_PROFILER.get(p.kind, ""), ""))
    if p.is_("pytorch") and profiler == "nsys":
        window += " (torch.cuda.profiler.start / stop)"
    return _WARM_UP.get(p.kind, _WARM_UP["unknown"]) + (
        f"; then record a steady window: {window}" if window else ""
    )


_DEFAULT_PROFILER = {"pytorch": "kineto", "jax": "jax", "cuda-cpp": "nsys", "hip-cpp": "rocprofv3"}
_WINDOW = {
    "kineto": "torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, "
    "active=3)) with prof.step() after each iteration",
    "jax": "jax.profiler.start_trace after the first (compiling) call",
    "nsys": "nsys --capture-range=cudaProfilerApi with cudaProfilerStart / cudaProfilerStop "
    "around the steady iterations",
    "ncu": "ncu --launch-skip N --launch-count M past the first launches",
    "rpd": "start rpd's recording after the warm-up iterations (rpdTracerControl start / stop "
    "around the steady iterations)",
    "rocprofv3": "rocprofv3's --collection-period, or roctxProfilerResume / roctxProfilerPause "
    "around the steady iterations",
    "rocpd": "rocprofv3's --collection-period, or roctxProfilerResume / roctxProfilerPause "
    "around the steady iterations",
    "rocprof": "rocprof --trace-start off with roctxProfilerResume / roctxProfilerPause around "
    "the steady iterations",
}
_WARM_UP = {
    "pytorch": "Run a few iterations before the measured ones: the first call of each operator "
    "loads its kernels and libraries pick their algorithms",
    "jax": "Run the jitted step once before measuring (it compiles on the first call and on "
    "every new shape) and keep compiled programs across runs with the persistent "
    "compilation cache (jax_compilation_cache_dir)",
    "ggml": "Measure after the model is loaded and the first tokens are out (llama-bench runs "
    "a warm-up of its own)",
    "julia": "Run the function once before measuring (Julia compiles each method and kernel on "
    "its first call)",
    "cuda-cpp": "Warm up before the measured region: each kernel's module loads on its first "
    "launch (CUDA_MODULE_LOADING=LAZY, the default; EAGER moves it to start-up) and library "
    "handles (cublasCreate, cudnnCreate) cost on first use, so create them once",
    "hip-cpp": "Warm up before the measured region: code objects load on each kernel's first "
    "launch and libraries load theirs lazily (rocBLAS / hipBLASLt kernels on the first call "
    "of each shape), so create handles (rocblas_create_handle) once and run each call once",
    "unknown": "Warm up before the measured region (first launches load modules and libraries)",
}


def profile_shapes(p: Program, profiler: str = "") -> str:
    """How to get what the GEMM efficiency analysis needs (`profiler`: the format that made the
    trace; an ncu input already is counters, only without the FLOP and DRAM metrics)."""
    if profiler == "ncu":
        return (
            "Profile the GEMM kernels again with ncu's roofline metrics (--section SpeedOfLight "
            "--section SpeedOfLight_RooflineChart, or the metrics `gpuscope counters --plan "
            "roofline` lists)"
        )
    if p.is_("pytorch"):
        return "Profile with record_shapes=True"
    if p.is_("jax"):
        return "Read the XLA ops' shapes from the profile's hlo_op metadata (xplane.pb)"
    if p.is_("ggml"):
        return (
            "Measure the matmuls' rate with llama-bench (prompt processing -p 512 and generation "
            "-n 128, at several -ub) and compare it with the GPU's peak for the quantization type"
        )
    tool = {"nvidia": "ncu", "amd": "rocprofv3 --pmc"}.get(p.vendor, "ncu / rocprofv3 --pmc")
    return f"Collect counters ({tool}) for the GEMM kernels"


def _ggml_quant(p: Program) -> str:
    """Another quantization type to measure against the one the matmuls run on now."""
    types = list((p.evidence.get("quant_types") or {}).keys())
    if not types:
        return "a quantization type whose kernels suit this GPU (Q4_0 / Q8_0 against the K-quants)"
    now = types[0]
    other = (
        "Q4_K_M or Q8_0"
        if now in ("Q4_0", "Q4_1", "Q5_0", "Q5_1")
        else ("Q4_0 or Q8_0" if now.endswith("_K") else "Q8_0 or Q4_K_M")
    )
    runs = ", ".join(types[:3])
    return (
        f"the quantization type: the matmuls run {runs} now (read from the kernels' ggml_type); "
        f"measure the same model in {other}, whose kernels may suit this GPU better"
    )  # fmt: skip


def gemm_tuning(p: Program) -> str:
    """How to make slow GEMMs faster, in this program's terms."""
    if p.is_("pytorch"):
        return (
            "tune them (PyTorch TunableOp: PYTORCH_TUNABLEOP_ENABLED=1; hipBLASLt / cuBLASLt "
            "algorithm selection), pad dimensions to multiples of 64, and fuse projections that "
            "read the same activations"
        )
    if p.is_("jax"):
        return (
            "let XLA autotune them (XLA_FLAGS=--xla_gpu_autotune_level=4), pad dimensions to "
            "multiples of 64, and fuse projections that read the same activations"
        )
    if p.is_("ggml"):
        blas = "hipBLAS" if p.vendor == "amd" else "cuBLAS"
        return (
            "compare llama.cpp's two matmul paths on this GPU: its own quantized kernels "
            f"(mul_mat_q, MMQ) against dequantization + {blas} (build with "
            "-DGGML_CUDA_FORCE_MMQ=ON or -DGGML_CUDA_FORCE_CUBLAS=ON; the HIP build takes the "
            "same options), try larger physical batches for prompt processing (-ub 1024 / "
            f"2048), and {_ggml_quant(p)}"
        )
    return (
        "ask the BLAS library for more candidate algorithms and time them (cublasLtMatmulAlgo"
        "GetHeuristic / hipblasLtMatmulAlgoGetHeuristic with more results, or the rocblas-bench / "
        "hipblaslt-bench tuning tools), and pad dimensions to multiples of 64"
    )


# -- the causes of the step-time breakdown (analysis.causes) ----------------------------------


@dataclass(frozen=True)
class LaunchContext:
    """What the trace shows around launch / dispatch time."""

    graphs: bool  # most kernels already replay from graph launches
    syncs_per_step: float  # blocking syncs per step (0 when the step does not sync)
    compiled_share: float  # share of the dispatch time inside torch.compile'd code
    optimizer_share: float  # share of the dispatch time inside the optimizer step
    short_kernels: bool  # most kernels run under 10 µs
    hooks_share: float = 0.0  # share of the dispatch time inside FSDP's hooks
    fsdp_units: int = 0  # modules FSDP wraps (0: unknown)


def launch(p: Program, c: LaunchContext) -> str:
    """The host dispatches the next work more slowly than the device runs it."""
    if p.is_("pytorch") and p.fsdp and not c.graphs:
        return _fsdp_launch(p, c)  # no graphs advice: so no "remove the syncs first" either
    if p.is_("pytorch"):
        text = _pytorch_launch(p, c)
    elif p.is_("jax") and c.graphs:
        text = host_launch(p, short_kernels=c.short_kernels)
    else:
        text = _BY_KIND.get(p.kind, _GENERIC_LAUNCH)(p)
    if c.syncs_per_step and not c.graphs:
        text = (
            f"The step syncs {c.syncs_per_step:g} times, and a graph cannot capture a step that "
            "syncs: remove those syncs first (the Synchronization section lists them); then: "
            f"{text[0].lower()}{text[1:]}"
        )
    return text


FSDP_HOOKS_SHARE = 0.25  # FSDP's hooks this share of the dispatch: wrap larger units


def _fsdp_launch(p: Program, c: LaunchContext) -> str:
    """FSDP frees and gathers parameters around every wrapped module: a step that graph capture
    cannot replay, and whose hooks are host work per wrapped unit."""
    wrap = (
        "fully_shard on each transformer block or other large unit and on the root, not on "
        "every layer"
        if p.wrapper == "fsdp2"
        else "an auto_wrap_policy around the transformer blocks (transformer_auto_wrap_policy or "
        "ModuleWrapPolicy), not a small size-based one"
    )
    text = (
        f"{p.graphs} cannot capture an FSDP step (its parameters are freed and gathered again "
        "around every wrapped module). "
    )
    if c.hooks_share >= FSDP_HOOKS_SHARE:
        gathered = (
            "reshard_after_forward=False"
            if p.wrapper == "fsdp2"
            else "sharding_strategy=ShardingStrategy.SHARD_GRAD_OP"
        )
        text += (
            f"{c.hooks_share:.0%} of the dispatch is FSDP's own hooks (gather, reshard, reduce): "
        )
        if c.fsdp_units > 1:
            text += (
                f"wrap fewer, larger units so that fewer of them run ({c.fsdp_units} wrapped "
                f"modules here) — {wrap}; "
            )
        text += (
            f"where memory allows, keep the parameters gathered from forward to backward "
            f"({gathered}, if not set already) so that the backward gathers nothing again. "
        )
    text += "Give each kernel more work (a larger batch per rank)"
    if "compiled" not in p.traits:
        text += ", and torch.compile each block to fuse its small kernels" + (
            "" if p.wrapper == "fsdp2" else " (with use_orig_params=True)"
        )
    if c.optimizer_share >= 0.1:
        text += (
            f"; {c.optimizer_share:.0%} of the dispatch is the optimizer step: compile it "
            "(torch.compile around optimizer.step()) or create the optimizer with fused=True"
        )
    return text + "."


def _pytorch_launch(p: Program, c: LaunchContext) -> str:
    serving = next((t for t in p.traits if t.startswith("serving:")), "")
    if c.graphs:
        work = "scheduling, sampling, detokenization" if serving else "data, logging, Python"
        return (
            f"Kernels already replay as {p.graphs}: the host is late between replays. Cut the "
            f"host work around each replay ({work}), overlap it with the running graph, or "
            "capture more of the step in one graph."
        )
    if serving == "serving:vllm":
        return (
            f"vLLM runs this work kernel by kernel: serve with {p.graphs} (leave enforce_eager "
            "off / no --enforce-eager) and make the captured batch sizes cover the ones served "
            "(compilation_config cudagraph_capture_sizes, max_num_seqs)."
        )
    if serving == "serving:sglang":
        return (
            f"SGLang runs this work kernel by kernel: keep {p.graphs} on (no "
            "--disable-cuda-graph) and raise --cuda-graph-max-bs to cover the batch sizes "
            "served."
        )
    if c.compiled_share >= 0.5:
        text = (
            "The step is compiled but its kernels are launched one by one: torch.compile(mode="
            f'"reduce-overhead") replays the compiled code as {p.graphs}'
        )
    elif c.short_kernels:
        text = (
            f"Capture the step as {p.graphs} (torch.cuda.graphs, or torch.compile(mode="
            '"reduce-overhead")) and fuse its small kernels (torch.compile)'
        )
    else:  # kernels of tens of µs: the per-operator host cost paces them, not their number
        text = (
            f"Capture the step as {p.graphs} (torch.cuda.graphs, or torch.compile(mode="
            '"reduce-overhead")): a replay launches every kernel of the step at once, so the '
            "host's cost per operator no longer paces the GPU"
        )
    if p.wrapper == "ddp" and "graphs" in text:
        text += (
            " (under DDP, as PyTorch's CUDA-graphs notes describe: warm-up iterations on a side "
            "stream before capture; the gradient all-reduces are captured with the step)"
        )
    if c.optimizer_share >= 0.1:
        text += (
            f"; {c.optimizer_share:.0%} of the dispatch is the optimizer step: compile it too "
            "(torch.compile around optimizer.step()) or create the optimizer with fused=True"
        )
    return text + "."


@dataclass(frozen=True)
class HostWorkContext:
    """What the trace shows of the host's own work."""

    dataloader: str  # "single" (num_workers=0), "workers", "" (none seen)
    stack_recorded: bool  # Python frames are in the trace (with_stack=True)
    where: list[str]  # what the critical path names there (frames, annotations, "after op")
    graphs: bool = False  # the kernels replay from graphs: the work is between replays
    after_sync: bool = False  # most of it follows a blocking sync (it could overlap the GPU)
    optimizer_share: float = 0.0  # share of it inside the optimizer step (its own Python)


OPTIMIZER_PYTHON_SHARE = 0.3  # host work inside the optimizer step this share: say so


def host_work_outside(p: Program, c: HostWorkContext) -> str:
    """The host runs its own code (no operator open) while the device waits."""
    text = _host_work_outside(p, c)
    if not p.is_("pytorch") or c.optimizer_share < OPTIMIZER_PYTHON_SHARE:
        return text
    optimizer = (
        f"{c.optimizer_share:.0%} of it is inside the optimizer step, the optimizer's own Python "
        "between its kernels: create the optimizer with fused=True or compile optimizer.step() "
        "(torch.compile)"
    )
    if c.optimizer_share >= 0.5:  # the larger part: said first
        return f"{optimizer}. The rest: {text[0].lower()}{text[1:]}"
    return f"{text[:-1]}; {optimizer}."


def _host_work_outside(p: Program, c: HostWorkContext) -> str:
    where = f" ({', '.join(c.where[:2])})" if c.where else ""
    if c.graphs and not c.dataloader and p.is_("jax"):
        return (
            f"XLA already replays the step's kernels as {p.graphs}: the host is late between "
            f"executables, with no operation open{where}. Keep the Python between jitted calls "
            "short: prefetch the next batch to the device while the step runs (jax.device_put "
            "ahead of use, a prefetching iterator), keep device→host reads and logging out of "
            "the loop, or run several steps in one jit (lax.scan)."
        )
    if c.graphs and not c.dataloader:
        serving = any(t.startswith("serving:") for t in p.traits)
        work = "scheduling, sampling, detokenization" if serving else "data, logging, Python"
        return (
            f"Kernels already replay as {p.graphs}: the host is late between replays, with no "
            f"operator open{where}. Cut that host work ({work}) or overlap it with the "
            "running graph."
        )
    if p.is_("pytorch") and c.dataloader == "single":
        return (
            "The DataLoader builds each batch on the training thread (num_workers=0): give it "
            "worker processes (num_workers=4–8, persistent_workers=True, prefetch_factor=2 or "
            "more) so the next batch is ready before the step needs it, with pin_memory=True; "
            "or move the per-sample transforms to the GPU."
        )
    if c.after_sync and not c.dataloader:
        return host_after_sync(p)
    if p.is_("pytorch") and c.dataloader == "workers":
        return (
            "The DataLoader's workers cannot keep up with the step: add workers, make the "
            "per-sample work (decoding, augmentation) cheaper or move it to the GPU, and raise "
            "prefetch_factor."
        )
    if p.is_("pytorch"):
        stack = (
            ""
            if c.stack_recorded
            else ("; profile once with with_stack=True to see the Python it runs")
        )
        return (
            f"Find the host work that runs with no operator open{where} — data preparation, "
            "Python bookkeeping, logging, checkpointing, sleeps: make it cheaper, move it to "
            "another thread or process, or start the step's GPU work first so that it overlaps"
            f"{stack}."
        )  # fmt: skip
    return host_work(p)


def sync_once_per_step(p: Program) -> str:
    """Blocking syncs in the step: each empties the device's queue."""
    return host_sync(p)


@dataclass(frozen=True)
class CopyContext:
    """What the trace shows of its host↔device copies."""

    pageable_share: float  # copies from pageable host memory, of all of them
    near_link: bool  # the pinned copies already run near the host link's rate


def copies_for(p: Program, c: CopyContext) -> str:
    """Host↔device copies on the device's timeline, with nothing else running."""
    if p.is_("pytorch") and c.pageable_share >= 0.5:
        return (
            "Copy from pinned memory: pin_memory=True in the DataLoader, or pin a reused host "
            "buffer once (tensor.pin_memory()), then .to(device, non_blocking=True): pinned "
            "copies run near the host link's rate and can overlap compute, while pageable ones "
            "are staged through the CPU at a fraction of it."
        )
    if p.is_("pytorch") and c.near_link:
        return (
            "The copies already run near the host link's rate: move fewer bytes — keep the data "
            "on the GPU across steps, send it in a smaller type (uint8, bf16) and convert on "
            "the GPU — or hide them behind compute (non_blocking copies on a side stream into a "
            "second buffer while the step runs on the first)."
        )
    if p.is_("cuda-cpp", "hip-cpp") and c.pageable_share >= 0.5:
        api = "hip" if p.is_("hip-cpp") else "cuda"
        return (
            f"Copy from page-locked memory ({api}HostAlloc / {api}HostRegister) with "
            f"{api}MemcpyAsync on a stream of its own: pageable copies are staged through the "
            "CPU at a fraction of the link's rate and cannot overlap kernels."
        )
    return copies(p)


def dependency() -> str:
    """The next work was already queued: it waited on the device's side."""
    return (
        "Find what the queued work waited for: the event it depends on (a stream-wait on an "
        "event before the gap), the other stream's work or collective, or another process "
        "sharing the GPU. Overlap that work or remove the dependency; it is not host overhead, "
        "so graphs or fusion will not shorten it."
    )


def host_late(p: Program, profiler: str, at_start: bool) -> str:
    """Dispatched late, with no host timeline to say why."""
    record = {
        "rocprof": "rocprof --hip-trace (or --sys-trace)",
        "rocprofv3": "rocprofv3 --hip-trace (or --sys-trace)",
        "rocpd": "rocprofv3 --hip-trace (or --sys-trace)",
    }.get(profiler, "the profiler's host API trace")
    text = f"Record the host side too ({record}) to see what the host did before each dispatch"
    if at_start and p.is_("ggml"):
        text = (
            "Most of it is at the start: model loading and warm-up, not generation. Measure "
            "after the model is loaded (llama-bench, or leave the start out of the profile); "
            + text[0].lower()
            + text[1:]
        )
    elif at_start:
        text = (
            "Most of it is at the start (loading, warm-up): leave the start out of the profile; "
            + text[0].lower()
            + text[1:]
        )
    return text + "."
