"""The quickstart notebook whole, its GPU cells included (`%gpuscope_bench x @ x` on the device,
`%%gpuscope_profile` of a cell): run on the device machine (tests/gpu/device_batch.sh)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.test_notebook import run_notebook, shown

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


def test_the_quickstart_runs_whole_on_a_gpu(tmp_path: Path) -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA or ROCm device")
    cells = {c.source.splitlines()[0]: c for c in run_notebook(tmp_path, gpu=True)}
    errors = [o for c in cells.values() for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    bench = shown(cells["import torch"], "text/plain")
    assert "<BenchResult " in bench and "(cpu" not in bench  # timed on the device
    profiled = cells["%%gpuscope_profile --iterations 3 --warmup 1"]
    html = shown(profiled, "text/html")
    assert "profile of cell" in html and "gpuscope-report" in html
    assert "<ProfileView cell: " in shown(profiled, "text/plain")
    assert list(tmp_path.glob("gpuscope-profile/*.json.gz")), "no trace written"
