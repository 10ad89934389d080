"""torch.profiler: profile, schedule, supported_activities (schedule semantics as torch's)."""

import enum
import gzip
import json
import os
import threading
import time

import torch


class ProfilerActivity(enum.Enum):
    CPU = 0


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    def schedule_fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        if mod_step < num_steps - 1:
            return ProfilerAction.RECORD
        return ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _log(what):
    path = os.environ.get("FAKE_TORCH_EVENTS")
    if path:
        with open(path, "a") as f:
            f.write(f"{what} {os.getpid()} {threading.current_thread().name}\n")


class profile:
    def __init__(self, activities=None, schedule=None, on_trace_ready=None, **options):
        self.options = options
        self.schedule = schedule or (lambda step: ProfilerAction.RECORD)
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.action = ProfilerAction.NONE
        self.recorded = None  # (first step, last step, thread, start, stop) once recorded

    def start(self):
        _log("start")
        self.step_num = 0
        self._transit(ProfilerAction.NONE, self.schedule(0))

    def step(self):
        self.step_num += 1
        self._transit(self.action, self.schedule(self.step_num))

    def stop(self):
        _log("stop")
        self._transit(self.action, None)

    def _transit(self, old, new):
        A = ProfilerAction
        recording = (A.RECORD, A.RECORD_AND_SAVE)
        if old in recording and new not in recording:
            self._stop_trace()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if new in recording and old not in recording:
            self._start_trace()
        self.action = new if new is not None else A.NONE

    def _start_trace(self):
        _log("record")
        self._first = torch.STEPS
        self._thread = threading.current_thread().name
        self._since = time.monotonic()

    def _stop_trace(self):
        self.recorded = (self._first, torch.STEPS, self._thread, self._since, time.monotonic())

    def export_chrome_trace(self, path):
        _log("export")
        first, last, thread, since, until = self.recorded
        trace = {
            "traceEvents": [],
            "fake": True,
            "options": self.options,
            "recorded_steps": list(range(first + 1, last + 1)),
            "thread": thread,
            "since": since,
            "until": until,
            "padding": "x" * int(os.environ.get("FAKE_TORCH_TRACE_BYTES", "0")),
        }
        with gzip.open(path, "wt", compresslevel=0) as f:
            json.dump(trace, f)
