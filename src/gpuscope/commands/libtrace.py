"""`gpuscope libtrace` (being built in this session)."""

from __future__ import annotations

import argparse

HELP = "libtrace (not built yet)"


def configure(parser: argparse.ArgumentParser) -> None:
    del parser


def main(args: argparse.Namespace) -> int:
    from gpuscope.errors import GpuscopeError

    raise GpuscopeError("gpuscope libtrace is not built yet")
