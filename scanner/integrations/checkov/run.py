"""`gpuaudit scan --with-checkov`: run the checkov command on the scanned paths, beside the scan.

checkov runs as a subprocess (its pins, e.g. boto3 1.35.49 in checkov 3.3, stay out of gpuaudit's
environment): ``$GPUAUDIT_CHECKOV`` if set, else a ``checkov`` beside this Python, else the one on
PATH. It starts before gpuaudit reads the paths and is collected after the policies ran, so the
two work at the same time. Only the frameworks gpuaudit reads are asked for (Terraform, plans,
CloudFormation), with ``-o json``, no downloads and a time budget.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from scanner.model import Finding, InputError, Notice

if TYPE_CHECKING:
    from scanner.engine.config import Config

CHECKOV_ENV = "GPUAUDIT_CHECKOV"
TIMEOUT_ENV = "GPUAUDIT_CHECKOV_TIMEOUT"
DEFAULT_TIMEOUT_S = 900.0
FRAMEWORKS = ("terraform", "terraform_plan", "cloudformation")
MAX_REPORT_BYTES = 512 * 1024 * 1024
WHERE = "checkov"


class CheckovNotFound(Exception):
    """No checkov command to run (a usage error: exit 2)."""


def find_checkov(env: dict[str, str] | None = None) -> str:
    """The checkov command: $GPUAUDIT_CHECKOV, else beside this Python, else on PATH."""
    env = dict(os.environ) if env is None else env
    given = env.get(CHECKOV_ENV)
    if given:
        path = shutil.which(given) or (given if os.access(given, os.X_OK) else None)
        if path is None or os.path.isdir(path):
            raise CheckovNotFound(f"{CHECKOV_ENV}={given} is not an executable checkov command")
        return path
    beside = Path(sys.executable).parent / "checkov"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("checkov", path=env.get("PATH"))
    if found is None:
        raise CheckovNotFound(
            "--with-checkov needs the checkov command: install it (pip install "
            "'gpuaudit[checkov]', or checkov in an environment of its own) and put it on PATH, "
            f"or set {CHECKOV_ENV}=/path/to/checkov")
    return found


def command(checkov: str, paths: Sequence[Path]) -> list[str]:
    """One checkov run on the files and at most one directory. checkov in one process carries
    what it read from one ``-d`` directory into the next (the second directory's report was the
    first one's again), so several directories are one run each, one after the other (sh)."""
    base = [checkov, "-o", "json", "--framework", *FRAMEWORKS, "--skip-download", "--soft-fail",
            "--quiet", "--compact"]
    dirs = [str(p.resolve()) for p in paths if p.is_dir()]
    files = [a for p in paths if not p.is_dir() for a in ("-f", str(p.resolve()))]
    runs = [[*base, *(["-d", dirs[0]] if dirs else []), *files],
            *([*base, "-d", d] for d in dirs[1:])]
    if len(runs) == 1:
        return runs[0]
    script = "rc=0; " + " ".join(f"{shlex.join(run)} || rc=$?;" for run in runs) + " exit $rc"
    return ["sh", "-c", script]


@dataclass
class Outcome:
    findings: list[Finding] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    version: str | None = None
    seconds: float = 0.0


@dataclass
class Joined:
    findings: list[Finding]
    errors: list[InputError]
    notices: list[Notice]
    summary: dict[str, Any]


class CheckovJob:
    """checkov running on the paths; :meth:`outcome` waits for it and reads its report."""

    def __init__(self, checkov: str, paths: Sequence[Path], *,
                 timeout: float | None = None) -> None:
        existing = [p for p in paths if p.exists()]  # gpuaudit reports the missing ones
        self.cmd = command(checkov, existing)
        self.timeout = timeout if timeout is not None else _timeout()
        self.started = time.perf_counter()
        self.proc: subprocess.Popen[bytes] | None = None
        self.start_error = ""
        self._out: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in outcome)
        self._err: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in outcome)
        if not existing:
            return
        env = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_NO_UPDATE_CHECK": "TRUE",
               "LOG_LEVEL": "ERROR"}
        # checkov's fork-parallel runner hangs for good when a check or a parser raises while
        # another worker has results to send (bridgecrewio/checkov#7186; one CloudFormation
        # resource whose Type is an intrinsic is enough): one process fails instead, with the
        # exception. As fast on 2 cores (26.8 s fork, 27.1 s none on a module and templates)
        env.setdefault("CHECKOV_PARALLELIZATION_TYPE", "none")
        with _sigint_held():
            try:
                # a session of its own: checkov's worker processes go with it when it is stopped
                self.proc = subprocess.Popen(self.cmd, stdout=self._out, stderr=self._err,
                                             stdin=subprocess.DEVNULL, env=env,
                                             start_new_session=True)
            except OSError as exc:
                self.start_error = f"cannot run {checkov}: {exc.strerror or exc}"
            else:  # gpuaudit may end before it reads checkov's report (a bad config, Ctrl-C)
                _RUNNING.add(self)

    def stop(self) -> None:
        """Stop checkov and the workers it started, if it is still running."""
        _RUNNING.discard(self)
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        try:
            if hasattr(os, "killpg"):
                os.killpg(proc.pid, signal.SIGKILL)
            else:  # pragma: no cover (Windows: no process groups)
                proc.kill()
        except OSError:
            pass
        proc.wait()

    def join(self, findings: list[Finding], *, config: Config, baseline: set[str],
             deterministic: bool = False) -> Joined:
        """Wait for checkov; our findings plus its failed checks (the mute list and baseline
        applied to them), same-fact pairs merged; its errors, notices and summary."""
        from scanner.engine.evaluate import suppress_external
        from scanner.integrations.checkov.findings import merge

        out = self.outcome()
        theirs = suppress_external(out.findings, config=config, baseline=baseline)
        merged = merge(findings, theirs)
        summary: dict[str, Any] = {"version": out.version, "failed": len(out.findings),
                                   "merged": merged.merged}
        if not deterministic:
            summary["seconds"] = out.seconds
        return Joined(merged.findings, out.errors, out.notices, {"checkov": summary})

    def outcome(self) -> Outcome:
        out = Outcome()
        try:
            self._wait(out)
        finally:
            self.stop()
            out.seconds = round(time.perf_counter() - self.started, 2)
            self._out.close()
            self._err.close()
        return out

    def _wait(self, out: Outcome) -> None:
        if self.proc is None:
            if self.start_error:
                out.errors.append(InputError(WHERE, self.start_error))
            return
        try:
            code = self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            out.errors.append(InputError(WHERE, f"checkov did not finish within "
                                                f"{self.timeout:g} s (set {TIMEOUT_ENV}); "
                                                "its checks are not in this report"))
            return
        self._out.seek(0)
        raw = self._out.read(MAX_REPORT_BYTES + 1)
        if len(raw) > MAX_REPORT_BYTES:
            out.errors.append(InputError(WHERE, "checkov's report is larger than "
                                                f"{MAX_REPORT_BYTES // 2**20} MiB; not read"))
            return
        report = _documents(raw.decode("utf-8", errors="replace"))
        if code != 0 or not report:
            self._err.seek(0)
            tail = _last_line(self._err.read()[-4096:].decode("utf-8", errors="replace"))
            out.errors.append(InputError(WHERE, f"checkov failed (exit {code})"
                                                + (f": {tail}" if tail else "")
                                                + "; its checks are not in this report"))
            return
        read_report(report, out)


_RUNNING: set[CheckovJob] = set()


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """A Ctrl-C that lands between starting checkov and recording it in ``_RUNNING`` (inside
    Popen, or before the next line: on a loaded machine checkov's workers are running by then)
    would leave checkov and its workers running after gpuaudit ends. The interrupt is held
    until checkov is recorded, then raised as it would have been."""
    held: list[tuple[int, Any]] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append((signum, frame)))
    except (ValueError, OSError):  # not the main thread (which alone gets Python's handlers)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            if callable(previous):
                previous(*held[0])  # Python's default handler raises KeyboardInterrupt
            elif previous == signal.SIG_DFL:
                signal.raise_signal(signal.SIGINT)


def stop_all() -> None:
    """Stop every checkov still running (gpuaudit is ending without reading their reports)."""
    for job in list(_RUNNING):
        job.stop()


atexit.register(stop_all)  # the CLI ends with os._exit, which runs no atexit: it calls stop_all


def _documents(text: str) -> list[Any] | None:
    """checkov's ``-o json``: one document (an object, or a list of one per framework), or with
    several ``-d`` directories one such document per directory, one after the other. None when
    it is not that."""
    decoder = json.JSONDecoder()
    parts: list[Any] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            return parts or None
        try:
            doc, pos = decoder.raw_decode(text, pos)
        except ValueError:
            return None
        if not isinstance(doc, dict | list):
            return None
        parts += doc if isinstance(doc, list) else [doc]


def _timeout() -> float:
    try:
        value = float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT_S))
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def read_report(report: Any, out: Outcome) -> None:
    """checkov's ``-o json`` (one framework: an object; several: a list of them). With several
    directories checkov reports each in turn, and a later report repeats results of earlier
    directories (and the ``-f`` files are scanned with each): a result is read once."""
    from scanner.integrations.checkov.findings import to_finding

    seen: set[str] = set()
    for part in report if isinstance(report, list) else [report]:
        if not isinstance(part, dict):
            continue
        summary = part.get("summary") if isinstance(part.get("summary"), dict) else {}
        version = summary.get("checkov_version")
        out.version = out.version or (str(version) if version else None)
        results = part.get("results") if isinstance(part.get("results"), dict) else {}
        for check in results.get("failed_checks") or []:
            if isinstance(check, dict):
                file = check.get("file_abs_path") or check.get("file_path")
                key = json.dumps([check.get(k) for k in ("check_id", "resource",
                                                         "file_line_range")] + [file],
                                 default=str)
                if key not in seen:
                    seen.add(key)
                    out.findings.append(to_finding(check, str(file) if file else None))
        for path in results.get("parsing_errors") or []:
            if f"parse:{path}" not in seen:
                seen.add(f"parse:{path}")
                out.notices.append(Notice(str(path), "checkov could not parse this file; its "
                                                     "checks did not run on it"))
