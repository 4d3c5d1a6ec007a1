"""How ``audit --prometheus-url`` ties a Prometheus host to an audited instance
(``scanner.run.rightsizing_inputs.match_hosts``): by instance id, private DNS name or its first
label, private IP (a scrape target's port aside); a private DNS name or IP that instances in
two VPCs or accounts share is given to neither (whose series they are is not known)."""

from __future__ import annotations

from scanner.model import Provenance, Resource, SourceKind
from scanner.run.rightsizing_inputs import AMBIGUOUS, match_hosts


def _inst(iid: str, scope: str, ip: str) -> Resource:
    dns = f"ip-{ip.replace('.', '-')}.ec2.internal"
    return Resource("ec2.instance", iid, {"InstanceId": iid, "PrivateDnsName": dns,
                                          "PrivateIpAddress": ip, "State": "running",
                                          "InstanceType": "g5.xlarge"},
                    Provenance(SourceKind.AWS), scope, declared=False)


def test_ids_names_and_ips_match_and_a_shared_private_address_matches_neither() -> None:
    a = _inst("i-0a", "111111111111/us-east-1", "10.0.1.17")
    b = _inst("i-0b", "222222222222/us-east-1", "10.0.1.17")  # the same IP in another account
    c = _inst("i-0c", "111111111111/us-east-1", "10.0.2.9")
    d = _inst("i-0d", "111111111111/us-east-1", "10.0.3.4")
    e = _inst("i-0e", "222222222222/us-east-1", "10.0.1.17")
    keys = {"ip-10-0-1-17.ec2.internal": "ip-10-0-1-17.ec2.internal",
            "10.0.2.9": "10.0.2.9:9400", "10.0.2.9:9400": "10.0.2.9:9400",
            "ip-10-0-3-4": "ip-10-0-3-4", "i-0e": "i-0e"}
    assert match_hosts([a, b, c, d, e], keys) == {
        "i-0a": AMBIGUOUS + "ip-10-0-1-17.ec2.internal",
        "i-0b": AMBIGUOUS + "ip-10-0-1-17.ec2.internal",
        "i-0c": "10.0.2.9:9400", "i-0d": "ip-10-0-3-4",
        "i-0e": "i-0e"}  # named by its id: its own, whatever its address
    assert match_hosts([a, c], keys)["i-0a"] == "ip-10-0-1-17.ec2.internal"  # one claimant
