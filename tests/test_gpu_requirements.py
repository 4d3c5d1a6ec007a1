"""The GPU fact of instance types chosen by attributes (scanner.compute.requirements), and of
the new compute kinds' views where the types are not named (EKS defaults, Batch families)."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.compute import views
from scanner.compute.requirements import gpu_requirement
from scanner.model import Ref, Unknown
from scanner.model.graph import ResourceIndex
from tests.model_builders import res

U = "unknown"

CASES: list[tuple[Any, Any]] = [
    (None, None),
    ({}, None),
    ({"VCpuCount": {"Min": 4}, "MemoryMiB": {"Min": 16384}}, False),  # asks for no accelerator
    ({"AcceleratorTypes": ["gpu"]}, True),
    ({"AcceleratorTypes": ["inference"]}, True),  # Inferentia: Neuron
    ({"AcceleratorTypes": ["fpga"]}, False),
    ({"AcceleratorTypes": ["gpu", "fpga"]}, U),
    ({"AcceleratorTypes": ["gpu", "fpga"], "AcceleratorManufacturers": ["nvidia"]}, True),
    ({"AcceleratorManufacturers": ["amazon-web-services"]}, True),  # Inferentia, Trainium
    ({"AcceleratorManufacturers": ["xilinx"]}, False),
    ({"AcceleratorNames": ["a10g", "t4"]}, True),
    ({"AcceleratorNames": ["vu9p"]}, False),
    ({"AcceleratorCount": {"Min": 1}}, U),  # any accelerator: FPGA or media too
    ({"AcceleratorCount": {"Max": 0}}, False),
    ({"AcceleratorTypes": ["gpu"], "AcceleratorCount": {"Max": 0}}, False),
    ({"AllowedInstanceTypes": ["g5.*", "p4d.24xlarge"]}, True),
    ({"AllowedInstanceTypes": ["p*"]}, True),
    ({"AllowedInstanceTypes": ["m5.*", "c6i.*"]}, False),
    ({"AllowedInstanceTypes": ["t*", "m*"]}, False),  # t* would match trn1 but does not ask
    ({"AllowedInstanceTypes": ["g5.*", "m5.*"]}, U),
    ({"AcceleratorTypes": Unknown("var.types")}, U),
    ({"AcceleratorTypes": [Unknown("var.x")]}, U),
    (Unknown("dynamic block"), U),
    (Ref("aws_launch_template.x"), U),
    ({"AcceleratorCount": Unknown("var.n")}, U),
    ("gpu", U),  # not an object
]


@pytest.mark.parametrize(("value", "expected"), CASES)
def test_gpu_fact_of_a_requirement(value: Any, expected: Any) -> None:
    req = gpu_requirement(value, "InstanceRequirements")
    if expected is None:
        assert req is None
    elif expected == U:
        assert req is not None and isinstance(req.gpu, Unknown) and req.gpu.reason
    else:
        assert req is not None and req.gpu is expected


def _view(*resources: Any) -> Any:
    return views(ResourceIndex(list(resources))).of(resources[0])


def test_a_node_group_without_types_launches_eks_s_default() -> None:
    plain = res("eks.nodegroup", "ng", Subnets=["subnet-1"])
    assert _view(plain).types.values == ("t3.medium",)
    # a launch template that names no type changes nothing
    lt = res("ec2.launch_template", "lt", LaunchTemplateData={"ImageId": "ami-1"})
    with_lt = res("eks.nodegroup", "ng2", LaunchTemplate={"Id": Ref("lt")})
    assert _view(with_lt, lt).types.values == ("t3.medium",)
    # a GPU AMI type without types: GPU compute whose types are not known
    gpu = res("eks.nodegroup", "ng3", AmiType="AL2023_x86_64_NVIDIA")
    view = _view(gpu)
    assert view.types.gpu() is True and isinstance(view.types.values[0], Unknown)
    # a template outside the scan may name the type: not known
    away = res("eks.nodegroup", "ng4", LaunchTemplate={"Id": "lt-0123456789abcdef0"})
    assert isinstance(_view(away).types.gpu(), Unknown)
    # the template's own type
    typed = res("ec2.launch_template", "lt5", LaunchTemplateData={"InstanceType": "p5.48xlarge"})
    ng5 = res("eks.nodegroup", "ng5", LaunchTemplate={"Name": Ref("lt5")})
    assert _view(ng5, typed).types.values == ("p5.48xlarge",)


def test_a_batch_family_stands_for_the_sizes_the_catalogue_lists() -> None:
    env = res("batch.compute_environment", "ce", ComputeResources={
        "Type": "SPOT", "InstanceTypes": ["p4d", "g6e.xlarge", "optimal", "zz9"],
        "MaxvCpus": 96})
    view = _view(env)
    assert view.types.values == ("p4d.24xlarge", "g6e.xlarge", "optimal", "zz9")
    assert view.types.families == {"optimal", "zz9"}
    assert [o.max_price_percent for o in view.purchase.spot] == [100] * 4
    fargate = res("batch.compute_environment", "f", ComputeResources={"Type": "FARGATE_SPOT",
                                                                       "MaxvCpus": 16})
    assert _view(fargate).types.values == () and _view(fargate).purchase.spot == ()
    unknown = res("batch.compute_environment", "u", ComputeResources=Unknown("var.cr"))
    assert isinstance(_view(unknown).purchase.spot, Unknown)
