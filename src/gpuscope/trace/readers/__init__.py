"""One package per trace format; each package's `__init__` names the `Reader` it offers (registered
in `gpuscope.trace.registry`), its private helpers are its `_*.py` modules."""
