"""``ec2.instance``: its own launch specification, completed by its launch template.

Live, the instance is observed: its public address is the truth about exposure, its block
devices are judged on the volumes themselves (not here), a terminating instance holds nothing,
and its purchase is judged on the template or request it came from.
"""

from __future__ import annotations

from scanner.compute.index import Views
from scanner.compute.launch import (
    LaunchSpec,
    decisive,
    launch_spec,
    placement,
    root_from_ami,
    subnet_values,
)
from scanner.compute.purchase import reservation_option
from scanner.compute.registry import DEVICES, LAUNCHES, MEASURED, PLACES, SPOT, extractor
from scanner.compute.view import (
    CAPACITY_BLOCK,
    ON_DEMAND,
    RESERVATION_OPEN,
    Attr,
    ComputeView,
    Device,
    Network,
    Observed,
    Purchase,
    SpotOffer,
    TemplateUse,
    Types,
)
from scanner.compute.view import SPOT as SPOT_OPTION
from scanner.model import Resource, Unknown

GONE = ("terminated", "shutting-down")


@extractor("ec2.instance", provides=(LAUNCHES, PLACES, SPOT, DEVICES, MEASURED),
           reads=("ec2.launch_template",), rank=1)
def instance(r: Resource, views: Views) -> ComputeView:
    a = r.attrs
    own = launch_spec(a)
    lt = views.template(a.get("LaunchTemplate"), r.scope)
    lt_spec = views.template_spec(lt) if lt is not None else None

    itype = r.get("InstanceType")
    if itype is None and lt_spec is not None:
        itype = lt_spec.instance_type.value
    types = Types((itype,) if itype is not None else (Unknown("no instance type"),))

    if not r.declared:
        spot: tuple[SpotOffer, ...] | Unknown = ()  # judged on its template or request
    elif own.spot_market is True:
        spot = (SpotOffer(r.get("InstanceType"), own.spot_max_price.value,
                          own.spot_max_price.path, 1),)
    else:
        spot = own.spot_market if isinstance(own.spot_market, Unknown) else ()

    devices: tuple[Device, ...]
    from_template = a.get("LaunchTemplate") is not None
    if not r.declared:
        devices = ()  # the volumes themselves carry the real state
    elif a.get("BlockDeviceMappings") is None and from_template:
        devices = ()  # its launch template carries the mappings
    elif from_template and own.maps_root is not True:
        # its own mappings, and a root volume its launch template decides (judged there) or,
        # when that template is not in the scan, one that is not known here
        devices = own.devices if lt is not None else (*own.devices, root_from_ami(
            own.mappings_path, encrypted=Unknown(
                "its launch template decides the root volume, and that template is not in the "
                "scan or not known")))
    else:
        devices = own.devices_or_root()

    subnets = [s.value for s in own.subnets]
    inherited: tuple[Attr, ...] = ()
    if lt is not None and lt_spec is not None:
        subnets += [s.value for s in lt_spec.subnets]
        flag = decisive(lt_spec.public_ip)
        if flag is not None:
            inherited = (Attr(flag.value, f"{lt.id}: {flag.path}"),)
    observed = None
    if not r.declared:
        observed = Observed(r.get("PublicIpAddress"), "PublicIpAddress")
    zones = (own.zone,) if own.zone is not None else ()
    attached = own.attached_interface or (lt_spec is not None and lt_spec.attached_interface)
    network = Network(placed=True, subnets_path="SubnetId", zones=zones,
                      subnets=placement(subnet_values(subnets), zones, views.index, r.scope,
                                        attached_interface=attached),
                      public_ip=own.public_ip, inherited_public_ip=inherited,
                      observed=observed, attached_interface=attached)
    uses: tuple[TemplateUse, ...] = ()
    if lt is not None:
        own_type = r.get("InstanceType")
        uses = (TemplateUse(lt, (own_type,) if own_type is not None else (),
                            sets_root_device=own.sets_root_device),)
    if not r.declared:
        on_spot: bool | Unknown = r.get("InstanceLifecycle") == "spot"
    elif own.spot_market is not False or lt_spec is None:
        on_spot = own.spot_market
    else:
        on_spot = lt_spec.spot_market
    option, option_path = instance_option(r, own, lt, lt_spec)
    return ComputeView(
        r, types=types, purchase=Purchase(spot=spot, maybe_spot=own.spot_market is not False,
                                          option=option, option_path=option_path),
        devices=devices, network=network, templates=uses,
        active=r.declared or r.get("State") not in GONE,
        running=r.declared or r.get("State") == "running", on_spot=on_spot)


def instance_option(r: Resource, own: LaunchSpec, lt: Resource | None,
                    lt_spec: LaunchSpec | None) -> tuple[str | Unknown, str]:
    """Live: the instance's lifecycle (spot, capacity-block) and the reservation it runs in;
    declared: its own market and reservation settings, else its launch template's."""
    if not r.declared:
        life = r.get("InstanceLifecycle")
        if isinstance(life, str) and life.lower() in (SPOT_OPTION, CAPACITY_BLOCK):
            return life.lower(), "InstanceLifecycle"
        option, path = reservation_option(r.get("CapacityReservationSpecification"),
                                          "CapacityReservationSpecification")
        if option == ON_DEMAND and r.get("CapacityReservationId"):
            return RESERVATION_OPEN, "CapacityReservationId"
        return option, path
    if own.option != ON_DEMAND or lt_spec is None or lt is None:
        return own.option, own.option_path
    path = f"{lt.id}: {lt_spec.option_path}" if lt_spec.option_path else ""
    return lt_spec.option, path
