"""Joining rocprofv3 tables: dispatches of several files, counters onto their kernel rows."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from gpuscope.trace.model import I64
from gpuscope.trace.readers.rocprofv3._tables import Dispatches

_LIMIT = 1 << 62


def concat_dispatches(tables: list[Dispatches]) -> Dispatches:
    """One table of the rows of `tables`, in order."""
    if len(tables) == 1:
        return tables[0]
    columns = {
        f.name: np.concatenate([getattr(t, f.name) for t in tables])
        for f in fields(Dispatches)
        if f.name != "names"
    }
    return Dispatches(names=[n for t in tables for n in t.names], **columns)


def match(keys: I64, names: np.ndarray, want_keys: I64, want_names: np.ndarray) -> I64:
    """For each wanted (key, name), the first row with that key and name; -1 when none.

    Keys below 0 (unknown dispatch) never match. Vectorised: both sides are reduced to one
    integer per pair, sorted once and searched.
    """
    found = np.full(len(want_keys), -1, np.int64)
    if not len(keys) or not len(want_keys):
        return found
    have, want = _pair_ids(keys, names, want_keys, want_names)
    order = np.argsort(have, kind="stable")  # equal pairs keep row order: the first is found
    ordered = have[order]
    position = np.minimum(np.searchsorted(ordered, want), len(ordered) - 1)
    hit = (ordered[position] == want) & (want_keys >= 0)
    found[hit] = order[position[hit]]
    return found


def first_rows(keys: I64, want_keys: I64) -> I64:
    """For each wanted key, the first row with that key; -1 when none."""
    return match(keys, np.zeros(len(keys), np.int64), want_keys, np.zeros(len(want_keys), np.int64))


def _pair_ids(
    keys: I64, names: np.ndarray, want_keys: I64, want_names: np.ndarray
) -> tuple[I64, I64]:
    """One int64 per (key, name) pair, equal pairs equal, on both sides."""
    all_keys = np.concatenate([keys, want_keys]).astype(np.int64) + 1
    all_names = np.concatenate([names, want_names]).astype(np.int64) + 1
    width = int(all_names.max()) + 1
    if all_keys.min() >= 0 and (int(all_keys.max()) + 1) * width < _LIMIT:
        ids = all_keys * width + all_names
    else:  # huge ids: number the distinct pairs instead
        pairs = np.stack([all_keys, all_names], axis=1)
        ids = np.unique(pairs, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return ids[: len(keys)], ids[len(keys) :]
