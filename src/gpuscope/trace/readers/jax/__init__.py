"""JAX / XLA profiles (jax.profiler, TensorBoard's profile plugin): the trace-viewer JSON
(`<host>.trace.json.gz`, `perfetto_trace.json.gz`), the XSpace protobuf (`<host>.xplane.pb`,
through xprof, the `xplane` extra) and the `plugins/profile/<run>/` folder holding them."""

from gpuscope.trace.readers.jax.reader import JaxReader

__all__ = ["JaxReader"]
