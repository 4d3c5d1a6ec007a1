"""Seed a moto server with a GPU estate at benchmark scale, and serve moto with a call counter.

    python bench/seed_live.py serve --port 5000 [--stock-moto]
        moto on 127.0.0.1:PORT, counting every AWS request by (service, region, operation):
        GET /bench/calls returns the counts (and the seconds moto spent answering them) as JSON,
        POST /bench/calls/reset zeroes them; POST /bench/latency?ms=N delays every later AWS
        request by N ms before moto sees it (a network round trip to a real endpoint; the
        server is threaded, so delayed requests wait side by side, as they would on AWS).
        EC2 tags are looked up by resource id unless --stock-moto (see ``index_ec2_tags``).
    python bench/seed_live.py seed --endpoint-url http://127.0.0.1:5000 [--volumes 5000 ...]
        creates, split over the regions: VPCs with subnets, route tables (explicit associations),
        internet gateways and S3 gateway endpoints (some with a policy, covering some tables);
        --volumes standalone EBS volumes (CreateVolume, a third unencrypted; every instance also
        gets moto's 8 GiB root volume); --instances instances (RunInstances with MinCount/MaxCount
        in batches, GPU and CPU types, a few with a public IP); --launch-templates templates (spot
        with max prices around the caps, on-demand, encrypted and unencrypted mappings);
        --asgs Auto Scaling groups (mixed instances policies with various on-demand shares and
        strategies, single-template groups; desired capacity 0, so they add no instances).

Prints progress on stderr. Deterministic: the same arguments give the same estate (moto's ids
aside). bench/bench_live.py imports ``seed`` and ``serve_command``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fault_proxy's error bodies

AMI = "ami-12c6146b"  # an AMI moto knows (in every region)
REGIONS = ("us-east-1", "us-west-2")
GPU_TYPES = (  # from ../shared/reference/gpu_instances.csv; us-east-1 on-demand $/h
    ("g4dn.xlarge", 0.526),
    ("g5.xlarge", 1.006),
    ("g5.2xlarge", 1.212),
    ("g6.xlarge", 0.8048),
    ("p3.2xlarge", 3.06),
)
CPU_TYPES = ("m5.large", "c5.xlarge")
WORKERS = 8
ACCOUNT = "123456789012"

# -- the counting server ---------------------------------------------------------------------------

_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/([^/]+)/([^/]+)/aws4_request")


class CallCounter:
    """WSGI middleware: counts requests by (service, region, operation) before moto sees them."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        self.counts: Counter[tuple[str, str, str]] = Counter()
        self.seconds: Counter[tuple[str, str, str]] = Counter()  # time in moto, per request
        self.lock = threading.Lock()
        self.latency = 0.0  # seconds added to every AWS request
        # every n-th AWS request answered with its service's throttling error (0: none); the
        # throttles are counted by operation under "throttled"
        self.throttle_every = 0
        self.throttled: Counter[tuple[str, str, str]] = Counter()
        self._seen = 0

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "")
        if path.startswith("/bench/latency"):
            ms = parse_qs(environ.get("QUERY_STRING", "")).get("ms", ["0"])[0]
            self.latency = max(float(ms), 0.0) / 1000
            start_response("204 No Content", [])
            return [b""]
        if path.startswith("/bench/throttle"):
            every = parse_qs(environ.get("QUERY_STRING", "")).get("every", ["0"])[0]
            self.throttle_every = max(int(every), 0)
            start_response("204 No Content", [])
            return [b""]
        if path.startswith("/bench/calls"):
            return self._admin(environ, start_response)
        if path.startswith("/moto-api"):
            return self.app(environ, start_response)
        if self.latency:
            time.sleep(self.latency)
        key = self._key(environ)
        if self.throttle_every:
            throttled = self._throttle(key, start_response)
            if throttled is not None:
                return throttled
        started = time.perf_counter()
        body = self.app(environ, start_response)  # moto renders the whole response here
        with self.lock:
            self.counts[key] += 1
            self.seconds[key] += time.perf_counter() - started
        return body

    def _throttle(self, key: tuple[str, str, str], start_response: Callable[..., Any]
                  ) -> list[bytes] | None:
        """The service's own throttling answer for every n-th AWS request."""
        from tests.fault_proxy import PROTOCOLS, _error

        protocol = PROTOCOLS.get(key[0])
        if protocol is None:
            return None
        with self.lock:
            self._seen += 1
            if self._seen % self.throttle_every:
                return None
            self.throttled[key] += 1
        status, ctype, body = _error(protocol, "throttle", key[2])
        reason = {400: "Bad Request", 429: "Too Many Requests", 503: "Service Unavailable"}
        headers = [("Content-Type", ctype), ("Content-Length", str(len(body)))]
        if protocol in ("json", "rest-json"):
            headers.append(("x-amzn-ErrorType", "ThrottlingException"))
        start_response(f"{status} {reason.get(status, 'Error')}", headers)
        return [body]

    def _key(self, environ: dict[str, Any]) -> tuple[str, str, str]:
        auth = environ.get("HTTP_AUTHORIZATION", "")
        m = _SCOPE.search(auth)
        region, service = (m.group(1), m.group(2)) if m else ("?", "?")
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if target:  # JSON protocols: "Service_20161128.Operation"
            return service, region, target.rsplit(".", 1)[-1]
        action = parse_qs(environ.get("QUERY_STRING", "")).get("Action")
        if not action and environ.get("REQUEST_METHOD") == "POST":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length) if length else b""
            environ["wsgi.input"] = io.BytesIO(body)
            if b"Action=" in body[:4096]:
                action = parse_qs(body.decode("utf-8", "replace")).get("Action")
        if action:
            return service, region, action[0]
        return service, region, f"{environ.get('REQUEST_METHOD', '?')} {environ.get('PATH_INFO')}"

    def _admin(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        with self.lock:
            if environ.get("REQUEST_METHOD") == "POST":
                self.counts.clear()
                self.seconds.clear()
                self.throttled.clear()
            rows = [
                {
                    "service": s,
                    "region": r,
                    "operation": o,
                    "calls": n + self.throttled[(s, r, o)],
                    "throttled": self.throttled[(s, r, o)],
                    "server_s": round(self.seconds[(s, r, o)], 4),
                }
                for (s, r, o), n in sorted((self.counts + self.throttled).items())
            ]
        body = json.dumps(rows).encode()
        start_response(
            "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        )
        return [body]


def index_ec2_tags() -> None:
    """Give moto's EC2 resources a direct tag lookup (same answers, O(1) instead of O(n)).

    moto 5.2.5 renders each resource's tags with ``describe_tags(filters={"resource-id":
    [id]})``, which walks every tag of the region: DescribeVolumes of 2,750 tagged volumes takes
    about 9 s of server time, quadratic in the estate, the same for every client. Real EC2
    answers such a page in about a second. The lookup below returns exactly what the filter
    returned (an id holds no glob characters); ``--stock-moto`` turns it off."""
    from moto.ec2.models.core import TaggedEC2Resource
    from moto.ec2.utils import EC2_PREFIX_TO_RESOURCE, get_prefix

    def get_tags(self: Any) -> list[dict[str, str]]:
        rid = getattr(self, "id", None)
        tags = self.ec2_backend.tags.get(rid) if rid else None
        if not tags:
            return []
        rtype = EC2_PREFIX_TO_RESOURCE.get(get_prefix(rid), "")
        return [
            {"resource_id": rid, "key": k, "value": v, "resource_type": rtype}
            for k, v in tags.items()
        ]

    TaggedEC2Resource.get_tags = get_tags  # type: ignore[method-assign]


def serve(port: int, host: str = "127.0.0.1", *, stock_moto: bool = False) -> None:
    """moto's own server application, wrapped in the counter; serves until killed."""
    import logging

    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    if not stock_moto:
        index_ec2_tags()
    app = CallCounter(DomainDispatcherApplication(create_backend_app))
    server = make_server(host, port, app, threaded=True, request_handler=MotoRequestHandler)
    tags = "stock tag lookup" if stock_moto else "indexed EC2 tag lookup"
    print(f"moto ({tags}) with call counter on http://{host}:{port}", file=sys.stderr, flush=True)
    server.serve_forever()


def serve_command(port: int, *, stock_moto: bool = False) -> list[str]:
    """The command that runs the counting server (for a subprocess)."""
    cmd = [sys.executable, os.path.abspath(__file__), "serve", "--port", str(port)]
    return [*cmd, "--stock-moto"] if stock_moto else cmd


# -- seeding ---------------------------------------------------------------------------------------


@dataclass
class Scale:
    volumes: int = 5000
    instances: int = 500
    launch_templates: int = 200
    asgs: int = 100
    vpcs_per_region: int = 6
    subnets_per_vpc: int = 4


@dataclass
class Seeded:
    regions: list[str]
    scale: dict[str, int]
    created: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0


def _split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def _tags(kind: str, **tags: str) -> list[dict[str, Any]]:
    return [{"ResourceType": kind, "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]


class Progress:
    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.started = time.monotonic()

    def __call__(self, message: str) -> None:
        if not self.quiet:
            elapsed = time.monotonic() - self.started
            print(f"seed [{elapsed:6.1f}s] {message}", file=sys.stderr, flush=True)


FAKE = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing",
        "aws_session_token": "testing"}


def _clients(url: str, region: str, credentials: dict[str, str] | None = None
             ) -> tuple[Any, Any]:
    import boto3
    from botocore.config import Config

    cfg = Config(
        retries={"max_attempts": 3, "mode": "standard"},
        max_pool_connections=WORKERS * 2,
        read_timeout=300,
    )
    session = boto3.session.Session(**(credentials or FAKE), region_name=region)
    return (
        session.client("ec2", endpoint_url=url, config=cfg),
        session.client("autoscaling", endpoint_url=url, config=cfg),
    )


def _parallel(fn: Callable[[int], Any], count: int, progress: Progress, what: str) -> list[Any]:
    out: list[Any] = [None] * count
    step = max(count // 5, 1)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for i, value in enumerate(pool.map(fn, range(count))):
            out[i] = value
            if (i + 1) % step == 0 or i + 1 == count:
                progress(f"{what}: {i + 1}/{count}")
    return out


def _network(ec2: Any, region: str, scale: Scale) -> list[dict[str, Any]]:
    """VPCs, subnets, route tables, IGWs, S3 endpoints; returns the subnets with their facts."""
    subnets: list[dict[str, Any]] = []
    zones = [f"{region}a", f"{region}b"]
    for v in range(scale.vpcs_per_region):
        vpc = ec2.create_vpc(
            CidrBlock=f"10.{v}.0.0/16", TagSpecifications=_tags("vpc", Name=f"gpu-{v}")
        )["Vpc"]["VpcId"]
        igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
        ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
        tables = []
        for s in range(scale.subnets_per_vpc):
            public = s == 0
            sub = ec2.create_subnet(
                VpcId=vpc,
                CidrBlock=f"10.{v}.{s}.0/24",
                AvailabilityZone=zones[s % 2],
                TagSpecifications=_tags("subnet", Name=f"gpu-{v}-{s}"),
            )["Subnet"]["SubnetId"]
            rtb = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
            if public:
                ec2.create_route(RouteTableId=rtb, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
            ec2.associate_route_table(RouteTableId=rtb, SubnetId=sub)
            tables.append(rtb)
            subnets.append({"id": sub, "vpc": vpc, "public": public, "zone": zones[s % 2]})
        if v % 3 != 2:  # two VPCs in three have an S3 gateway endpoint, on half their tables
            params: dict[str, Any] = {
                "VpcId": vpc,
                "ServiceName": f"com.amazonaws.{region}.s3",
                "VpcEndpointType": "Gateway",
                "RouteTableIds": tables[: max(1, len(tables) // 2)],
            }
            if v % 3 == 0:
                params["PolicyDocument"] = json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Principal": "*",
                                "Action": ["s3:GetObject", "s3:PutObject"],
                                "Resource": [f"arn:aws:s3:::datasets-{v}/*"],
                            }
                        ],
                    }
                )
            ec2.create_vpc_endpoint(**params)
    return subnets


def _volumes(ec2: Any, region: str, count: int, progress: Progress) -> int:
    zones = [f"{region}a", f"{region}b"]

    def one(i: int) -> str:
        params: dict[str, Any] = {
            "Size": 50 + (i % 20) * 50,
            "AvailabilityZone": zones[i % 2],
            "VolumeType": "gp3" if i % 4 else "io2",
            "TagSpecifications": _tags("volume", Name=f"data-{i}", team=f"team-{i % 7}"),
        }
        if i % 3:
            params["Encrypted"] = True
        if params["VolumeType"] == "io2":
            params["Iops"] = 3000
        return str(ec2.create_volume(**params)["VolumeId"])

    return len(_parallel(one, count, progress, f"{region} volumes"))


def _instances(
    ec2: Any, region: str, count: int, subnets: list[dict[str, Any]], progress: Progress
) -> int:
    """RunInstances in batches of up to 25 (one type, one subnet per batch)."""
    batches: list[tuple[int, int]] = []
    start = 0
    while start < count:
        size = min(25, count - start)
        batches.append((start, size))
        start += size

    def one(b: int) -> int:
        first, size = batches[b]
        gpu = b % 5 != 4
        itype = GPU_TYPES[b % len(GPU_TYPES)][0] if gpu else CPU_TYPES[b % len(CPU_TYPES)]
        subnet = subnets[(b * 7) % len(subnets)]
        params: dict[str, Any] = {
            "ImageId": AMI,
            "MinCount": size,
            "MaxCount": size,
            "InstanceType": itype,
            "TagSpecifications": _tags(
                "instance", Name=f"{'gpu' if gpu else 'cpu'}-{first}", team=f"team-{b % 7}"
            ),
        }
        if subnet["public"] and b % 2:
            params["NetworkInterfaces"] = [
                {"DeviceIndex": 0, "SubnetId": subnet["id"], "AssociatePublicIpAddress": True}
            ]
        else:
            params["SubnetId"] = subnet["id"]
        return len(ec2.run_instances(**params)["Instances"])

    done = _parallel(one, len(batches), progress, f"{region} instance batches")
    return sum(done)


def _template_data(i: int) -> dict[str, Any]:
    itype, price = GPU_TYPES[i % len(GPU_TYPES)]
    data: dict[str, Any] = {
        "ImageId": AMI,
        "InstanceType": itype,
        "BlockDeviceMappings": [
            {
                "DeviceName": "/dev/sdf",
                "Ebs": {"VolumeSize": 200, "VolumeType": "gp3", "Encrypted": i % 4 != 0},
            }
        ],
    }
    if i % 2:  # spot, max price from 0.2x to 1.0x on-demand
        ratio = (0.2, 0.5, 0.65, 0.8, 1.0)[(i // 2) % 5]
        data["InstanceMarketOptions"] = {
            "MarketType": "spot",
            "SpotOptions": {"MaxPrice": f"{price * ratio:.4f}"},
        }
    if i % 10 == 3:
        data["NetworkInterfaces"] = [{"DeviceIndex": 0, "AssociatePublicIpAddress": True}]
    return data


def _launch_templates(ec2: Any, region: str, count: int, progress: Progress) -> list[str]:
    def one(i: int) -> str:
        lt = ec2.create_launch_template(
            LaunchTemplateName=f"gpu-{region}-{i}",
            LaunchTemplateData=_template_data(i),
            TagSpecifications=_tags("launch-template", team=f"team-{i % 7}"),
        )["LaunchTemplate"]["LaunchTemplateId"]
        if i % 5 == 0:  # a second version, so $Default and $Latest differ
            ec2.create_launch_template_version(
                LaunchTemplateId=lt, SourceVersion="1", LaunchTemplateData=_template_data(i + 1)
            )
        return str(lt)

    return _parallel(one, count, progress, f"{region} launch templates")


def _asgs(
    asg: Any,
    region: str,
    count: int,
    templates: list[str],
    subnets: list[dict[str, Any]],
    progress: Progress,
) -> int:
    private = [s for s in subnets if not s["public"]] or subnets
    # templates without spot market options (even index) suit mixed instances policies
    on_demand = [t for i, t in enumerate(templates) if i % 2 == 0] or templates

    def one(i: int) -> int:
        zones = ",".join(s["id"] for s in private[(i % len(private)) :][:2])
        params: dict[str, Any] = {
            "AutoScalingGroupName": f"gpu-{region}-{i}",
            "MinSize": 0,
            "MaxSize": 2 + i % 19,
            "DesiredCapacity": 0,
            "VPCZoneIdentifier": zones,
            "Tags": [
                {"Key": "team", "Value": f"team-{i % 7}", "PropagateAtLaunch": True},
            ],
        }
        if i % 2:
            overrides = [{"InstanceType": t} for t, _ in GPU_TYPES[: 1 + i % 3]]
            params["MixedInstancesPolicy"] = {
                "LaunchTemplate": {
                    "LaunchTemplateSpecification": {
                        "LaunchTemplateId": on_demand[i % len(on_demand)],
                        "Version": "$Latest" if i % 3 else "$Default",
                    },
                    "Overrides": overrides,
                },
                "InstancesDistribution": {
                    "OnDemandBaseCapacity": i % 2,
                    "OnDemandPercentageAboveBaseCapacity": (0, 30, 50, 100)[i % 4],
                    "SpotAllocationStrategy": ("lowest-price", "price-capacity-optimized")[
                        (i // 2) % 2
                    ],
                },
            }
        else:
            params["LaunchTemplate"] = {
                "LaunchTemplateId": templates[i % len(templates)],
                "Version": "$Default",
            }
        asg.create_auto_scaling_group(**params)
        return 1

    return sum(_parallel(one, count, progress, f"{region} auto scaling groups"))


def seed(
    url: str,
    scale: Scale | None = None,
    regions: Iterable[str] = REGIONS,
    *,
    quiet: bool = False,
    credentials: dict[str, str] | None = None,  # an account's (an assumed role's); default: moto's
) -> Seeded:
    scale = scale or Scale()
    regions = list(regions)
    progress = Progress(quiet)
    started = time.monotonic()
    out = Seeded(regions=regions, scale=asdict(scale))
    n = len(regions)
    split = {
        "volumes": _split(scale.volumes, n),
        "instances": _split(scale.instances, n),
        "launch_templates": _split(scale.launch_templates, n),
        "asgs": _split(scale.asgs, n),
    }
    for r, region in enumerate(regions):
        ec2, asg = _clients(url, region, credentials)
        if r % 2 == 0:
            ec2.enable_ebs_encryption_by_default()
        subnets = _network(ec2, region, scale)
        progress(f"{region} network: {scale.vpcs_per_region} VPCs, {len(subnets)} subnets")
        templates = _launch_templates(ec2, region, split["launch_templates"][r], progress)
        created = {
            "vpcs": scale.vpcs_per_region,
            "subnets": len(subnets),
            "launch_templates": len(templates),
            "asgs": _asgs(asg, region, split["asgs"][r], templates, subnets, progress),
            "instances": _instances(ec2, region, split["instances"][r], subnets, progress),
            "volumes": _volumes(ec2, region, split["volumes"][r], progress),
        }
        out.created[region] = created
    out.seconds = round(time.monotonic() - started, 1)
    progress(f"done in {out.seconds} s")
    return out


# -- command line ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_serve = sub.add_parser("serve", help="run moto with the call counter")
    p_serve.add_argument("--port", type=int, required=True)
    p_serve.add_argument(
        "--stock-moto", action="store_true", help="keep moto's O(n) per-resource tag lookup"
    )
    p_seed = sub.add_parser("seed", help="seed a running moto server")
    p_seed.add_argument("--endpoint-url", required=True)
    p_seed.add_argument("--regions", default=",".join(REGIONS))
    for name, default in asdict(Scale()).items():
        p_seed.add_argument(f"--{name.replace('_', '-')}", type=int, default=default)
    p_seed.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args.port, stock_moto=args.stock_moto)
        return 0
    scale = Scale(**{k: getattr(args, k) for k in asdict(Scale())})
    done = seed(args.endpoint_url, scale, args.regions.split(","), quiet=args.quiet)
    print(json.dumps(asdict(done), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
