"""Agents (CPUs and GPUs) and the ids the traces use for them.

rocprofv3 writes an agent as `Agent N` (default `--agent-index relative`: N is the agent's
logical node id; `absolute`: its node id), `GPU N` / `CPU N` (`type-relative`: the N-th agent of
that type) or, before ROCm 6.3, a bare integer (the logical node id). gpuscope's device id is the
logical node id, the N of the default `Agent N`: CSV and JSON of one run then agree. A `GPU N`
reference becomes the logical node id of that GPU when the agents are known.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from gpuscope.trace.model import I32, I64, Device
from gpuscope.trace.readers.rocprofv3._tables import Agent

# references to type-relative ids live above every real node id
GPU_BASE = 1 << 40
CPU_BASE = 2 << 40
_REFERENCE = re.compile(r"^\s*(?:(agent|gpu|cpu)\s*)?(\d+)\s*$", re.IGNORECASE)
_BASES = {"gpu": GPU_BASE, "cpu": CPU_BASE}


def references(texts: list[str]) -> I64:
    """Agent references of `Agent_Id` cells ('Agent 4', 'GPU 0', '4'); -1 for '' and junk."""
    table = {text: _reference(text) for text in set(texts)}
    return np.fromiter((table[t] for t in texts), np.int64, len(texts))


def _reference(text: str) -> int:
    found = _REFERENCE.match(text)
    if found is None:
        return -1
    kind = (found.group(1) or "agent").lower()
    value = _BASES.get(kind, 0) + int(found.group(2))
    return value if value < 2**63 else -1


def device_ids(refs: I64, agents: list[Agent]) -> I32:
    """Device id (logical node id) of each agent reference; -1 for CPUs and unknown agents."""
    result = np.where((refs >= 0) & (refs < GPU_BASE), refs, -1)
    gpus = refs - GPU_BASE
    typed = (refs >= GPU_BASE) & (refs < CPU_BASE)
    if typed.any():
        by_type = {a.type_index: a.logical_id for a in agents if a.is_gpu and a.type_index >= 0}
        unique, inverse = np.unique(gpus[typed], return_inverse=True)
        mapped = np.array([by_type.get(int(n), int(n)) for n in unique], np.int64)
        result[typed] = mapped[inverse]
    out: I32 = result.astype(np.int32)
    return out


def with_type_index(agents: list[Agent]) -> list[Agent]:
    """Agents with `type_index` filled where the source lacks it (CSV: rank by logical id)."""
    if all(a.type_index >= 0 for a in agents):
        return agents
    done: list[Agent] = []
    counters = {True: 0, False: 0}
    for agent in sorted(agents, key=lambda a: a.logical_id):
        index = counters[agent.is_gpu]
        counters[agent.is_gpu] += 1
        done.append(_replace(agent, type_index=index) if agent.type_index < 0 else agent)
    return done


def _replace(agent: Agent, **changes: Any) -> Agent:
    values = {**vars(agent), **changes}
    return Agent(**values)


def devices(agents: list[Agent]) -> tuple[Device, ...]:
    """The GPU agents as `Device`s, keyed by logical node id."""
    found = []
    for agent in sorted(agents, key=lambda a: a.logical_id):
        if not agent.is_gpu:
            continue
        found.append(
            Device(
                id=agent.logical_id,
                name=agent.product or agent.name,
                properties=dict(agent.properties),
                arch=agent.name.split(":")[0],
                compute_units=max(0, agent.compute_units),
            )
        )
    return tuple(found)
