#!/usr/bin/env bash
# Install Debian's Prometheus server and promtool for the Prometheus reader's tests
# (tests/test_telemetry_prometheus.py backfills a TSDB with promtool and queries a real server).
# Idempotent: does nothing when /usr/bin/prometheus and /usr/bin/promtool are already there.
set -euo pipefail

if [ -x /usr/bin/prometheus ] && [ -x /usr/bin/promtool ]; then
    echo "prometheus already installed: $(/usr/bin/prometheus --version 2>&1 | head -n 1)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# the package's service is not wanted (the tests start their own server on a free port)
$SUDO apt-get install -y --no-install-recommends prometheus
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
    $SUDO systemctl disable --now prometheus || true
fi
/usr/bin/prometheus --version 2>&1 | head -n 1
/usr/bin/promtool --version 2>&1 | head -n 1
