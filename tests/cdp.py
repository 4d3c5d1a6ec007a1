"""A small Chrome DevTools Protocol client over websocket-client: launch headless Chromium,
open a page, click and type like a user (Input.dispatchMouseEvent / Input.insertText), and
record console messages, exceptions and network requests.

Used by tests/test_html_chromium.py and bench/bench_html.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
)
_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")


class CdpError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page (a flattened target session)."""

    def __init__(self, chromium: str, *, width: int = 1400, height: int = 1000,
                 timeout: float = 60.0) -> None:
        import websocket  # the test extra's websocket-client

        self.timeout = timeout
        # Chromium's helper processes may still be writing the profile while it is removed
        self.profile = tempfile.TemporaryDirectory(prefix="gpuaudit-cdp-",
                                                   ignore_cleanup_errors=True)
        self.proc = subprocess.Popen(
            [chromium, *FLAGS, "--remote-debugging-port=0",
             f"--user-data-dir={self.profile.name}", f"--window-size={width},{height}",
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace",
            start_new_session=True)  # its own process group: close() ends the helpers too
        url = self._devtools_url()
        self.ws = websocket.create_connection(url, timeout=timeout, suppress_origin=True)
        self._id = 0
        self._lock = threading.Lock()
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                  session=True)

    def _devtools_url(self) -> str:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + self.timeout
        seen = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            match = _LISTENING.search(line)
            if match:
                threading.Thread(target=self._drain, daemon=True).start()
                return match.group(1)
        self.close()
        raise CdpError("chromium did not start DevTools: " + "".join(seen)[-2000:])

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for _ in self.proc.stderr:
            pass

    def call(self, method: str, params: dict[str, Any] | None = None, *,
             session: bool = False) -> dict[str, Any]:
        with self._lock:
            self._id += 1
            msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = self.session
            self.ws.send(json.dumps(msg))
            want = self._id
            while True:
                reply = json.loads(self.ws.recv())
                if reply.get("id") == want:
                    if "error" in reply:
                        raise CdpError(f"{method}: {reply['error']}")
                    return dict(reply.get("result") or {})
                if "method" in reply:
                    self.events.append(reply)

    def wait_for(self, method: str, timeout: float | None = None) -> dict[str, Any]:
        """The first event ``method`` (already received or arriving within ``timeout``)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for event in self.events:
                if event.get("method") == method:
                    self.events.remove(event)
                    return event
            if time.monotonic() > deadline:
                raise CdpError(f"no {method} within the timeout")
            with self._lock:
                self.ws.settimeout(max(deadline - time.monotonic(), 0.05))
                try:
                    reply = json.loads(self.ws.recv())
                except Exception as exc:  # websocket timeout
                    raise CdpError(f"no {method} within the timeout") from exc
                finally:
                    self.ws.settimeout(self.timeout)
                if "method" in reply:
                    self.events.append(reply)

    def open(self, page: Path) -> float:
        """Navigate to ``page`` and wait for its load event; the seconds it took."""
        start = time.perf_counter()
        self.call("Page.navigate", {"url": page.as_uri()}, session=True)
        self.wait_for("Page.loadEventFired")
        return time.perf_counter() - start

    def evaluate(self, expression: str) -> Any:
        reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": True}, session=True)
        if "exceptionDetails" in reply:
            raise CdpError(f"{expression!r}: {reply['exceptionDetails']}")
        return (reply.get("result") or {}).get("value")

    def center(self, selector: str) -> tuple[float, float]:
        """The centre of the element, scrolled into view, in viewport coordinates."""
        box = self.evaluate(
            "(() => { const e = document.querySelector(" + json.dumps(selector) + ");"
            " if (!e) return null; e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2, r.width, r.height]; })()")
        if not box or box[2] <= 0 or box[3] <= 0:
            raise CdpError(f"{selector} is not visible")
        return box[0], box[1]

    def click(self, selector: str) -> None:
        """A real mouse click (press and release) on the element."""
        x, y = self.center(selector)
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent",
                      {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
                      session=True)

    def type(self, text: str) -> None:
        """Type into the focused element, as an input method would."""
        self.call("Input.insertText", {"text": text}, session=True)

    def press_enter(self) -> None:
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent",
                      {"type": kind, "key": "Enter", "code": "Enter",
                       "windowsVirtualKeyCode": 13}, session=True)

    def screenshot(self) -> bytes:
        import base64

        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        return base64.b64decode(data)

    def console(self) -> list[str]:
        """Console messages, uncaught exceptions and browser log entries (CSP violations among
        them) so far."""
        self.evaluate("0")  # flush pending events
        out = []
        for event in self.events:
            method, params = event.get("method"), event.get("params") or {}
            if method == "Runtime.consoleAPICalled":
                args = [str(a.get("value", a.get("description", ""))) for a in params["args"]]
                out.append(f"console.{params.get('type')}: {' '.join(args)}")
            elif method == "Runtime.exceptionThrown":
                out.append(f"exception: {params.get('exceptionDetails')}")
            elif method == "Log.entryAdded":
                entry = params.get("entry") or {}
                out.append(f"log.{entry.get('level')}: {entry.get('text')}")
        return out

    def requests(self) -> list[str]:
        """Every URL the page asked the network for (its own file: navigation aside)."""
        self.evaluate("0")
        urls = [str((e.get("params") or {}).get("request", {}).get("url"))
                for e in self.events if e.get("method") == "Network.requestWillBeSent"]
        return [u for u in urls if not u.startswith(("file:", "data:", "about:"))]

    def close(self) -> None:
        try:
            if getattr(self, "ws", None) is not None:
                self.ws.close()
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
            self.profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
