"""CLI commands: one module each, exposing HELP, configure(parser) and main(args) -> int.

Modules here import only argparse at top level: heavy imports happen inside main(), so that
`gpuscope --help` starts fast.
"""

from __future__ import annotations

# command name -> module; the order is the order shown in --help
COMMANDS: dict[str, str] = {
    "analyze": "gpuscope.commands.analyze",
    "diff": "gpuscope.commands.diff",
    "counters": "gpuscope.commands.counters",
    "bench": "gpuscope.commands.bench",
    "profile": "gpuscope.commands.profile",
    "run": "gpuscope.commands.run",
    "doctor": "gpuscope.commands.doctor",
    "libtrace": "gpuscope.commands.libtrace",
    "libperf": "gpuscope.commands.libperf",
    "export": "gpuscope.commands.export",
    "schema": "gpuscope.commands.schema",
    "completion": "gpuscope.commands.completion",
    "history": "gpuscope.commands.history",
    "check": "gpuscope.commands.check",
}
