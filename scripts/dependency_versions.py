"""Print the installed version of each of gpuscope's direct dependencies (the core and the
extras installed), one line, so that a CI log says which releases a test run used:

    python scripts/dependency_versions.py newest
    newest (Python 3.11.7): msgspec 0.23.0, numpy 2.4.6, rich 15.0.0, ... (28 packages)

Run by `make test-newest` and `make test-oldest` (Makefile). Standard library only.
"""

from __future__ import annotations

import platform
import re
import sys
from importlib import metadata

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def direct_dependencies() -> list[str]:
    """The distribution names gpuscope requires, core and extras, in the order it lists them."""
    names: dict[str, None] = {}
    for requirement in metadata.requires("gpuscope") or []:
        found = _NAME.match(requirement)
        if found:
            names[found.group(0)] = None
    return list(names)


def main(argv: list[str]) -> int:
    label = argv[0] if argv else "installed"
    said = []
    for name in direct_dependencies():
        try:
            said.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue  # an extra this environment leaves out
    print(f"{label} (Python {platform.python_version()}): {', '.join(said)} "
          f"({len(said)} packages)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
