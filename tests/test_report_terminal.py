# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""The terminal output as people see it: the table at the terminal's width with nothing cut,
colour only on a terminal (never with NO_COLOR), live progress per account, region and service
on a terminal's stderr, and `report render` to stdout."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from click.testing import CliRunner

from reports import render
from reports.table import fold, text_width
from scanner.aws import progress as live_progress
from scanner.cli.main import cli
from tests.aws_helpers import ACCOUNT, REGION, aws, aws_env, declared_only  # noqa: F401
from tests.report_samples import document, finding, sample

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;]*m|\x1b\]8;;[^\x1b]*\x1b\\")  # colours, OSC 8 links
DEEP = "platform/teams/ml-research/infrastructure/terraform/environments/{env}/gpu/main.tf"
ADDRESS = "module.gpu_training_cluster.module.workers.aws_launch_template.gpu_workers"


def _monorepo_doc() -> dict:
    findings = []
    for env in ("prod", "staging"):
        res = {"kind": "ec2.launch_template", "id": ADDRESS, "address": ADDRESS}
        findings.append(finding(
            "EBS-001", "EBS storage not encrypted", "high", "FAIL", "not encrypted", res,
            location={"file": DEEP.format(env=env), "start_line": 12, "end_line": 40},
            path=env))
    return document(findings, inputs={"paths": ["platform"]})


def _rows(out: str) -> list[str]:
    """Each finding's row (the line that starts with its severity), with its location when
    that is on the next line (too long for the row)."""
    rows: list[str] = []
    for line in ANSI.sub("", out).splitlines():
        if re.match(r"^(critical|high|medium|low|info) ", line):
            rows.append(line)
        elif rows and re.fullmatch(r"  \S+:\d+(-\d+)?", line):
            rows[-1] += "\n" + line
    return rows


def _overflow(out: str, width: int) -> list[str]:
    """The lines wider than ``width`` that are not a location alone on its line, nor a
    whole URL (the only things never cut: a terminal's soft wrap keeps them one piece to copy
    or click, where a fold would break them)."""
    bad = []
    for line in ANSI.sub("", out).splitlines():
        if text_width(line) <= width:
            continue
        if re.fullmatch(r"  \S+:\d+(-\d+)?", line):  # a location alone on its line
            continue
        if re.fullmatch(r" *docs: https://\S+", line):
            continue
        bad.append(line)
    return bad


@pytest.mark.parametrize("width", [80, 100, 120, 132, 200, 220])
def test_a_location_is_whole_on_its_row_and_the_text_is_cut(width: int) -> None:
    from reports.table import render as table

    out = table(_monorepo_doc(), width=width)
    assert _overflow(out, width) == []  # all fits, but a location longer than the width
    rows = _rows(out)
    assert len(rows) == 2 and rows[0] != rows[1]  # prod and staging do not print alike
    lines = ANSI.sub("", out).splitlines()
    for env in ("prod", "staging"):  # whole, on one line: the row's, or its own under it
        where = f"{DEEP.format(env=env)}:12-40"
        assert [x for x in lines if where in x and (x.startswith("high") or x == "  " + where)]
    assert not any(line.strip().startswith(("infrastructure/", "prod/", "staging/"))
                   for line in lines)  # the path is not folded onto a next line
    if width >= 220:  # a wide terminal holds the address and message on the row
        assert all(ADDRESS in r and r.endswith("not encrypted") for r in rows), rows
    else:
        text = [line for line in lines if ADDRESS[:30] in line]
        assert len(text) == 2 and all(text_width(t) <= width for t in text)


def test_a_long_message_is_ellipsized_to_the_width_not_folded() -> None:
    from reports.table import render as table

    doc = _monorepo_doc()
    for f in doc["findings"]:
        f["location"]["file"] = "gpu/main.tf"
        f["resource"] = {"kind": "ec2.launch_template", "id": "aws_launch_template.gpu",
                         "address": "aws_launch_template.gpu"}
        f["message"] = "volume not encrypted " + "and more words " * 30
    for width in (80, 120, 200):
        out = table(doc, width=width)
        rows = _rows(out)
        assert len(rows) == 2 and all(text_width(r) <= width for r in rows)
        assert all(r.endswith("...") and "gpu/main.tf:12-40" in r for r in rows), rows
        assert width < 120 or "encrypted and more words" in rows[0]
        # one line for the message: the next line is the fix, not the message's rest
        lines = out.splitlines()
        after = lines[lines.index(next(x for x in lines if x.startswith("high"))) + 1]
        assert after.startswith("  fix: ")


def test_the_old_left_cut_is_gone() -> None:
    """Before: 28 columns kept from the right, '…nments/prod/gpu/main.tf:12-40' and the same
    '…orkers.aws_launch_template.gpu_workers' for both environments."""
    out = render("table", _monorepo_doc())
    rows = _rows(out)
    assert "prod" in rows[0] + rows[1] and "staging" in rows[0] + rows[1]
    assert "…" not in out


def test_fold_prefers_separators_and_keeps_every_character() -> None:
    text = "infra/gpu/modules/train/main.tf:30-36"
    assert fold(text, 20) == ["infra/gpu/modules/", "train/main.tf:30-36"]
    assert "".join(fold("x" * 45, 20)) == "x" * 45
    wide = "訓練" * 12
    pieces = fold(wide, 9)
    assert "".join(pieces) == wide and all(text_width(p) <= 9 for p in pieces)


def test_colour_by_severity_only_when_asked() -> None:
    doc = sample("iac")
    plain, coloured = render("table", doc), render("table", doc, color=True)
    assert "\x1b[" not in plain
    assert "\x1b[1;31mhigh\x1b[0m" in coloured and "\x1b[33mmedium\x1b[0m" in coloured
    assert ANSI.sub("", coloured) == plain  # colour adds nothing but the codes


def _pty_run(args: list[str], env: dict[str, str], cols: int, cwd: Path = ROOT) -> str:
    """Run gpuaudit with stdout on a real pseudo-terminal of ``cols`` columns."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "scanner", *args], cwd=cwd,
                            stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode("utf-8", errors="replace").replace("\r\n", "\n")


@pytest.fixture(scope="module")
def monorepo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mono")
    for env in ("prod", "staging"):
        d = root / DEEP.format(env=env).rsplit("/", 1)[0]
        d.mkdir(parents=True)
        (d / "main.tf").write_text(
            'resource "aws_ebs_volume" "scratch" {\n'
            '  availability_zone = "us-east-1a"\n  size = 10\n  encrypted = false\n}\n')
    (root / ".git").mkdir()  # a monorepo: paths are named from its root
    return root


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


def test_a_terminal_gets_colour_and_its_width(monorepo: Path) -> None:
    out = _pty_run(["scan", "platform"], _env(), cols=180, cwd=monorepo)
    assert "\x1b[1;31mhigh" in out
    lines = ANSI.sub("", out).splitlines()
    assert max(text_width(line) for line in lines) > 100  # the terminal's width is used
    assert all(text_width(line) <= 180 for line in lines)
    rows = _rows(out)
    assert len(rows) == 2 and rows[0] != rows[1]
    assert [r.split()[3] for r in rows] == [
        DEEP.format(env=env) + ":1-5" for env in ("prod", "staging")]
    # on a terminal the policy id links its page (OSC 8), and no docs: line is printed
    assert "\x1b]8;;https://github.com/gpuaudit/gpuaudit/blob/main/docs/policies/EBS-001.md" \
        "\x1b\\EBS-001\x1b]8;;\x1b\\" in out
    assert "docs: https://" not in out


def test_no_colour_with_no_color_or_off_a_terminal(monorepo: Path) -> None:
    out = _pty_run(["scan", str(monorepo)], _env(NO_COLOR="1"), cols=120)
    assert "high" in out and "\x1b[" not in out
    piped = subprocess.run([sys.executable, "-m", "scanner", "scan", str(monorepo)],
                           cwd=ROOT, capture_output=True, text=True, env=_env(), timeout=60)
    assert "high" in piped.stdout and "\x1b[" not in piped.stdout and "\x1b]8" not in piped.stdout
    assert _overflow(piped.stdout, 100) == []
    # piped: the policy page as a plain docs: line, no escape codes
    assert "  docs: https://github.com/gpuaudit/gpuaudit/blob/main/docs/policies/EBS-001.md" \
        in piped.stdout.splitlines()
    assert "\x1b" not in piped.stdout


def test_report_render_prints_to_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.json").write_text(render("json", sample("iac")), encoding="utf-8")
    runner = CliRunner()
    res = runner.invoke(cli, ["report", "render", "r.json"])
    assert res.exit_code == 0 and "EBS-001" in res.stdout and "Summary:" in res.stdout
    res = runner.invoke(cli, ["report", "render", "r.json", "--format", "markdown"])
    assert res.exit_code == 0 and res.stdout.startswith("#")
    res = runner.invoke(cli, ["report", "render", "r.json", "--format", "html", "-o", "r.html"])
    assert res.exit_code == 0 and res.stdout == "" and (tmp_path / "r.html").is_file()


# -- live progress -----------------------------------------------------------------------------


def test_service_done_is_silent_without_a_listener() -> None:
    live_progress.service_done("1", "r", "ebs")  # nothing installed: nothing happens
    seen: list[tuple[str, ...]] = []
    with live_progress.listening(lambda *a: seen.append(a)):
        live_progress.service_done("1", "r", "ebs", "error")
    live_progress.service_done("1", "r", "vpc")
    assert seen == [("1", "r", "ebs", "error")]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_listener_only_on_a_terminal() -> None:
    from scanner.cli.audit import Progress

    assert Progress(io.StringIO()).listener() is None
    assert Progress(_Tty(), enabled=False).listener() is None
    tty = _Tty()
    bar = Progress(tty)
    bar.start(2)
    listener = bar.listener()
    assert listener is not None
    listener("123456789012", "us-east-1", "ebs", "ok")
    assert "] 0/2 123456789012/us-east-1 ebs ok (1 services read)" in tty.getvalue()


def test_a_live_collection_reports_each_service(aws: None) -> None:
    from scanner.aws.collect import collect
    from scanner.aws.registry import DEFAULT_KINDS
    from scanner.aws.targets import TargetSpec

    seen: list[tuple[str, ...]] = []
    with live_progress.listening(lambda *a: seen.append(a)):
        result = collect(TargetSpec(regions=(REGION,)), kinds=DEFAULT_KINDS, max_workers=2)
    # the regions' services (the account-wide read of AWS Budgets is one row of region "*")
    services = {c["service"] for c in result.coverage if c["region"] == REGION}
    assert sorted(seen) == sorted((ACCOUNT, REGION, s, "ok") for s in services)
    assert len(services) >= 5


@pytest.mark.parametrize("width", [40, 60, 79])
def test_a_narrow_terminal_gets_each_finding_line_by_line(width: int) -> None:
    """Narrower than the table (80 columns), the table's lines were wrapped by the terminal
    itself, columns and all: each finding's fields now come one under the other, folded to
    the width, nothing cut."""
    from reports.table import render as table

    out = table(_monorepo_doc(), width=width)
    assert _overflow(out, width) == [], out
    blocks = re.split(r"\n(?=high )", out.split("\n\n")[0])
    assert len(blocks) == 2 and blocks[0] != blocks[1]
    for env, block in zip(("prod", "staging"), blocks, strict=True):
        head, *rest = block.splitlines()
        assert head.split() == ["high", "FAIL", "EBS-001"]
        pieces = "".join(line.removeprefix("  ") for line in rest
                         if not line.startswith(("  fix:", "  docs:")))
        assert pieces.startswith(f"{DEEP.format(env=env)}:12-40{ADDRESS}"), block


def test_a_narrow_terminal_in_colour(monorepo: Path) -> None:
    out = _pty_run(["scan", "platform"], _env(), cols=60, cwd=monorepo)
    assert "\x1b[1;31mhigh" in out
    assert _overflow(out, 60) == [], out


def test_a_checkov_id_is_not_folded_where_the_width_allows() -> None:
    from reports.table import render as table

    doc = _monorepo_doc()
    doc["findings"][0]["policy_id"] = "CKV2_AWS_41"  # scan --with-checkov
    rows = _rows(table(doc, width=100))
    assert sorted(r.split()[2] for r in rows) == ["CKV2_AWS_41", "EBS-001"], rows
    assert _overflow(table(doc, width=100), 100) == []
    assert "docs/policies/CKV2_AWS_41" not in table(doc, width=100)  # no page of ours


def test_a_table_with_input_errors_never_reads_as_a_clean_run() -> None:
    """No finding but input errors: the first line says what was not read (never "No failing,
    unknown, errored or suppressed findings."), the Errors section lists them all, and the
    summary line counts them."""
    errors = [{"kind": "input", "path": f"c{i:03}.yaml", "line": 2,
               "reason": "YAML syntax error: did not find expected node content"}
              for i in range(174)]
    doc = document([], inputs={"paths": ["."]}, errors=errors)
    out = render("table", doc)
    assert "No failing" not in out and "No findings" not in out
    assert " ".join(out.split()).startswith(
        "Not everything was read: 174 input errors (see Errors); no failing, unknown or "
        "suppressed findings in what was read.")
    assert "Errors (174):" in out and out.count("[input] c") == 174
    assert "Summary: no findings; 174 input errors (not read)." in out
    # without errors, the clean line is unchanged
    clean = render("table", document([], inputs={"paths": ["."]}))
    assert clean.startswith("No failing, unknown, errored or suppressed findings.")
    assert "input error" not in clean
