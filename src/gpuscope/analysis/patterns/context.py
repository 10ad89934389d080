"""What every pattern detector needs, computed once per trace: kernel owners, the device's
peaks, and small helpers to weigh a set of kernels against kernel time."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis._finding import us
from gpuscope.analysis._unique import unique, unique_inverse
from gpuscope.peaks import Peaks, peaks_for
from gpuscope.trace.model import I64, KERNEL, Mask, device_of

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

Found = dict[str, Any]


@dataclass(frozen=True)
class Context:
    """What every detector needs, computed once."""

    a: Analysis
    owner: I64  # per GPU row: the operator row that launched it, -1 when unknown
    kernels: Mask
    kernel_ns: int
    peaks: Peaks | None
    device: str

    @classmethod
    def of(cls, a: Analysis) -> Context:
        gpu = a.trace.gpu
        kernels = gpu.kind == KERNEL
        ids, counts = np.unique(gpu.device[kernels], return_counts=True)
        device = device_of(a.trace.meta.devices, int(ids[np.argmax(counts)])) if len(ids) else None
        owner = a.owners if a.inputs.cpu else np.full(len(gpu), -1)
        name = device.name if device else ""
        return cls(a, owner, kernels, a.kernel_ns, peaks_for(device), name)

    def share(self, ns: float) -> float:
        return ns / self.kernel_ns if self.kernel_ns else 0.0

    def time(self, mask: Mask) -> int:
        return int(self.a.trace.gpu.dur[mask].sum())

    def top_kernels(self, mask: Mask, count: int = 5) -> list[dict[str, Any]]:
        gpu, names = self.a.trace.gpu, self.a.trace.names
        ids, inverse = unique_inverse(gpu.name[mask])
        time = np.bincount(inverse, weights=gpu.dur[mask], minlength=len(ids))
        calls = np.bincount(inverse, minlength=len(ids))
        order = np.argsort(-time)[:count]
        return [
            {"name": names[ids[i]], "count": int(calls[i]), "time_us": us(time[i])} for i in order
        ]

    def kernel_names(self, pattern: re.Pattern[str]) -> Mask:
        gpu, names = self.a.trace.gpu, self.a.trace.names
        hits = [i for i in unique(gpu.name[self.kernels]) if pattern.search(names[i])]
        return self.kernels & np.isin(gpu.name, hits)

    def owned_by(self, op_names: list[int]) -> Mask:
        ops = self.a.trace.ops
        if len(ops) == 0 or not op_names:
            return np.zeros(len(self.kernels), bool)
        name = ops.name[np.maximum(self.owner, 0)]
        result: Mask = self.kernels & (self.owner >= 0) & np.isin(name, op_names)
        return result

    def severity(self, share: float, warns: float) -> str:
        return "warning" if share >= warns else "info"


def found(pid: str, title: str, time: int, share: float, severity: str, message: str,
          action: str, evidence: dict[str, Any]) -> Found:  # fmt: skip
    """The fields of a `patterns.Detected`."""
    return {"id": pid, "title": title, "time_ns": time, "share": share, "severity": severity,
            "message": message, "action": action, "evidence": evidence}  # fmt: skip
