#!/usr/bin/env python3
"""A stand-in for sessiond's HTTP side, to work on and check its page without building anything.

    mock_sessiond.py [PORT] [PAGE_DIR]     (default 8765 and Sources/sessiond/Page beside this file)

Listens on 127.0.0.1 only. Serves the page's files (index.html at /) and speaks the page's WebSocket protocol at /ws
with made-up devices: a snapshot first, then `bubble`, `counter`, `peers`, `pairings`, `rtt` (every second) and
`error` messages, and it answers the page's ops (`pickup` after a delay, `move`, `drop`, `increment`, `pair`,
`reject`) as sessiond would. A page served with ?as=PEERID plays that device (a cookie), so that two browsers can
drag and watch each other. Stdlib only. What the other devices do is driven over HTTP, each answering JSON:

    /mock/log, /mock/clear          ops received so far (each with "at", ms), and forgetting them
    /mock/attempts                  when each WebSocket upgrade was asked for (ms)
    /mock/state                     the whole state, as a snapshot
    /mock/hold?view=V&peer=ID       another device holds bubble V; /mock/move?view=&x=&y=&peer= moves it there;
    /mock/drop?view=&x=&y=, /mock/free?view=   it drops it there, or lets it go where it is
    /mock/animate?on=1|0            a device circles bubble 2 at 30 Hz
    /mock/peerstate?peer=ID&state=S a device's state (connected, reconnecting, lost)
    /mock/discover?peer=ID&name=N   a device found on the network, not (yet) a member
    /mock/count                     a device increments
    /mock/error?message=TEXT        an `error` to every page
    /mock/delay?ms=N                how long a pick-up waits for the coordinator's answer (default 30)
    /mock/kill, /mock/down?secs=S   close every WebSocket; and refuse new ones for S seconds
    /mock/rtt?on=1|0                round-trip samples on or off
"""
import asyncio, base64, hashlib, json, math, os, random, struct, sys, time
from urllib.parse import urlsplit, parse_qs

HERE = os.path.dirname(os.path.abspath(__file__))
PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
PAGE = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, '..', '..', 'Sources', 'sessiond', 'Page')
GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'

SELF = {"peerID": "00aa11bb22cc33dd", "name": "ada-laptop", "fingerprint": "K7QF-2M9X-HT4C-WB8R", "admission": "paired"}
H2, H3, H4 = "a1b2c3d4e5f60718", "f0e1d2c3b4a59687", "1234abcd5678ef90"

S = {
    "bubbles": [{"view": v, "x": x, "y": y} for v, (x, y) in enumerate([(160.0, 80.0), (160.0, 200.0), (160.0, 360.0)])],
    "counter": {"local": 3, "total": 7, "peers": {H2: {"name": "grace-thinkpad", "count": 4}}},
    "peers": [
        {"peerID": H2, "name": "grace-thinkpad", "state": "connected", "fingerprint": "P3LD-9QZA-77NE-XC2V", "trust": "paired",
         "rttMicros": 850, "links": [{"transport": "lan", "address": "10.0.0.2:47000", "state": "active", "rttMicros": 850},
                                     {"transport": "rfcomm", "address": "AA:BB:CC:DD:EE:01", "state": "standby", "rttMicros": 21400}]},
        {"peerID": H3, "name": "linus-desk", "state": "connected", "fingerprint": "ZT6W-1KMB-RR8S-45JH", "trust": "introduced",
         "rttMicros": 1320, "links": [{"transport": "lan", "address": "10.0.0.3:47000", "state": "active", "rttMicros": 1320}]},
    ],
    "pairings": [
        {"peerID": H4, "name": "margaret-pi", "fingerprint": "9HCE-TY2L-QW4P-M8N6", "code": "482913",
         "requestedHere": False, "confirmedHere": False, "confirmedThere": True},
    ],
    "layout": [{"peerID": SELF["peerID"], "playerIndex": 0}, {"peerID": H2, "playerIndex": 1}],
}
ATTEMPTS = []
OPS = []           # every op received, with its arrival time
CLIENTS = set()    # writers of open websockets
CFG = {"pickup_delay": 0.03, "refuse_until": 0.0, "animate": False, "rtt": True}


def ws_frame(text):
    data = text.encode()
    n = len(data)
    if n < 126:
        head = struct.pack('!BB', 0x81, n)
    elif n < 65536:
        head = struct.pack('!BBH', 0x81, 126, n)
    else:
        head = struct.pack('!BBQ', 0x81, 127, n)
    return head + data


def send(w, msg):
    try:
        w.write(ws_frame(json.dumps(msg)))
    except Exception:
        pass


def broadcast(msg):
    for w in list(CLIENTS):
        send(w, msg)


# A page may play another device: served with ?as=PEERID it gets a cookie, and its WebSocket speaks as that device.
def identity(peer):
    if peer == SELF["peerID"]: return SELF
    p = next((p for p in S["peers"] if p["peerID"] == peer), None)
    return {"peerID": peer, "name": p["name"], "fingerprint": p.get("fingerprint", ""), "admission": "paired"} if p else SELF


def snapshot(me=None):
    return {"type": "snapshot", "self": identity(me or SELF["peerID"]), "layout": S["layout"], "bubbles": [bubble_state(b) for b in S["bubbles"]],
            "counter": S["counter"], "peers": S["peers"], "pairings": S["pairings"]}


def bubble_state(b):
    return {k: v for k, v in b.items() if k in ("view", "holder", "x", "y")}


def bubble_msg(v):
    return dict(type="bubble", **bubble_state(S["bubbles"][v]))


def counter_msg():
    return dict(type="counter", **S["counter"])


# (connection, bubble) -> the move a page sent while its pick-up waits for the answer (None: none yet), as sessiond
# keeps it: carried out with the grant, forgotten with a refusal or a drop.
WAITING = {}


async def decide_pickup(w, v, me):
    await asyncio.sleep(CFG["pickup_delay"])
    b = S["bubbles"][v]
    waiting = WAITING.pop((id(w), v), None)
    if b.get("holder") not in (None, me):
        send(w, {"type": "error", "message": f"bubble {v} is held by another device"})
        return
    b["holder"] = me
    broadcast(bubble_msg(v))
    if waiting is not None:
        b["x"], b["y"] = waiting
        broadcast(bubble_msg(v))


def on_op(w, m, me):
    OPS.append({"at": time.time() * 1000, "from": me, **m})
    op = m.get("op")
    v = m.get("view")
    if op in ("pickup", "move", "drop") and v not in (0, 1, 2):
        send(w, {"type": "error", "message": f"no bubble {v}"}); return
    if op == "pickup":
        WAITING[(id(w), v)] = None
        asyncio.get_running_loop().create_task(decide_pickup(w, v, me))
    elif op == "move":
        b = S["bubbles"][v]
        if (id(w), v) in WAITING:
            WAITING[(id(w), v)] = (float(m["x"]), float(m["y"])); return
        if b.get("holder") != me:
            send(w, {"type": "error", "message": f"bubble {v} is not held here"}); return
        b["x"], b["y"] = float(m["x"]), float(m["y"])
        broadcast(bubble_msg(v))
    elif op == "drop":
        WAITING.pop((id(w), v), None)
        b = S["bubbles"][v]
        if b.get("holder") != me:
            send(w, {"type": "error", "message": f"bubble {v} is not held here"}); return
        if "x" in m: b["x"], b["y"] = float(m["x"]), float(m["y"])
        b.pop("holder", None)
        broadcast(bubble_msg(v))
    elif op == "increment":
        S["counter"]["local"] += 1; S["counter"]["total"] += 1
        broadcast(counter_msg())
    elif op == "pair":
        for q in S["pairings"]:
            if q["peerID"] == m.get("peer"):
                if m.get("code") != q["code"]:
                    send(w, {"type": "error", "message": "that is not the code shown"}); return
                q["confirmedHere"] = True
        broadcast({"type": "pairings", "pairings": S["pairings"]})
        asyncio.get_running_loop().create_task(finish_pairing(m.get("peer")))
    elif op == "reject":
        S["pairings"] = [q for q in S["pairings"] if q["peerID"] != m.get("peer")]
        broadcast({"type": "pairings", "pairings": S["pairings"]})
    else:
        send(w, {"type": "error", "message": f"unknown op {op}"})


async def finish_pairing(peer):
    await asyncio.sleep(1.0)
    q = next((q for q in S["pairings"] if q["peerID"] == peer and q["confirmedThere"]), None)
    if not q: return
    S["pairings"] = [x for x in S["pairings"] if x["peerID"] != peer]
    S["peers"].append({"peerID": peer, "name": q["name"], "state": "connected", "fingerprint": q["fingerprint"], "trust": "paired",
                       "rttMicros": 2100, "links": [{"transport": "lan", "address": "10.0.0.4:47000", "state": "active", "rttMicros": 2100}]})
    broadcast({"type": "pairings", "pairings": S["pairings"]})
    broadcast({"type": "peers", "peers": S["peers"]})


async def ws_loop(r, w, me):
    CLIENTS.add(w)
    send(w, snapshot(me))
    try:
        while True:
            h = await r.readexactly(2)
            op, n = h[0] & 0x0F, h[1] & 0x7F
            masked = h[1] & 0x80
            if n == 126: n = struct.unpack('!H', await r.readexactly(2))[0]
            elif n == 127: n = struct.unpack('!Q', await r.readexactly(8))[0]
            mask = await r.readexactly(4) if masked else b'\0\0\0\0'
            data = bytes(c ^ mask[i % 4] for i, c in enumerate(await r.readexactly(n)))
            if op == 8:
                w.write(b'\x88\x00'); break
            if op == 9:
                w.write(bytes([0x8A, len(data)]) + data); continue
            if op == 1:
                try: m = json.loads(data)
                except ValueError: continue
                on_op(w, m, me)
            if op == 2 and len(data) == 10 and data[0] == 1:  # a move: code 1, bubble, x and y as float32
                view, x, y = struct.unpack('!xBff', data)
                on_op(w, {"op": "move", "view": view, "x": x, "y": y}, me)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        CLIENTS.discard(w)
        w.close()


def q1(q, k, d=None):
    return q.get(k, [d])[0]


def control(cmd, q):
    if cmd == "log": return OPS
    if cmd == "attempts": return ATTEMPTS
    if cmd == "clear": OPS.clear(); return {}
    if cmd == "state": return snapshot()
    if cmd == "kill":
        for w in list(CLIENTS): w.transport.abort()
        CLIENTS.clear(); return {}
    if cmd == "down":  # refuse websockets for N seconds and drop those open
        CFG["refuse_until"] = time.time() + float(q1(q, "secs", 3))
        for w in list(CLIENTS): w.transport.abort()
        CLIENTS.clear(); return {}
    if cmd == "delay": CFG["pickup_delay"] = float(q1(q, "ms", 30)) / 1000; return CFG
    if cmd == "animate": CFG["animate"] = q1(q, "on", "1") == "1"; return CFG
    if cmd == "rtt": CFG["rtt"] = q1(q, "on", "1") == "1"; return CFG
    if cmd in ("hold", "move", "drop", "free"):
        v = int(q1(q, "view", 2)); b = S["bubbles"][v]
        if cmd == "hold": b["holder"] = q1(q, "peer", H2)
        if cmd in ("move", "drop"):
            b["x"], b["y"] = float(q1(q, "x", b["x"])), float(q1(q, "y", b["y"]))
            b["holder"] = q1(q, "peer", H2)
        if cmd in ("drop", "free"): b.pop("holder", None)
        broadcast(bubble_msg(v)); return bubble_state(b)
    if cmd == "discover":
        peer = q1(q, "peer", "77aa77bb77cc77dd")
        if not any(p["peerID"] == peer for p in S["peers"]):
            S["peers"].append({"peerID": peer, "name": q1(q, "name", "ken-mini"), "state": "discovered",
                               "fingerprint": "", "trust": "", "links": []})
        broadcast({"type": "peers", "peers": S["peers"]}); return {}
    if cmd == "peerstate":
        for p in S["peers"]:
            if p["peerID"] == q1(q, "peer", H3): p["state"] = q1(q, "state", "lost")
        broadcast({"type": "peers", "peers": S["peers"]}); return {}
    if cmd == "count":
        S["counter"]["peers"][H2]["count"] += 1; S["counter"]["total"] += 1
        broadcast(counter_msg()); return S["counter"]
    if cmd == "error":
        broadcast({"type": "error", "message": q1(q, "message", "refused")}); return {}
    return {"error": "unknown"}


TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


async def handle(r, w):
    try:
        head = await r.readuntil(b'\r\n\r\n')
    except Exception:
        w.close(); return
    lines = head.decode('latin-1').split('\r\n')
    method, target, _ = lines[0].split(' ', 2)
    hdrs = {}
    for l in lines[1:]:
        if ':' in l:
            k, v = l.split(':', 1); hdrs[k.strip().lower()] = v.strip()
    u = urlsplit(target)
    q = parse_qs(u.query)

    def reply(status, body, ctype="text/plain", extra=""):
        if isinstance(body, str): body = body.encode()
        w.write(f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\nCache-Control: no-store\r\n{extra}Connection: close\r\n\r\n".encode() + body)

    if u.path == "/ws" and hdrs.get("upgrade", "").lower() == "websocket":
        ATTEMPTS.append(time.time() * 1000)
        if time.time() < CFG["refuse_until"]:
            reply("503 Service Unavailable", "down"); await w.drain(); w.close(); return
        acc = base64.b64encode(hashlib.sha1((hdrs["sec-websocket-key"] + GUID).encode()).digest()).decode()
        w.write(f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {acc}\r\n\r\n".encode())
        cookies = dict(c.strip().split("=", 1) for c in hdrs.get("cookie", "").split(";") if "=" in c)
        await ws_loop(r, w, identity(cookies.get("as", "")).get("peerID")); return
    if u.path.startswith("/mock/"):
        reply("200 OK", json.dumps(control(u.path[6:], q)), "application/json")
    else:
        name = "index.html" if u.path == "/" else u.path.lstrip("/")
        path = os.path.join(PAGE, name)
        if "/" in name or not os.path.isfile(path):
            reply("404 Not Found", "not found")
        else:
            extra = "Set-Cookie: lansession=test; HttpOnly; SameSite=Strict\r\n" if "token" in q else ""
            if "as" in q: extra += f"Set-Cookie: as={q1(q, 'as')}; SameSite=Strict\r\n"
            reply("200 OK", open(path, "rb").read(), TYPES.get(os.path.splitext(name)[1], "application/octet-stream"), extra)
    await w.drain(); w.close()


async def ticker():
    t0 = time.time(); last_rtt = 0
    while True:
        await asyncio.sleep(1 / 30)
        now = time.time()
        if CFG["animate"]:
            b = S["bubbles"][2]; a = (now - t0) * 1.5
            b["holder"] = H2; b["x"] = round(160 + 90 * math.cos(a), 2); b["y"] = round(260 + 140 * math.sin(a), 2)
            broadcast(bubble_msg(2))
        if CFG["rtt"] and now - last_rtt >= 1:
            last_rtt = now; t = now - t0
            samples = []
            for p in S["peers"]:
                if p["state"] != "connected": continue
                for l in p["links"]:
                    base = 21000 if l["transport"] == "rfcomm" else (800 if p["peerID"] == H2 else 1300)
                    us = int(base * (1 + 0.25 * math.sin(t / 5 + len(p["name"]))) + random.expovariate(1 / (base * 0.15)))
                    samples.append({"peerID": p["peerID"], "transport": l["transport"], "rttMicros": us})
                    l["rttMicros"] = us
            broadcast({"type": "rtt", "at": int(now * 1000), "samples": samples})


async def main():
    srv = await asyncio.start_server(handle, "127.0.0.1", PORT)
    asyncio.get_running_loop().create_task(ticker())
    print(f"mock sessiond on http://127.0.0.1:{PORT}/", flush=True)
    async with srv: await srv.serve_forever()

asyncio.run(main())
