#!/usr/bin/env python3
"""An independent LanSession peer (wire format version 3), for interoperability tests.

Written from docs/wire-format.md alone (sections 3, 4 and 9), on Python's `noiseprotocol` package (module `noise`)
and `cryptography`: hellos, the Noise XX / XXpsk3 handshake bound to both hellos by the prologue, sealed records,
invitations, pings, pairing codes and the peer id check. It shares no code with the Swift implementation, so a
test that links a Swift peer with this one checks the specification, not one implementation against itself.

Modes:
  dial HOST PORT                  dial (Noise initiator), retrying a refused connection until --seconds ends
  accept PORT [--host H]          take one connection (Noise responder)
  relay LISTEN_PORT HOST PORT     a man in the middle for pairing: accepts one connection and dials HOST:PORT, each
                                  with its own handshake, asks both sides to pair and prints the two codes (they
                                  differ from any code the two ends could compare); it never forwards anything

Every notable event is one JSON object per line on stdout (`hello`, `handshake`, `handshakeFailed`,
`impostorRefused`, `helloRefused`, `pairing`, `pairingStep`, `invitation`, `acceptedInvitation`, `accepted`,
`declined`, `bye`, `pongs`, `trust`, `relayCodes`, `protocolError`, `closed`), and the last line is
`{"event": "done", ...}` with a summary. The program always ends within --seconds and exits 0 (2 on a usage
error), so a test reads the lines and asserts on them. The dialer invites right after the handshake (or, with
--pair, once both sides confirmed) and closes with `bye` once its work is done and --hold has passed; the acceptor
accepts any invitation and, unless --hold is given, waits for the other side to close.

Example: python3 lansession_peer.py accept 47123 --secret-file s & python3 lansession_peer.py dial 127.0.0.1 47123
--secret-file s --pings 5
"""

import argparse
import base64
import hashlib
import json
import os
import secrets
import select
import socket
import statistics
import sys
import time

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ed25519, x25519
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from noise.connection import Keypair, NoiseConnection

VERSION = 3
HELLO, ACCEPT, DECLINE, INVITATION, PING, PONG, BYE = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07
NOISE, TRUST, PAIRING = 0x0B, 0x0C, 0x0D
CAP_ENCRYPTION, CAP_PSK = 1 << 2, 1 << 4
AUTHENTICATION_FAILED, VERSION_MISMATCH, WRONG_SESSION = 7, 4, 5
LEAVING, PROTOCOL_ERROR = 1, 3
REQUEST, CONFIRM, REJECT = 1, 2, 3
MAX_FRAME, MAX_PLAINTEXT, TAG = 65536, 16384, 16
REKEY_INTERVAL = 1 << 20


class Malformed(Exception):
    """A frame, record or field that breaks the wire format: fatal for the link."""


def emit(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


# MARK: Encoding

def varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def u64(n):
    return n.to_bytes(8, "little")


def blob(data):
    return varint(len(data)) + data


def frame(body):
    return varint(len(body)) + body


class Reader:
    """Reads the fields of a body, refusing overlong varints, fields above their limit and truncation."""

    def __init__(self, data, pos=0):
        self.data, self.pos = bytes(data), pos

    def raw(self, n):
        if self.pos + n > len(self.data):
            raise Malformed("truncated")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def varint(self, bits=64):
        value, shift, start = 0, 0, self.pos
        while True:
            byte = self.raw(1)[0]
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
            if self.pos - start >= (bits + 6) // 7:
                raise Malformed("overlong varint")
        if (byte == 0 and self.pos - start > 1) or value >= 1 << bits:
            raise Malformed("overlong varint")
        return value

    def u8(self):
        return self.raw(1)[0]

    def u64(self):
        return int.from_bytes(self.raw(8), "little")

    def bytes(self, limit):
        n = self.varint(32)
        if n > limit:
            raise Malformed("field too long")
        return self.raw(n)

    def string(self, limit=63):
        try:
            return self.bytes(limit).decode("utf-8")
        except UnicodeDecodeError:
            raise Malformed("invalid UTF-8") from None

    def end(self):
        if self.pos != len(self.data):
            raise Malformed("trailing bytes")


def take_frame(buf):
    """Removes one complete frame from `buf`: (frame with its header, body), or None while incomplete."""
    length, shift = 0, 0
    for i in range(min(len(buf), 4)):
        length |= (buf[i] & 0x7F) << shift
        shift += 7
        if length > MAX_FRAME:
            raise Malformed("frame too long")
        if not buf[i] & 0x80:
            if length == 0 or (buf[i] == 0 and i > 0):
                raise Malformed("bad frame length")
            if len(buf) < i + 1 + length:
                return None
            whole = bytes(buf[:i + 1 + length])
            del buf[:i + 1 + length]
            return whole, whole[i + 1:]
    if len(buf) >= 4:
        raise Malformed("frame header too long")
    return None


def encode_hello(h):
    return frame(bytes([HELLO]) + varint(h["version"]) + u64(h["peerID"]) + u64(h["incarnation"])
                 + varint(h["capabilities"]) + varint(h["port"]) + blob(h["name"].encode())
                 + blob(h["session"].encode()) + varint(len(h["extensions"]))
                 + b"".join(varint(t) + blob(v) for t, v in h["extensions"]))


def decode_hello(r):
    h = {"version": r.varint(32), "peerID": r.u64(), "incarnation": r.u64(), "capabilities": r.varint(32),
         "port": r.varint(16), "name": r.string(), "session": r.string(), "extensions": []}
    count = r.varint(32)
    if count > 8:
        raise Malformed("too many extensions")
    for _ in range(count):
        h["extensions"].append((r.varint(16), r.bytes(255)))
    r.end()
    if h["version"] == 0:
        raise Malformed("protocol version 0")
    return h


def skip_statement(r):
    """Reads one statement of section 9.6 (not verified: this peer trusts nobody's word)."""
    r.u8(), r.raw(32), r.raw(32), r.string(), r.varint(), r.varint(), r.u64(), r.raw(64)


# MARK: Keys and derived values

class Keys:
    def __init__(self, key_file):
        if key_file and os.path.exists(key_file):
            with open(key_file, "rb") as f:
                material = f.read()
            if len(material) != 64:
                raise SystemExit(f"{key_file}: expected 64 bytes")
        else:
            material = secrets.token_bytes(64)
            if key_file:
                fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(material)
        self.static = material[:32]
        self.static_public = x25519.X25519PrivateKey.from_private_bytes(self.static).public_key().public_bytes_raw()
        signing = ed25519.Ed25519PrivateKey.from_private_bytes(material[32:])
        self.signing_public = signing.public_key().public_bytes_raw()
        self.peer_id = peer_id(self.static_public)


def peer_id(static_public):
    return int.from_bytes(hashlib.sha256(static_public).digest()[:8], "little") or 1


def fingerprint(static_public):
    letters = base64.b32encode(hashlib.sha256(static_public).digest()[:10]).decode().rstrip("=")
    return "-".join(letters[i:i + 4] for i in range(0, 16, 4))


def pairing_code(h):
    digest = hashlib.sha256(b"LanSession v3 pairing code" + h).digest()
    return f"{int.from_bytes(digest[:4], 'big') % 1_000_000:06d}"


def session_psk(secret, session):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"LanSession v3 secret",
                info=session.encode()).derive(secret)


# MARK: One link

class Link:
    def __init__(self, sock, dialer, opts, keys, tag=None):
        self.sock, self.dialer, self.o, self.keys, self.tag = sock, dialer, opts, keys, tag
        self.inbuf, self.plain = bytearray(), bytearray()
        self.noise = self.hs = self.remote_hello = None
        self.step = 0
        self.opening = self.sealing = self.handshaken = self.closed = False
        self.sealed_count = self.opened_count = 0
        self.kinds, self.rtts = [], []
        self.code = self.token = self.decline_reason = self.bye_reason = self.closed_by = None
        self.failed = self.impostor = self.invited = self.accepted = False
        self.confirmed = self.peer_confirmed = self.pairing_over = False
        self.pings_left, self.ping_out, self.idle_since = 0, None, None
        caps = CAP_ENCRYPTION | (CAP_PSK if opts.secret is not None else 0)
        claimed = int(opts.claim, 16) if opts.claim else keys.peer_id
        self.local_hello = encode_hello({
            "version": VERSION, "peerID": claimed, "incarnation": secrets.randbits(64), "capabilities": caps,
            "port": 0, "name": opts.name, "session": opts.session, "extensions": []})
        self.write(self.local_hello)

    def emit(self, event, **fields):
        emit(event, **({"link": self.tag} if self.tag else {}), **fields)

    # Output

    def write(self, data):
        try:
            self.sock.sendall(data)
        except OSError:
            self.close("peer")

    def send(self, body):
        data = frame(body)
        if not self.sealing:
            return self.write(data)
        out = bytearray()
        for i in range(0, len(data), MAX_PLAINTEXT):
            sealed = self.noise.encrypt(bytes(data[i:i + MAX_PLAINTEXT]))
            out += len(sealed).to_bytes(2, "little") + sealed
            self.sealed_count += 1
            if self.sealed_count % REKEY_INTERVAL == 0:
                self.noise.rekey_outbound_cipher()
        self.write(bytes(out))

    def close(self, by, bye=None):
        if self.closed:
            return
        if bye is not None and (self.sealing or self.noise is None):
            self.send(bytes([BYE, bye]))
            if self.closed:
                return
        self.closed, self.closed_by = True, self.closed_by or by
        self.sock.close()
        self.emit("closed", by=self.closed_by, kinds=self.kinds, declineReason=self.decline_reason,
                  byeReason=self.bye_reason)

    # Input

    def on_readable(self):
        try:
            data = self.sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            return self.close("peer")
        self.inbuf += data
        try:
            while not self.closed:
                if self.opening:
                    self.open_records()
                got = take_frame(self.plain if self.opening else self.inbuf)
                if got is None:
                    break
                self.handle(*got)
        except Malformed as error:
            self.emit("protocolError", error=str(error))
            self.close("us", bye=PROTOCOL_ERROR)

    def open_records(self):
        while len(self.inbuf) >= 2:
            length = int.from_bytes(self.inbuf[:2], "little")
            if not TAG <= length <= MAX_PLAINTEXT + TAG:
                raise Malformed(f"record length {length}")
            if len(self.inbuf) < 2 + length:
                return
            try:
                self.plain += self.noise.decrypt(bytes(self.inbuf[2:2 + length]))
            except Exception:
                raise Malformed("a record that does not open") from None
            del self.inbuf[:2 + length]
            self.opened_count += 1
            if self.opened_count % REKEY_INTERVAL == 0:
                self.noise.rekey_inbound_cipher()

    def handle(self, whole, body):
        kind = body[0]
        self.kinds.append(kind)
        if not self.handshaken and kind not in (HELLO, NOISE, DECLINE, BYE):
            raise Malformed(f"kind {kind} before the handshake")
        handler = {HELLO: self.on_hello, NOISE: self.on_noise, ACCEPT: self.on_accept, DECLINE: self.on_decline,
                   INVITATION: self.on_invitation, PING: self.on_ping, PONG: self.on_pong, BYE: self.on_bye,
                   TRUST: self.on_trust, PAIRING: self.on_pairing}.get(kind)
        if handler:
            handler(Reader(body, 1), whole)

    # Hello and handshake

    def on_hello(self, r, whole):
        if self.remote_hello is not None or self.noise is not None:
            raise Malformed("a second hello")
        h = decode_hello(r)
        if encode_hello(h) != whole:
            raise Malformed("a hello that is not canonical")
        self.remote_hello, self.remote_hello_frame = h, whole
        self.emit("hello", peerID=f"{h['peerID']:016x}", name=h["name"], version=h["version"],
                  capabilities=h["capabilities"], session=h["session"])
        caps, mine = h["capabilities"], CAP_PSK if self.o.secret is not None else 0
        reason = (VERSION_MISMATCH if h["version"] != VERSION else WRONG_SESSION if h["session"] != self.o.session
                  else AUTHENTICATION_FAILED if not caps & CAP_ENCRYPTION or caps & CAP_PSK != mine else None)
        if reason is not None:
            self.send(bytes([DECLINE, reason]))
            self.emit("helloRefused", reason=reason)
            return self.close("us")
        self.start_noise()
        if self.dialer:
            self.send_noise(self.noise.write_message(b""))

    def start_noise(self):
        pattern = "XXpsk3" if self.o.secret is not None else "XX"
        self.noise = NoiseConnection.from_name(f"Noise_{pattern}_25519_ChaChaPoly_SHA256".encode())
        self.noise.set_as_initiator() if self.dialer else self.noise.set_as_responder()
        self.noise.set_keypair_from_private_bytes(Keypair.STATIC, self.keys.static)
        d, a = (self.local_hello, self.remote_hello_frame) if self.dialer else (self.remote_hello_frame,
                                                                                  self.local_hello)
        self.noise.set_prologue(b"LanSession v3 prologue" + len(d).to_bytes(4, "little") + d
                                + len(a).to_bytes(4, "little") + a)
        if self.o.secret is not None:
            self.noise.set_psks(psk=session_psk(self.o.secret, self.o.session))
        self.noise.start_handshake()
        self.hs = self.noise.noise_protocol.handshake_state  # keeps the remote static key after the handshake

    def send_noise(self, message):
        self.send(bytes([NOISE]) + blob(bytes(message)))

    def payload(self):
        return self.keys.signing_public + varint(0)

    def on_noise(self, r, _):
        message = r.bytes(4096)
        r.end()
        if self.noise is None or self.handshaken:
            raise Malformed("an unexpected noise message")
        final = self.dialer or self.step == 1  # message 2 at the dialer, message 3 at the acceptor
        try:
            received = self.noise.read_message(message)
            if final:
                remote = Reader(received)
                signing, count = remote.raw(32), remote.varint(32)
                if count > 8:
                    raise Malformed("too many statements")
                for _ in range(count):
                    skip_statement(remote)
                remote.end()
            reply = None if self.step == 1 else self.noise.write_message(self.payload())
        except Exception as error:
            self.failed = True
            self.emit("handshakeFailed", error=f"{type(error).__name__}: {error}")
            return self.close("us")
        if not final:
            self.step = 1
            return self.send_noise(reply)
        self.opening = True
        if self.dialer:
            self.send_noise(reply)
        self.sealing = True
        self.finish_handshake(signing, count)

    def finish_handshake(self, signing, statements):
        remote_key = self.hs.rs.public_bytes
        remote_id, claimed = peer_id(remote_key), self.remote_hello["peerID"]
        self.code = pairing_code(self.noise.get_handshake_hash())
        self.emit("handshake", h=self.noise.get_handshake_hash().hex(), code=self.code,
                  remotePeerID=f"{remote_id:016x}", remoteFingerprint=fingerprint(remote_key),
                  localPeerID=f"{self.keys.peer_id:016x}", localFingerprint=fingerprint(self.keys.static_public),
                  remoteSigningKey=signing.hex(), remoteStatements=statements,
                  protocol=self.noise.noise_protocol.name.decode())
        if remote_id != claimed:
            self.impostor = True
            self.send(bytes([DECLINE, AUTHENTICATION_FAILED]))
            self.emit("impostorRefused", claimed=f"{claimed:016x}", proven=f"{remote_id:016x}")
            return self.close("us")
        self.handshaken = True
        if self.o.pair:
            self.send(bytes([PAIRING, REQUEST]))
            self.emit("pairing", code=self.code)
            if self.o.confirm:
                self.send(bytes([PAIRING, CONFIRM]))
                self.confirmed = True
        elif self.dialer:
            self.invite()

    # Messages after the handshake

    def invite(self):
        if self.o.no_invite or self.invited or self.o.mode == "relay":
            return
        self.invited = True
        self.send(bytes([INVITATION]) + blob(b"") + varint(30000))

    def on_pairing(self, r, _):
        step = r.u8()
        r.end()
        self.emit("pairingStep", step=step)
        if step == REQUEST and self.o.confirm and not self.confirmed:
            self.send(bytes([PAIRING, CONFIRM]))
            self.confirmed = True
        self.peer_confirmed |= step == CONFIRM
        self.pairing_over |= step in (CONFIRM, REJECT)
        if self.dialer and self.confirmed and self.peer_confirmed:
            self.invite()

    def on_invitation(self, r, _):
        context, timeout = r.bytes(1024), r.varint(32)
        r.end()
        self.emit("invitation", context=context.hex(), timeoutMs=timeout)
        self.token = secrets.randbits(64)
        self.send(bytes([ACCEPT]) + u64(self.token))
        self.accepted = True
        self.emit("acceptedInvitation", token=self.token)
        self.start_pings()

    def on_accept(self, r, _):
        self.token = r.u64()
        r.end()
        self.accepted = True
        self.emit("accepted", token=self.token)
        self.start_pings()

    def on_decline(self, r, _):
        self.decline_reason = r.u8()
        r.end()
        self.emit("declined", reason=self.decline_reason)
        self.close("peer")

    def on_bye(self, r, _):
        self.bye_reason = r.u8()
        r.end()
        self.emit("bye", reason=self.bye_reason)
        self.close("peer")

    def on_trust(self, r, _):
        count = r.varint(32)
        if count > 64:
            raise Malformed("too many statements")
        for _ in range(count):
            skip_statement(r)
        r.end()
        self.emit("trust", statements=count)

    def start_pings(self):
        if self.o.pings > 0 and self.ping_out is None and not self.rtts:
            self.pings_left = self.o.pings
            self.ping()

    def ping(self):
        self.pings_left -= 1
        self.ping_out = self.o.pings - self.pings_left
        self.send(bytes([PING]) + varint(self.ping_out) + varint(time.monotonic_ns() // 1000) + blob(b""))

    def on_ping(self, r, _):
        nonce, stamp, payload = r.varint(32), r.varint(), r.bytes(1024)
        r.end()
        self.send(bytes([PONG]) + varint(nonce) + varint(stamp) + blob(payload))

    def on_pong(self, r, _):
        nonce, stamp, _payload = r.varint(32), r.varint(), r.bytes(1024)
        r.end()
        if nonce != self.ping_out:
            return
        self.rtts.append(time.monotonic_ns() // 1000 - stamp)
        self.ping_out = None
        if self.pings_left > 0:
            self.ping()
        else:
            self.emit("pongs", count=len(self.rtts), medianMicros=int(statistics.median(self.rtts)))

    def busy(self):
        """Whether this side still has work of its own on the link (before --hold starts counting)."""
        if not self.handshaken or self.o.mode == "relay":
            return True
        if self.o.pair and not self.pairing_over:
            return True
        if (self.invited or not self.dialer) and not self.accepted:
            return True
        return self.pings_left > 0 or self.ping_out is not None

    def summary(self):
        return {"handshake": self.handshaken, "handshakeFailed": self.failed, "impostor": self.impostor,
                "code": self.code, "accepted": self.accepted, "token": self.token, "pongs": len(self.rtts),
                "declineReason": self.decline_reason, "byeReason": self.bye_reason, "closedBy": self.closed_by,
                "kinds": self.kinds}


# MARK: Running

def connect(host, port, deadline):
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic()))
            sock.settimeout(10)
            return sock
        except OSError as error:
            if time.monotonic() >= deadline - 0.2:
                emit("connectFailed", error=str(error))
                return None
            time.sleep(0.1)


def listen(host, port):
    server = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, port))
    server.listen(1)
    return server


def run(o):
    deadline = time.monotonic() + o.seconds
    keys = Keys(o.key_file)
    links, server, relay_printed = {}, None, False
    if o.mode in ("accept", "relay"):
        server = listen(o.host, o.listen_port)
    if o.mode in ("dial", "relay"):
        sock = connect(o.dial_host, o.dial_port, deadline)
        if sock is not None:
            links["dialled"] = Link(sock, True, o, keys, "dialled" if o.mode == "relay" else None)
    while time.monotonic() < deadline and (server or any(not link.closed for link in links.values())):
        now = time.monotonic()
        for link in links.values():
            if not link.closed and link.idle_since is None and not link.busy():
                link.idle_since = now
            hold = o.hold if o.hold is not None else (0 if link.dialer else None)
            if not link.closed and link.idle_since is not None and hold is not None and now - link.idle_since >= hold:
                link.close("us", bye=LEAVING)
        if o.mode == "relay" and not relay_printed and all(
                name in links and links[name].handshaken for name in ("accepted", "dialled")):
            relay_printed = True
            emit("relayCodes", codeToAcceptedSide=links["accepted"].code, codeToDialledSide=links["dialled"].code)
        open_links = {link.sock: link for link in links.values() if not link.closed}
        readable, _, _ = select.select(list(open_links) + ([server] if server else []), [], [], 0.05)
        for ready in readable:
            if ready is server:
                sock, _ = server.accept()
                server.close()
                server = None
                sock.settimeout(10)
                links["accepted"] = Link(sock, False, o, keys, "accepted" if o.mode == "relay" else None)
            elif ready in open_links:
                open_links[ready].on_readable()
    for link in links.values():
        link.close("us", bye=LEAVING)
    if server:
        server.close()
    if o.mode == "relay":
        emit("done", mode="relay", links={name: link.summary() for name, link in links.items()})
    else:
        link = next(iter(links.values()), None)
        emit("done", mode=o.mode, connected=link is not None, **(link.summary() if link else {}))


def main():
    parser = argparse.ArgumentParser(description="An independent LanSession peer (wire format version 3).")
    modes = parser.add_subparsers(dest="mode", required=True)
    dial = modes.add_parser("dial", help="dial a peer (Noise initiator)")
    dial.add_argument("dial_host")
    dial.add_argument("dial_port", type=int)
    accept = modes.add_parser("accept", help="take one connection (Noise responder)")
    accept.add_argument("listen_port", type=int)
    relay = modes.add_parser("relay", help="a man in the middle for pairing")
    relay.add_argument("listen_port", type=int)
    relay.add_argument("dial_host")
    relay.add_argument("dial_port", type=int)
    for sub in (dial, accept, relay):
        sub.add_argument("--host", default="127.0.0.1", help="address to listen on")
        sub.add_argument("--session", default="e2e")
        sub.add_argument("--name", default="python-peer")
        sub.add_argument("--secret-file", help="admit by this secret (Noise XXpsk3)")
        sub.add_argument("--key-file", help="keep the device keys here (64 bytes, made if missing)")
        sub.add_argument("--claim", help="put this peer id (16 hex digits) in the hello: an impostor")
        sub.add_argument("--pings", type=int, default=0, help="pings to send once the link is accepted")
        sub.add_argument("--pair", action="store_true", help="ask to pair after the handshake")
        sub.add_argument("--confirm", action="store_true", help="confirm the pairing at once")
        sub.add_argument("--hold", type=float, default=None, help="seconds to stay once done")
        sub.add_argument("--no-invite", action="store_true", help="dialer: send no invitation")
        sub.add_argument("--seconds", type=float, default=15.0, help="hard overall time limit")
    o = parser.parse_args()
    if o.claim is not None and (len(o.claim) != 16 or not all(c in "0123456789abcdefABCDEF" for c in o.claim)):
        parser.error("--claim takes 16 hex digits")
    o.secret = None
    if o.secret_file:
        with open(o.secret_file, "rb") as f:
            o.secret = f.read()
        o.secret = o.secret[:-1] if o.secret.endswith(b"\n") else o.secret
    o.pair = o.pair or o.mode == "relay"
    if len(o.name.encode()) > 63 or len(o.session.encode()) > 63:
        parser.error("names are at most 63 UTF-8 bytes")
    run(o)
    return 0


if __name__ == "__main__":
    sys.exit(main())
