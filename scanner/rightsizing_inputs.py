"""What `scan` and `audit` do for the right-sizing policies (RS-*) before evaluating.

`scan` without ``--utilization`` leaves RS-* out (unless named with ``--policy``: they then give
no result, there being nothing to judge); with it, the utilization files are read and attached
beside the IaC resources (``scanner.telemetry.history``, imported only then). `audit` sets the
CloudWatch window (``--lookback-days``, else the config's RS lookback_days, else 14).
"""

from __future__ import annotations

from collections.abc import Sequence

from scanner.model import SourceResult
from scanner.runner import ReportOptions

RS_POLICIES = ("RS-001", "RS-002", "RS-003")
DEFAULT_LOOKBACK_DAYS = 14.0


def configured_lookback(opts: ReportOptions) -> float:
    """The config's ``lookback_days`` of RS-003 (the policy that judges coverage), else 14."""
    from scanner.config import ConfigError, load_config

    try:
        config = load_config(opts.config_path)
    except ConfigError:
        return DEFAULT_LOOKBACK_DAYS  # reported when the run loads it again
    value = config.params("RS-003", {"lookback_days": DEFAULT_LOOKBACK_DAYS})["lookback_days"]
    return float(value) if isinstance(value, int | float) and value > 0 else \
        DEFAULT_LOOKBACK_DAYS


def with_utilization(result: SourceResult, opts: ReportOptions, specs: Sequence[str],
                     prometheus_url: str | None = None) -> None:
    if not specs and not prometheus_url:
        named = set(opts.policy_ids)
        opts.skip_ids = tuple(dict.fromkeys(
            [*opts.skip_ids, *(p for p in RS_POLICIES if p not in named)]))
        return
    from scanner.telemetry.history import attach, load_utilization

    attach(result, load_utilization(specs, configured_lookback(opts), prometheus_url))
