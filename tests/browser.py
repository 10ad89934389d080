"""A real headless browser for the tests of the HTML pages: Debian's chromium driven through the
DevTools protocol over a pipe (`--remote-debugging-pipe`: JSON messages ended by a NUL byte on
file descriptors 3 and 4), with the standard library alone.

    with Browser() as browser:
        page = browser.open(Path("report.html"), width=390)
        page.console_errors, page.requests, page.layout, page.screenshot(Path("shot.png"))

`Browser()` raises `Missing` (tests skip on it) when /usr/bin/chromium is not installed.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = Path(os.environ.get("GPUSCOPE_CHROMIUM", "/usr/bin/chromium"))
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # offline: no name resolves
    "--remote-debugging-pipe",
)  # fmt: skip
# the child's descriptors 3 (commands in) and 4 (replies out), set from two pipes of ours
_EXEC = "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); " \
        "os.execv(sys.argv[3], sys.argv[3:])"  # fmt: skip

# what the page looks like to a reader: every section and figure, its box and whether it shows
LAYOUT = """(() => {
  const width = document.documentElement.clientWidth;
  const shows = (el) => {
    const box = el.getBoundingClientRect(), style = getComputedStyle(el);
    return box.width > 0 && box.height > 0 && style.visibility !== "hidden"
      && style.display !== "none" && box.left >= -1 && box.right <= width + 1;
  };
  const heading = (el) => (el.querySelector("h1,h2,h3,h4,h5,h6,figcaption") || {}).textContent;
  const box = (el) => { const b = el.getBoundingClientRect();
    return {x: b.left + scrollX, y: b.top + scrollY, width: b.width, height: b.height}; };
  return {
    width: width,
    scroll_width: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight,
    sections: [...document.querySelectorAll("section")].map(
      (s) => ({title: heading(s), shows: shows(s)})),
    figures: [...document.querySelectorAll("figure")].map((f) => {
      const drawn = [...f.querySelectorAll("svg")].filter(shows);
      return {title: heading(f), shows: shows(f), svgs: drawn.length,
              marks: drawn.map((s) => s.querySelectorAll("rect,circle,polyline").length),
              box: box(f)};
    }),
  };
})()"""


class Missing(RuntimeError):
    """No chromium here."""


@dataclass
class Page:
    """One page as the browser loaded it."""

    browser: Browser
    session: str
    url: str
    width: int
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    layout: dict[str, Any] = field(default_factory=dict)

    def screenshot(self, path: Path, box: dict[str, float] | None = None) -> Path:
        """A PNG of `box` (page coordinates, default the whole page up to 12,000 px)."""
        clip = box or {"x": 0, "y": 0, "width": self.width,
                       "height": min(self.layout["height"], 12_000)}  # fmt: skip
        shot = {"format": "png", "captureBeyondViewport": True, "clip": {**clip, "scale": 1}}
        reply = self.browser.call("Page.captureScreenshot", self.session, **shot)
        path.write_bytes(base64.b64decode(reply["data"]))
        return path


class Browser:
    def __init__(self, timeout: float = 60.0) -> None:
        if not CHROMIUM.is_file():
            raise Missing(f"{CHROMIUM} is not installed (apt-get install chromium)")
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="gpuscope-chromium-")
        commands_in, self._send = os.pipe()
        self._receive, replies_out = os.pipe()
        argv = [sys.executable, "-c", _EXEC, str(commands_in), str(replies_out), str(CHROMIUM),
                *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"]  # fmt: skip
        self._process = subprocess.Popen(
            argv, pass_fds=(commands_in, replies_out), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(commands_in)
        os.close(replies_out)
        self._next = 0
        self._buffer = b""
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            self.call("Browser.close")
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._send, self._receive):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._profile.cleanup()

    def open(self, path: Path, width: int, height: int = 900) -> Page:
        """Load `path` in a fresh tab `width` CSS px wide; its console errors, the requests it
        made and its layout recorded once it has loaded."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session)
        self.call("Emulation.setDeviceMetricsOverride", session, width=width, height=height,
                  deviceScaleFactor=1, mobile=width < 600)  # fmt: skip
        url = path.resolve().as_uri()
        self._events.clear()
        self.call("Page.navigate", session, url=url)
        self._wait_for("Page.loadEventFired", session)
        page = Page(self, session, url, width)
        layout = self.call("Runtime.evaluate", session, expression=LAYOUT, returnByValue=True)
        page.layout = layout["result"]["value"]
        for event in self._events:
            if event.get("sessionId") == session:
                _note(page, event["method"], event.get("params", {}))
        return page

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send a command and wait for its reply (events met meanwhile are kept)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._send, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self._events.append(reply)

    def _wait_for(self, method: str, session: str) -> None:
        if any(e.get("method") == method for e in self._events):
            return
        while True:
            event = self._read()
            self._events.append(event)
            if event.get("method") == method and event.get("sessionId") == session:
                return

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._receive], [], [], left)[0]:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._receive, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        parsed: dict[str, Any] = json.loads(message)
        return parsed


def _note(page: Page, method: str, params: dict[str, Any]) -> None:
    if method == "Runtime.exceptionThrown":
        page.console_errors.append(str(params["exceptionDetails"].get("text")))
    elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        page.console_errors.append(json.dumps(params.get("args")))
    elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
        page.console_errors.append(str(params["entry"].get("text")))
    elif method == "Network.requestWillBeSent":
        page.requests.append(str(params["request"]["url"]))
