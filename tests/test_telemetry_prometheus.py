"""``scan --prometheus-url`` against a real Prometheus server: the DCGM fixtures (one scrape
every 15 minutes for 48 hours) backfilled with ``promtool tsdb create-blocks-from openmetrics``,
the server started on a free 127.0.0.1 port over that TSDB, and, in front of it, a proxy that
answers 401 unless the bearer token is sent. The binary is installed by
tools/install_prometheus.sh when missing; the tests never skip."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from scanner.telemetry.history import load_prometheus, load_utilization

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "telemetry"
END = 1768435200  # 2026-01-15T00:00:00Z
END_TEXT = "2026-01-15T00:00:00Z"
HOURS = 48
STEP = 900
TOKEN = "prom-test-token-5f2a9c"
# what EC2 service discovery relabelling adds (the instance's Name tag), per fixture
NAMES = {"p4d-mig.prom": "gpu-trainer-mig", "g5-timesliced.prom": "gpu-infer-shared"}
FILES = ("p4d-mig.prom", "g5-timesliced.prom", "g5-instance-label.prom", "g6e-prof.prom")


def openmetrics() -> str:
    """The fixtures as one OpenMetrics exposition: each family's samples together, every
    series in time order, timestamps in seconds, ``# EOF`` last."""
    families: dict[str, list[str]] = {}
    for name in FILES:
        for line in (FIXTURES / "dcgm" / name).read_text().splitlines():
            if line.startswith("#") or not line.strip():
                continue
            series, value = line.rsplit(" ", 1)
            if name in NAMES:
                series = series[:-1] + f',Name="{NAMES[name]}"}}'
            families.setdefault(series.split("{", 1)[0], []).append(
                f"{series} {value.replace('@UTIL@', '40')}")
    out = []
    for family, lines in families.items():
        out.append(f"# TYPE {family} gauge")
        for line in lines:
            out += [f"{line} {t}" for t in range(END - HOURS * 3600, END, STEP)]
    return "\n".join(out) + "\n# EOF\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _binaries() -> tuple[str, str]:
    if not (shutil.which("prometheus") and shutil.which("promtool")):
        subprocess.run(["bash", str(ROOT / "tools" / "install_prometheus.sh")], check=False,
                       timeout=900)
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if not (prometheus and promtool):
        pytest.fail("prometheus/promtool not installed and tools/install_prometheus.sh could "
                    "not install them")
    return prometheus, promtool


class _BearerProxy(http.server.BaseHTTPRequestHandler):
    upstream = ""

    def do_GET(self) -> None:
        self.do_POST(post=False)

    def do_POST(self, post: bool = True) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if post else None
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self._send(401, b'{"status":"error","errorType":"unauthorized","error":"no"}')
            return
        request = urllib.request.Request(self.upstream + self.path, data=body,
                                         method="POST" if post else "GET")
        if post:
            request.add_header("Content-Type", "application/x-www-form-urlencoded")
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                self._send(answer.status, answer.read())
        except urllib.error.HTTPError as exc:
            self._send(exc.code, exc.read())

    def _send(self, code: int, data: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    prometheus, promtool = _binaries()
    work = tmp_path_factory.mktemp("prometheus")
    source = work / "dcgm.om"
    source.write_text(openmetrics())
    tsdb = work / "tsdb"
    made = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(source),
                           str(tsdb)], capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    config = work / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
    port = _free_port()
    log = (work / "prometheus.log").open("w")
    proc = subprocess.Popen([prometheus, f"--config.file={config}",
                             f"--storage.tsdb.path={tsdb}",
                             f"--web.listen-address=127.0.0.1:{port}",
                             "--storage.tsdb.retention.time=100y"],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    proxy = None
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "/-/ready", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, (work / "prometheus.log").read_text()
            assert time.monotonic() < deadline, "prometheus not ready in 120 s"
            time.sleep(0.5)
        handler = type("Proxy", (_BearerProxy,), {"upstream": url})
        proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        yield {"direct": url, "proxy": f"http://127.0.0.1:{proxy.server_address[1]}"}
    finally:
        if proxy is not None:
            proxy.shutdown()
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture
def at_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUAUDIT_TELEMETRY_END", END_TEXT)
    monkeypatch.setenv("GPUAUDIT_PROMETHEUS_TOKEN", TOKEN)


def _gpus(record: dict[str, object]) -> list[dict[str, object]]:
    return record["Members"][0]["Gpus"]  # type: ignore[index]


def test_hosts_mig_time_slicing_and_groups_from_a_real_server(server: dict[str, str],
                                                              at_end: None) -> None:
    loaded = load_prometheus(server["proxy"], 14)
    assert loaded.errors == []
    assert set(loaded.records) == {
        "ip-10-0-1-17.ec2.internal", "ip-10-0-2-41.ec2.internal", "ip-10-0-4-8.ec2.internal",
        "10.0.3.11:9400", "10.0.3.12:9400", "gpu-trainer-mig", "gpu-infer-shared"}
    mig = _gpus(loaded.records["gpu-trainer-mig"])
    assert len(mig) == 8 and mig[3]["UtilMax"] == 91.23 and mig[3]["Hours"] == HOURS
    assert {g["UtilMax"] for i, g in enumerate(mig) if i != 3} == {0.0}
    assert mig[3]["MigInstances"] == ["3g.20gb", "3g.20gb"]
    shared = _gpus(loaded.records["gpu-infer-shared"])[0]
    assert shared["UtilP95"] == 80.0 and shared["SharedBy"] == 2
    assert shared["MemUsedMaxMiB"] == 9120.0
    prof = _gpus(loaded.records["ip-10-0-4-8.ec2.internal"])[0]
    assert prof["UtilP95"] == 6.12 and prof["GrEngineActiveMax"] == 99.99
    busy = _gpus(loaded.records["10.0.3.11:9400"])
    idle = _gpus(loaded.records["10.0.3.12:9400"])
    assert {g["UtilMax"] for g in busy} == {87.0} and {g["UtilMax"] for g in idle} == {0.0}
    assert loaded.records["gpu-trainer-mig"]["Source"] == "prometheus"


def test_scan_with_prometheus_url_judges_the_named_instances(server: dict[str, str],
                                                             tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "tf", repo)
    out = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GPUAUDIT_TELEMETRY_END": END_TEXT,
           "GPUAUDIT_PROMETHEUS_TOKEN": TOKEN}
    proc = subprocess.run([sys.executable, "-m", "scanner", "scan", str(repo),
                           "--prometheus-url", server["proxy"], "--format", "json", "-o",
                           str(out), "--include-passed"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    body = out.read_text()
    assert TOKEN not in body and TOKEN not in proc.stdout + proc.stderr
    doc = json.loads(body)
    assert doc["errors"] == []
    status = {(f["policy_id"], f["resource"]["id"]): f["status"] for f in doc["findings"]
              if f["policy_id"].startswith("RS-")}
    assert status[("RS-002", "aws_instance.mig")] == "PASS"  # busy MIG slice: not idle
    assert status[("RS-002", "aws_instance.shared")] == "PASS"
    assert status[("RS-001", "aws_instance.shared")] == "PASS"
    assert status[("RS-003", "aws_instance.prof")] == "FAIL"  # its host is named by no key


def test_a_wrong_token_is_an_input_error_that_never_shows_the_token(
        server: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUAUDIT_TELEMETRY_END", END_TEXT)
    monkeypatch.setenv("GPUAUDIT_PROMETHEUS_TOKEN", "wrong-" + TOKEN)
    loaded = load_utilization([], 14, server["proxy"].replace("http://", "http://u:pw@"))
    assert loaded.records == {}
    assert len(loaded.errors) == 1
    err = loaded.errors[0]
    assert "HTTP 401" in err.reason and err.path == server["proxy"]
    assert TOKEN not in err.reason and "pw" not in err.path


def test_an_unreachable_server_is_one_input_error(at_end: None) -> None:
    port = _free_port()
    loaded = load_utilization([], 14, f"http://127.0.0.1:{port}")
    assert loaded.records == {} and len(loaded.errors) == 1
    assert "cannot connect" in loaded.errors[0].reason
