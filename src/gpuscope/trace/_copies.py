"""The direction and host memory of a copy, from what each format calls it."""

from __future__ import annotations

import re

from gpuscope.trace.model import (
    DTOD,
    DTOH,
    HTOD,
    HTOH,
    OTHER_COPY,
    PAGEABLE,
    PINNED,
    PTOP,
    UNKNOWN_MEMORY,
)

_SHORT = {"HtoD": HTOD, "DtoH": DTOH, "DtoD": DTOD, "HtoH": HTOH, "PtoP": PTOP}
_SHORT_WORD = re.compile(r"\b(HtoD|DtoH|DtoD|HtoH|PtoP)\b")
_KINETO_MEMORY = re.compile(r"\((\w+)\s*->\s*(\w+)\)")
_LONG = re.compile(r"(HOST|DEVICE|PEER)_?TO_?(HOST|DEVICE|PEER)", re.IGNORECASE)
_LONG_KIND = {
    ("HOST", "DEVICE"): HTOD,
    ("DEVICE", "HOST"): DTOH,
    ("DEVICE", "DEVICE"): DTOD,
    ("HOST", "HOST"): HTOH,
    ("PEER", "PEER"): PTOP,
    ("DEVICE", "PEER"): PTOP,
    ("PEER", "DEVICE"): PTOP,
}


def copy_kind(text: str) -> int:
    """COPY_KINDS index from 'Memcpy HtoD (Pageable -> Device)', 'CopyHostToDevice',
    'MEMORY_COPY_DEVICE_TO_HOST', 'PeerToPeer', ... (OTHER_COPY when it says none)."""
    short = _SHORT_WORD.search(text)
    if short:
        return _SHORT[short.group(1)]
    long = _LONG.search(text)
    if long:
        return _LONG_KIND.get((long.group(1).upper(), long.group(2).upper()), OTHER_COPY)
    if re.search(r"peer", text, re.IGNORECASE):
        return PTOP
    return OTHER_COPY


def host_memory(text: str) -> int:
    """PINNED / PAGEABLE from Kineto's '(Pageable -> Device)' / '(Pinned -> Device)'."""
    found = _KINETO_MEMORY.search(text)
    if not found:
        return UNKNOWN_MEMORY
    sides = set(found.groups())
    if "Pageable" in sides:
        return PAGEABLE
    if "Pinned" in sides:
        return PINNED
    return UNKNOWN_MEMORY
