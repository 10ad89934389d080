"""`gpuscope bench` (being built in this session)."""

from __future__ import annotations

import argparse

HELP = "bench (not built yet)"


def configure(parser: argparse.ArgumentParser) -> None:
    del parser


def main(args: argparse.Namespace) -> int:
    from gpuscope.errors import GpuscopeError

    raise GpuscopeError("gpuscope bench is not built yet")
