"""OCSF Compliance Finding events (class_uid 2003), built with py-ocsf-models as Prowler does.

One event per report finding, a JSON array. status_id / compliance.status_id: PASS -> Pass,
FAIL -> Fail, UNKNOWN -> Warning (not decided), ERROR -> Unknown (not evaluated), SUPPRESSED ->
Fail with status Suppressed. compliance.requirements lists ``framework/control`` from the
compliance mappings, compliance.standards the frameworks. finding_info.uid is the finding's
stable fingerprint. Needs the ``ocsf`` extra (``pip install gpuaudit[ocsf]``).
"""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, TextIO

from reports.asff import resource_uid
from reports.common import (
    by_status,
    location_label,
    resource_label,
    run_time,
    write_json_array,
)
from reports.policy_meta import PolicyMeta, describe
from scanner import __version__
from scanner.compliance import Framework, finding_controls, frameworks
from scanner.model import UsageError


class OcsfUnavailable(UsageError):
    """py-ocsf-models is not installed (a usage error: exit 2 with how to install it)."""


_SEVERITY = {"critical": "Critical", "high": "High", "medium": "Medium", "low": "Low",
             "info": "Informational"}
_STATUS = {"PASS": ("Pass", "Resolved"), "FAIL": ("Fail", "New"),
           "UNKNOWN": ("Warning", "New"), "ERROR": ("Unknown", "New"),
           "SUPPRESSED": ("Fail", "Suppressed")}


def _when(doc: dict[str, Any]) -> dt.datetime:
    stamp = doc.get("generated_at")
    if isinstance(stamp, str) and stamp:
        try:
            return dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=dt.timezone.utc)
        except ValueError:
            pass
    return run_time()


def events(doc: dict[str, Any]) -> list[Any]:
    """The report's findings as py-ocsf-models ``ComplianceFinding`` objects."""
    return list(iter_events(doc))


def iter_events(doc: dict[str, Any]) -> Iterator[Any]:
    """The events one at a time (a report of 200,000 findings is never held as models)."""
    models = _models()
    when = _when(doc)
    known = frameworks()
    for f in by_status(doc.get("findings") or []):
        yield _event(models, f, when, known)


def _models() -> SimpleNamespace:
    """The py-ocsf-models classes the events are made of; OcsfUnavailable without it."""
    try:
        from py_ocsf_models.events.findings.activity_id import ActivityID
        from py_ocsf_models.events.findings.compliance_finding import ComplianceFinding
        from py_ocsf_models.events.findings.compliance_finding_type_id import (
            ComplianceFindingTypeID,
        )
        from py_ocsf_models.events.findings.severity_id import SeverityID
        from py_ocsf_models.events.findings.status_id import StatusID as EventStatusID
        from py_ocsf_models.objects.compliance import Compliance
        from py_ocsf_models.objects.compliance_status import StatusID as ComplianceStatusID
        from py_ocsf_models.objects.finding_info import FindingInformation
        from py_ocsf_models.objects.metadata import Metadata
        from py_ocsf_models.objects.product import Product
        from py_ocsf_models.objects.remediation import Remediation
        from py_ocsf_models.objects.resource_details import ResourceDetails
    except ImportError as exc:
        raise OcsfUnavailable(
            "the ocsf format needs py-ocsf-models: pip install 'gpuaudit[ocsf]'") from exc
    return SimpleNamespace(
        ActivityID=ActivityID, ComplianceFinding=ComplianceFinding,
        ComplianceFindingTypeID=ComplianceFindingTypeID, SeverityID=SeverityID,
        EventStatusID=EventStatusID, Compliance=Compliance,
        ComplianceStatusID=ComplianceStatusID, FindingInformation=FindingInformation,
        Metadata=Metadata, Product=Product, Remediation=Remediation,
        ResourceDetails=ResourceDetails,
    )


def _event(m: SimpleNamespace, f: dict[str, Any], when: dt.datetime,
           known: dict[str, Framework]) -> Any:
    """One finding as a ``ComplianceFinding`` event."""
    pid = str(f.get("policy_id"))
    sev = str(f.get("severity"))
    status = str(f.get("status"))
    meta = describe(pid, title=str(f.get("title") or pid), severity=sev)
    res = f.get("resource") or {}
    comp_status, event_status = _STATUS.get(status, ("Unknown", "New"))
    rem = f.get("remediation") or {}
    return m.ComplianceFinding(
        activity_id=m.ActivityID.Create,
        activity_name=m.ActivityID.Create.name,
        type_uid=m.ComplianceFindingTypeID.Create,
        type_name=f"Compliance Finding: {m.ActivityID.Create.name}",
        time=int(when.timestamp()),
        time_dt=when,
        severity_id=getattr(m.SeverityID, _SEVERITY.get(sev, "Unknown"), m.SeverityID.Unknown),
        severity=_SEVERITY.get(sev, "Unknown"),
        status=event_status,
        status_id=getattr(m.EventStatusID, event_status, m.EventStatusID.Other),
        status_code=status,
        status_detail=str(f.get("message") or ""),
        message=str(f.get("message") or ""),
        metadata=m.Metadata(
            event_code=pid,
            product=m.Product(name="gpuaudit", vendor_name="gpuaudit", version=__version__,
                              uid="gpuaudit"),
            profiles=["cloud"],
        ),
        finding_info=_finding_info(m, f, pid, meta, when),
        compliance=_compliance(m, f, pid, comp_status, meta, known),
        remediation=m.Remediation(desc=str(rem.get("text") or f"See {meta.help_uri}"),
                                  references=[meta.help_uri]),
        resources=[_resource(m, f, res)],
        unmapped={"gpuaudit": {"policy_id": pid, "status": status,
                               "account": res.get("account"),
                               "savings": f.get("savings")}},
    )


def _finding_info(m: SimpleNamespace, f: dict[str, Any], pid: str, meta: PolicyMeta,
                  when: dt.datetime) -> Any:
    return m.FindingInformation(
        uid=str(f.get("id")),
        title=f"{pid} {f.get('title') or meta.title}",
        desc=meta.description or str(f.get("title") or pid),
        created_time=int(when.timestamp()),
        created_time_dt=when,
        types=[meta.category],
        src_url=meta.help_uri,
    )


def _compliance(m: SimpleNamespace, f: dict[str, Any], pid: str, comp_status: str,
                meta: PolicyMeta, known: dict[str, Framework]) -> Any:
    """The policy as the control, the finding's mapped controls as requirements (``framework/
    control``) and their frameworks as standards."""
    controls = finding_controls(f)
    return m.Compliance(
        control=pid,
        status_id=getattr(m.ComplianceStatusID, comp_status),
        requirements=[f"{fid}/{cid}" for fid, ids in controls.items() for cid in ids],
        standards=[known[fid].name if fid in known else fid for fid in controls],
        desc=meta.description or None,
    )


def _resource(m: SimpleNamespace, f: dict[str, Any], res: dict[str, Any]) -> Any:
    return m.ResourceDetails(
        uid=resource_uid(f),
        name=resource_label(res),
        type=str(res.get("kind") or ""),
        region=str(res.get("region") or "") or None,
        cloud_partition="aws",
        data={"location": location_label(f)},
    )


def write(doc: dict[str, Any], out: TextIO) -> None:
    """The OCSF events as a JSON array, written an event at a time."""
    write_json_array((json.loads(e.model_dump_json(exclude_none=True)) for e in iter_events(doc)),
                     out)


def render(doc: dict[str, Any]) -> str:
    buf = io.StringIO()
    write(doc, buf)
    return buf.getvalue()
