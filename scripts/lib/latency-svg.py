#!/usr/bin/env python3
"""Draws latency distributions as a standalone SVG (no fonts or anything else fetched).

    latency-svg.py TITLE OUT.svg [--table] < rows.jsonl

Each input line is a JSON object with a row name ("row") and its percentiles in microseconds: "p50", "p90", "p99"
(or "p50_us", "p90_us", "p99_us"; "max"/"max_us" when there is one). Lines that are not such objects are skipped.
Each row is drawn on one logarithmic axis: a bar from p50 to p99, a dot at p50, a tick at p90, a ring at p99, and
the figures beside it. With --table it also prints the rows as a table on stdout. Used by `scripts/bench net --svg`
and `scripts/compare-transports --svg`.
"""
import json
import math
import sys
from html import escape


def value(row, name):
    for key in (name, name + "_us"):
        if isinstance(row.get(key), (int, float)):
            return float(row[key])
    return None


def label(us):
    return f"{us / 1000:g} ms" if us >= 1000 else f"{us:g} µs"


def main():
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "--table"):
        print("usage: " + __doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        sys.exit(2)
    title, out, table = sys.argv[1], sys.argv[2], len(sys.argv) == 4
    rows = []
    for line in sys.stdin:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and row.get("row") and value(row, "p50") is not None and value(row, "p99"):
            rows.append(row)
    if not rows:
        print("latency-svg: no rows with p50 and p99", file=sys.stderr)
        sys.exit(1)
    low = min(value(r, "p50") for r in rows)
    high = max(value(r, "max") or value(r, "p99") for r in rows)
    ticks = [m * 10 ** e for e in range(-1, 8) for m in (1, 2, 5)]
    first = max(t for t in ticks if t <= low)
    last = min(t for t in ticks if t >= high)
    left, right, top, height = 230, 40, 64, 34
    width = 920
    plot = width - left - right

    def x(us):
        return left + plot * (math.log10(us) - math.log10(first)) / (math.log10(last) - math.log10(first))

    total = top + height * len(rows) + 56
    out_lines = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total}" viewBox="0 0 {width} {total}" '
        'font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif" font-size="13">',
        '<rect width="100%" height="100%" fill="#fbfbfd"/>',
        f'<text x="20" y="30" font-size="17" font-weight="600" fill="#1d1d28">{escape(title)}</text>',
        f'<text x="20" y="50" fill="#6b6b7b">round trips, logarithmic; bar p50 to p99, dot p50, tick p90, ring p99</text>',
    ]
    for tick in (t for t in ticks if first <= t <= last):
        tx = x(tick)
        out_lines.append(f'<line x1="{tx:.1f}" y1="{top - 6}" x2="{tx:.1f}" y2="{top + height * len(rows)}" '
                         'stroke="#e3e3ea"/>')
        out_lines.append(f'<text x="{tx:.1f}" y="{top + height * len(rows) + 18}" text-anchor="middle" '
                         f'fill="#6b6b7b" font-size="11">{label(tick)}</text>')
    palette = ["#4f46e5", "#0d9488", "#e11d48", "#d97706", "#7c3aed", "#2563eb", "#16a34a", "#db2777"]
    for index, row in enumerate(rows):
        y = top + height * index + height / 2
        colour = palette[index % len(palette)]
        p50, p90, p99 = value(row, "p50"), value(row, "p90"), value(row, "p99")
        out_lines.append(f'<text x="20" y="{y + 4:.1f}" fill="#1d1d28">{escape(str(row["row"]))}</text>')
        out_lines.append(f'<line x1="{x(p50):.1f}" y1="{y:.1f}" x2="{x(p99):.1f}" y2="{y:.1f}" stroke="{colour}" '
                         'stroke-width="6" stroke-linecap="round" opacity="0.35"/>')
        if p90:
            out_lines.append(f'<line x1="{x(p90):.1f}" y1="{y - 8:.1f}" x2="{x(p90):.1f}" y2="{y + 8:.1f}" '
                             f'stroke="{colour}" stroke-width="2"/>')
        out_lines.append(f'<circle cx="{x(p99):.1f}" cy="{y:.1f}" r="5" fill="#fbfbfd" stroke="{colour}" '
                         'stroke-width="2"/>')
        out_lines.append(f'<circle cx="{x(p50):.1f}" cy="{y:.1f}" r="5" fill="{colour}"/>')
        figures = f"p50 {label(round(p50, 1))} · p99 {label(round(p99, 1))}"
        out_lines.append(f'<text x="{min(x(p99) + 12, width - 170):.1f}" y="{y - 9:.1f}" fill="#6b6b7b" '
                         f'font-size="11">{escape(figures)}</text>')
    out_lines.append("</svg>")
    with open(out, "w") as handle:
        handle.write("\n".join(out_lines) + "\n")
    if table:
        print(f"{'ROW':28} {'P50 us':>9} {'P90 us':>9} {'P99 us':>9}")
        for row in rows:
            p90 = value(row, "p90")
            print(f"{row['row']:28} {value(row, 'p50'):9.1f} {p90 if p90 is not None else float('nan'):9.1f} "
                  f"{value(row, 'p99'):9.1f}")


if __name__ == "__main__":
    main()
