"""eksctl node groups whose types an ``instanceSelector`` chooses: ``gpus: 0``, or vCPUs /
memory / cpuArchitecture without gpus, is CPU compute; ``gpus: 1`` or more is GPU compute; a
selector that is not a mapping is not known, never eksctl's default CPU type
(tests/fixtures/cfnyaml_eksctl_selector/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.compute.index import views
from scanner.engine.evaluate import evaluate
from scanner.model import Status, Unknown
from scanner.model.graph import ResourceIndex
from scanner.sources.scan import scan_paths

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "cfnyaml_eksctl_selector"
ID = "ClusterConfig/selector-demo/"


def _gpu(paths: list[Path]) -> dict[str, object]:
    source = scan_paths(paths)
    assert source.errors == []
    v = views(ResourceIndex(source.resources))
    out: dict[str, object] = {}
    for r in source.resources:
        view = v.of(r)
        assert view is not None and view.types is not None
        out[r.id] = view.types.gpu()
    return out


def test_the_selector_decides_gpu_or_cpu() -> None:
    assert _gpu([FIXTURES]) == {
        ID + "nodeGroups/cpu-spot": False, ID + "managedNodeGroups/cpu-general": False,
        ID + "managedNodeGroups/arm-general": False,
        ID + "managedNodeGroups/gpu-training": True}


def test_cpu_groups_are_not_judged_as_gpu_compute_and_the_gpu_group_is() -> None:
    source = scan_paths([FIXTURES])
    results = {(f.policy_id, f.resource["id"]): f for f in evaluate(source.resources)}
    assert results[("VPC-004", ID + "managedNodeGroups/gpu-training")].status is Status.FAIL
    for (pid, rid), f in results.items():
        assert "whether it is GPU compute is not known" not in f.message, (pid, rid)
        if "cpu" in rid or "arm" in rid:
            # GPU-only policies give no result on CPU groups
            assert pid not in ("VPC-004", "ASG-001", "NET-001"), (pid, rid, f.message)
    assert results[("EBS-001", ID + "nodeGroups/cpu-spot")].status is Status.PASS


@pytest.mark.parametrize(("selector", "gpu"), [
    ("{gpus: 2}", True), ("{gpus: '0'}", False), ("{vCPUs: 8, gpus: '${GPUS}'}", Unknown),
    ("{gpus: -1}", Unknown), ("[gpus, 1]", Unknown), ("{gpus: [1]}", Unknown),
    ("g5.xlarge", Unknown)])
def test_selector_values(tmp_path: Path, selector: str, gpu: object) -> None:
    (tmp_path / "c.yaml").write_text(
        "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: "
        f"us-east-1}}\nmanagedNodeGroups:\n  - name: ng\n    instanceSelector: {selector}\n")
    (fact,) = _gpu([tmp_path]).values()
    assert (isinstance(fact, Unknown) if gpu is Unknown else fact is gpu), fact
