"""rocm-smi command-line fallback: `rocm-smi --showpower --showmeminfo vram --json`.

Every value in its JSON is a string; the power key depends on the device and release
(`Current Socket Graphics Package Power (W)` on MI300/APUs, `Average Graphics Package Power (W)`
on MI100/MI200/RDNA; "N/A (Secondary die)" on MI250's odd GCDs), VRAM comes as
`VRAM Total Memory (B)` / `VRAM Total Used Memory (B)`. One process per sample costs tens to
hundreds of ms, so the sampler skips the slots it cannot keep; prefer amdsmi for fast rates.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from gpuscope.samplers.backends.base import BackendUnavailable, PowerReading, VramReading

ARGS = ("--showpower", "--showmeminfo", "vram", "--json")
_POWER_KEYS = (
    "Current Socket Graphics Package Power (W)",
    "Average Graphics Package Power (W)",
)
_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class CardReading:
    """One card's values from one rocm-smi call."""

    power: PowerReading
    vram: VramReading


def parse_json(text: str) -> list[CardReading]:
    """rocm-smi `--json` output (possibly after warning lines) → readings ordered by card index."""
    start = text.find("{")
    if start < 0:
        raise ValueError("rocm-smi printed no JSON object")
    data = json.loads(text[start:])
    cards = sorted((k for k in data if k.startswith("card")), key=lambda k: int(k[4:]))
    return [_card(data[card]) for card in cards]


def _card(values: dict[str, str]) -> CardReading:
    watts = next((w for key in _POWER_KEYS if (w := _number(values.get(key))) is not None), None)
    used = _number(values.get("VRAM Total Used Memory (B)"))
    total = _number(values.get("VRAM Total Memory (B)"))
    return CardReading(
        PowerReading(watts),
        VramReading(None if used is None else int(used), None if total is None else int(total)),
    )


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:  # "N/A", "N/A (Secondary die)"
        return None


class RocmSmiBackend:
    """Runs rocm-smi once per reading."""

    name = "rocm-smi"

    def __init__(self, executable: str) -> None:
        self._argv = (executable, *ARGS)
        self._count = len(self._read())

    def device_count(self) -> int:
        return self._count

    def power(self, devices: Sequence[int], energy: bool = True) -> list[PowerReading]:
        cards = self._read()
        return [cards[d].power for d in devices]

    def vram(self, devices: Sequence[int]) -> list[VramReading]:
        cards = self._read()
        return [cards[d].vram for d in devices]

    def close(self) -> None:
        pass

    def _read(self) -> list[CardReading]:
        done = subprocess.run(
            self._argv, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"rocm-smi exited {done.returncode}: {done.stderr.strip()[:200]}")
        return parse_json(done.stdout)


def open_rocm_smi() -> RocmSmiBackend:
    """Find rocm-smi on PATH and check it answers with at least one card."""
    executable = shutil.which("rocm-smi")
    if executable is None:
        raise BackendUnavailable("rocm-smi not on PATH (install ROCm's rocm-smi-lib)")
    try:
        backend = RocmSmiBackend(executable)
    except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as error:
        raise BackendUnavailable(f"rocm-smi did not answer ({error})") from error
    if backend.device_count() == 0:
        raise BackendUnavailable("rocm-smi lists no card")
    return backend
