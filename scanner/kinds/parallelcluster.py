"""AWS ParallelCluster v3 cluster configurations: Slurm (and AWS Batch) queues, the head node,
shared EBS storage. Attribute names are ParallelCluster's (already PascalCase)."""

from __future__ import annotations

from scanner.kinds.schema import Kind
from scanner.kinds.types import AsGiven, Bool, Int, List, Num, Obj, Price, Str

FORMATS = "ParallelCluster v3 cluster configuration files (YAML)"
_ROOT_VOLUME = Obj({"Size": Int(), "Encrypted": Bool(doc="absent = true (ParallelCluster's "
                                                             "default)"),
                    "VolumeType": Str(), "Iops": Int(), "Throughput": Int(),
                    "DeleteOnTermination": Bool()})

_PLACEMENT_GROUP = Obj({"Enabled": Bool(doc="absent = false (true when Id or Name is set)"),
                        "Id": Str(), "Name": Str()})

KINDS = (
    Kind(
        name="parallelcluster.queue",
        doc="a ParallelCluster queue (Slurm or AWS Batch); id `Scheduling/SlurmQueues/NAME`",
        attributes={
            "Name": Str(),
            "Scheduler": Str(doc="slurm or awsbatch"),
            "Region": Str(),
            "CapacityType": Str(doc="ONDEMAND (default), SPOT or CAPACITY_BLOCK"),
            "CapacityReservationTarget": AsGiven(
                doc="CapacityReservationId or CapacityReservationResourceGroupArn (also on a "
                    "compute resource)"),
            "AllocationStrategy": Str(doc="absent = lowest-price"),
            "ComputeResources": List(Obj({
                "Name": Str(),
                "InstanceType": Str(),
                "Instances": List(Obj({"InstanceType": Str()})),
                "InstanceTypes": List(Str(), doc="awsbatch"),
                "MinCount": Int(doc="absent = 0"),
                "MaxCount": Int(doc="absent = 10"),
                "SpotPrice": Price(doc="absent = the on-demand price"),
                "SpotBidPercentage": Num(doc="awsbatch; absent = 100"),
                "MinvCpus": Int(),
                "DesiredvCpus": Int(),
                "MaxvCpus": Int(),
                "Efa": Obj({"Enabled": Bool(doc="absent = false"), "GdrSupport": Bool()}),
                "Networking": Obj({"PlacementGroup": _PLACEMENT_GROUP},
                                  doc="overrides the queue's"),
            })),
            "Networking": Obj({"SubnetIds": List(Str()),
                               "AssignPublicIp": Bool(doc="absent: the subnet decides"),
                               "PlacementGroup": _PLACEMENT_GROUP}),
            "ComputeSettings": Obj({"LocalStorage": Obj({"RootVolume": _ROOT_VOLUME})}),
        },
        formats=FORMATS,
    ),
    Kind(
        name="parallelcluster.head_node",
        doc="the head node of a ParallelCluster cluster; id `HeadNode`",
        attributes={
            "InstanceType": Str(),
            "Region": Str(),
            "Networking": Obj({"SubnetId": Str(),
                               "ElasticIp": AsGiven(doc="true, false or an Elastic IP id")}),
            "LocalStorage": Obj({"RootVolume": _ROOT_VOLUME}),
        },
        formats=FORMATS,
    ),
    Kind(
        name="parallelcluster.shared_storage",
        doc="a shared storage of a ParallelCluster cluster; id `SharedStorage/NAME` "
            "(EBS only: EFS and FSx are not EBS)",
        attributes={
            "Name": Str(),
            "MountDir": Str(),
            "StorageType": Str(),
            "EbsSettings": Obj({"Encrypted": Bool(doc="absent = true"), "KmsKeyId": Str(),
                                "VolumeId": Str(doc="an existing volume: not created"),
                                "Size": Int(), "VolumeType": Str(), "SnapshotId": Str(),
                                "Raid": AsGiven()}),
        },
        formats=FORMATS,
    ),
)
