"""Kubernetes manifests in Terraform are read within budgets applied before the work.

``count`` / ``for_each`` over a ``kubectl_manifest`` whose ``yaml_body`` is a ``file()`` or
``templatefile()`` of a large text, a ``kubernetes_manifest`` of ``yamldecode(file(...))``, a
``yamlencode`` of a large local per instance, or ``helm_release`` values read per instance
would parse the same text once per instance (MemoryError, or minutes). Each stops at a budget:
one text is at most MAX_MANIFEST_TEXT, all manifests of a root module at most MANIFEST_BUDGET
(scanner/sources/karpenter/terraform.py); decoding and encoding are charged to the evaluation's
work before they are done, and a text is decoded (and a template parsed) once per root. Past a
budget: an input error naming the file and line, no verdict on that root module (it was not read
whole), and the rest of the run goes on. Peak memory and CPU time are bounded per case.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from scanner.engine.evaluate import evaluate
from scanner.model import Status
from scanner.sources.karpenter.terraform import MANIFEST_BUDGET, MAX_MANIFEST_TEXT
from scanner.sources.terraform.hcl.reader import load_terraform_dir
from tests.memory_peak import peak_memory

MEMORY_BOUND = 512 * 1024 * 1024  # measured worst case: ~470 MiB (yamldecode per instance)
CPU_SECONDS = 60  # measured worst case: ~9 s

NODEPOOL = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-${name}
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["p5", "g6"]
%s
"""
# a 167 KB NodePool: well under the per-text limit, a few dozen of them fill the budget
REQUIREMENTS = "\n".join(
    f"        - key: example.com/label-{i}\n          operator: In\n"
    f'          values: ["{"v" * 40}"]' for i in range(1500))

CASES = {
    "count_file": ('resource "kubectl_manifest" "np" {\n  count     = 3000\n'
                   '  yaml_body = file("${path.module}/np.yaml")\n}\n', "yaml_body"),
    "count_templatefile": ('resource "kubectl_manifest" "np" {\n  count     = 3000\n'
                           '  yaml_body = templatefile("${path.module}/np.yaml", '
                           '{ name = count.index })\n}\n', "yaml_body"),
    "count_yamldecode": ('resource "kubernetes_manifest" "np" {\n  count    = 3000\n'
                         '  manifest = yamldecode(file("${path.module}/np.yaml"))\n}\n',
                         "manifest"),
    "for_each_yamlencode": ('locals {\n  np = yamldecode(file("${path.module}/np.yaml"))\n}\n'
                            'resource "kubectl_manifest" "np" {\n'
                            '  for_each  = toset([for i in range(3000) : tostring(i)])\n'
                            '  yaml_body = yamlencode(local.np)\n}\n', "yaml_body"),
    "helm_values": ('resource "helm_release" "np" {\n  count  = 3000\n  name   = "karpenter"\n'
                    '  chart  = "karpenter-resources"\n'
                    '  values = [file("${path.module}/np.yaml"), file("${path.module}/np.yaml")]\n'
                    '}\n', "values"),
}
VOLUME = ('resource "aws_ebs_volume" "data" {\n  availability_zone = "us-east-1a"\n'
          '  size              = 100\n  encrypted         = true\n}\n')


@contextmanager
def bounded() -> Iterator[None]:
    def stop(signum: int, frame: object) -> None:
        raise TimeoutError(f"more than {CPU_SECONDS} s of CPU time")

    old = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, CPU_SECONDS)
    try:
        with peak_memory() as peak:
            yield
        assert peak() < MEMORY_BOUND, f"peak {peak():,} bytes"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def test_the_budgets_are_what_the_docs_say() -> None:
    assert MAX_MANIFEST_TEXT == 2 * 1024 * 1024
    assert MANIFEST_BUDGET == 4 * 1024 * 1024


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_manifest_amplified_by_count_stops_at_a_budget(tmp_path: Path, case: str) -> None:
    tf, attr = CASES[case]
    root = tmp_path / "cluster"
    root.mkdir()
    (root / "main.tf").write_text(tf + VOLUME)
    (root / "np.yaml").write_text(NODEPOOL % REQUIREMENTS)
    other = tmp_path / "storage"
    other.mkdir()
    (other / "main.tf").write_text(VOLUME)
    start = time.process_time()
    with bounded():
        result = load_terraform_dir([tmp_path])
    assert time.process_time() - start < CPU_SECONDS
    main = str(root / "main.tf")
    budget = [e for e in result.errors if e.path == main and attr in e.reason
              and ("MiB of Kubernetes manifest text" in e.reason
                   or "evaluation stopped" in e.reason)]
    assert budget, result.errors
    assert all(e.line is not None for e in budget)
    assert len(result.errors) < 10  # one error per block, not one per instance
    assert not any("could not be scanned" in e.reason for e in result.errors)
    # the root module was not read whole: no verdict there; the other root is judged
    by_file = {f.location["file"]: f.status
               for f in evaluate(result.resources, policy_ids=["EBS-001"], gaps=result.gaps)
               if f.location}
    assert by_file.get(str(other / "main.tf")) == Status.PASS, by_file
    assert by_file.get(main) == Status.ERROR, by_file


def test_one_text_longer_than_a_kubernetes_object_is_not_parsed(tmp_path: Path) -> None:
    body = NODEPOOL.replace("${name}", "big") % "\n".join([REQUIREMENTS] * 14)  # ~2.3 MB
    assert len(body) > MAX_MANIFEST_TEXT
    (tmp_path / "np.yaml").write_text(body)
    (tmp_path / "main.tf").write_text('resource "kubectl_manifest" "np" {\n'
                                      '  yaml_body = file("${path.module}/np.yaml")\n}\n')
    with bounded():
        result = load_terraform_dir([tmp_path])
    assert [e for e in result.errors if "a Kubernetes object can be" in e.reason
            and e.line == 1], result.errors
    assert not [r for r in result.resources if r.kind.startswith("karpenter")
                and r.provenance.file == str(tmp_path / "main.tf")]


def test_small_manifests_under_count_are_all_read(tmp_path: Path) -> None:
    small = NODEPOOL % ""
    (tmp_path / "np.yaml").write_text(small)
    (tmp_path / "main.tf").write_text(
        'resource "kubectl_manifest" "np" {\n  count     = 20\n'
        '  yaml_body = templatefile("${path.module}/np.yaml", { name = count.index })\n}\n')
    result = load_terraform_dir([tmp_path])
    assert result.errors == [] and result.gaps == []
    pools = [r for r in result.resources if r.provenance.file == str(tmp_path / "main.tf")]
    assert len(pools) == 20
