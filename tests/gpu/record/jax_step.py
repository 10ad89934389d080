"""A JAX training step (jit, an MLP with a softmax cross-entropy) profiled with jax.profiler:
the test input for gpuscope's JAX / XLA readers (issue 20). Writes the TensorBoard profile
folder (plugins/profile/<run>/*.xplane.pb, *.trace.json.gz) and a Perfetto JSON under OUT.

    python tests/gpu/record/jax_step.py OUT
"""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp


def init(key: jax.Array, sizes: list[int]) -> list[tuple[jax.Array, jax.Array]]:
    keys = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (m, n), jnp.bfloat16) / m**0.5, jnp.zeros(n, jnp.bfloat16))
            for k, m, n in zip(keys, sizes[:-1], sizes[1:], strict=True)]  # fmt: skip


def loss(params: list[tuple[jax.Array, jax.Array]], x: jax.Array, y: jax.Array) -> jax.Array:
    for w, b in params[:-1]:
        x = jax.nn.gelu(x @ w + b)
    w, b = params[-1]
    logits = (x @ w + b).astype(jnp.float32)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


@jax.jit
def step(params, x, y):  # type: ignore[no-untyped-def]
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return [
        (w - 1e-3 * gw, b - 1e-3 * gb) for (w, b), (gw, gb) in zip(params, grads, strict=True)
    ], value


def main(out: Path) -> None:
    key = jax.random.PRNGKey(0)
    params = init(key, [1024, 4096, 4096, 1000])
    x = jax.random.normal(key, (512, 1024), jnp.bfloat16)
    y = jax.nn.one_hot(jax.random.randint(key, (512,), 0, 1000), 1000)
    for _ in range(3):  # compile and warm up outside the profile
        params, value = step(params, x, y)
    value.block_until_ready()
    with jax.profiler.trace(str(out), create_perfetto_trace=True):
        for _ in range(5):
            params, value = step(params, x, y)
        value.block_until_ready()
    print("devices", jax.devices(), "loss", float(value))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
