"""Fake `torch` (test double): just what gpuscope's torch_profiler hook touches.

`torch.profiler.profile` follows torch.profiler's schedule state machine (NONE / WARMUP / RECORD /
RECORD_AND_SAVE and the transitions between them) and `torch.optim.Optimizer.step()` runs the
global optimizer step post hooks. A trace records which optimizer steps happened while it was
recording, on which thread it started, and when (CLOCK_MONOTONIC), so that tests can check the
windows. Every profiler call is appended to $FAKE_TORCH_EVENTS when it is set.
"""

VERSION = "fake"
STEPS = 0  # optimizer steps taken so far (torch.optim.Optimizer.step)
