"""Terminal tables at 80 columns: optional columns give way so kernel names stay readable."""

from __future__ import annotations

from gpuscope.document.model import Cell, Table
from gpuscope.report.terminal import GAP, NAME_MIN, _fitting_columns

NAME = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>"


def _table() -> Table:
    row = (Cell("1"), Cell(NAME, code=True), Cell("same op and shape"), Cell("elementwise"),
           Cell("113.7 µs (17×)"), Cell("+76.2 µs"), Cell("0.00038 *"))  # fmt: skip
    headers = ("#", "kernel", "match", "category", "after", "Δ", "per-call p")
    return Table(headers, (row,), (True, False, False, False, True, True, True),
                 optional=(0, 0, 2, 1, 0, 0, 3))  # fmt: skip


def test_a_wide_terminal_shows_every_column() -> None:
    assert _fitting_columns(_table(), _table().numeric, 200) == list(range(7))


def test_a_narrow_terminal_drops_the_highest_ranked_optional_columns_first() -> None:
    shown = _fitting_columns(_table(), _table().numeric, 80)
    assert shown == [0, 1, 3, 4, 5]  # p (3), then match (2) gave way; category (1) fits
    kept = len("1") + NAME_MIN + len("elementwise") + len("113.7 µs (17×)") + len("+76.2 µs")
    kept += GAP * 4
    assert kept <= 80 < kept + len("same op and shape") + GAP  # match would not have fit
    assert _fitting_columns(_table(), _table().numeric, 70) == [0, 1, 4, 5]


def test_columns_that_are_not_optional_are_never_dropped() -> None:
    assert _fitting_columns(_table(), _table().numeric, 10) == [0, 1, 4, 5]


def test_number_headers_stack_so_a_text_column_is_not_cut_mid_word() -> None:
    """The compact table of many traces at 80 columns: 'startup-bound' was drawn as 'startup-b' /
    'ound' because the unwrapped 'kernel time' and 'GPU busy' headers took its room."""
    from rich.console import Console

    from gpuscope.report.terminal import _table as draw

    headers = ("trace", "kernel time", "GPU busy", "util", "verdict", "findings")
    row = (Cell("1. amd-docs-rocm7-2025-08", code=True), Cell("141 µs"), Cell("470 µs"),
           Cell("0.0%"), Cell("startup-bound"), Cell("1"))  # fmt: skip
    table = Table(headers, (row,), (False, True, True, True, False, True))
    console = Console(width=80, record=True, color_system=None)
    console.print(draw(table, 80))
    lines = console.export_text().splitlines()
    assert any("startup-bound" in line for line in lines), lines
    assert any(line.split()[:2] == ["kernel", "GPU"] for line in lines), lines  # stacked
    assert max(len(line.rstrip()) for line in lines) <= 80
    wide = Console(width=200, record=True, color_system=None)
    wide.print(draw(table, 200))
    assert "kernel time" in wide.export_text()  # room enough: one line of headers


def test_a_text_column_is_never_narrower_than_its_longest_word() -> None:
    """diff's Profiles table at 80 columns cut 'annotations-excluded' into 'annotations-exclu' /
    'ded': optional columns now give way first."""
    headers = ("", "file", "vendor", "devices", "format", "steps", "integrity flags")
    row = (Cell("before"), Cell("rank0_vm_984.pt.trace.json.gz", code=True), Cell("nvidia"),
           Cell("NVIDIA H200"), Cell("kineto"), Cell("3"),
           Cell("unlinked-kernels, annotations-excluded"))  # fmt: skip
    table = Table(headers, (row,), (False,) * 5 + (True, False), optional=(0, 0, 2, 1, 3, 0, 0))
    shown = _fitting_columns(table, table.numeric, 80)
    assert 6 in shown and 4 not in shown  # the flags stay, the format gives way


def test_the_table_of_many_traces_keeps_its_verdicts_whole_at_80_and_72_columns() -> None:
    """Issue 25: five recorded traces at 80 columns drew 'cpu-boun' / 'd' (the trace names held
    30 columns, one more than was left, and rich squeezed the verdict); at 72 the verdict column
    was gone, unnamed. Now the names give way once no optional column is left."""
    from rich.console import Console

    from gpuscope.report.terminal import _table as draw

    headers = ("trace", "vendor", "kernels", "kernel time", "GPU busy", "util", "GEMM", "verdict",
               "findings", "flags")  # fmt: skip
    names = ("compiled_default_h200.json.gz", "compiled_reduce_overhead_h200.json.gz",
             "jax_step_h200.trace.json.gz", "llama_compiled_h200.json.gz")  # fmt: skip
    verdicts = ("cpu-bound", "gpu-bound") * 2
    rows = tuple(
        (Cell(f"{i}. {name}", code=True, full=name), Cell("nvidia"), Cell("85"), Cell("2.64 ms"),
         Cell("2.65 ms"), Cell("48.6%"), Cell("70.2%"), Cell(verdict), Cell("3 (2 ⚠)"), Cell("1"))
        for i, (name, verdict) in enumerate(zip(names, verdicts, strict=True), 1)
    )  # fmt: skip
    numeric = (False, False, True, True, True, True, True, False, True, True)
    table = Table(headers, rows, numeric, optional=(0, 4, 3, 0, 0, 0, 2, 0, 0, 1))
    for width in (80, 72):
        console = Console(width=width, record=True, color_system=None)
        console.print(draw(table, width))
        lines = console.export_text().splitlines()
        body = [line for line in lines if line[:2] in ("1.", "2.", "3.", "4.")]
        assert [line.split()[-4] for line in body] == ["cpu-bound", "gpu-bound"] * 2, lines
        assert all(line.rstrip().endswith("⚠)") for line in body), lines  # findings whole
        assert max(len(line.rstrip()) for line in lines) <= width
        assert "2. compiled_" in body[1] and body[1].split()[1].endswith(".gz")
    wide = Console(width=200, record=True, color_system=None)
    wide.print(draw(table, 200))
    assert "2. compiled_reduce_overhead_h200.json.gz" in wide.export_text()  # whole when it fits
