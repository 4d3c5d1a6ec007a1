"""`gpuaudit checkov-dir` and `scan --with-checkov` where checkov is missing or breaks, the
reading of checkov's report, and the merge. (The default install pulls no checkov:
tests/test_packaging.py.)"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scanner.findings.schema import validate_report
from scanner.integrations.checkov.findings import merge, severity_of, to_finding
from scanner.integrations.checkov.run import Outcome, read_report
from scanner.model import Finding, Severity, Status

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "checkov"
GPUAUDIT = [sys.executable, "-m", "scanner"]


def _run(args: list[str], env: dict[str, str] | None = None,
         cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GPUAUDIT, *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **(env or {})}, timeout=300)


def test_checkov_dir_is_the_checks_package() -> None:
    out = _run(["checkov-dir"])
    assert out.returncode == 0
    folder = Path(out.stdout.strip())
    assert folder.is_absolute() and (folder / "__init__.py").is_file()
    assert (folder / "gpuaudit_checkov_checks.py").is_file()


def test_missing_checkov_is_a_usage_error(tmp_path: Path) -> None:
    out = _run(["scan", str(FIXTURE), "--with-checkov"],
               env={"GPUAUDIT_CHECKOV": str(tmp_path / "no-such-checkov")})
    assert out.returncode == 2
    assert "GPUAUDIT_CHECKOV" in out.stderr and "Traceback" not in out.stderr
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {"PATH": str(empty)}
    out = subprocess.run([sys.executable, "-c", "import sys; sys.executable = '/nonexistent/py';"
                          "from scanner.cli.main import main; main()", "scan", str(FIXTURE),
                          "--with-checkov"], capture_output=True, text=True, cwd=ROOT,
                         env={k: v for k, v in os.environ.items() if k != "GPUAUDIT_CHECKOV"}
                         | env)
    assert out.returncode == 2, out.stderr
    assert "needs the checkov command" in out.stderr and "Traceback" not in out.stderr


def _fake_checkov(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "checkov"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_a_failing_checkov_is_an_error_and_the_rest_is_reported(tmp_path: Path) -> None:
    script = _fake_checkov(tmp_path, "echo 'something broke inside' >&2; exit 2")
    out = _run(["scan", str(FIXTURE), "--with-checkov", "--format", "json", "--quiet"],
               env={"GPUAUDIT_CHECKOV": str(script)})
    assert out.returncode == 2
    doc = json.loads(out.stdout)
    assert validate_report(doc) == []
    [error] = doc["errors"]
    assert error["path"] == "checkov" and "something broke inside" in error["reason"]
    assert any(f["policy_id"] == "EBS-001" and f["status"] == "FAIL" for f in doc["findings"])
    assert not any(f.get("also_reported_by") for f in doc["findings"])


def test_checkov_output_that_is_not_json_is_an_error(tmp_path: Path) -> None:
    script = _fake_checkov(tmp_path, "echo '{not json'; exit 0")
    out = _run(["scan", str(FIXTURE), "--with-checkov", "--format", "json", "--quiet"],
               env={"GPUAUDIT_CHECKOV": str(script)})
    assert out.returncode == 2
    assert "checkov failed" in json.loads(out.stdout)["errors"][0]["reason"]


def test_scan_without_the_option_imports_nothing_of_checkov(tmp_path: Path) -> None:
    code = ("import sys\nfrom scanner.cli.main import cli\n"
            "try:\n    cli.main(['scan', sys.argv[1], '--quiet'], standalone_mode=False)\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if 'checkov' in m or 'integrations' in m))")
    out = subprocess.run([sys.executable, "-c", code, str(FIXTURE)], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr


# -- checkov's report → findings ---------------------------------------------------------------

def _check(check_id: str, resource: str, file: str, lines: list[int], **extra: Any
           ) -> dict[str, Any]:
    return {"check_id": check_id, "check_name": f"name of {check_id}", "resource": resource,
            "file_abs_path": file, "file_line_range": lines, "severity": None,
            "check_result": {"result": "FAILED", "evaluated_keys": ["encrypted"]},
            "code_block": [[1, 'password = "hunter2-secret"\n']], **extra}


def test_failed_checks_become_findings_without_their_code(tmp_path: Path) -> None:
    f = to_finding(_check("CKV_AWS_3", "AWS::EC2::Volume.Vol", str(tmp_path / "t.yaml"),
                          [7, 12]), str(tmp_path / "t.yaml"))
    d = f.as_dict()
    assert (d["policy_id"], d["source"], d["status"]) == ("CKV_AWS_3", "checkov", "FAIL")
    assert d["resource"]["id"] == "Vol" and d["resource"]["kind"] == "ec2.volume"
    assert (d["location"]["start_line"], d["location"]["end_line"]) == (7, 12)
    assert "hunter2" not in json.dumps(d)
    t = to_finding(_check("CKV_AWS_79", "module.m.aws_launch_template.lt", "/x/m.tf", [1, 4]),
                   "/x/m.tf")
    assert t.resource["address"] == "module.m.aws_launch_template.lt"
    assert t.resource["kind"] == "ec2.launch_template"


def test_severity_mapping() -> None:
    assert severity_of({"check_id": "CKV_AWS_3", "severity": "LOW"}) is Severity.LOW
    assert severity_of({"check_id": "CKV_AWS_3", "severity": None}) is Severity.HIGH
    assert severity_of({"check_id": "CKV_AWS_106"}) is Severity.MEDIUM
    assert severity_of({"check_id": "CKV_AWS_999999", "severity": "bogus"}) is Severity.MEDIUM


def test_report_shapes_one_framework_several_and_hostile() -> None:
    one = {"check_type": "terraform", "summary": {"checkov_version": "3.3.30"},
           "results": {"failed_checks": [_check("CKV_AWS_3", "aws_ebs_volume.v", "/a.tf",
                                                [1, 3])], "parsing_errors": ["/bad.tf"]}}
    out = Outcome()
    read_report(one, out)
    assert [f.policy_id for f in out.findings] == ["CKV_AWS_3"] and out.version == "3.3.30"
    assert out.notices[0].path == "/bad.tf"
    out = Outcome()
    read_report([one, {"results": None}, "junk", {"results": {"failed_checks": ["x", None]}}],
                out)
    assert len(out.findings) == 1
    weird = Outcome()
    read_report({"summary": {"checkov_version": 3},
                 "results": {"failed_checks": [{"check_id": "CKV_X", "file_line_range": "a",
                                                "check_result": "x", "details": "abc"}]}},
                weird)
    assert weird.findings[0].location is None and weird.version == "3"
    assert weird.findings[0].message == "CKV_X (checkov CKV_X)"  # no name, no details


def _ours(pid: str, rid: str, file: str, line: int, status: Status = Status.FAIL) -> Finding:
    return Finding(id=f"{pid}-{rid}", policy_id=pid, title="t", severity=Severity.HIGH,
                   status=status, message="m", resource={"kind": "ec2.volume", "id": rid},
                   location={"file": file, "start_line": line, "end_line": line + 3},
                   evidence={}, remediation={"text": ""}, savings=None, suppression=None)


def test_merge_only_the_same_fact_on_the_same_resource(tmp_path: Path) -> None:
    a, b = str(tmp_path / "a.tf"), str(tmp_path / "b.tf")
    ours = [_ours("EBS-001", "aws_ebs_volume.v", a, 1),
            _ours("EBS-001", "aws_ebs_volume.w", a, 10, Status.UNKNOWN),
            _ours("EBS-002", "aws_ebs_encryption_by_default.d", a, 20)]
    theirs = [to_finding(_check("CKV_AWS_3", "aws_ebs_volume.v", a, [1, 4]), a),
              to_finding(_check("CKV_AWS_3", "aws_ebs_volume.v", b, [1, 4]), b),  # other file
              to_finding(_check("CKV_AWS_3", "aws_ebs_volume.w", a, [10, 13]), a),  # not FAIL
              to_finding(_check("CKV_AWS_106", "aws_ebs_encryption_by_default.d", a, [20, 22]),
                         a),
              to_finding(_check("CKV_AWS_79", "aws_ebs_volume.v", a, [1, 4]), a)]  # no pair
    out = merge(ours, theirs)
    assert out.merged == 2
    by = {(f.policy_id, f.resource["id"], (f.location or {}).get("file")): f
          for f in out.findings}
    assert by[("EBS-001", "aws_ebs_volume.v", a)].also_reported_by == ("CKV_AWS_3",)
    assert by[("EBS-002", "aws_ebs_encryption_by_default.d", a)].also_reported_by == \
        ("CKV_AWS_106",)
    assert ("CKV_AWS_3", "aws_ebs_volume.v", b) in by
    assert ("CKV_AWS_3", "aws_ebs_volume.w", a) in by
    assert ("CKV_AWS_79", "aws_ebs_volume.v", a) in by
    assert ("CKV_AWS_3", "aws_ebs_volume.v", a) not in by
    assert len(out.findings) == 6


def _gone(pid: int) -> bool:
    """The process has ended (gone, or a zombie waiting for init to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def _wait_gone(pid: int) -> bool:
    import time

    for _ in range(100):  # a condition to wait for, not a time budget
        if _gone(pid):
            return True
        time.sleep(0.1)
    return False


CTRL_C_AT_START = """
import os, signal, subprocess, sys, time
from pathlib import Path
from scanner.integrations.checkov import run

real = subprocess.Popen
def popen(*args, **kwargs):  # Ctrl-C the moment checkov is started, before gpuaudit goes on
    proc = real(*args, **kwargs)
    pidfile = Path(os.environ["WORKER_PIDFILE"])
    while not (pidfile.is_file() and pidfile.read_text().strip()):
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.5)  # a handler that raises does so here, inside Popen's caller
    return proc
run.subprocess.Popen = popen
try:
    run.CheckovJob(sys.argv[1], [Path(sys.argv[2])])
except KeyboardInterrupt:
    print("interrupted, recorded:", len(run._RUNNING))
    run.stop_all()
else:
    print("not interrupted")
"""


def test_ctrl_c_the_moment_checkov_starts_still_stops_it(tmp_path: Path) -> None:
    """The interrupt lands after checkov started but before gpuaudit recorded it (on a loaded
    machine, half of the runs of the test above): it is held until checkov is recorded, so
    the interrupted gpuaudit still stops it and its workers."""
    import signal

    pidfile = tmp_path / "worker.pid"
    script = _fake_checkov(tmp_path, 'sleep 300 &\necho $! > "$WORKER_PIDFILE"\nwait')
    env = {**os.environ, "WORKER_PIDFILE": str(pidfile), "PYTHONPATH": str(ROOT)}
    try:
        # SIGINT as a terminal delivers it, even where the suite runs with it ignored (a
        # background job of a non-interactive shell)
        out = subprocess.run([sys.executable, "-c", CTRL_C_AT_START, str(script), str(FIXTURE)],
                             capture_output=True, text=True, env=env, timeout=120,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        assert out.stdout.strip() == "interrupted, recorded: 1", out.stdout + out.stderr
        assert _wait_gone(int(pidfile.read_text()))
    finally:
        if pidfile.is_file() and not _gone(pid := int(pidfile.read_text())):
            os.kill(pid, 9)


@pytest.mark.parametrize("how", ["slow", "gpuaudit_stops_first"])
def test_a_stopped_checkov_leaves_no_process_behind(tmp_path: Path, how: str) -> None:
    """checkov runs checks in worker processes: when its time budget runs out, or gpuaudit ends
    before reading its report (a bad config), checkov and its workers are stopped."""
    pidfile = tmp_path / "worker.pid"
    script = _fake_checkov(tmp_path, 'sleep 300 &\necho $! > "$WORKER_PIDFILE"\nwait')
    env = {"GPUAUDIT_CHECKOV": str(script), "WORKER_PIDFILE": str(pidfile),
           "GPUAUDIT_CHECKOV_TIMEOUT": "2"}
    args = ["scan", str(FIXTURE), "--with-checkov", "--format", "json", "--quiet"]
    if how == "gpuaudit_stops_first":
        bad = tmp_path / "bad.yaml"
        bad.write_text("fail_on: sometimes\n")
        args += ["--config", str(bad)]
        env["GPUAUDIT_CHECKOV_TIMEOUT"] = "600"
    try:
        out = _run(args, env=env)
        assert out.returncode == 2, out.stderr
        if how == "slow":
            doc = json.loads(out.stdout)
            [error] = doc["errors"]
            assert error["path"] == "checkov" and "did not finish within 2 s" in error["reason"]
            assert any(f["policy_id"] == "EBS-001" for f in doc["findings"])  # the rest is there
        assert pidfile.is_file(), "the fake checkov started its worker"
        worker = int(pidfile.read_text())
        assert _wait_gone(worker), "checkov's worker still runs after gpuaudit ended"
    finally:
        if pidfile.is_file() and not _gone(pid := int(pidfile.read_text())):
            os.kill(pid, 9)


def test_the_summary_does_not_count_checks_of_a_checkov_that_did_not_report() -> None:
    from reports.table import summary_lines

    doc: dict[str, Any] = {"summary": {"by_status": {"FAIL": 1}, "resources": 1,
                                       "checkov": {"failed": 0, "merged": 0, "seconds": 3.7}},
                           "errors": []}
    assert "0 failed checks" in summary_lines(doc)[-1]  # it ran and failed nothing
    doc["errors"] = [{"kind": "input", "path": "checkov",
                      "reason": "checkov did not finish within 3 s"}]
    line = summary_lines(doc)[-1]
    assert "failed checks" not in line and "did not report after 3.7 s" in line, line


def test_ctrl_c_exits_130_and_stops_checkov(tmp_path: Path) -> None:
    """An interrupted run is neither a FAIL (exit 1, which click's "Aborted!" gave) nor a
    clean one: exit 130, and the checkov it started is stopped with its workers."""
    import signal
    import time

    pidfile = tmp_path / "worker.pid"
    script = _fake_checkov(tmp_path, 'sleep 300 &\necho $! > "$WORKER_PIDFILE"\nwait')
    env = {**os.environ, "GPUAUDIT_CHECKOV": str(script), "WORKER_PIDFILE": str(pidfile)}
    proc = subprocess.Popen([*GPUAUDIT, "scan", str(FIXTURE), "--with-checkov", "--quiet"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                        signal.SIG_DFL))
    try:
        for _ in range(600):  # until the scan waits for checkov (a condition, not a budget)
            if pidfile.is_file() and pidfile.read_text().strip():
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        assert "interrupted" in err and "Aborted" not in err and "Traceback" not in err
        assert _wait_gone(int(pidfile.read_text()))
    finally:
        if proc.poll() is None:
            proc.kill()
        if pidfile.is_file() and not _gone(pid := int(pidfile.read_text())):
            os.kill(pid, 9)
