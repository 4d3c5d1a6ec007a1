"""eksctl: the node groups of a ``ClusterConfig`` (eksctl.io/v1alpha5), unmanaged
(``nodeGroups``) and managed (``managedNodeGroups``). Attribute names are eksctl's, capitalised
(``instancesDistribution.maxPrice`` → ``InstancesDistribution.MaxPrice``)."""

from __future__ import annotations

from scanner.kinds.schema import Kind
from scanner.kinds.types import AsGiven, Bool, Int, List, Obj, Price, Str

_VOLUME = {
    "VolumeName": Str(),
    "VolumeSize": Int(),
    "VolumeType": Str(),
    "VolumeEncrypted": Bool(doc="absent: not set (the account's default encryption decides)"),
    "VolumeKmsKeyID": Str(),
    "SnapshotID": Str(),
}

KINDS = (
    Kind(
        name="eksctl.node_group",
        doc="an eksctl node group; id `ClusterConfig/CLUSTER/nodeGroups/NAME` or "
            "`.../managedNodeGroups/NAME`",
        attributes={
            "ClusterName": Str(doc="metadata.name"),
            "Region": Str(doc="metadata.region"),
            "Name": Str(),
            "Managed": Bool(doc="true for managedNodeGroups"),
            "InstanceType": Str(doc='"mixed" with an instancesDistribution'),
            "InstanceTypes": List(Str(), doc="managed"),
            "InstanceSelector": Obj({"vCPUs": Int(), "memory": Str(), "gpus": Int(),
                                     "cpuArchitecture": Str()},
                                    doc="eksctl's keys as written; no gpus: no GPU types asked"),
            "Spot": Bool(doc="managed: SPOT capacity type"),
            "InstanceMarketOptions": AsGiven(doc="marketType: capacity-block (a Capacity Block)"),
            "CapacityReservation": AsGiven(
                doc="capacityReservationPreference, capacityReservationTarget "
                    "(capacityReservationID or capacityReservationResourceGroupARN)"),
            "DesiredCapacity": Int(),
            "MinSize": Int(),
            "MaxSize": Int(),
            **_VOLUME,
            "AdditionalVolumes": List(Obj(dict(_VOLUME))),
            "AmiFamily": Str(),
            "PrivateNetworking": Bool(doc="absent = false: the public subnets"),
            "Subnets": List(Str(), doc="names of vpc.subnets entries or subnet ids"),
            "AvailabilityZones": List(Str()),
            "LaunchTemplate": Obj({"Id": Str(), "Version": Str()}, doc="managed"),
            "InstancesDistribution": Obj({
                "InstanceTypes": List(Str()),
                "MaxPrice": Price(),
                "OnDemandBaseCapacity": Int(),
                "OnDemandPercentageAboveBaseCapacity": Int(),
                "SpotInstancePools": Int(),
                "SpotAllocationStrategy": Str(doc="absent = lowest-price"),
                "CapacityRebalance": Bool(),
            }, doc="unmanaged: the mixed instances policy of its Auto Scaling group"),
            "Vpc": AsGiven(doc="the cluster's vpc section (id, subnets); absent: eksctl "
                               "creates the VPC"),
            "ClusterAvailabilityZones": List(Str()),
            "PrivateCluster": Bool(doc="privateCluster.enabled"),
            "EfaEnabled": Bool(doc="efaEnabled: every interface is EFA, and eksctl creates a "
                                   "cluster placement group for the node group"),
            "Placement": Obj({"Group": Str(doc="an existing placement group's name")}),
        },
        formats="eksctl `ClusterConfig` files (YAML)",
    ),
)
