// The bubble board: three bubbles on a 320 × 480 point board, dragged with any pointer.
// Positions are the bubbles' centres in board points, exactly as the session holds them.

export const BOARD_W = 320;
export const BOARD_H = 480;
export const VIEWS = [0, 1, 2];
// Where the bubbles start (BubbleBoard.startingPlaces): a column down the middle, each one whole inside the board.
const START = [[160, 80], [160, 200], [160, 360]];
export const startBubbles = () => VIEWS.map((view) => ({ view, holder: '', x: START[view][0], y: START[view][1] }));

const side = (view) => 50 * (view + 1);
const KEEP = 2000;
// Moves travel as 32-bit floats between devices: quarter points survive that exactly.
const quantize = (n) => Math.round(n * 4) / 4;
const fmt = (n) => String(Math.round(n * 100) / 100);
const clock = () => performance.timeOrigin + performance.now();
// A move goes out as soon as the pointer reports it, at most one every 4 ms (250 Hz, for mice that report at 1000 Hz);
// a later position that comes sooner goes out when the 4 ms are over.
const MOVE_GAP_MS = 4;
// Where the browser has it, pointerrawupdate reports the pointer as it moves, not at the start of the next frame.
const MOVE_EVENT = 'onpointerrawupdate' in window ? 'pointerrawupdate' : 'pointermove';

function keep(list, entry) {
  list.push(entry);
  if (list.length > KEEP) list.splice(0, list.length - KEEP);
}

export function createBubbles(app) {
  const { state } = app;
  const wrap = document.getElementById('board-wrap');
  const board = document.getElementById('board');
  let scale = 1;

  // view -> local drag: { view, pointerId, dx, dy, x, y, confirmed, released, pendingMove, movedAt, sentAt, sentX, sentY }
  const drags = new Map();
  // view -> position dropped here, shown until the session has the bubble free (or another device takes it)
  const settling = new Map();
  // views moved by another device since the last frame, and the position last painted per view
  const incoming = new Set();
  // views whose pick-up was given up on (refused, as far as the page can tell): a late grant is handed back
  const abandoned = new Set();
  const painted = VIEWS.map(() => ({ x: NaN, y: NaN }));

  const els = VIEWS.map((view) => {
    const el = document.createElement('div');
    el.className = 'bubble';
    el.dataset.view = String(view);
    el.dataset.holder = '';
    el.style.width = el.style.height = `${side(view)}px`;
    el.setAttribute('role', 'button');
    el.tabIndex = 0;
    const face = document.createElement('div');
    face.className = 'face';
    const tag = document.createElement('div');
    tag.className = 'tag';
    el.append(face, tag);
    board.append(el);
    return el;
  });

  // The board fits its box less a margin, where bubbles past its edges still show (and can be grabbed).
  const MARGIN = 24;
  new ResizeObserver(() => {
    const w = wrap.clientWidth;
    const h = wrap.clientHeight;
    scale = Math.max(0.1, Math.min((w - 2 * MARGIN) / BOARD_W, (h - 2 * MARGIN) / BOARD_H));
    board.style.transform = `translate(${(w - BOARD_W * scale) / 2}px, ${(h - BOARD_H * scale) / 2}px) scale(${scale})`;
  }).observe(wrap);

  function toBoard(e) {
    const r = board.getBoundingClientRect();
    const s = r.width / BOARD_W || scale;
    return { x: (e.clientX - r.left) / s, y: (e.clientY - r.top) / s };
  }

  const shown = (view) => drags.get(view) ?? settling.get(view) ?? state.bubbles[view];
  const dragOf = (pointerId) => {
    for (const d of drags.values()) if (d.pointerId === pointerId && !d.released) return d;
    return null;
  };

  function release(d) {
    const el = els[d.view];
    if (typeof d.pointerId === 'number' && el.hasPointerCapture(d.pointerId)) el.releasePointerCapture(d.pointerId);
  }

  function abort(d) {
    release(d);
    drags.delete(d.view);
    app.invalidate('bubbles');
  }

  function sendDrop(d) {
    const x = quantize(d.x);
    const y = quantize(d.y);
    drags.delete(d.view);
    settling.set(d.view, { x, y });
    app.send({ op: 'drop', view: d.view, x, y });
    app.invalidate('bubbles');
  }

  // Takes a bubble: at once here, for the session once it confirms the pick-up. Pointer or keyboard.
  function begin(view, pointerId, p) {
    const me = app.selfID();
    const b = state.bubbles[view];
    if (drags.has(view) || !me || !app.connected()) return null;
    if (b.holder && b.holder !== me) return null; // another device has it
    const at = shown(view);
    const d = {
      view, pointerId, dx: p ? at.x - p.x : 0, dy: p ? at.y - p.y : 0, x: at.x, y: at.y,
      confirmed: b.holder === me, released: false, pendingMove: false, movedAt: clock(), sentAt: -Infinity,
      sentX: NaN, sentY: NaN,
    };
    drags.set(view, d);
    settling.delete(view);
    abandoned.delete(view);
    if (!d.confirmed) app.send({ op: 'pickup', view });
    app.invalidate('bubbles');
    return d;
  }

  function finish(d) {
    release(d);
    d.released = true;
    d.pendingMove = false;
    // Not yet ours: the drop goes out once the pick-up is confirmed (or is forgotten if refused).
    if (d.confirmed) sendDrop(d);
    else app.invalidate('bubbles');
  }

  board.addEventListener('pointerdown', (e) => {
    const el = e.target.closest('.bubble');
    if (!el) return;
    e.preventDefault();
    if (e.pointerType === 'mouse' && e.button !== 0) return;
    if (begin(Number(el.dataset.view), e.pointerId, toBoard(e))) el.setPointerCapture(e.pointerId);
  });

  // Sends a drag's latest position; `movedAt` is when the pointer (or key) moved it, on the machine's clock. Moves go
  // before the pick-up is granted too: the daemon keeps the latest and carries it out with the grant.
  function sendMove(d) {
    d.pendingMove = false;
    const x = quantize(d.x);
    const y = quantize(d.y);
    const first = d.sentAt === -Infinity; // waits for the pick-up to be granted
    if (app.sendMove(d.view, x, y)) {
      d.sentAt = clock();
      d.sentX = x;
      d.sentY = y;
      keep(window.lansessionSent, { view: d.view, x, y, sentAt: d.movedAt, first });
    }
  }

  board.addEventListener(MOVE_EVENT, (e) => {
    const d = dragOf(e.pointerId);
    if (!d) return;
    const p = toBoard(e);
    const x = p.x + d.dx;
    const y = p.y + d.dy;
    if (!Number.isFinite(x) || !Number.isFinite(y)) return;
    d.x = x;
    d.y = y;
    d.movedAt = performance.timeOrigin + e.timeStamp;
    keep(window.lansessionInputLag, clock() - d.movedAt); // the browser's own delay, event to handler
    const wait = d.sentAt + MOVE_GAP_MS - clock();
    if (wait <= 0) sendMove(d);
    else if (!d.pendingMove) {
      d.pendingMove = true;
      setTimeout(() => {
        if (d.pendingMove && !d.released && drags.get(d.view) === d) sendMove(d);
      }, wait);
    }
    app.invalidate('bubbles');
  });

  const end = (e) => {
    const d = dragOf(e.pointerId);
    if (!d) return;
    if (e.type === 'pointerup') {
      const p = toBoard(e);
      if (Number.isFinite(p.x) && Number.isFinite(p.y)) {
        d.x = p.x + d.dx;
        d.y = p.y + d.dy;
      }
    }
    finish(d);
  };
  board.addEventListener('pointerup', end);
  board.addEventListener('pointercancel', end);
  board.addEventListener('lostpointercapture', end);
  board.addEventListener('dragstart', (e) => e.preventDefault());

  // Keyboard: Space or Enter picks a focused bubble up and drops it, arrows move it (Shift: farther).
  const STEPS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  board.addEventListener('keydown', (e) => {
    const el = e.target.closest('.bubble');
    if (!el) return;
    const view = Number(el.dataset.view);
    const d = drags.get(view);
    const mine = d && d.pointerId === 'key' && !d.released;
    if (e.key === ' ' || e.key === 'Enter' || (e.key === 'Escape' && mine)) {
      e.preventDefault();
      if (e.repeat) return;
      if (mine) finish(d);
      else if (!d && e.key !== 'Escape') begin(view, 'key', null);
    } else if (STEPS[e.key] && mine) {
      e.preventDefault();
      const step = e.shiftKey ? 40 : 10;
      d.x += STEPS[e.key][0] * step;
      d.y += STEPS[e.key][1] * step;
      d.movedAt = clock();
      sendMove(d);
      app.invalidate('bubbles');
    }
  });
  board.addEventListener('focusout', (e) => {
    const el = e.target.closest?.('.bubble');
    const d = el && drags.get(Number(el.dataset.view));
    if (d && d.pointerId === 'key' && !d.released) finish(d);
  });

  return {
    // A snapshot: the session's whole board; nothing local survives it.
    replace(list) {
      for (const d of [...drags.values()]) abort(d);
      settling.clear();
      incoming.clear();
      abandoned.clear();
      state.bubbles = startBubbles();
      for (const m of list ?? []) {
        if (!VIEWS.includes(m.view)) continue;
        state.bubbles[m.view] = { view: m.view, holder: m.holder ?? '', x: Number(m.x), y: Number(m.y) };
      }
      app.invalidate('bubbles');
    },

    // One bubble's whole state after a change.
    apply(m) {
      const view = m.view;
      if (!VIEWS.includes(view) || !Number.isFinite(Number(m.x)) || !Number.isFinite(Number(m.y))) return;
      const b = { view, holder: m.holder ?? '', x: Number(m.x), y: Number(m.y) };
      state.bubbles[view] = b;
      const me = app.selfID();
      const d = drags.get(view);
      if (d) {
        if (b.holder === me) {
          if (!d.confirmed) {
            d.confirmed = true;
            if (d.released) sendDrop(d);
            else if (quantize(d.x) !== d.sentX || quantize(d.y) !== d.sentY) sendMove(d); // the daemon has the rest
          }
        } else if (b.holder || d.confirmed) {
          // Another device got it, or our hold ended: snap back to the session's state.
          abort(d);
        }
        // Free while our pick-up is pending: keep waiting for the decision.
      }
      if (!d && abandoned.has(view)) {
        abandoned.delete(view);
        if (b.holder === me) app.send({ op: 'drop', view, x: b.x, y: b.y });
      }
      if (settling.has(view) && b.holder !== me) settling.delete(view);
      if (b.holder && b.holder !== me) {
        incoming.add(view);
        keep(window.lansessionArrivals, { view, x: b.x, y: b.y, arrivedAt: clock() });
      }
      app.invalidate('bubbles');
    },

    // An op was refused: a pick-up still waiting for its answer will not be granted.
    refused() {
      for (const d of [...drags.values()]) {
        if (d.confirmed) continue;
        abandoned.add(d.view);
        abort(d);
      }
    },

    disconnected() {
      for (const d of [...drags.values()]) abort(d);
      settling.clear();
      abandoned.clear();
      app.invalidate('bubbles');
    },

    // In the animation frame: send a local move that had to wait, then paint.
    render() {
      for (const d of drags.values()) {
        if (d.pendingMove && !d.released) sendMove(d);
      }
      const me = app.selfID();
      const drawnAt = clock();
      for (const view of VIEWS) {
        const el = els[view];
        const b = state.bubbles[view];
        const dragging = drags.has(view);
        const at = shown(view);
        const holder = dragging ? me : b.holder;
        const s = side(view);
        el.style.transform = `translate(${at.x - s / 2}px, ${at.y - s / 2}px)`;
        el.dataset.x = fmt(at.x);
        el.dataset.y = fmt(at.y);
        el.dataset.holder = holder ?? '';
        el.classList.toggle('held', Boolean(holder) && !settling.has(view));
        el.classList.toggle('mine', dragging);
        el.classList.toggle('locked', Boolean(b.holder) && b.holder !== me);
        el.classList.toggle('tag-below', at.y - s / 2 < 30);
        const name = holder ? (holder === me ? 'you' : app.nameOf(holder)) : '';
        const tag = el.lastChild;
        if (tag.textContent !== name) tag.textContent = name;
        el.setAttribute('aria-label', `Bubble ${view + 1}${name ? `, held by ${name}` : ''}. Space picks up and drops, arrows move.`);
        if (incoming.has(view) && (at.x !== painted[view].x || at.y !== painted[view].y)) {
          keep(window.lansessionTimings, { view, x: at.x, y: at.y, drawnAt });
        }
        painted[view].x = at.x;
        painted[view].y = at.y;
      }
      incoming.clear();
    },
  };
}
