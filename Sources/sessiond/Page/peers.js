// This device, the peers with their links, and pairing requests.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k.startsWith('data-')) el.dataset[k.slice(5).replace(/-(\w)/g, (_, c) => c.toUpperCase())] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) if (c != null && c !== false) el.append(c);
  return el;
}

// A transport's name as people say it.
const TRANSPORTS = { lan: 'LAN', rfcomm: 'Bluetooth', le: 'Bluetooth LE' };
export const transportLabel = (transport) => TRANSPORTS[transport] ?? transport;

export const ms = (micros) => (Number.isFinite(micros) ? `${(micros / 1000).toFixed(1)} ms` : '—');

const TRUST = {
  paired: 'paired with this device',
  introduced: 'admitted on a paired member’s word',
  secret: 'knows the session secret',
  open: 'open session: anyone may join',
};
const STATE_TEXT = { connected: 'connected', connecting: 'connecting', reconnecting: 'reconnecting', lost: 'lost', discovered: 'found' };

const player = (layout, id) => {
  const entry = (layout ?? []).find((l) => l.peerID === id);
  return entry && Number.isInteger(entry.playerIndex) ? h('span', { class: 'you' }, `player ${entry.playerIndex + 1}`) : null;
};

export function renderSelf(self, layout) {
  const box = document.getElementById('self');
  if (!self) {
    box.replaceChildren(h('p', { class: 'muted' }, 'Waiting for sessiond…'));
    return;
  }
  box.replaceChildren(
    h('div', { class: 'peer self-peer', 'data-peer': self.peerID ?? '' },
      h('div', { class: 'peer-head' },
        h('span', { class: 'avatar', 'aria-hidden': 'true' }, initial(self.name)),
        h('div', { class: 'peer-id' },
          h('strong', {}, self.name ?? '?'), h('span', { class: 'you' }, 'this device'), player(layout, self.peerID),
          h('code', { class: 'fp', title: 'fingerprint: compare it with what the other device shows' }, self.fingerprint ?? '')),
        h('span', { class: 'badge admission', title: 'who may join this device' }, `admits: ${self.admission ?? '?'}`))));
}

const initial = (name) => (name ?? '?').trim().charAt(0).toUpperCase() || '?';

const seen = new Map(); // peerID -> state at the last render, to mark changes

// rtt: the latest sample per "peerID transport", fresher than the peers list between its updates.
export function renderPeers(peers, rtt, layout) {
  const box = document.getElementById('peers');
  document.getElementById('peers-count').textContent = String(peers.filter((p) => p.state === 'connected').length);
  if (!peers.length) {
    box.replaceChildren(h('p', { class: 'muted empty' }, 'No other device yet. Start sessiond on a laptop nearby.'));
    return;
  }
  const sorted = [...peers].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || a.peerID.localeCompare(b.peerID));
  box.replaceChildren(...sorted.map((p) => {
    const state = p.state ?? 'connecting';
    const changed = seen.has(p.peerID) && seen.get(p.peerID) !== state;
    seen.set(p.peerID, state);
    const links = (p.links ?? []).map((l) => {
      const sample = rtt.get(`${p.peerID} ${l.transport}`);
      const micros = l.state === 'active' && sample != null ? sample : l.rttMicros;
      return h('li', { class: `link link-${l.state}`, 'data-link': `${p.peerID} ${l.transport}`, 'data-transport': l.transport, 'data-link-state': l.state },
        h('span', { class: 'transport' }, transportLabel(l.transport)),
        h('span', { class: 'link-state' }, l.state),
        h('span', { class: 'addr' }, l.address ?? ''),
        h('span', { class: 'rtt' }, ms(micros)));
    });
    return h('article', { class: changed ? 'peer flash' : 'peer', 'data-peer': p.peerID, 'data-state': state },
      h('div', { class: 'peer-head' },
        h('span', { class: 'avatar', 'aria-hidden': 'true' }, initial(p.name)),
        h('div', { class: 'peer-id' },
          h('strong', {}, p.name || p.peerID.slice(0, 8)),
          p.trust && h('span', { class: `trust trust-${p.trust}`, title: TRUST[p.trust] ?? '' }, p.trust),
          player(layout, p.peerID),
          p.fingerprint && h('code', { class: 'fp' }, p.fingerprint)),
        h('span', { class: `badge state state-${state}` }, STATE_TEXT[state] ?? state)),
      links.length ? h('ul', { class: 'links' }, links) : h('p', { class: 'muted small' }, 'no link'));
  }));
}

// Between two peers lists: the active links' latest round trips, in place.
export function updateRtt(rtt) {
  for (const li of document.querySelectorAll('#peers .link-active')) {
    const micros = rtt.get(li.dataset.link);
    if (micros != null) li.querySelector('.rtt').textContent = ms(micros);
  }
}

export function renderPairings(pairings, send) {
  const card = document.getElementById('pairings-card');
  const box = document.getElementById('pairings');
  card.hidden = pairings.length === 0;
  box.replaceChildren(...pairings.map((q) => {
    const code = String(q.code ?? '');
    const status = q.confirmedHere
      ? (q.confirmedThere ? 'Confirmed on both: pairing…' : `Confirmed here; waiting for ${q.name}…`)
      : (q.confirmedThere ? `${q.name} confirmed; your turn.` : (q.requestedHere ? 'You asked to pair.' : `${q.name} asks to pair.`));
    return h('article', { class: 'pairing', 'data-peer': q.peerID },
      h('div', { class: 'pairing-who' }, h('strong', {}, q.name ?? q.peerID), h('code', { class: 'fp' }, q.fingerprint ?? '')),
      h('div', { class: 'code', 'aria-label': `code ${code.split('').join(' ')}` },
        h('span', {}, code.slice(0, 3)), h('span', {}, code.slice(3))),
      h('p', { class: 'pairing-status' }, status),
      h('div', { class: 'actions' },
        h('button', {
          type: 'button', class: 'primary', disabled: q.confirmedHere,
          onclick: () => send({ op: 'pair', peer: q.peerID, code }),
        }, 'Confirm'),
        h('button', { type: 'button', class: 'danger', onclick: () => send({ op: 'reject', peer: q.peerID }) }, 'Reject')));
  }));
}
