"""The compute view: what every policy asks of a resource that launches (or stores for) capacity.

One :class:`ComputeView` per resource, built by the extractor its kind registered
(``scanner.compute.extractors``). Every fact keeps the attribute path it came from, so a finding
still points at the attribute; a value that cannot be known stays an :class:`Unknown` (never a
guess), and ``None`` means "not set" (the AWS default applies).

Where IaC and live state differ (a live instance's public address is observed, a live instance's
block devices are judged on the volumes themselves), the extractor says so in the view; no policy
asks which source a resource came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scanner.catalog import is_gpu_type
from scanner.compute.values import to_price
from scanner.model import Resource, Unknown

# The dataclasses below compare by identity (eq=False): a generated __eq__/__hash__ doubles what
# each costs to define at import, on the pre-commit path, and no caller compares views.


@dataclass(frozen=True, eq=False)
class Attr:
    """One fact and where it is: ``value`` may be ``None`` (not set) or an :class:`Unknown`."""

    value: Any
    path: str
    note: str = ""  # what the setting means, when its name alone does not say it
    # ``value`` is derived from the setting at ``path``, which says ``shown`` (None: not set):
    # eksctl's privateNetworking false or absent is a public IP (evidence shows what is written)
    derived: bool = False
    shown: Any = None


NOT_SET = Attr(None, "")


# -- instance types --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GpuRequirement:
    """Instance types chosen by attributes (``InstanceRequirements``): what the requirement says
    about accelerators. ``gpu`` is True when it asks for GPU or Neuron accelerators, False when
    it excludes them (or asks for none), an :class:`Unknown` when that is not known."""

    gpu: bool | Unknown
    path: str
    detail: str = ""  # e.g. "AcceleratorTypes [gpu], AcceleratorManufacturers [nvidia]"


@dataclass(frozen=True, eq=False)
class Types:
    """Every instance type the resource can launch (``str`` or :class:`Unknown` values; empty
    when it names none itself, e.g. a launch template without a type and without consumers),
    or the GPU requirement when types are chosen by attributes."""

    values: tuple[Any, ...] = ()
    requirement: GpuRequirement | None = None
    # Values that stand for several instance types the catalogue does not list one by one
    # (AWS Batch's "optimal", a family name): diversified by themselves.
    families: frozenset[str] = frozenset()

    def gpu(self) -> bool | Unknown:
        """True if any type is GPU compute (or the requirement asks for GPUs); an Unknown if
        none is but some type (or the requirement) is not known; else False."""
        if any(is_gpu_type(t) for t in self.values):
            return True
        req = self.requirement
        if req is not None and req.gpu is True:
            return True
        unknowns = [t for t in self.values if isinstance(t, Unknown) or not isinstance(t, str)]
        if unknowns:
            first = unknowns[0]
            return first if isinstance(first, Unknown) else Unknown("instance type not known")
        if req is not None and isinstance(req.gpu, Unknown):
            return req.gpu
        return False

    def gpu_types(self) -> list[str]:
        return sorted({t for t in self.values if is_gpu_type(t)})

    def known(self) -> list[str]:
        return [t for t in self.values if isinstance(t, str)]


# -- capacity and purchase option ------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Capacity:
    """The size of a group or fleet: desired, min, max (int, ``None`` or Unknown), and the
    weight of each instance type when capacity is counted in units."""

    desired: Attr = NOT_SET
    min: Attr = NOT_SET
    max: Attr = NOT_SET
    weights: tuple[tuple[Any, Any], ...] = ()  # (instance type, weight)

    @property
    def weighted(self) -> bool:
        return any(w not in (None, "", 1, "1") for _t, w in self.weights)

    @property
    def unit(self) -> str:
        return "capacity units" if self.weighted else "instances"


@dataclass(frozen=True, eq=False)
class Split:
    """The on-demand / spot split at desired capacity (AWS's rule, see the design)."""

    desired: int
    on_demand: int
    weighted: bool
    basis: str  # how desired was chosen, e.g. "DesiredCapacity", "MinSize (no DesiredCapacity)"

    @property
    def spot(self) -> int:
        return self.desired - self.on_demand


@dataclass(frozen=True, eq=False)
class SpotOffer:
    """Spot capacity of one instance type and the max price that applies to it: an absolute
    price (``max_price``, as AWS spells it, ``None`` when absent) or a percentage of the type's
    on-demand price (``max_price_percent``)."""

    instance_type: Any
    max_price: Any
    path: str
    count: int | None  # instances (or capacity units); None = per instance
    max_price_percent: Any = None
    # Whose capacity ``count`` is, for the basis ("aws_autoscaling_group.a: DesiredCapacity 4");
    # with count 0, why there is none (a template nothing launches).
    count_basis: str = ""

    def cap(self, on_demand: float) -> Any:
        """The max price in $/h given the type's on-demand price (None: no max price)."""
        if self.max_price_percent is not None:
            pct = self.max_price_percent
            if isinstance(pct, Unknown):
                return pct
            return on_demand * float(pct) / 100.0
        return to_price(self.max_price)


@dataclass(frozen=True, eq=False)
class SpotPools:
    """Spot capacity drawn from pools of instance types (one fleet's worth): whether spot is
    requested, the instance types it names (may be empty when they are chosen by attributes),
    how many distinct types it can draw from (``fewest`` at least, ``most`` at most; None: not
    known / no bound), and the allocation strategy (``strategy`` as configured, None = the
    service's default ``default_strategy``; ``chosen_by_service``: it cannot be configured)."""

    spot: bool | Unknown
    types: tuple[Any, ...] = ()
    fewest: int | None = None
    most: int | None = None
    strategy: Attr = NOT_SET
    default_strategy: str = "lowest-price"
    chosen_by_service: bool = False
    path: str = ""
    name: str = ""  # which fleet, when a resource has several ("compute resource gpu-a")
    note: str = ""  # e.g. "on-demand when spot is not available"


# The purchase option of a resource's capacity (``Purchase.option``):
ON_DEMAND = "on-demand"
SPOT = "spot"
MIXED = "mixed"  # a group that splits its capacity between on-demand and spot
CAPACITY_BLOCK = "capacity-block"  # Capacity Blocks for ML: reserved ahead and paid up front
# A targeted On-Demand Capacity Reservation (a reservation id or a resource group): capacity
# held, and paid for, whether it runs or not.
RESERVATION_TARGETED = "reservation-targeted"
# ``CapacityReservationPreference: open`` on on-demand capacity: a matching open reservation is
# consumed if there is one, else it runs on-demand (the market is unchanged: spot with an open
# preference is spot).
RESERVATION_OPEN = "reservation-open"
OPTIONS = (ON_DEMAND, SPOT, MIXED, CAPACITY_BLOCK, RESERVATION_TARGETED, RESERVATION_OPEN)
# Paid whether it runs or not: no on-demand/spot band applies, no spot saving exists.
PREPAID = frozenset({CAPACITY_BLOCK, RESERVATION_TARGETED})


def is_prepaid(option: str | Unknown) -> bool | Unknown:
    """True for capacity paid ahead (a Capacity Block, a targeted reservation), an Unknown when
    the option is not known, else False."""
    if isinstance(option, Unknown):
        return option
    return option in PREPAID


@dataclass(frozen=True, eq=False)
class Purchase:
    """How capacity is bought: the spot capacity with its max prices (``spot``: empty when the
    resource requests none, Unknown when that is not known), the on-demand/spot split of a group
    (``split``: None when not applicable), its configuration (on-demand base and percentage,
    spot allocation strategy; ``strategy`` None = AWS's default, lowest-price), and the current
    spot prices when they were observed (fact ``ec2.spot_prices``)."""

    spot: tuple[SpotOffer, ...] | Unknown = ()
    split: Split | Unknown | None = None
    on_demand_base: Attr = NOT_SET
    on_demand_percent: Attr = NOT_SET
    strategy: Attr = NOT_SET
    maybe_spot: bool = False  # spot capacity is possible (a mixed policy, a spot template)
    current_spot_prices: dict[str, Any] | None = None
    split_path: str = ""  # where the split is configured (an instances distribution)
    pools_path: str = ""  # where the spot pools are configured (types and strategy)
    # One purchase option for the whole resource by construction (an EKS node group's
    # CapacityType, a Batch compute environment's type): there is no split to configure.
    fixed_market: bool = False
    # What an absent spot allocation strategy means, and the strategies that pick spot pools by
    # price alone (ASG-002's "not diversified"), in the resource's own spelling.
    default_strategy: str = "lowest-price"
    price_first: tuple[str, ...] = ("lowest-price",)
    # Spot pools judged on their own (kinds without a group split: a NodePool, a managed node
    # group, a ParallelCluster queue's compute resources); () = judged from the split.
    pools: tuple[SpotPools, ...] = ()
    # The purchase option (one of ``OPTIONS``, or an Unknown) and the attribute that decides it
    # ("" when it is the default, on-demand).
    option: str | Unknown = ON_DEMAND
    option_path: str = ""
    # Why AWS rejects this purchase configuration (a spot launch template inside a mixed
    # instances policy), naming the resources; "" when it is valid. Nothing is priced from it.
    rejected: str = ""
    # A group that sets its split in a mixed instances policy (its template must not request
    # spot: ASG-004).
    mixed_policy: bool = False

    @property
    def prepaid(self) -> bool | Unknown:
        """Capacity paid ahead (``PREPAID``): True, False, or the Unknown of the option."""
        return is_prepaid(self.option)


# -- storage ---------------------------------------------------------------------------------

AWS_OWNED = "AWS owned"  # a Device's key manager when the service encrypts with its own key


@dataclass(frozen=True, eq=False)
class Device:
    """One storage device and its encryption. ``encrypted``: True/False, ``None`` when unset
    (the account's default encryption decides), or Unknown. ``snapshot``: the snapshot a
    declared volume is created from (an id, a ``Ref``, or Unknown; None: none, and always None
    for an observed volume, whose own encryption is known), at ``snapshot_path``: a volume
    from an encrypted snapshot is encrypted whatever ``encrypted`` says."""

    path: str  # attribute path of the Ebs block, e.g. BlockDeviceMappings[0].Ebs
    name: str  # the device name, or its position in words ("the first block device mapping")
    encrypted: Any
    kms_key: Any = None
    # fact ec2.ebs_kms_keys: "AWS" | "CUSTOMER" | Unknown | None; "AWS owned" where the
    # service encrypts with its own key (SageMaker HyperPod without VolumeKmsKeyId)
    key_manager: Any = None
    # The service encrypts it whatever its configuration says (SageMaker HyperPod's volumes):
    # there is no unencrypted setting to fail, only the key to judge.
    service_encrypted: bool = False
    snapshot: Any = None
    snapshot_path: str = ""

    @property
    def from_snapshot(self) -> bool:
        """Is it created from a snapshot (or may it be: the snapshot is not known)? An empty
        id is none (Terraform's ``snapshot_id = ""``)."""
        return self.snapshot is not None and self.snapshot != ""


# -- network ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Observed:
    """A public address observed on the running resource (live): ``address`` None = none."""

    address: str | None
    path: str


@dataclass(frozen=True, eq=False)
class Network:
    """Where capacity lands and whether it gets a public IP.

    ``placed``: the resource launches capacity into subnets (a template alone does not).
    ``subnets``: the subnet references (``Ref``, ids, Unknown). ``zones``: Availability Zones named
    instead of subnets (capacity then lands in the default VPC). ``public_ip``: its own explicit
    ``AssociatePublicIpAddress`` settings in order; ``inherited_public_ip``: those of the
    launch template / configuration it uses (path prefixed with that resource's id).
    ``observed``: the address seen on the running resource, when observed (live)."""

    placed: bool
    subnets: tuple[Any, ...] = ()
    subnets_path: str = ""
    zones: tuple[Any, ...] = ()
    public_ip: tuple[Attr, ...] = ()
    inherited_public_ip: tuple[Attr, ...] = ()
    observed: Observed | None = None
    attached_interface: bool = False  # launches with an existing network interface
    # False when the capacity has no public-IP setting and does not take the subnet's (the
    # network interfaces a SageMaker HyperPod cluster places in your subnets): nothing to judge.
    public_ip_applies: bool = True


# -- templates -------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TemplateUse:
    """A launch template (or configuration, or a NodePool's EC2NodeClass) the resource launches
    from, the instance types it launches from it, and whether it sets its own root device
    (overriding the template's). Storage it does not hold itself is judged on the template."""

    template: Resource
    types: tuple[Any, ...] = ()
    sets_root_device: bool = False


# -- the view --------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ComputeView:
    resource: Resource
    types: Types = field(default_factory=Types)
    capacity: Capacity | None = None
    purchase: Purchase = field(default_factory=Purchase)
    devices: tuple[Device, ...] = ()
    network: Network | None = None
    templates: tuple[TemplateUse, ...] = ()
    # False for a resource that holds no capacity any more (live: a terminating instance)
    active: bool = True
    # Capacity running now: declared capacity runs once applied; live, a stopped instance does
    # not (it costs nothing to right-size) while it still holds its place in the network.
    running: bool = True
    # The market the running capacity of an instance is on: True spot, False on-demand,
    # Unknown (live: its lifecycle; IaC: its own or its launch template's market type).
    on_spot: bool | Unknown = False
    # Members of a group by instance id (live: the group's own list), judged at the group.
    members: tuple[str, ...] = ()
    # The resource that declares this capacity and is judged for it (live: the EKS node group
    # of the Auto Scaling group EKS created; a string when that node group was not read). A
    # view with an owner is empty: nothing is judged or priced twice.
    managed_by: Any = None

    @property
    def launch_template(self) -> Resource | None:
        """The first launch template (or configuration) it uses."""
        return self.templates[0].template if self.templates else None
