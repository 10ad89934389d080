"""One module per trace format; each defines a `Reader` registered in `gpuscope.trace.registry`."""
