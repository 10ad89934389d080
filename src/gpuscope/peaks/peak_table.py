"""The ceilings a replayed config is held against, labelled by where they come from.

gpuscope's measured ceilings (`measured.py`, measured by `gpuscope.timing.peaks`: a bf16 8192³
matmul and a 1 GiB device copy, once per device, cached) are used where they apply: bf16 and f16
GEMMs and convolutions (the same matrix-unit rate on every listed GPU) and memory bandwidth.
Every other precision is held against the datasheet (`datasheet.py`), labelled "datasheet".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuscope.peaks.datasheet import KIND as DATASHEET
from gpuscope.peaks.datasheet import Peaks as Datasheet
from gpuscope.peaks.measured import KIND as MEASURED
from gpuscope.peaks.measured import Measured

_HALF = ("bf16", "f16")


@dataclass(frozen=True)
class Ceiling:
    value: float  # TFLOP/s or GB/s
    source: str  # "measured: …" or "datasheet: …"


@dataclass(frozen=True)
class PeakTable:
    """Ceilings by precision (compute) and for memory bandwidth."""

    measured: Measured | None = None
    datasheet: Datasheet | None = None

    def compute(self, dtype: str) -> Ceiling | None:
        """The TFLOP/s ceiling of a GEMM / convolution in `dtype` (the input type)."""
        if self.measured is not None and dtype in _HALF:
            return Ceiling(self.measured.tflops, f"{MEASURED}: {self.measured.method}")
        if self.datasheet is None:
            return None
        key = self.datasheet.key_for(dtype)
        value = self.datasheet.tflops.get(key) if key else None
        if not value:
            return None
        return Ceiling(float(value), f"{DATASHEET}: {self.datasheet.label} {key}")

    def bandwidth(self) -> Ceiling | None:
        """Device memory bandwidth (GB/s): measured copy, else the datasheet."""
        if self.measured is not None:
            return Ceiling(self.measured.gbps, f"{MEASURED}: {self.measured.method}")
        if self.datasheet is None:
            return None
        return Ceiling(self.datasheet.bandwidth_gbs, f"{DATASHEET}: {self.datasheet.label}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"measured": None, "datasheet": None}
        if self.measured is not None:
            m = self.measured
            out["measured"] = {
                "device": m.device, "tflops": m.tflops, "gbps": m.gbps, "method": m.method,
            }  # fmt: skip
        if self.datasheet is not None:
            d = self.datasheet
            out["datasheet"] = {
                "label": d.label, "tflops": d.tflops, "gbps": d.bandwidth_gbs, "source": d.source,
            }  # fmt: skip
        return out
