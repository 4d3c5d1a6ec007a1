"""GPU compute in the shapes the public ML-infrastructure repositories of issue 13 write it, where
gpuaudit missed it or could not judge it (docs/real-repositories.md):

- SageMaker HyperPod clusters declared with the awscc provider (``awscc_sagemaker_cluster``,
  awsome-distributed-training's hyperpod-slurm-tf and hyperpod-eks-tf): tests/fixtures/hcl/
  hyperpod_awscc copies their shape (a root of local modules, instance groups from a map
  variable through a for expression);
- an S3 gateway endpoint named ``com.amazonaws.${data.aws_region.current.id}.s3`` (both of those
  roots): the region is the provider configuration's, known when the provider block sets it;
- a Karpenter NodePool's storage, judged on its EC2NodeClass (data-on-eks): the class is the
  pool's launch template in its compute view.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.compute import views
from scanner.engine.config import Config
from scanner.engine.evaluate import evaluate
from scanner.model import Provenance, Ref, SourceKind, Unknown
from scanner.model.graph import ResourceIndex
from scanner.sources.scan import scan_paths
from scanner.sources.terraform.hcl.reader import load_terraform_dir
from scanner.sources.terraform.translate import translate

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HYPERPOD = FIXTURES / "hcl" / "hyperpod_awscc"
CLUSTER = "module.cluster.awscc_sagemaker_cluster.this"
CLUSTER_CMK = "module.cluster_cmk.awscc_sagemaker_cluster.this"


def test_an_awscc_hyperpod_cluster_is_gpu_compute_with_its_instance_groups() -> None:
    src = load_terraform_dir([HYPERPOD])
    assert not src.errors
    clusters = {r.id: r for r in src.resources if r.kind == "sagemaker.cluster"}
    assert set(clusters) == {CLUSTER, CLUSTER_CMK}
    cluster = clusters[CLUSTER]
    groups = cluster.attrs["InstanceGroups"]
    assert [(g["InstanceGroupName"], g["InstanceType"], g["InstanceCount"]) for g in groups] == [
        ("head", "ml.m5.2xlarge", 1), ("trainers", "ml.p5.48xlarge", 2)]
    assert groups[1]["InstanceStorageConfigs"] == [{"EbsVolumeConfig": {"VolumeSizeInGB": 1000}}]
    assert groups[1]["LifeCycleConfig"] == {"OnCreate": "on_create.sh",
                                            "SourceS3Uri": "s3://lifecycle-bucket/scripts/"}
    assert cluster.attrs["VpcConfig"]["Subnets"] == [Ref("module.network.aws_subnet.private")]
    assert cluster.name == "trainers"
    assert cluster.tags == {"team": "training"}  # awscc writes tags as a list of key/value
    view = views(ResourceIndex(src.resources)).of(cluster)
    assert view is not None and view.types.gpu() is True
    assert view.types.gpu_types() == ["p5.48xlarge"]
    assert view.capacity is not None and view.capacity.desired.value == 3


def test_an_awscc_hyperpod_cluster_is_judged_like_its_cloudformation_twin() -> None:
    """EBS-003 on the volumes' keys, VPC-001/002/003 on the network it lands in; no EBS-001
    (HyperPod encrypts every volume) and no VPC-004 (no public-IP setting)."""
    src = scan_paths([HYPERPOD])
    got = {(f.policy_id, f.resource["id"], f.status.value)
           for f in evaluate(src.resources, config=Config(policies={"EBS-003": {"enabled": True}}))}
    assert got == {
        ("EBS-003", CLUSTER, "FAIL"),
        ("EBS-003", CLUSTER_CMK, "PASS"),
        ("VPC-001", "module.network.aws_vpc.this", "PASS"),
        ("VPC-002", "module.network.aws_subnet.private", "PASS"),
        ("VPC-003", "module.endpoint.aws_vpc_endpoint.s3", "FAIL"),
    }


def test_awscc_values_in_the_plan_shape_translate_too() -> None:
    """A plan writes awscc nested attributes as objects (not lists of blocks); values known
    only after apply stay Unknown and never become a type."""
    prov = Provenance(SourceKind.TERRAFORM_PLAN, "plan.json")
    values = {
        "cluster_name": "c",
        "instance_groups": [{
            "instance_group_name": "gpu", "instance_type": "ml.g5.8xlarge",
            "instance_count": "4",
            "instance_storage_configs": [{"ebs_volume_config": {
                "volume_size_in_gb": 500, "volume_kms_key_id": None}}],
            "override_vpc_config": {"security_group_ids": ["sg-1"], "subnets": ["subnet-1"]},
        }],
        "restricted_instance_groups": Unknown("known after apply"),
        "vpc_config": {"security_group_ids": ["sg-1"], "subnets": ["subnet-2"]},
        "orchestrator": {"eks": {"cluster_arn": "arn:aws:eks:us-west-2:1:cluster/x"}},
        "tags": [{"key": "Name", "value": "hp"}, {"key": 1, "value": "ignored"}],
    }
    [r] = translate("awscc_sagemaker_cluster", "awscc_sagemaker_cluster.c", values,
                    provenance=prov, scope="plan.json")
    assert r.kind == "sagemaker.cluster"
    group = r.attrs["InstanceGroups"][0]
    assert group["InstanceCount"] == 4
    assert group["InstanceStorageConfigs"] == [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]
    assert group["OverrideVpcConfig"] == {"SecurityGroupIds": ["sg-1"], "Subnets": ["subnet-1"]}
    assert isinstance(r.attrs["RestrictedInstanceGroups"], Unknown)
    assert r.attrs["Orchestrator"] == {"Eks": {"ClusterArn": "arn:aws:eks:us-west-2:1:cluster/x"}}
    assert r.tags == {"Name": "hp"}
    view = views(ResourceIndex([r])).of(r)
    assert view is not None and view.types.gpu() is True  # the known group decides
    assert any(isinstance(t, Unknown) for t in view.types.values)  # the unknown one stays


# -- data.aws_region -----------------------------------------------------------------------

ENDPOINT = '''
data "aws_region" "current" {{{data_args}}}

resource "aws_vpc_endpoint" "s3" {{
  vpc_id       = "vpc-1"
  service_name = "com.amazonaws.${{data.aws_region.current.{attr}}}.s3"
}}
'''


def _service_name(tmp_path: Path, root: str, module: str | None = None) -> object:
    (tmp_path / "main.tf").write_text(root)
    if module is not None:
        (tmp_path / "endpoint").mkdir()
        (tmp_path / "endpoint" / "main.tf").write_text(module)
    src = load_terraform_dir([tmp_path])
    assert not src.errors, src.errors
    [ep] = [r for r in src.resources if r.kind == "ec2.vpc_endpoint"]
    return ep.attrs.get("ServiceName")


@pytest.mark.parametrize("attr", ["name", "id", "region"])
def test_data_aws_region_is_the_region_of_the_root_provider(tmp_path: Path, attr: str) -> None:
    root = ('variable "region" {\n  default = "eu-central-1"\n}\n'
            'provider "aws" {\n  region = var.region\n}\n'
            + ENDPOINT.format(data_args="", attr=attr))
    assert _service_name(tmp_path, root) == "com.amazonaws.eu-central-1.s3"


def test_a_module_inherits_the_default_provider_and_gets_aliases_passed(tmp_path: Path) -> None:
    root = ('provider "aws" {\n  region = "us-east-1"\n}\n'
            'provider "aws" {\n  alias  = "west"\n  region = "us-west-2"\n}\n'
            'module "default" {\n  source = "./endpoint"\n}\n'
            'module "west" {\n  source    = "./endpoint"\n'
            '  providers = {\n    aws = aws.west\n  }\n}\n')
    (tmp_path / "main.tf").write_text(root)
    (tmp_path / "endpoint").mkdir()
    (tmp_path / "endpoint" / "main.tf").write_text(ENDPOINT.format(data_args="", attr="name"))
    src = load_terraform_dir([tmp_path])
    names = {r.id: r.attrs.get("ServiceName") for r in src.resources
             if r.kind == "ec2.vpc_endpoint"}
    assert names == {"module.default.aws_vpc_endpoint.s3": "com.amazonaws.us-east-1.s3",
                     "module.west.aws_vpc_endpoint.s3": "com.amazonaws.us-west-2.s3"}


def test_a_data_source_on_an_aliased_provider_reads_that_one(tmp_path: Path) -> None:
    root = ('provider "aws" {\n  region = "us-east-1"\n}\n'
            'provider "aws" {\n  alias  = "eu"\n  region = "eu-west-1"\n}\n'
            + ENDPOINT.format(data_args="\n  provider = aws.eu\n", attr="name"))
    assert _service_name(tmp_path, root) == "com.amazonaws.eu-west-1.s3"


def test_its_own_name_argument_wins(tmp_path: Path) -> None:
    root = ('provider "aws" {\n  region = "us-east-1"\n}\n'
            + ENDPOINT.format(data_args='\n  name = "ap-south-1"\n', attr="name"))
    assert _service_name(tmp_path, root) == "com.amazonaws.ap-south-1.s3"


@pytest.mark.parametrize(("root", "why"), [
    # no provider block: AWS_REGION or the profile decides at plan time
    (ENDPOINT.format(data_args="", attr="name"), "no provider aws block"),
    ('provider "aws" {\n  profile = "ml"\n}\n' + ENDPOINT.format(data_args="", attr="name"),
     "sets no region"),
    ('variable "region" {}\nprovider "aws" {\n  region = var.region\n}\n'
     + ENDPOINT.format(data_args="", attr="name"), "var.region"),
    # an aliased configuration that does not exist here
    ('provider "aws" {\n  region = "us-east-1"\n}\n'
     + ENDPOINT.format(data_args="\n  provider = aws.nowhere\n", attr="name"), "aws.nowhere"),
    # other attributes are read from the cloud
    ('provider "aws" {\n  region = "us-east-1"\n}\n'
     + ENDPOINT.format(data_args="", attr="description"), "read at plan time"),
])
def test_a_region_that_is_not_known_statically_stays_unknown(tmp_path: Path, root: str,
                                                             why: str) -> None:
    name = _service_name(tmp_path, root)
    assert isinstance(name, Unknown), name
    assert why in name.reason


def test_an_alias_that_is_not_passed_to_a_module_stays_unknown(tmp_path: Path) -> None:
    root = ('provider "aws" {\n  alias  = "west"\n  region = "us-west-2"\n}\n'
            'module "m" {\n  source = "./endpoint"\n}\n')
    module = ENDPOINT.format(data_args="\n  provider = aws.west\n", attr="name")
    (tmp_path / "main.tf").write_text(root)
    (tmp_path / "endpoint").mkdir()
    (tmp_path / "endpoint" / "main.tf").write_text(module)
    [ep] = [r for r in load_terraform_dir([tmp_path]).resources if r.kind == "ec2.vpc_endpoint"]
    name = ep.attrs.get("ServiceName")
    assert isinstance(name, Unknown) and "not passed to module.m" in name.reason


def test_the_s3_endpoint_named_by_region_is_an_s3_gateway(tmp_path: Path) -> None:
    """Before data.aws_region was known, VPC-001 said UNKNOWN ("may be an S3 gateway") on the
    HyperPod roots of awsome-distributed-training; it judges the endpoint now."""
    src = scan_paths([HYPERPOD])
    [ep] = [r for r in src.resources if r.kind == "ec2.vpc_endpoint"]
    assert ep.attrs["ServiceName"] == "com.amazonaws.eu-west-1.s3"


# -- Karpenter -----------------------------------------------------------------------------


def test_a_node_pool_launches_from_its_ec2_node_class() -> None:
    """data-on-eks's GPU NodePool keeps its storage in its EC2NodeClass: the class is the
    pool's launch template in its view (where its EBS results are found)."""
    src = scan_paths([FIXTURES / "karpenter" / "policies" / "private_gpu"])
    index = ResourceIndex(src.resources)
    shared = views(index)
    [pool] = index.of_kind("karpenter.node_pool")
    [node_class] = index.of_kind("karpenter.ec2_node_class")
    view = shared.of(pool)
    assert view is not None
    assert [u.template for u in view.templates] == [node_class]
    assert view.launch_template is node_class
