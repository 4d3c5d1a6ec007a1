"""Nested shapes several kinds share: block device mappings, network interfaces, launch
template specifications, market options, launch specifications, instance requirements."""

from __future__ import annotations

from scanner.kinds.types import AsGiven, Bool, Ids, Int, List, Num, Obj, Price, Ref, Str

SUBNET = ("ec2.subnet",)

EBS = Obj({
    "Encrypted": Bool(),
    "KmsKeyId": Str(doc="key id, ARN or alias"),
    "VolumeSize": Int(),
    "VolumeType": Str(),
    "Iops": Int(),
    "Throughput": Int(),
    "SnapshotId": Str(),
    "DeleteOnTermination": Bool(),
    "VolumeId": Str(doc="live"),
})

BLOCK_DEVICE_MAPPINGS = List(Obj({
    "DeviceName": Str(doc='Terraform root_block_device: "root"'),
    "VirtualName": Str(),
    "NoDevice": AsGiven(),
    "Ebs": EBS,
}))

NETWORK_INTERFACES = List(Obj({
    "DeviceIndex": Int(),
    "SubnetId": Ref(kinds=SUBNET),
    "AssociatePublicIpAddress": Bool(),
    "NetworkInterfaceId": Str(),
    "NetworkCardIndex": Int(),
    "DeleteOnTermination": Bool(),
    "Groups": Ids(),
    "InterfaceType": Str(),
    "PrivateIpAddress": Str(),
    "VpcId": Ref(kinds=("ec2.vpc",), doc="live"),
    "PublicIp": Str(doc="live"),
}))

LAUNCH_TEMPLATE_SPECIFICATION = Obj({
    "LaunchTemplateId": Ref(kinds=("ec2.launch_template",)),
    "LaunchTemplateName": Ref(kinds=("ec2.launch_template",)),
    "Version": Str(),
})

def _range() -> Obj:
    return Obj({"Min": Num(), "Max": Num()})


# Instance types chosen by attributes (EC2 attribute-based instance type selection): the
# accelerator attributes decide the GPU fact (scanner.compute.requirements); the others are
# carried for the evidence.
INSTANCE_REQUIREMENTS = Obj({
    "AcceleratorTypes": List(Str(), doc="gpu, fpga, inference, media"),
    "AcceleratorManufacturers": List(Str(), doc="nvidia, amd, amazon-web-services, habana, "
                                                "xilinx"),
    "AcceleratorNames": List(Str(), doc="a100, h100, t4, inferentia, trainium, …"),
    "AcceleratorCount": Obj({"Min": Int(), "Max": Int()}, doc="Max 0 excludes accelerators"),
    "AcceleratorTotalMemoryMiB": _range(),
    "AllowedInstanceTypes": List(Str(), doc="names or patterns (g5.*, p4d.24xlarge)"),
    "ExcludedInstanceTypes": List(Str()),
    "VCpuCount": _range(),
    "MemoryMiB": _range(),
    "InstanceGenerations": List(Str()),
    "CpuManufacturers": List(Str()),
    "BareMetal": Str(),
    "BurstablePerformance": Str(),
}, doc="attribute-based selection: the accelerator attributes decide the GPU fact")

MARKET_OPTIONS = Obj({
    "MarketType": Str(doc='"spot", "capacity-block"'),
    "SpotOptions": Obj({
        "MaxPrice": Price(),
        "SpotInstanceType": Str(),
        "InstanceInterruptionBehavior": Str(),
        "ValidUntil": Str(),
        "BlockDurationMinutes": Int(),
    }),
})

CAPACITY_RESERVATION = Obj({
    "CapacityReservationPreference": Str(doc="open, none, capacity-reservations-only"),
    "CapacityReservationTarget": Obj({
        "CapacityReservationId": Str(),
        "CapacityReservationResourceGroupArn": Str(),
    }),
}, doc="the purchase option: a target is a reservation held ahead (docs/purchase-options.md)")
TERRAFORM_RESERVATION_BLOCKS = {
    "capacity_reservation_specification": ("capacity_reservation_preference",),
    "capacity_reservation_target": ("capacity_reservation_id",
                                    "capacity_reservation_resource_group_arn"),
}

# What an instance is launched with: an instance's own attributes, a spot request's
# LaunchSpecification.
INSTANCE_SPECIFICATION = {
    "InstanceType": Str(),
    "ImageId": Str(),
    "SubnetId": Ref(kinds=SUBNET),
    "AssociatePublicIpAddress": Bool(),
    "AvailabilityZone": Str(),
    "KeyName": Str(),
    "IamInstanceProfile": AsGiven(),
    "SecurityGroupIds": Ids(),
    "SecurityGroups": Ids(),
    "PrivateIpAddress": Str(),
    "Tenancy": Str(),
    "EbsOptimized": Bool(),
    "PlacementGroup": Str(),
    "NetworkInterfaces": NETWORK_INTERFACES,
    "BlockDeviceMappings": BLOCK_DEVICE_MAPPINGS,
    "InstanceMarketOptions": MARKET_OPTIONS,
    "CapacityReservationSpecification": CAPACITY_RESERVATION,
    "LaunchTemplate": LAUNCH_TEMPLATE_SPECIFICATION,
}

OVERRIDE = {
    "InstanceType": Str(),
    "SubnetId": Ref(kinds=SUBNET),
    "AvailabilityZone": Str(),
    "WeightedCapacity": Num(),
    "Priority": Num(),
}

TEMPLATE_CONFIGS = List(Obj({
    "LaunchTemplateSpecification": LAUNCH_TEMPLATE_SPECIFICATION,
    "Overrides": List(Obj({**OVERRIDE, "SpotPrice": Price(doc="spot fleet"),
                           "MaxPrice": Price(doc="EC2 fleet")})),
}))

TERRAFORM_DEVICE_BLOCKS = {
    "root_block_device": ("encrypted", "kms_key_id"),
    "ebs_block_device": ("encrypted", "kms_key_id", "snapshot_id"),
}
TERRAFORM_LAUNCH_TEMPLATE_BLOCK = {"launch_template": ("id", "name")}
TERRAFORM_MARKET_BLOCKS = {
    "instance_market_options": ("market_type",),
    "spot_options": ("max_price",),
}
