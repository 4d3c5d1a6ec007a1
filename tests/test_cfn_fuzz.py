"""Fuzzing the CloudFormation reader with hostile templates (issue 11, section 3): whatever
amplifies (long parameters joined thousands of times, nested Join/Sub, mappings that look each
other up, Split/Select/Base64/ToJsonString), whatever is malformed (anchors, duplicate keys,
absurd numbers, deep nesting, stray bytes), each case stays within generous time and memory
bounds, never raises or hits an internal error, and the template next to it is still read."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.sources.cloudformation.reader import load_template
from scanner.sources.scan import scan_paths
from tests.memory_peak import peak_memory

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "scanner" / "cli" / "demo" / "examples" / "cloudformation" / "gpu-training.yaml"
GOOD_IDS = {r.id for r in load_template(GOOD).resources}

# Generous bounds: a case that needs more has escaped the budget (MAX_WORK / MAX_BUILT).
MAX_CPU_SECONDS = 30.0
MAX_PEAK_BYTES = 400 * 1024 * 1024


def _join(depth: int, copies: int) -> str:
    inner = "!Ref Big"
    for _ in range(depth):
        inner = "!Join ['', [" + ", ".join([inner] * copies) + "]]"
    return inner


@st.composite
def hostile_templates(draw: Any) -> str:
    param_len = draw(st.integers(0, 6_000))
    copies = draw(st.integers(1, 15))
    depth = draw(st.integers(0, 3))
    subs = draw(st.integers(0, 3_000))
    chain = draw(st.integers(0, 7))
    fan = draw(st.integers(1, 10))
    extra = draw(st.sampled_from([
        "", "      Bad: &a [1, 2]\n      Worse: *a\n", "      Size: 1\n      Size: 2\n",
        "      Iops: .nan\n      Throughput: 1e308\n      VolumeSize: 99999999999999999999999\n",
        "      Deep: " + "[" * 150 + "]" * 150 + "\n",
        "      Split: !Split [',', !Join [',', [" + ", ".join(["!Ref Big"] * 50) + "]]]\n",
        "      Json: !ToJsonString {a: [" + ", ".join(["!Ref Big"] * 60) + "]}\n",
        "      B64: !Base64 {'Fn::Join': ['', [" + ", ".join(["!Ref Big"] * 60) + "]]}\n",
        "      Sel: !Select [1, [!Ref Big, !Ref Big]]\n",
        "      Tags: !Sub ['${A}${A}${A}', {A: !Join ['', [!Ref Big, !Ref Big]]}]\n",
    ]))
    lines = ["AWSTemplateFormatVersion: '2010-09-09'",
             f"Parameters:\n  Big: {{Type: String, Default: '{'x' * param_len}'}}",
             "Mappings:"]
    for level in range(chain + 1):
        if level < chain:
            inner = ", ".join([f"!FindInMap [M{level + 1}, a, b]"] * fan)
        else:
            inner = "!Ref Big"
        lines.append(f"  M{level}: {{a: {{b: [{inner}]}}}}")
    lines += [
        "Resources:",
        "  Joined:\n    Type: AWS::EC2::Volume\n    Properties:",
        f"      Description: {_join(depth, copies)}",
        f"      Note: !Sub ['{'${B}' * subs}', {{B: !Ref Big}}]",
        "      Mapped: !FindInMap [M0, a, b]",
    ]
    text = "\n".join(lines) + "\n" + extra
    tail = draw(st.sampled_from([b"", b"\x00", b"\xff\xfe", b"  Z: {Type: AWS::EC2::VPC}\n"]))
    return text + tail.decode("latin-1")


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(template=hostile_templates())
def test_hostile_templates_are_bounded_and_the_neighbour_is_read(template: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="cfn-fuzz-"))
    try:
        (tmp / "hostile.yaml").write_text(template, encoding="utf-8", errors="surrogateescape")
        shutil.copy(GOOD, tmp / "good.yaml")
        with peak_memory() as peak:
            started = time.process_time()
            result = scan_paths([tmp])
            elapsed = time.process_time() - started
        assert elapsed < MAX_CPU_SECONDS, elapsed
        assert peak() < MAX_PEAK_BYTES, peak()
        for err in result.errors:
            assert not err.reason.startswith("internal error"), err
            assert err.path == str(tmp / "hostile.yaml"), err
        good = {r.id for r in result.resources if r.scope == str(tmp / "good.yaml")}
        assert good == GOOD_IDS
        built = sum(len(str(v)) for r in result.resources for v in r.attrs.values())
        assert built < 64 * 1024 * 1024
    finally:
        shutil.rmtree(tmp)
