// sessiond's page: the session's state from one WebSocket, drawn at most once per animation frame.
import { createBubbles, startBubbles } from './bubbles.js';
import { renderSelf, renderPeers, renderPairings, updateRtt, h } from './peers.js';
import { createGraph } from './graph.js';

// The token is in the cookie sessiond set when it served the page: keep it out of the address bar.
{
  const url = new URL(location.href);
  if (url.searchParams.has('token')) {
    url.searchParams.delete('token');
    history.replaceState(history.state, '', url.pathname + url.search + url.hash);
  }
}

const state = {
  connection: 'reconnecting', // or 'connected'
  connectedOnce: false,
  closes: 0, // connections closed or refused since the last snapshot
  self: null, // { peerID, name, fingerprint, admission }
  layout: [],
  bubbles: startBubbles(),
  counter: { local: 0, total: 0, peers: {} },
  peers: [],
  pairings: [],
  rtt: {}, // "peerID transport" -> [[unix ms, rttMicros]] over the last 60 s
};

let socket = null;
window.lansession = {
  state,
  get socket() { return socket; },
};
window.lansessionTimings = [];
window.lansessionSent = [];
window.lansessionArrivals = [];
window.lansessionInputLag = [];

// Rendering: parts marked dirty are drawn in the next animation frame, and nothing runs otherwise.
const dirty = new Set();
let frame = 0;
function invalidate(part) {
  dirty.add(part);
  if (!frame) frame = requestAnimationFrame(render);
}

function send(msg) {
  if (!socket || socket.readyState !== WebSocket.OPEN) return false;
  socket.send(JSON.stringify(msg));
  return true;
}

// A move, the one operation a drag sends every frame, goes as a 10-byte binary frame: code 1, the bubble, then x
// and y as big-endian float32 (docs/control-protocol.md, "The page").
function sendMove(view, x, y) {
  if (!socket || socket.readyState !== WebSocket.OPEN) return false;
  const move = new DataView(new ArrayBuffer(10));
  move.setUint8(0, 1);
  move.setUint8(1, view);
  move.setFloat32(2, x);
  move.setFloat32(6, y);
  socket.send(move.buffer);
  return true;
}

function nameOf(id) {
  if (!id) return '';
  if (state.self?.peerID === id) return state.self.name;
  const p = state.peers.find((x) => x.peerID === id);
  if (p?.name) return p.name;
  const c = state.counter.peers?.[id];
  if (c?.name) return c.name;
  const q = state.pairings.find((x) => x.peerID === id);
  return q?.name || id.slice(0, 6);
}

const app = {
  state,
  send,
  sendMove,
  invalidate,
  nameOf,
  selfID: () => state.self?.peerID ?? '',
  connected: () => state.connection === 'connected',
};
const bubbles = createBubbles(app);
const graph = createGraph(state);

function render() {
  frame = 0;
  const parts = new Set(dirty);
  dirty.clear();
  // Bubbles first: a move waiting for this frame goes out before anything else is drawn.
  if (parts.has('bubbles')) bubbles.render();
  if (parts.has('status')) renderStatus();
  if (parts.has('self')) renderSelf(state.self, state.layout);
  if (parts.has('counter')) renderCounter();
  if (parts.has('peers')) renderPeers(state.peers.filter((p) => p.peerID !== state.self?.peerID), graph.latest, state.layout);
  else if (parts.has('rtt')) updateRtt(graph.latest);
  if (parts.has('pairings')) renderPairings(state.pairings, send);
  if (parts.has('graph')) graph.render(nameOf);
}

function renderStatus() {
  const el = document.getElementById('status');
  const up = state.connection === 'connected';
  el.dataset.state = state.connection;
  el.querySelector('.status-text').textContent = up ? 'connected' : state.connectedOnce ? 'reconnecting…' : 'connecting…';
  const banner = document.getElementById('banner');
  banner.hidden = up || state.closes === 0;
  banner.textContent = state.connectedOnce
    ? 'Connection to sessiond lost — reconnecting…'
    : 'Cannot reach sessiond — reconnecting…';
  document.getElementById('increment').disabled = !up;
  document.body.dataset.connection = state.connection;
  const me = document.getElementById('me');
  me.textContent = state.self ? `${state.self.name} · ${state.self.fingerprint ?? ''}` : 'this device';
  document.title = state.self ? `${state.self.name} · LanSession` : 'LanSession';
}

function renderCounter() {
  const c = state.counter;
  const total = Number(c.total) || 0;
  const el = document.getElementById('counter-total');
  if (el.dataset.total !== String(total)) {
    el.dataset.total = String(total);
    el.textContent = `${total} times`;
    el.classList.remove('bump');
    void el.offsetWidth; // restart the animation
    el.classList.add('bump');
  }
  const rows = [h('li', { class: 'mine', 'data-peer': state.self?.peerID ?? '' },
    h('span', {}, state.self ? `${state.self.name} (this device)` : 'this device'), h('b', {}, String(c.local ?? 0)))];
  // Every member has a row, at 0 until it counts (devices only found, not admitted, have none).
  const counts = { ...(c.peers ?? {}) };
  for (const p of state.peers) {
    if (p.state !== 'discovered' && !counts[p.peerID]) counts[p.peerID] = { name: p.name, count: 0 };
  }
  const peers = Object.entries(counts).filter(([id]) => id !== state.self?.peerID).sort((a, b) => (a[1].name || nameOf(a[0])).localeCompare(b[1].name || nameOf(b[0])));
  for (const [id, p] of peers) {
    rows.push(h('li', { 'data-peer': id }, h('span', {}, p.name || nameOf(id)), h('b', {}, String(p.count ?? 0))));
  }
  document.getElementById('counter-peers').replaceChildren(...rows);
}

function toast(text, kind = 'error') {
  const box = document.getElementById('toasts');
  for (const old of [...box.children]) if (old.textContent === text) old.remove(); // the same news once
  const t = h('div', { class: `toast toast-${kind}`, role: 'status' }, text);
  t.addEventListener('animationend', (e) => { if (e.animationName === 'toast-life') t.remove(); });
  box.append(t);
  while (box.children.length > 3) box.firstChild.remove();
}

// Devices lost and found, as they happen: "joined" the first time this page sees a device connected, "is back" after
// it was connected and went (a device is first "found" by discovery, which is no return).
const everConnected = new Set();
function announce(before, after) {
  const was = new Map(before.map((p) => [p.peerID, p.state]));
  for (const p of before) if (p.state === 'connected') everConnected.add(p.peerID);
  for (const p of after) {
    const old = was.get(p.peerID);
    const name = p.name || nameOf(p.peerID);
    if (p.state === old) continue;
    if (p.state === 'lost') toast(`${name} was lost`, 'bad');
    else if (p.state === 'reconnecting' && old === 'connected') toast(`${name} is reconnecting…`, 'warn');
    else if (p.state === 'connected') toast(everConnected.has(p.peerID) ? `${name} is back` : `${name} joined`, 'ok');
    if (p.state === 'connected') everConnected.add(p.peerID);
  }
}

const invalidateAll = () => ['status', 'self', 'bubbles', 'counter', 'peers', 'pairings', 'graph'].forEach(invalidate);

function handle(m) {
  switch (m.type) {
    case 'snapshot':
      state.self = m.self ?? null;
      state.layout = m.layout ?? [];
      state.counter = m.counter ?? { local: 0, total: 0, peers: {} };
      state.peers = m.peers ?? [];
      state.pairings = m.pairings ?? [];
      bubbles.replace(m.bubbles);
      graph.clear();
      state.connection = 'connected';
      state.connectedOnce = true;
      state.closes = 0;
      backoff = 250;
      invalidateAll();
      break;
    case 'bubble':
      bubbles.apply(m);
      break;
    case 'counter':
      state.counter = { local: m.local, total: m.total, peers: m.peers ?? {} };
      invalidate('counter');
      break;
    case 'peers':
      announce(state.peers, m.peers ?? []);
      state.peers = m.peers ?? [];
      invalidate('peers');
      invalidate('counter');
      invalidate('bubbles');
      break;
    case 'pairings':
      state.pairings = m.pairings ?? [];
      invalidate('pairings');
      break;
    case 'layout':
      state.layout = m.layout ?? [];
      invalidate('peers');
      invalidate('self');
      break;
    case 'rtt':
      graph.add(m);
      invalidate('graph');
      invalidate('rtt');
      break;
    case 'error':
      bubbles.refused();
      toast(m.message || 'refused');
      break;
    default:
      break;
  }
}

// The connection: retried forever, 0.25 s doubling to 4 s; each new connection starts with a snapshot.
let backoff = 250;
function connect() {
  const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/ws`);
  socket = ws;
  ws.onmessage = (e) => {
    if (socket !== ws) return;
    let m;
    try { m = JSON.parse(e.data); } catch { return; }
    if (m && typeof m === 'object') handle(m);
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    socket = null;
    state.connection = 'reconnecting';
    state.closes += 1;
    bubbles.disconnected();
    invalidate('status');
    setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 4000);
  };
}

document.getElementById('increment').addEventListener('click', () => send({ op: 'increment' }));
invalidateAll();
connect();
