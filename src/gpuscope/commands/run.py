"""`gpuscope run` (being built in this session)."""

from __future__ import annotations

import argparse

HELP = "run (not built yet)"


def configure(parser: argparse.ArgumentParser) -> None:
    del parser


def main(args: argparse.Namespace) -> int:
    from gpuscope.errors import GpuscopeError

    raise GpuscopeError("gpuscope run is not built yet")
