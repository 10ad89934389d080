"""Columns as the tables hand them over, and their conversion to one DataFrame library.

A table is built once as numpy columns, then converted whole: no Python runs per row.

- a plain numpy array is a column as it is;
- `Text(codes, labels)` is a text column given as indices into `labels` (the trace's interned
  names); -1 is a missing value;
- `Maybe(values, present)` is an integer column with missing values (the model's -1 for
  "absent": no stream, no correlation id, a launch parameter the format does not record).

`backend`: "pandas" (text as Python strings, integers with missing values as nullable `Int64`),
"arrow" (a `pyarrow.Table`; text dictionary-encoded) or "polars" (from that Arrow table, with
zero copies where Arrow allows; text as `Categorical`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
import numpy.typing as npt

from gpuscope.errors import InputError

BACKENDS = ("pandas", "arrow", "polars")
_EXTRA = "pip install 'gpuscope[notebook]'"


@dataclass(frozen=True)
class Text:
    """Text by index into `labels` (-1: missing)."""

    codes: npt.NDArray[np.integer[Any]]
    labels: Labels


@dataclass(frozen=True)
class Maybe:
    """Integers where `present` is False are missing."""

    values: npt.NDArray[np.int64]
    present: npt.NDArray[np.bool_]

    @classmethod
    def of(cls, values: Any) -> Maybe:
        """The model's convention: -1 (any negative) is absent."""
        values = np.asarray(values, np.int64)
        return cls(values, values >= 0)


class Labels:
    """A tuple of strings made ready once for every conversion (object array, Arrow array)."""

    def __init__(self, labels: tuple[str, ...]) -> None:
        self.labels = labels

    @functools.cached_property
    def objects(self) -> npt.NDArray[np.object_]:
        """The labels with None appended: index -1 gives None."""
        array = np.empty(len(self.labels) + 1, dtype=object)
        array[:-1] = self.labels
        return array

    @functools.cached_property
    def arrow(self) -> Any:
        import pyarrow as pa

        return pa.array(self.labels, pa.string())


Column = Union[npt.NDArray[Any], Text, Maybe]  # noqa: UP007 - a runtime alias on 3.10
Columns = Mapping[str, Column]


def check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise InputError(f"backend {backend!r}: expected one of {', '.join(BACKENDS)}")


def frame(columns: Columns, backend: str = "pandas") -> Any:
    """The columns as one DataFrame of `backend` (see the module's docstring)."""
    check_backend(backend)
    if backend == "pandas":
        return _pandas(columns)
    table = _arrow(columns)
    if backend == "arrow":
        return table
    polars = _need("polars")
    return polars.from_arrow(table)


def take(columns: Columns, index: Any) -> dict[str, Column]:
    """The rows `index` (positions or a mask) of every column."""
    taken: dict[str, Column] = {}
    for name, column in columns.items():
        if isinstance(column, Text):
            taken[name] = Text(column.codes[index], column.labels)
        elif isinstance(column, Maybe):
            taken[name] = Maybe(column.values[index], column.present[index])
        else:
            taken[name] = column[index]
    return taken


def with_note(table: Any, note: str, backend: str) -> Any:
    """A table that says why it is empty (or what it lacks): pandas `df.attrs["note"]`, Arrow
    schema metadata `note`; polars keeps no metadata."""
    if backend == "pandas":
        table.attrs["note"] = note
    elif backend == "arrow":
        table = table.replace_schema_metadata({"note": note})
    return table


def _need(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        extra = "pip install polars" if module == "polars" else _EXTRA
        raise InputError(f"DataFrames need {module}: {extra}") from None


def _pandas(columns: Columns) -> Any:
    pd = _need("pandas")
    data = {}
    for name, column in columns.items():
        if isinstance(column, Text):
            data[name] = column.labels.objects[column.codes]
        elif isinstance(column, Maybe):
            data[name] = pd.arrays.IntegerArray(column.values, ~column.present)
        else:
            data[name] = column
    return pd.DataFrame(data, copy=False)


def _arrow(columns: Columns) -> Any:
    pa = _need("pyarrow")
    arrays = []
    for column in columns.values():
        if isinstance(column, Text):
            codes = np.asarray(column.codes, np.int32)
            indices = pa.array(codes, mask=codes < 0)
            arrays.append(pa.DictionaryArray.from_arrays(indices, column.labels.arrow))
        elif isinstance(column, Maybe):
            arrays.append(pa.array(column.values, mask=~column.present))
        else:
            arrays.append(pa.array(column))
    return pa.Table.from_arrays(arrays, names=list(columns))


def records_frame(rows: list[dict[str, Any]], backend: str = "pandas") -> Any:
    """A small table given as rows (the report's tables): one DataFrame of `backend`."""
    check_backend(backend)
    if backend == "pandas":
        return _need("pandas").DataFrame.from_records(rows) if rows else _need("pandas").DataFrame()
    pa = _need("pyarrow")
    table = pa.Table.from_pylist(rows)
    return table if backend == "arrow" else _need("polars").from_arrow(table)
