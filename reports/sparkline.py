"""An inline SVG sparkline of utilization (0-100 %), as a string: no script, no external
resource, nothing but numbers inside (the label is escaped), so the report's content security
policy stays as strict as it is. Missing points break the line."""

from __future__ import annotations

import html
from collections.abc import Sequence

WIDTH, HEIGHT = 168, 32


def _segments(values: Sequence[float | None], width: int, height: int,
              top: float) -> list[str]:
    n = len(values)
    step = width / max(n - 1, 1)
    out: list[str] = []
    current: list[str] = []
    for i, v in enumerate(values):
        if v is None or v != v:
            if current:
                out.append(" ".join(current))
                current = []
            continue
        clamped = min(max(float(v), 0.0), top)
        y = height - 1 - (height - 2) * clamped / top
        current.append(f"{i * step:.1f},{y:.1f}")
    if current:
        out.append(" ".join(current))
    return out


def sparkline(maxima: Sequence[float | None], p95: Sequence[float | None] = (), *,
              label: str = "GPU utilization", width: int = WIDTH, height: int = HEIGHT,
              top: float = 100.0) -> str:
    """Two lines over 0-``top``: the busiest GPU's maximum (solid) and the p95 (dashed)."""
    title = html.escape(label, quote=True)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="spark" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{title}"><title>{title}</title>',
             f'<rect x="0" y="0" width="{width}" height="{height}" fill="#f6f8fa"/>']
    for points in _segments(p95, width, height, top):
        parts.append(f'<polyline points="{points}" fill="none" stroke="#8c959f" '
                     'stroke-width="1" stroke-dasharray="2 2"/>')
    for points in _segments(maxima, width, height, top):
        if " " not in points:  # a single point: a dot
            x, y = points.split(",")
            parts.append(f'<circle cx="{x}" cy="{y}" r="1.5" fill="#0969da"/>')
        else:
            parts.append(f'<polyline points="{points}" fill="none" stroke="#0969da" '
                         'stroke-width="1.5"/>')
    parts.append("</svg>")
    return "".join(parts)
