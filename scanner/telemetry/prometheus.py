"""DCGM exporter metrics from a Prometheus server's HTTP API (``scan --prometheus-url URL``).

- Which fields exist: ``/api/v1/label/__name__/values`` (matching ``DCGM_FI_*``, in the window).
- Which hosts: ``/api/v1/label/<label>/values`` for each host label, most precise first
  (``Hostname``, then ``hostname`` where ``Hostname`` is absent, then ``instance``): the host of
  a series is the one ``scanner.telemetry.dcgm`` would read from a file.
- The points: one ``/api/v1/query_range`` per field and batch of ``HOSTS_PER_QUERY`` hosts (the
  response stays small whatever the fleet), ``step`` one hour: ``avg_over_time`` and
  ``max_over_time`` over the hour for utilization fields, ``max_over_time`` for memory. Each
  hourly point is folded like a file's samples (MIG instances, time-sliced consumers, profiling
  fields: ``scanner.telemetry.dcgm.Reader``).
- Window: the last ``lookback_days`` before now, or before ``GPUAUDIT_TELEMETRY_END``.
- Auth: ``GPUAUDIT_PROMETHEUS_TOKEN`` is sent as ``Authorization: Bearer`` (never shown; a URL's
  user:password is not shown either).
- Keys: each host, and each value of a label Prometheus relabelling commonly adds from EC2 or EKS
  (``GROUP_LABELS``: the instance's Name tag, its id, its Auto Scaling group or node group),
  holding the hosts whose series carry it; matched like history keys.

Budgets: ``MAX_RESPONSE_BYTES`` per answer (read no further), ``MAX_QUERIES`` per run, ``TIMEOUT``
seconds per request, and the DCGM reader's series/GPU/point budgets.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from scanner.telemetry.aggregate import HOUR, GpuHours, Window
from scanner.telemetry.dcgm import (
    FIELDS,
    HOST_LABELS,
    MEMORY,
    DcgmError,
    Reader,
    Sample,
    check_value,
    host_of,
)

TOKEN_ENV = "GPUAUDIT_PROMETHEUS_TOKEN"
HOSTS_PER_QUERY = 50
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
MAX_QUERIES = 5_000
TIMEOUT = 60.0
GROUP_LABELS = ("Name", "name", "instance_id", "InstanceId", "autoscaling_group",
                "aws_autoscaling_groupName", "nodegroup", "eks_amazonaws_com_nodegroup")


class PrometheusError(Exception):
    """The server could not be read; ``reason`` says why (no token, no password)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def shown_url(url: str) -> str:
    """The URL without a user:password and without a query string."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass
class Client:
    url: str
    token: str | None = None
    queries: int = 0
    timeout: float = TIMEOUT

    def __post_init__(self) -> None:
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PrometheusError("not an http(s) URL")
        self.auth: str | None = None
        if self.token:
            self.auth = f"Bearer {self.token}"
        elif parts.username is not None:  # http://user:password@host: basic auth
            import base64

            pair = f"{urllib.parse.unquote(parts.username)}:" \
                   f"{urllib.parse.unquote(parts.password or '')}"
            self.auth = "Basic " + base64.b64encode(pair.encode()).decode()
        netloc = parts.netloc.rsplit("@", 1)[-1]
        self.base = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"),
                                             "", ""))
        self.opener = urllib.request.build_opener(_NoRedirect)

    def get(self, path: str, params: list[tuple[str, str]], *, post: bool = False) -> Any:
        """The ``data`` of one API answer (``post``: form-encoded, for long queries)."""
        self.queries += 1
        if self.queries > MAX_QUERIES:
            raise PrometheusError(f"more than {MAX_QUERIES:,} queries: over the budget of one "
                                  "run")
        query = urllib.parse.urlencode(params)
        if post:
            request = urllib.request.Request(self.base + path, data=query.encode(),
                                             method="POST")
            request.add_header("Content-Type", "application/x-www-form-urlencoded")
        else:
            request = urllib.request.Request(f"{self.base}{path}?{query}", method="GET")
        request.add_header("Accept", "application/json")
        if self.auth:
            request.add_header("Authorization", self.auth)
        try:
            with self.opener.open(request, timeout=self.timeout) as answer:
                data = answer.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            detail = _error_of(exc.read(4096))
            raise PrometheusError(f"{path}: HTTP {exc.code} {exc.reason}{detail}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise PrometheusError(f"{path}: cannot connect: {reason}") from None
        if len(data) > MAX_RESPONSE_BYTES:
            raise PrometheusError(f"{path}: an answer larger than {MAX_RESPONSE_BYTES:,} bytes "
                                  "(fewer hosts per query are needed)")
        try:
            doc = json.loads(data)
        except ValueError:
            raise PrometheusError(f"{path}: the answer is not JSON (not a Prometheus "
                                  "API?)") from None
        if not isinstance(doc, dict) or doc.get("status") != "success":
            raise PrometheusError(f"{path}: {_error_of(data) or 'not a success'}")
        return doc.get("data")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an error: the Authorization header is never sent to another address."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> None:
        raise urllib.error.HTTPError(req.full_url, code, f"{msg} (a redirect: not followed)",
                                     headers, fp)


def _error_of(data: bytes) -> str:
    try:
        doc = json.loads(data)
    except ValueError:
        return ""
    if isinstance(doc, dict) and doc.get("error"):
        return f": {doc.get('errorType', 'error')}: {str(doc['error'])[:300]}"
    return ""


def _quote(text: str) -> str:
    """A PromQL string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _alternatives(values: list[str]) -> str:
    """A regex (RE2, anchored by PromQL) matching exactly these values."""
    return "|".join(re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", v) for v in values)


def _absent(labels: tuple[str, ...]) -> str:
    return "".join(f",{label}=\"\"" for label in labels)


@dataclass
class Fetched:
    members: dict[str, dict[str, GpuHours]]
    groups: dict[str, set[str]] = field(default_factory=dict)  # key -> hosts
    queries: int = 0


def read_prometheus(client: Client, window: Window) -> Fetched:
    """The hourly DCGM points of every host in the window; PrometheusError when a call failed,
    DcgmError when an answer is not DCGM data."""
    span = [("start", str(window.start)), ("end", str(window.end))]
    names = client.get("/api/v1/label/__name__/values",
                       [("match[]", '{__name__=~"DCGM_FI_.*"}'), *span])
    wanted = sorted(n for n in (names or []) if n in FIELDS)
    if not wanted:
        raise PrometheusError("no DCGM exporter series (DCGM_FI_DEV_GPU_UTIL, ...) in the "
                              "lookback window")
    selector_names = "|".join(wanted)
    hosts: list[tuple[int, str]] = []
    for rank, label in enumerate(HOST_LABELS):
        match = f'{{__name__=~"{selector_names}"{_absent(HOST_LABELS[:rank])},{label}!=""}}'
        values = client.get(f"/api/v1/label/{label}/values", [("match[]", match), *span])
        hosts += [(rank, str(v)) for v in values or []]
    mean_reader, top_reader = Reader(), Reader()
    groups: dict[str, set[str]] = {}
    # a point every hour, 1 ms before the hour ends: its [1h] range holds the samples of that
    # hour, from its first millisecond (a sample on the hour belongs to the hour it starts)
    points = [("start", f"{window.start + HOUR - 0.001:.3f}"),
              ("end", f"{window.end - 0.001:.3f}"), ("step", str(HOUR))]
    for rank, label in enumerate(HOST_LABELS):
        ranked = sorted(v for r, v in hosts if r == rank)
        for i in range(0, len(ranked), HOSTS_PER_QUERY):
            batch = ranked[i:i + HOSTS_PER_QUERY]
            where = f"{_absent(HOST_LABELS[:rank])},{label}=~{_quote(_alternatives(batch))}"
            for name in wanted:
                selector = f"{name}{{{where[1:]}}}"
                kinds = (("max", top_reader),) if name in MEMORY else (
                    ("avg", mean_reader), ("max", top_reader))
                for fn, reader in kinds:
                    data = client.get("/api/v1/query_range",
                                      [("query", f"{fn}_over_time({selector}[1h])"), *points],
                                      post=True)
                    _fold(name, data, reader, groups)
    members = _combined(mean_reader, top_reader)
    return Fetched(members, groups, client.queries)


def _fold(name: str, data: Any, reader: Reader, groups: dict[str, set[str]]) -> None:
    if not isinstance(data, dict) or data.get("resultType") != "matrix":
        raise PrometheusError("query_range: not a matrix answer")
    for series in data.get("result") or []:
        labels = {str(k): str(v) for k, v in (series.get("metric") or {}).items()}
        if "gpu" not in labels:
            raise DcgmError(f"{name} series without a gpu label")
        host = host_of(labels)
        for label in GROUP_LABELS:
            if labels.get(label):
                groups.setdefault(labels[label], set()).add(host)
        for stamp, text in series.get("values") or []:
            value = float(text)
            check_value(name, value)
            # the point at t covers the hour before it
            reader.add(Sample(name, labels, value, float(stamp) - HOUR / 2))


def _combined(mean_reader: Reader, top_reader: Reader) -> dict[str, dict[str, GpuHours]]:
    """Hourly means from the averages, hourly maxima (and peak memory) from the maxima."""
    means = mean_reader.result() if mean_reader.devices else {}
    tops = top_reader.result() if top_reader.devices else {}
    out: dict[str, dict[str, GpuHours]] = {}
    for host in sorted(set(means) | set(tops)):
        for index in sorted(set(means.get(host, {})) | set(tops.get(host, {}))):
            mean = means.get(host, {}).get(index)
            top = tops.get(host, {}).get(index)
            gpu = mean or top
            assert gpu is not None
            if mean is not None and top is not None:
                gpu.util_max = {h: max(v, mean.util_mean.get(h, v))
                                for h, v in top.util_mean.items() if h in mean.util_mean}
                gpu.mem_used_max = top.mem_used_max
                gpu.mem_total = top.mem_total
                gpu.name = gpu.name or top.name
                for label, series in top.extra.items():
                    if label in gpu.extra:
                        gpu.extra[label].util_max = dict(series.util_mean)
            out.setdefault(host, {})[index] = gpu
    return out


def client_from_env(url: str) -> Client:
    return Client(url, os.environ.get(TOKEN_ENV) or None)
