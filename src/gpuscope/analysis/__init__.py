"""Pure analyses of a `Trace`: each takes the trace (and earlier results) and returns plain data."""
