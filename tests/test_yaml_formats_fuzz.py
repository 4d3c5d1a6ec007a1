"""Fuzzing the Karpenter, eksctl and ParallelCluster readers (and the compute views and
policies behind them) with hostile files: every structural slot filled with the wrong type,
alias bombs, deep nesting, duplicate keys, absurd numbers, placeholders, stray bytes, many
documents. Each case stays within generous time and memory bounds, never raises, never hits an
internal error (of a reader or of a policy), and the good file next to it is still read."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.engine.evaluate import evaluate
from scanner.model import Status
from scanner.sources.scan import scan_paths
from tests.memory_peak import peak_memory

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "tests" / "fixtures" / "karpenter" / "policies" / "public_gpu" / "manifests" / \
    "karpenter.yaml"
EXAMPLES = int(os.environ.get("GPUAUDIT_FUZZ_EXAMPLES", "40"))  # 400 were run once by hand
MAX_CPU_SECONDS = 30.0
MAX_PEAK_BYTES = 400 * 1024 * 1024

# What goes where a mapping, a list or a scalar belongs
JUNK = ["3", "-1", "true", "null", "''", "[]", "{}", "[1, [2, [3]]]", "{a: {b: c}}", ".nan",
        "1e308", "99999999999999999999999", "'${X}'", "'{{ .Values.x }}'", "!Ref X",
        "[" * 120 + "]" * 120, "'" + "x" * 5000 + "'", "&a [1, 2]", "*nope"]


def _bomb(depth: int) -> str:
    lines = ["b0: &b0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, depth + 1):
        lines.append(f"b{i}: &b{i} [" + ", ".join([f"*b{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


KARPENTER = """\
apiVersion: karpenter.sh/{version}
kind: NodePool
metadata:
  name: {name}
spec:
  template:
    spec:
      nodeClassRef: {ref}
      requirements:
        - key: {key}
          operator: {op}
          values: {values}
        - {req}
  limits: {junk}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {{name: {name}}}
spec:
  amiFamily: {junk}
  subnetSelectorTerms: {terms}
  blockDeviceMappings: {bdm}
  associatePublicIPAddress: {junk}
"""

EKSCTL = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {{name: {name}, region: {junk}}}
vpc: {vpc}
nodeGroups: {groups}
managedNodeGroups:
  - name: {name}
    instanceTypes: {values}
    spot: {junk}
    desiredCapacity: {junk}
    volumeEncrypted: {junk}
    subnets: {values}
    instancesDistribution: {dist}
"""

PCLUSTER = """\
Region: {junk}
HeadNode: {head}
Scheduling:
  Scheduler: {junk}
  SlurmQueues:
    - Name: {name}
      CapacityType: {junk}
      ComputeResources: {crs}
      Networking: {net}
      ComputeSettings: {junk}
    - {junk}
SharedStorage: {storage}
"""

SLOTS = st.sampled_from(JUNK)


@st.composite
def hostile_files(draw: Any) -> tuple[str, str]:
    fmt = draw(st.sampled_from(["karpenter", "eksctl", "pcluster"]))
    j = {k: draw(SLOTS) for k in ("junk", "ref", "values", "req", "terms", "bdm", "vpc",
                                  "groups", "dist", "head", "crs", "net", "storage")}
    j["name"] = draw(st.sampled_from(["gpu", "'${NAME}'", "3", "[a]", "''"]))
    j["version"] = draw(st.sampled_from(["v1", "v1beta1", "v1alpha5", "v9"]))
    j["key"] = draw(st.sampled_from([
        "karpenter.sh/capacity-type", "node.kubernetes.io/instance-type",
        "karpenter.k8s.aws/instance-gpu-count", "karpenter.k8s.aws/instance-family", "[x]"]))
    j["op"] = draw(st.sampled_from(["In", "NotIn", "Gt", "Lt", "Exists", "Weird", "[]"]))
    template = {"karpenter": KARPENTER, "eksctl": EKSCTL, "pcluster": PCLUSTER}[fmt]
    text = template.format(**j)
    extra = draw(st.sampled_from(["", _bomb(8), "x: 1\nx: 2\n", "---\n" * 50,
                                  "key: [\n", "a: " + "{b: " * 150 + "1" + "}" * 150 + "\n"]))
    tail = draw(st.sampled_from(["", "\x00", "\udcff\udcfe"]))
    return fmt, text + extra + tail


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=hostile_files())
def test_hostile_files_are_bounded_and_the_neighbour_is_read(case: tuple[str, str]) -> None:
    fmt, text = case
    tmp = Path(tempfile.mkdtemp(prefix="yaml-fuzz-"))
    try:
        (tmp / "hostile.yaml").write_text(text, encoding="utf-8", errors="surrogateescape")
        shutil.copy(GOOD, tmp / "good.yaml")
        with peak_memory() as peak:
            started = time.process_time()
            result = scan_paths([tmp])
            findings = evaluate(result.resources)
            elapsed = time.process_time() - started
        assert elapsed < MAX_CPU_SECONDS, elapsed
        assert peak() < MAX_PEAK_BYTES, peak()
        for err in result.errors:
            assert "internal error" not in err.reason, err
            assert err.path == str(tmp / "hostile.yaml"), err
        for f in findings:
            assert not (f.status is Status.ERROR and "failed on this resource" in f.message), f
        good = {r.id for r in result.resources if r.scope == str(tmp / "good.yaml")}
        assert good == {"EC2NodeClass/training", "NodePool/p5-spot"}, (fmt, good)
        hostile = str(tmp / "hostile.yaml")
        # the hostile file was read as its format: resources, or an error or notice about it
        assert any(r.scope == hostile for r in result.resources) or result.errors or \
            any(n.path == hostile for n in result.notices), (fmt, text[:300])
    finally:
        shutil.rmtree(tmp)


@settings(max_examples=max(EXAMPLES // 2, 10), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(case=hostile_files())
def test_hostile_manifests_applied_by_terraform_are_bounded(case: tuple[str, str]) -> None:
    """The same hostile text as a kubectl_manifest's yaml_body and a helm_release's values."""
    _fmt, text = case
    tmp = Path(tempfile.mkdtemp(prefix="tf-yaml-fuzz-"))
    try:
        (tmp / "body.txt").write_text(text, encoding="utf-8", errors="surrogateescape")
        (tmp / "main.tf").write_text(
            'resource "kubectl_manifest" "karpenter" {\n'
            '  yaml_body = file("${path.module}/body.txt")\n}\n'
            'resource "helm_release" "karpenter_resources" {\n'
            '  chart  = "karpenter-resources"\n'
            '  values = [file("${path.module}/body.txt")]\n}\n')
        started = time.process_time()
        result = scan_paths([tmp])
        findings = evaluate(result.resources)
        assert time.process_time() - started < MAX_CPU_SECONDS
        for err in result.errors:
            assert "internal error" not in err.reason, err
            assert err.path == str(tmp / "main.tf"), err
        for f in findings:
            assert not (f.status is Status.ERROR and "failed on this resource" in f.message), f
    finally:
        shutil.rmtree(tmp)
