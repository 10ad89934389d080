"""What a command tells its user on stderr besides its outputs: one line per message.

    warn(f"{path}: {why}")     # warning: in put\\x0a\\x1b[2J/trace.json: truncated …

A message names files, and a file name can hold a line end or `ESC [ 2 J`: control characters
are shown as escapes (gpuscope.text.printable), so that a message is one line and cannot drive
the terminal (the error boundary in cli.py does the same for `error:` lines).
"""

from __future__ import annotations

import sys

from gpuscope.text import printable


def warn(message: str) -> None:
    """`warning: MESSAGE` on stderr."""
    say(f"warning: {message}")


def say(line: str) -> None:
    """`line` on stderr, control characters escaped."""
    print(printable(line), file=sys.stderr, flush=True)
