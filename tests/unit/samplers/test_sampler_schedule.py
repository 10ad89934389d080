"""The sampler's schedule with a fake clock: on the grid, no drift, missed slots skipped,
every row flushed before the next reading, marks stamped when called."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.errors import ConfigError, ToolError
from gpuscope.samplers import Sampler
from gpuscope.samplers.backends.fake import GIB, FakeBackend
from gpuscope.samplers.schedule import next_slot
from tests.unit.samplers.conftest import EPOCH_NS, FakeClock, rows

MS = 1_000_000


def _sampler(tmp_path: Path, backend: FakeBackend, clock: FakeClock, **kw: object) -> Sampler:
    sampler = Sampler("power", tmp_path / "power.csv", backend=backend, clock=clock, **kw)  # type: ignore[arg-type]
    sampler.open()
    return sampler


def test_next_slot_skips_only_passed_deadlines() -> None:
    assert next_slot(0, 10, now_ns=3, taken=0) == 1
    assert next_slot(0, 10, now_ns=10, taken=0) == 1
    assert next_slot(0, 10, now_ns=11, taken=0) == 2
    assert next_slot(0, 10, now_ns=35, taken=1) == 4


def test_rows_stay_on_the_grid_although_reads_take_time(tmp_path: Path) -> None:
    clock = FakeClock()
    backend = FakeBackend(on_read=lambda: clock.advance(3 * MS))  # each read takes 3 ms
    sampler = _sampler(tmp_path, backend, clock, rate_s=0.01)
    sampler.run(until_ns=sampler.start_ns + 1000 * MS)
    sampler.close()
    times = [int(r["monotonic_ns"]) for r in rows(tmp_path / "power.csv")]
    # a sleep-a-period loop would have drifted 3 ms per sample, 0.3 s by the end
    assert times == [sampler.start_ns + k * 10 * MS for k in range(101)]
    assert sampler.stats.samples == 101 and sampler.stats.skipped_slots == 0
    assert sampler.stats.max_late_ns == 0


def test_slots_missed_by_a_slow_read_are_skipped(tmp_path: Path) -> None:
    clock = FakeClock()
    reads = iter([0, 0, 0, 25 * MS] + [0] * 100)  # the 3rd scheduled read takes 25 ms
    backend = FakeBackend(on_read=lambda: clock.advance(next(reads)))
    sampler = _sampler(tmp_path, backend, clock, rate_s=0.01)  # read 0: the power probe
    sampler.run(until_ns=sampler.start_ns + 60 * MS)
    sampler.close()
    slots = [
        (int(r["monotonic_ns"]) - sampler.start_ns) // (10 * MS)
        for r in rows(tmp_path / "power.csv")
    ]
    assert slots == [0, 1, 2, 5, 6]  # slots 3 and 4 passed during the slow read
    assert sampler.stats.skipped_slots == 2


def test_every_row_is_on_disk_before_the_next_reading(tmp_path: Path) -> None:
    clock = FakeClock()
    seen: list[int] = []
    csv_path = tmp_path / "power.csv"

    def count_rows() -> None:
        if csv_path.exists():
            seen.append(len(rows(csv_path)))

    sampler = _sampler(tmp_path, FakeBackend(on_read=count_rows), clock, rate_s=0.1)
    sampler.run(until_ns=sampler.start_ns + 500 * MS)
    sampler.close()
    # read 0 is the probe before the file exists; then read k sees k-1 rows already written
    assert seen == [0, 1, 2, 3, 4, 5]


def test_marks_are_rows_stamped_when_called(tmp_path: Path) -> None:
    clock = FakeClock()
    sampler = _sampler(tmp_path, FakeBackend(), clock, rate_s=0.1)
    sampler.run(until_ns=sampler.start_ns + 100 * MS)
    clock.advance(37 * MS)
    sampler.mark("workload_start")
    mark_ns = clock.now
    sampler.run(until_ns=sampler.start_ns + 300 * MS)
    sampler.mark("workload_end")
    sampler.close()
    table = rows(tmp_path / "power.csv")
    marks = [r for r in table if r["mark"]]
    assert [m["mark"] for m in marks] == ["workload_start", "workload_end"]
    assert int(marks[0]["monotonic_ns"]) == mark_ns
    assert mark_ns == 1_137_000_000 and EPOCH_NS % 1_000_000_000 == 0
    assert marks[0]["utc"] == "2026-11-22T00:00:01.137000+00:00"
    assert marks[0]["time"] == "2026-11-22 00:00:01.137000"
    scheduled = [int(r["monotonic_ns"]) - sampler.start_ns for r in table if not r["mark"]]
    assert scheduled == [0, 100 * MS, 200 * MS, 300 * MS]  # run() resumes the same grid
    assert sampler.stats.marks == 2
    with pytest.raises(ToolError, match="not running"):
        sampler.mark("late")


def test_power_csv_values_and_energy_every_5_s(tmp_path: Path) -> None:
    clock = FakeClock()
    sampler = _sampler(tmp_path, FakeBackend(devices=2), clock, rate_s=1.0)
    sampler.run(until_ns=sampler.start_ns + 11_000 * MS)
    sampler.mark("workload_end")
    sampler.close()
    table = rows(tmp_path / "power.csv")
    assert list(table[0]) == [
        "time", "Power(Watt) GPU0", "Power(Watt) GPU1", "utc", "monotonic_ns",
        "energy_J GPU0", "energy_J GPU1", "mark",
    ]  # fmt: skip
    # fake watts = 100 + 50·device + reading number (reading 0 was the probe)
    assert [r["Power(Watt) GPU1"] for r in table[:3]] == ["151.000", "152.000", "153.000"]
    with_energy = [i for i, r in enumerate(table) if r["energy_J GPU0"]]
    assert with_energy == [0, 5, 10, 12]  # t = 0 s, 5 s, 10 s, and the mark
    # energy since the first row: the fake's counter adds every reading's watts
    assert table[5]["energy_J GPU0"] == f"{sum(100 + n for n in range(2, 7)):.3f}"


def test_vram_percent_is_used_over_total(tmp_path: Path) -> None:
    clock = FakeClock()
    backend = FakeBackend(devices=1, vram=lambda d, n: (20 * GIB, 80 * GIB))
    sampler = Sampler("vram", tmp_path / "vram.csv", backend=backend, clock=clock, rate_s=0.5)
    sampler.open()
    sampler.run(until_ns=sampler.start_ns + 500 * MS)
    sampler.close()
    table = rows(tmp_path / "vram.csv")
    assert [(r["vram(%) GPU0"], r["vram_used_MiB GPU0"]) for r in table] == [
        ("25.00", "20480.0")
    ] * 2


def test_a_failing_read_leaves_empty_cells_and_the_loop_goes_on(tmp_path: Path) -> None:
    clock = FakeClock()

    def watts(device: int, reading: int) -> float:
        if reading == 2:
            raise RuntimeError("GPU is lost")
        return 10.0

    sampler = _sampler(tmp_path, FakeBackend(devices=1, watts=watts), clock, rate_s=0.1)
    sampler.run(until_ns=sampler.start_ns + 300 * MS)
    sampler.close()
    assert [r["Power(Watt) GPU0"] for r in rows(tmp_path / "power.csv")] == [
        "10.000",
        "",
        "10.000",
        "10.000",
    ]
    assert sampler.stats.read_errors == 1
    assert sampler.warnings == ["fake power read failed: GPU is lost"]


def test_all_devices_leaves_out_the_ones_without_power(tmp_path: Path) -> None:
    backend = FakeBackend(devices=2, watts=lambda d, n: None if d == 1 else 300.0)
    sampler = _sampler(tmp_path, backend, FakeClock())
    sampler.close()
    assert sampler.devices == [0]
    assert "GPU1 reports no power" in sampler.warnings[0]
    assert (tmp_path / "power.csv").read_text().startswith("time,Power(Watt) GPU0,utc,")


def test_device_lists(tmp_path: Path) -> None:
    explicit = _sampler(tmp_path, FakeBackend(devices=3), FakeClock(), devices="2,0")
    explicit.close()
    assert explicit.devices == [2, 0]
    with pytest.raises(ToolError, match=r"GPUs 0\.\.1"):
        _sampler(tmp_path, FakeBackend(devices=2), FakeClock(), devices="0,2")
    with pytest.raises(ConfigError, match="expected all"):
        _sampler(tmp_path, FakeBackend(devices=2), FakeClock(), devices="first")
    with pytest.raises(ToolError, match="exactly 2 GPUs"):
        _sampler(tmp_path, FakeBackend(devices=1), FakeClock(), dual_gcd=True)


def test_a_failed_open_closes_the_backend(tmp_path: Path) -> None:
    backend = FakeBackend(devices=1)
    with pytest.raises(ToolError):
        _sampler(tmp_path, backend, FakeClock(), devices="5")
    assert backend.closed


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="positive"):
        Sampler("power", tmp_path / "p.csv", rate_s=0)
    with pytest.raises(ConfigError, match="power or vram"):
        Sampler("temp", tmp_path / "p.csv")  # type: ignore[arg-type]


def test_context_manager_with_the_real_clock(tmp_path: Path) -> None:
    backend = FakeBackend(devices=1)
    with Sampler("power", tmp_path / "p.csv", backend=backend, rate_s=0.001) as sampler:
        sampler.mark("workload_start")
        sampler.mark("workload_end")
    table = rows(tmp_path / "p.csv")
    assert [r["mark"] for r in table if r["mark"]] == ["workload_start", "workload_end"]
    assert table[0]["mark"] == "" and backend.closed


def test_power_and_vram_at_one_rate_share_one_ticker(tmp_path: Path) -> None:
    from gpuscope.samplers import ticker

    clock = FakeClock()
    power = _sampler(tmp_path, FakeBackend(), clock, rate_s=0.1)
    vram = Sampler("vram", tmp_path / "vram.csv", backend=FakeBackend(), clock=clock, rate_s=0.1)
    vram.open()
    slow = Sampler("vram", tmp_path / "slow.csv", backend=FakeBackend(), clock=clock, rate_s=0.5)
    slow.open()
    assert len(ticker._SHARED) == 2
    power.run(until_ns=power.start_ns + 300 * MS)  # one loop samples both 0.1 s samplers
    power.close()
    vram.run(until_ns=power.start_ns + 500 * MS)  # the ticker lives on for vram
    vram.close()
    slow.close()
    assert ticker._SHARED == {}
    assert len(rows(tmp_path / "power.csv")) == 4 and len(rows(tmp_path / "vram.csv")) == 6
    assert rows(tmp_path / "slow.csv") == []
