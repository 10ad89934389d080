"""Make the traces of an N-rank job from recorded ones, by perturbing their timing.

Rank r is a copy of source `r % len(sources)` (the real 2-rank A100 pair by default: even ranks
from rank 0, odd ranks from rank 1) with:

- its own clock: every timestamp shifted by an offset (ranks on other "hosts" drift apart; the
  first host's ranks share rank 0's clock): host h = r // ranks_per_host gets h × `--host-skew`;
- its arrival at each collective: the communication kernels (NCCL/RCCL) of a chosen straggler
  start `--delay-us` later (their end is kept: every rank leaves a collective together, a late
  rank's kernel is shorter), and every rank's start is jittered by up to `--jitter-us` the same
  way (never past the kernel's end);
- `distributedInfo` set to (r, N), and the process id set to r;
- with `--comm-elems N`, message sizes on the `record_param_comms` ops that lack them (N float
  elements in and out, the group size N ranks, as PyTorch >= 2.1 records them), so that the
  bandwidth tables fill.

Timestamps are read and written as exact decimals (msgspec with Decimal), so nanosecond fractions
survive. The event text is otherwise the recording's. Used by benchmarks/bench_ranks.py and by the
tests (tests/unit/ranks), which check the injected delay against what the analysis finds.

    python benchmarks/make_rank_traces.py 256 --out bench-data/ranks256
    python benchmarks/make_rank_traces.py 8 --source A.json.gz --straggler 3 --delay-us 500
    python benchmarks/make_rank_traces.py 2 --comm-elems 1048576 --out bench-data/sized
"""

from __future__ import annotations

import argparse
import gzip
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO / ".." / "shared" / "reference" / "traces"
PAIR = (TRACES / "hta__a100_sampled_rank-0.json.gz", TRACES / "hta__a100_sampled_rank-1.json.gz")
_ENCODER = msgspec.json.Encoder(decimal_format="number")
ELEMS = ("In msg nelems", "Out msg nelems")


def load(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc: dict[str, Any] = msgspec.json.Decoder(float_hook=Decimal).decode(raw)
    return doc


def is_collective(event: dict[str, Any]) -> bool:
    name = str(event.get("name", ""))
    return event.get("cat") == "kernel" and (name.startswith(("nccl", "rccl", "void nccl")))


def perturb(
    doc: dict[str, Any],
    rank: int,
    world: int,
    *,
    offset_us: Decimal = Decimal(0),
    delay_us: Decimal = Decimal(0),
    jitter_us: Decimal = Decimal(0),
    seed: int = 0,
    comm_elems: int | None = None,
) -> dict[str, Any]:
    """A copy of `doc` as rank `rank` of `world`; see the module docstring."""
    rng = random.Random(seed)
    events = []
    for event in doc["traceEvents"]:
        new = dict(event)
        if "ts" in new:
            new["ts"] = new["ts"] + offset_us
        if is_collective(new) and "dur" in new:
            late = delay_us + Decimal(rng.randint(0, int(jitter_us * 1000))) / 1000
            end = new["ts"] + new["dur"]
            start = min(new["ts"] + late, end - Decimal("0.001"))
            new["ts"], new["dur"] = start, end - start
        if "pid" in new and isinstance(new["pid"], int):
            new["pid"] = rank
        if comm_elems is not None and new.get("name") == "record_param_comms":
            sizes = {"dtype": "Float", "Group size": world, **dict.fromkeys(ELEMS, comm_elems)}
            new["args"] = {**sizes, **new.get("args", {})}
        events.append(new)
    info = {**doc.get("distributedInfo", {}), "rank": rank, "world_size": world}
    return {**doc, "distributedInfo": info, "traceEvents": events}


def write(doc: dict[str, Any], path: Path) -> Path:
    data = _ENCODER.encode(doc)
    path.write_bytes(gzip.compress(data, 1) if path.suffix == ".gz" else data)
    return path


def make(
    ranks: int,
    out: Path,
    sources: tuple[Path, ...] = PAIR,
    *,
    straggler: int | None = None,
    delay_us: Decimal = Decimal(500),
    jitter_us: Decimal = Decimal(50),
    ranks_per_host: int = 8,
    host_skew_us: Decimal = Decimal(1500),
    gzip_output: bool = False,
    comm_elems: int | None = None,
) -> list[Path]:
    """Write `ranks` traces into `out` (rank<R>.json[.gz]); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    docs = [load(s) for s in sources]
    straggler = ranks - 1 if straggler is None else straggler
    paths = []
    for r in range(ranks):
        host = r // ranks_per_host
        doc = perturb(
            docs[r % len(docs)],
            r,
            ranks,
            offset_us=host * host_skew_us,
            delay_us=delay_us if r == straggler else Decimal(0),
            jitter_us=jitter_us,
            seed=r,
            comm_elems=comm_elems,
        )
        suffix = ".json.gz" if gzip_output else ".json"
        paths.append(write(doc, out / f"rank{r}{suffix}"))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ranks", type=int)
    parser.add_argument("--source", action="append", type=Path, help="(repeatable) base traces")
    parser.add_argument("--out", type=Path, default=REPO / "bench-data" / "ranks")
    parser.add_argument("--straggler", type=int, help="the late rank (default: the last)")
    parser.add_argument("--delay-us", type=Decimal, default=Decimal(500))
    parser.add_argument("--jitter-us", type=Decimal, default=Decimal(50))
    parser.add_argument("--ranks-per-host", type=int, default=8)
    parser.add_argument("--host-skew-us", type=Decimal, default=Decimal(1500))
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("--comm-elems", type=int, help="message size of record_param_comms ops")
    args = parser.parse_args()
    paths = make(
        args.ranks,
        args.out,
        tuple(args.source) if args.source else PAIR,
        straggler=args.straggler,
        delay_us=args.delay_us,
        jitter_us=args.jitter_us,
        ranks_per_host=args.ranks_per_host,
        host_skew_us=args.host_skew_us,
        gzip_output=args.gzip,
        comm_elems=args.comm_elems,
    )
    print(f"{len(paths)} traces in {args.out}")


if __name__ == "__main__":
    main()
