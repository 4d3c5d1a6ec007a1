"""A moto server in its own process on 127.0.0.1, for the parity test and the live benchmark.

A separate process (not moto's ``ThreadedMotoServer`` inside pytest) so that what talks to it —
real terraform, ``gpuaudit audit`` as a subprocess, Prowler — meets a server whose state no
in-process ``mock_aws`` can reset or patch, and so that a benchmark measures the client, not the
GIL it would share with the server.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_DISABLE_REQUEST_COMPRESSION": "true",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_aws_env(
    base: dict[str, str] | None = None,
    *,
    home: Path | None = None,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """``base`` (default: this process's environment) without any AWS setting of the machine
    (profiles, endpoints, real credentials), with fake credentials instead; ``home`` points the
    AWS config and credential files somewhere empty."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not k.startswith("AWS_")}
    env.update(FAKE_CREDENTIALS)
    if home is not None:
        env["AWS_CONFIG_FILE"] = str(home / "aws-config")
        env["AWS_SHARED_CREDENTIALS_FILE"] = str(home / "aws-credentials")
    env.update(extra or {})
    return env


# moto's server, as `python -m moto.server` runs it, with one botocore data loader for the
# process (as tests/conftest.py gives the test processes): moto makes a new botocore session for
# each service backend and region list it builds, and each parsed endpoints.json and the service
# models again (about 1 s of the server's CPU for 8 services in 2 regions: 3.0 s -> 2.0 s).
SERVER = ("import functools, botocore.loaders, botocore.session\n"
          "botocore.session.create_loader = functools.cache(botocore.loaders.create_loader)\n"
          "from moto.server import main\n"
          "main()\n")


class MotoProcess:
    """moto's server (``SERVER``) on a free port of 127.0.0.1; a context manager."""

    def __init__(self, log_path: Path | None = None, *, start_timeout: float = 60.0,
                 amis: bool = False) -> None:
        self.log_path = log_path
        self.start_timeout = start_timeout
        self.amis = amis  # moto's built-in AMIs (terraform reads the AMI of an instance)
        self.port = 0
        self.url = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(self) -> MotoProcess:
        last = ""
        for _attempt in range(3):  # a free port can be taken between the probe and the bind
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            self._log = open(self.log_path, "ab") if self.log_path else None  # noqa: SIM115
            env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}
            env["MOTO_EC2_LOAD_DEFAULT_AMIS"] = "true" if self.amis else "false"
            self._proc = subprocess.Popen(
                [sys.executable, "-c", SERVER, "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=self._log or subprocess.DEVNULL,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
            )
            if self._wait_ready():
                return self
            last = f"exit code {self._proc.poll()}"
            self.stop()
        raise RuntimeError(f"the moto server did not start on 127.0.0.1 ({last})")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/moto-api/data.json", timeout=2) as r:
                    r.read()
                return True
            except (urllib.error.URLError, OSError):
                time.sleep(0.1)
        return False

    def reset(self) -> None:
        req = urllib.request.Request(f"{self.url}/moto-api/reset", method="POST")
        with urllib.request.urlopen(req, timeout=30) as resp:
            resp.read()

    def stop(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait(timeout=10)
            self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> MotoProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
