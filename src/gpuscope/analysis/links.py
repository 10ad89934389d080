"""`Links`: for each GPU op, the host call that launched it (`launch.link` finds them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.trace.model import I64


@dataclass(frozen=True)
class Links:
    """For each row of trace.gpu: the index of its launching host call (-1 if none found)."""

    host_index: I64
    graph: np.ndarray[Any, np.dtype[np.bool_]]  # launched by a graph launch
    is_launch: np.ndarray[Any, np.dtype[np.bool_]]  # per host call: a launch API
    is_graph_launch: np.ndarray[Any, np.dtype[np.bool_]]  # per host call
