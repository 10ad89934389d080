"""Counter capability: the packaged table per gfx target, `rocprofv3 --list-avail` parsing, and
requests trimmed and split into passes whose hardware counters fit each block's limit."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from gpuscope.counters.capability import (
    capability_for,
    packaged_archs,
    parse_list_avail,
    plan,
    read_pmc_lines,
    rewrite_input,
)
from gpuscope.counters.metrics import load_family
from tests.unit.trace.reference import reference_file

TABLE = json.loads(
    resources.files("gpuscope").joinpath("data/counters/capability.json").read_text("utf-8")
)


def _blocks_of(arch_group: str) -> dict[str, str]:
    """counter -> block, read straight from the JSON (not through capability.py)."""
    blocks = TABLE["archs"][arch_group]["blocks"]
    return {name: block for block, names in blocks.items() for name in names}


def test_gfx1151_shares_the_rdna3_table_and_lacks_flop_and_matrix_counters() -> None:
    cap = capability_for("gfx1151")
    assert cap is not None and cap.arch == "gfx1151"
    assert cap.supports("SQ_WAVES") and cap.supports("GL2C_HIT_sum")
    for absent in ("SQ_INSTS_VALU_FMA_F32", "SQ_INSTS_MFMA", "TCC_HIT_sum"):
        assert not cap.supports(absent)
    assert set(cap.hardware) == set(_blocks_of("gfx11"))


def test_arch_names_with_feature_suffixes() -> None:
    cap = capability_for("gfx942:sramecc+:xnack-")
    assert cap is not None and cap.supports("TCC_EA0_RDREQ_sum")
    assert capability_for("gfx803") is None
    assert {"gfx90a", "gfx942", "gfx950", "gfx1151", "gfx1201"} <= set(packaged_archs())


@pytest.mark.parametrize(
    ("family", "arch"),
    [("gfx90a", "gfx90a"), ("gfx942", "gfx942"), ("gfx942", "gfx950"), ("gfx11", "gfx1151"),
     ("gfx12", "gfx1201")],
)  # fmt: skip
def test_every_metric_has_a_formula_the_gpu_can_collect(family: str, arch: str) -> None:
    fam, cap = load_family(family), capability_for(arch)
    assert cap is not None

    def collectable(name: str) -> bool:
        if name in fam.ids or name in fam.constants or name == "duration":
            return True
        plain = name.removesuffix("_sum")
        return cap.supports(name) or cap.supports(plain) or cap.supports(name + "_sum")

    lacking = [
        m.id
        for m in fam.metrics
        if not any(all(collectable(n) for n in a.formula.names) for a in m.alternatives)
    ]
    assert lacking == []


def test_a_pass_never_overfills_a_block() -> None:
    tcc = ["TCC_HIT_sum", "TCC_MISS_sum", "TCC_EA0_RDREQ_sum", "TCC_EA0_WRREQ_sum",
           "TCC_BUBBLE_sum", "SQ_WAVES", "nonsense"]  # fmt: skip
    cap = capability_for("gfx942")
    assert cap is not None
    result = plan(tcc, cap)
    assert result.dropped == ("nonsense",)
    assert sorted(result.counters) == sorted(tcc[:-1])
    blocks = _blocks_of("gfx942")
    limits = TABLE["limits"]["gfx942"]["blocks"]
    derived = TABLE["archs"]["gfx942"]["derived"]
    for one in result.passes:
        hardware = {h for c in one for h in derived.get(c, [c])}
        used: dict[str, int] = {}
        for h in hardware:
            used[blocks[h]] = used.get(blocks[h], 0) + 1
        assert all(n <= limits[b] for b, n in used.items()), (one, used)
    # five TCC hardware counters, four per pass: two passes
    assert len(result.passes) == 2 and result.split


def test_merge_packs_single_counter_lines_into_few_passes() -> None:
    cap = capability_for("gfx90a")
    assert cap is not None
    lines = [["SQ_WAVES"], ["SQ_INSTS_VALU"], ["SQ_INSTS_SALU"], ["SQ_WAVE_CYCLES"]]
    assert len(plan(lines, cap).passes) == 4
    assert plan(lines, cap, merge=True).passes == (
        ("SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_WAVE_CYCLES"),
    )


def test_rewrite_keeps_other_lines_and_drops_unsupported() -> None:
    text = "# set\npmc: SQ_WAVES SQ_INSTS_VALU_FMA_F32\nkernel: gemm\npmc: GL2C_HIT_sum\n"
    cap = capability_for("gfx1100")
    assert cap is not None
    new, result = rewrite_input(text, cap)
    assert read_pmc_lines(new) == [["SQ_WAVES"], ["GL2C_HIT_sum"]]
    assert "kernel: gemm" in new and "# set" in new
    assert result.dropped == ("SQ_INSTS_VALU_FMA_F32",)
    assert "gfx1100 cannot collect SQ_INSTS_VALU_FMA_F32" in result.message()


def test_list_avail_output_of_rocprofv3() -> None:
    text = reference_file("rocprofv3/amd-docs-rocm7-2025-08/list-avail.txt").read_text()
    caps = parse_list_avail(text)
    assert list(caps) == ["gfx90a"]
    cap = caps["gfx90a"]
    assert cap.hardware == {"SQ_WAVES": "SQ"}
    # ALUStalledByLDS = 400*reduce(SQ_WAIT_INST_LDS,sum)/reduce(SQ_WAVES,sum)/...: of its
    # counters only SQ_WAVES is listed in this (trimmed) output
    assert cap.derived == {"ALUStalledByLDS": ("SQ_WAVES",)}
    assert cap.limits["SQ"] == 8 and cap.source == "rocprofv3 --list-avail"
    assert plan(["SQ_WAVES", "TCC_HIT_sum"], cap).dropped == ("TCC_HIT_sum",)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx950", "gfx1151", "gfx1201"])
def test_packaged_counter_sets_fit_every_supported_gpu(arch: str) -> None:
    """gpuscope run's presets (madengine's counter files) never end up refused: each keeps
    counters the GPU has, each pass within the block limits of the JSON table."""
    from gpuscope.tools.config import counters_dir

    cap = capability_for(arch)
    assert cap is not None
    group = next(g for g, members in TABLE["members"].items() if arch in members)
    blocks, limits = _blocks_of(group), TABLE["limits"][group]["blocks"]
    derived = TABLE["archs"][group]["derived"]
    for path in sorted(counters_dir().glob("*.txt")):
        _, result = rewrite_input(path.read_text(), cap)
        assert result.passes, path.name
        for one in result.passes:
            used: dict[str, int] = {}
            for h in {h for c in one for h in derived.get(c, [c])}:
                used[blocks[h]] = used.get(blocks[h], 0) + 1
            assert all(n <= limits.get(b, 1) for b, n in used.items()), (path.name, one)
