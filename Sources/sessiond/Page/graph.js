// Round-trip times per peer link over the last 60 s: an SVG line graph, a legend and p50/p99.
import { h, ms, transportLabel } from './peers.js';

const WINDOW = 60_000;
const PAD = { l: 56, r: 10, t: 10, b: 22 };
// The same colours as page.css .colour-0 … .colour-7 (the legend's swatches use those classes).
const COLOURS = ['#3b82f6', '#f97316', '#10b981', '#a855f7', '#ef4444', '#eab308', '#06b6d4', '#ec4899'];
const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text != null) el.textContent = text;
  return el;
}

// Nearest-rank percentile of sorted values.
function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function niceMax(v) {
  if (!(v > 0)) return 1;
  const e = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 4, 8, 10]) if (m * e >= v) return m * e;
  return 10 * e;
}

export function createGraph(state) {
  const box = document.getElementById('graph');
  const legend = document.getElementById('legend');
  const tbody = document.querySelector('#rtt-table tbody');
  // "peerID transport" -> { peerID, transport, colour, points: [[at ms, micros]] }; the points also in state.rtt
  const series = new Map();
  const latest = new Map(); // "peerID transport" -> latest micros
  let now = 0;
  let colourNext = 0;

  return {
    latest,
    clear() {
      state.rtt = {};
      series.clear();
      latest.clear();
      now = 0;
    },
    add(m) {
      const at = Number(m.at) || Date.now();
      now = Math.max(now, at);
      for (const s of m.samples ?? []) {
        if (!s.peerID || !Number.isFinite(s.rttMicros)) continue;
        const key = `${s.peerID} ${s.transport}`;
        let line = series.get(key);
        if (!line) {
          const index = colourNext++ % COLOURS.length;
          line = { peerID: s.peerID, transport: s.transport, colour: COLOURS[index], index, points: [] };
          series.set(key, line);
          state.rtt[key] = line.points;
        }
        line.points.push([at, s.rttMicros]);
        latest.set(key, s.rttMicros);
      }
      for (const [key, line] of series) {
        let drop = 0;
        while (drop < line.points.length && line.points[drop][0] < now - WINDOW) drop++;
        if (drop) line.points.splice(0, drop);
        if (!line.points.length) {
          delete state.rtt[key];
          series.delete(key);
          latest.delete(key);
        }
      }
    },
    render(nameOf) {
      // Drawn at the box's own width, so that its text stays readable on a phone.
      const W = Math.max(260, Math.round(box.clientWidth) || 600);
      const H = Math.round(Math.min(220, Math.max(150, W / 3)));
      const lines = [...series.values()];
      const max = niceMax(Math.max(0, ...lines.flatMap((l) => l.points.map((p) => p[1]))) / 1000);
      const x = (at) => PAD.l + ((at - (now - WINDOW)) / WINDOW) * (W - PAD.l - PAD.r);
      const y = (micros) => H - PAD.b - (micros / 1000 / max) * (H - PAD.t - PAD.b);
      const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Round-trip time per link over the last minute' });
      for (let i = 0; i <= 4; i++) {
        const v = (max * i) / 4;
        const gy = y(v * 1000);
        root.append(svg('line', { class: 'grid', x1: PAD.l, x2: W - PAD.r, y1: gy, y2: gy }));
        root.append(svg('text', { class: 'axis', x: PAD.l - 6, y: gy + 4, 'text-anchor': 'end' }, `${+v.toFixed(2)} ms`));
      }
      for (const s of [60, 45, 30, 15, 0]) {
        root.append(svg('text', { class: 'axis', x: x(now - s * 1000), y: H - 6, 'text-anchor': s === 60 ? 'start' : s === 0 ? 'end' : 'middle' }, s ? `-${s}s` : 'now'));
      }
      if (!lines.length) {
        root.append(svg('text', { class: 'axis empty', x: W / 2, y: H / 2, 'text-anchor': 'middle' }, 'No samples yet'));
      }
      for (const l of lines) {
        const pts = l.points.map(([at, us]) => `${x(at).toFixed(1)},${y(us).toFixed(1)}`).join(' ');
        root.append(svg('polyline', { class: 'series', points: pts, stroke: l.colour, 'data-link': `${l.peerID} ${l.transport}` }));
        const [lat, lus] = l.points[l.points.length - 1];
        root.append(svg('circle', { cx: x(lat), cy: y(lus), r: 3, fill: l.colour }));
      }
      box.replaceChildren(root);

      const label = (l) => `${nameOf(l.peerID)} · ${transportLabel(l.transport)}`;
      legend.replaceChildren(...lines.map((l) =>
        h('span', { class: 'key' }, h('i', { class: `colour-${l.index}` }), label(l))));
      tbody.replaceChildren(...lines.map((l) => {
        const sorted = l.points.map((p) => p[1]).sort((a, b) => a - b);
        return h('tr', { 'data-link': `${l.peerID} ${l.transport}` },
          h('td', {}, h('i', { class: `swatch colour-${l.index}` }), label(l)),
          h('td', {}, ms(percentile(sorted, 50))),
          h('td', {}, ms(percentile(sorted, 99))),
          h('td', {}, String(sorted.length)));
      }));
    },
  };
}
