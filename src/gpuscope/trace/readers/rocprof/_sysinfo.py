"""`results.sysinfo.txt`: the `rocminfo` dump rocprof v1 writes next to its results.

rocprof numbers devices by HSA agent index, CPU agents first (`gpu-id` 8 on a machine with
eight CPU agents is its first GPU), so the agents are kept in the dump's order.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from gpuscope.errors import ReaderError
from gpuscope.trace.model import Device
from gpuscope.trace.readers.rocprof._piece import TRUNCATED, Agent, Piece

SIGNATURE = "CMD: rocminfo"  # rocprof's metadata_gen() writes this line first
DONE = "*** Done ***"  # rocminfo's last line
_AGENT = re.compile(r"^Agent (\d+)\s*$")
_FIELD = re.compile(r"^  (\S[^:]*?):\s*(.*?)\s*$")  # top-level fields are indented by two spaces
_LEADING_INT = re.compile(r"^\s*(\d+)")
_OTHER_AGENT = re.compile(r"^Agent(\d+)\.(\w+)$")


def read_sysinfo(path: str) -> Piece:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError as error:
        raise ReaderError(f"cannot read ({error.strerror or error})") from None
    agents = parse_agents(text)
    if not agents:
        raise ReaderError("a rocminfo dump without any 'Agent N' section (expected rocprof's "
                          "results.sysinfo.txt)")  # fmt: skip
    piece = Piece(path, "sysinfo", kind="sysinfo", agents=agents, provides={"devices"})
    if DONE not in text[-4096:]:
        piece.truncated = True
        piece.warnings.append(f"{TRUNCATED}: the rocminfo dump ends before its '{DONE}' line "
                              "(cut short?): the last agents may be missing")  # fmt: skip
    return piece


def parse_agents(text: str) -> tuple[Agent, ...]:
    """Every agent of the dump, in order (index 0 = "Agent 1")."""
    agents: list[Agent] = []
    fields: dict[str, str] | None = None
    for line in text.splitlines():
        if _AGENT.match(line.strip()) and not line.startswith(" "):
            if fields is not None:
                agents.append(_agent(len(agents), fields))
            fields = {}
            continue
        found = _FIELD.match(line)
        if fields is not None and found and found.group(1) not in fields:
            fields[found.group(1)] = found.group(2)
    if fields is not None:
        agents.append(_agent(len(agents), fields))
    return tuple(agents)


def _agent(index: int, fields: dict[str, str]) -> Agent:
    name = fields.get("Name", "")
    marketing = fields.get("Marketing Name", "") or name
    is_gpu = fields.get("Device Type", "").upper() == "GPU"
    device = Device(
        id=index,
        name=marketing,
        properties=dict(fields),
        arch=name.split(":")[0] if is_gpu and name.startswith("gfx") else "",
        compute_units=_leading_int(fields.get("Compute Unit", "")),
    )
    return Agent(index, is_gpu, device)


def _leading_int(text: str) -> int:
    found = _LEADING_INT.match(text)
    return int(found.group(1)) if found else 0


def devices_for(agents: tuple[Agent, ...], used: list[int]) -> tuple[Device, ...]:
    """The devices behind the ids the events use (every GPU agent when no event names one).

    An id is the HSA agent index (gpu-id); ROCm 4's op trace wrote a GPU ordinal instead
    (`dev-id` 0 where agent 0 is a CPU), so an id that names a CPU agent is read as the
    ordinal among the GPUs. The Device keeps the id the events use.
    """
    gpus = [a for a in agents if a.is_gpu]
    if not used:
        return tuple(a.device for a in gpus)
    devices = []
    for device_id in sorted(set(used)):
        agent = _resolve(agents, gpus, device_id)
        if agent is not None:
            devices.append(_with_id(agent.device, device_id))
    return tuple(devices)


def _resolve(agents: tuple[Agent, ...], gpus: list[Agent], device_id: int) -> Agent | None:
    if 0 <= device_id < len(agents) and agents[device_id].is_gpu:
        return agents[device_id]
    if 0 <= device_id < len(gpus):
        return gpus[device_id]
    return None


def _with_id(device: Device, device_id: int) -> Device:
    return Device(device_id, device.name, device.properties, device.arch, device.compute_units)


def is_sysinfo(head: str) -> bool:
    return head.lstrip("\ufeff").startswith(SIGNATURE) and "HSA Agents" in head


def agents_from_other_data(other: Any) -> tuple[Agent, ...]:
    """Agents from `otherData` (the rocminfo dump flattened to `AgentN.Field`, spaces removed)."""
    if not isinstance(other, dict):
        return ()
    fields: dict[int, dict[str, str]] = defaultdict(dict)
    for key, value in other.items():
        found = _OTHER_AGENT.match(str(key))
        if found:
            fields[int(found.group(1))][found.group(2)] = str(value)
    renamed = {"MarketingName": "Marketing Name", "DeviceType": "Device Type",
               "ComputeUnit": "Compute Unit"}  # fmt: skip
    return tuple(
        _agent(index, {renamed.get(k, k): v for k, v in fields[number].items()})
        for index, number in enumerate(sorted(fields))
    )
