#!/usr/bin/env python3
"""An independent LanSession peer (wire format version 3), for interoperability tests.

Written from docs/wire-format.md alone on Python's `noiseprotocol` (module `noise`) and `cryptography`, sharing no
code with the Swift implementation: a test that links a Swift peer with it checks the specification itself.

    dial HOST PORT               dial (Noise initiator); a refused connection is retried until --seconds ends
    accept PORT [--host H]       take one connection (Noise responder)
    relay LISTEN_PORT HOST PORT  a man in the middle for pairing: takes one connection and dials HOST:PORT, each
                                 with its own handshake, asks both to pair and prints both codes (`relayCodes`)

Each notable event is one JSON object per line on stdout (hello, handshake, handshakeFailed, helloRefused,
impostorRefused, pairing, pairingStep, invitation, acceptedInvitation, accepted, declined, bye, trust, pongs,
relayCodes, protocolError, connectFailed, closed with every kind number received), the last one `done` with a
summary; `handshake` has the hash h, the pairing code, both peer ids and fingerprints, and peer ids and link tokens
are 16 hex digits. It ends within --seconds and exits 0 (2 on a usage error): a test runs it beside a Swift peer and
asserts on those lines. The dialer invites after the handshake (with --pair once both confirmed; not with
--no-invite), pings once accepted, and says `bye` when done and --hold passed; the acceptor accepts any invitation,
pings once it accepted, and waits for the other side to close unless --hold is given.
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
HELLO, ACCEPT, DECLINE, INVITATION, PING, PONG, BYE, NOISE, TRUST, PAIRING = 1, 2, 3, 4, 5, 6, 7, 0x0B, 0x0C, 0x0D
# Fields of the messages this peer reads (hello and trust have readers of their own): u8/u64 fixed width,
# vN a varint of N bits, bN bytes of at most N.
LAYOUTS = {ACCEPT: "u64", DECLINE: "u8", INVITATION: "b1024 v32", PING: "v32 v64 b1024", PONG: "v32 v64 b1024",
           BYE: "u8", NOISE: "b4096", PAIRING: "u8"}
CAP_ENCRYPTION, CAP_PSK = 1 << 2, 1 << 4
CIPHERS_EXTENSION, MAX_HELLO_CIPHERS = 3, 8  # the hello's cipher list (sections 3.2 and 9.2)
CHACHAPOLY, AESGCM = 1, 2
CIPHER_NAMES = {"chachapoly": CHACHAPOLY, "aesgcm": AESGCM}
CIPHER_PARTS = {CHACHAPOLY: "ChaChaPoly", AESGCM: "AESGCM"}
VERSION_MISMATCH, WRONG_SESSION, AUTHENTICATION_FAILED = 4, 5, 7  # decline reasons
LEAVING, PROTOCOL_ERROR = 1, 3  # bye reasons
REQUEST, CONFIRM, REJECT = 1, 2, 3  # pairing steps
MAX_FRAME, MAX_PLAINTEXT, TAG, REKEY_INTERVAL = 65536, 16384, 16, 1 << 20
SWIFT_KEY_MAGIC = b"LanSession device key 1\n"


class Malformed(Exception):
    """A frame, record or field that breaks the wire format: fatal for the link."""


def emit(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


# Encoding (sections 1, 3 and 4)

def varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n >> 7 else 0))
        n >>= 7
        if not n:
            return bytes(out)


def blob(data):
    return varint(len(data)) + data


def message(kind, *fields):
    """A framed body: fields are bytes as they are, or ints as one byte."""
    body = bytes([kind]) + b"".join(bytes([f]) if isinstance(f, int) else f for f in fields)
    return varint(len(body)) + body


class Reader:
    """Reads a body's fields; refuses truncation, overlong varints and fields or lists above their limit."""

    def __init__(self, data, pos=0):
        self.data, self.pos = bytes(data), pos

    def raw(self, n):
        if self.pos + n > len(self.data):
            raise Malformed("truncated")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def uint(self, size):
        return int.from_bytes(self.raw(size), "little")

    def varint(self, bits=64):
        value, start = 0, self.pos
        while True:
            byte = self.raw(1)[0]
            value |= (byte & 0x7F) << (7 * (self.pos - start - 1))
            if not byte & 0x80:
                break
            if self.pos - start >= (bits + 6) // 7:
                raise Malformed("overlong varint")
        if (byte == 0 and self.pos - start > 1) or value >> bits:
            raise Malformed("overlong varint")
        return value

    def count(self, limit):
        n = self.varint(32)
        if n > limit:
            raise Malformed(f"{n} bytes or entries where {limit} fit")
        return n

    def bytes(self, limit):
        return self.raw(self.count(limit))

    def string(self, limit=63):
        try:
            return self.bytes(limit).decode("utf-8")
        except UnicodeDecodeError:
            raise Malformed("invalid UTF-8") from None

    def fields(self, layout):
        values = [self.uint(int(f[1:]) // 8) if f[0] == "u" else self.varint(int(f[1:])) if f[0] == "v"
                  else self.bytes(int(f[1:])) for f in layout.split()]
        self.end()
        return values

    def end(self):
        if self.pos != len(self.data):
            raise Malformed("trailing bytes")


def take_frame(buf):
    """Removes one complete frame from `buf`: (the frame with its header, its body), or None while incomplete."""
    length = 0
    for i in range(min(len(buf), 4)):
        length |= (buf[i] & 0x7F) << (7 * i)
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
    return message(HELLO, varint(h["version"]), h["peerID"].to_bytes(8, "little"),
                   h["incarnation"].to_bytes(8, "little"), varint(h["capabilities"]), varint(h["port"]),
                   blob(h["name"].encode()), blob(h["session"].encode()), varint(len(h["extensions"])),
                   *(varint(t) + blob(v) for t, v in h["extensions"]))


def decode_hello(r):
    h = {"version": r.varint(32), "peerID": r.uint(8), "incarnation": r.uint(8), "capabilities": r.varint(32),
         "port": r.varint(16), "name": r.string(), "session": r.string()}
    h["extensions"] = [(r.varint(16), r.bytes(255)) for _ in range(r.count(8))]
    r.end()
    if h["version"] == 0:
        raise Malformed("protocol version 0")
    return h


def ciphers_taken(extensions):
    """The ciphers a hello's sender takes (section 9.2): those of its list this peer knows; ChaChaPoly alone without
    a list, or with an empty or too long one."""
    listed = next((v for t, v in extensions if t == CIPHERS_EXTENSION), None)
    if listed is None or not 1 <= len(listed) <= MAX_HELLO_CIPHERS:
        return [CHACHAPOLY]
    return [c for c in listed if c in CIPHER_PARTS]


def cipher_choice(one, other):
    """AESGCM when both take it, else ChaChaPoly; None when one of them does not take that."""
    choice = AESGCM if AESGCM in one and AESGCM in other else CHACHAPOLY
    return choice if choice in one and choice in other else None


def skip_statements(r, limit):
    """Reads a list of statements (section 9.6) without believing any: this peer trusts nobody's word."""
    n = r.count(limit)
    for _ in range(n):  # verb, subject key and signing key, name, version, time, issuer, signature
        r.raw(65), r.string(), r.varint(), r.varint(), r.raw(72)
    return n


# Keys and what derives from them (section 9)

def load_keys(key_file):
    """The static X25519 and the Ed25519 signing private keys, 64 bytes, kept in `key_file` (mode 0600) if given;
    a Swift peer's `device-key` file (the same 64 bytes after a magic line) is read too."""
    if key_file and os.path.exists(key_file):
        with open(key_file, "rb") as f:
            material = f.read()
        material = material[len(SWIFT_KEY_MAGIC):] if material.startswith(SWIFT_KEY_MAGIC) else material
        if len(material) != 64:
            raise SystemExit(f"{key_file}: expected 64 bytes")
    else:
        material = secrets.token_bytes(64)
        if key_file:
            with os.fdopen(os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
                f.write(material)
    static_public = x25519.X25519PrivateKey.from_private_bytes(material[:32]).public_key().public_bytes_raw()
    signing_public = ed25519.Ed25519PrivateKey.from_private_bytes(material[32:]).public_key().public_bytes_raw()
    return material[:32], static_public, signing_public


def peer_id(static_public):
    return int.from_bytes(hashlib.sha256(static_public).digest()[:8], "little") or 1


def fingerprint(static_public):
    letters = base64.b32encode(hashlib.sha256(static_public).digest()[:10]).decode()
    return "-".join(letters[i:i + 4] for i in range(0, 16, 4))


def pairing_code(h):
    digest = hashlib.sha256(b"LanSession v3 pairing code" + h).digest()
    return f"{int.from_bytes(digest[:4], 'big') % 1_000_000:06d}"


def session_psk(secret, session):
    return HKDF(hashes.SHA256(), 32, salt=b"LanSession v3 secret", info=session.encode()).derive(secret)


# One link, dialled or accepted

class Link:
    def __init__(self, sock, dialer, o, keys, tag=None):
        self.sock, self.dialer, self.o, self.tag, self.psk = sock, dialer, o, tag, o.secret is not None
        self.static, self.static_public, self.signing_public = keys
        self.inbuf, self.plain, self.kinds, self.rtts = bytearray(), bytearray(), [], []
        self.noise = self.hs = self.remote_hello = self.remote_frame = self.ping_out = self.cipher = None
        self.code = self.token = self.decline_reason = self.bye_reason = self.closed_by = self.idle_since = None
        self.opening = self.sealing = self.handshaken = self.closed = self.failed = self.impostor = False
        self.invited = self.accepted = self.confirmed = self.peer_confirmed = self.pairing_over = False
        self.step = self.sealed = self.opened = self.pings_left = 0
        self.local_frame = encode_hello({
            "version": VERSION, "peerID": int(o.claim, 16) if o.claim else peer_id(self.static_public),
            "incarnation": secrets.randbits(64), "capabilities": CAP_ENCRYPTION | (CAP_PSK if self.psk else 0),
            "port": 0, "name": o.name, "session": o.session,
            "extensions": [] if o.ciphers is None else [(CIPHERS_EXTENSION, bytes(o.ciphers))]})
        self.write(self.local_frame)  # each side sends its hello at once

    def emit(self, event, **fields):
        emit(event, **({"link": self.tag} if self.tag else {}), **fields)

    def write(self, data):
        try:
            self.sock.sendall(data)
        except OSError:
            self.close("peer")

    def send(self, kind, *fields):
        """Sends a message; once sealing, as records of at most 16384 bytes of the frame stream."""
        data = message(kind, *fields)
        if not self.sealing:
            return self.write(data)
        out = bytearray()
        for i in range(0, len(data), MAX_PLAINTEXT):
            record = self.noise.encrypt(data[i:i + MAX_PLAINTEXT])
            out += len(record).to_bytes(2, "little") + record
            self.sealed += 1
            if self.sealed % REKEY_INTERVAL == 0:
                self.noise.rekey_outbound_cipher()
        self.write(bytes(out))

    def close(self, by, bye=None):
        if not self.closed and bye is not None and (self.sealing or self.noise is None):
            self.send(BYE, bye)
        if self.closed:
            return
        self.closed, self.closed_by = True, by
        self.sock.close()
        self.emit("closed", by=by, kinds=self.kinds, declineReason=self.decline_reason, byeReason=self.bye_reason)

    # Input: frames in clear up to the handshake's last message, then records that hold frames

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
            self.opened += 1
            if self.opened % REKEY_INTERVAL == 0:
                self.noise.rekey_inbound_cipher()

    def handle(self, whole, body):
        kind, r = body[0], Reader(body, 1)
        self.kinds.append(kind)
        if not self.handshaken and kind not in (HELLO, NOISE, DECLINE, BYE):
            raise Malformed(f"kind {kind} before the handshake")
        if kind == HELLO:
            self.on_hello(decode_hello(r), whole)
        elif kind == TRUST:
            statements = skip_statements(r, 64)
            r.end()
            self.emit("trust", statements=statements)
        elif kind in LAYOUTS:  # other kinds (ack, resume, members, application commands) are only recorded
            handler = {ACCEPT: self.on_accept, DECLINE: self.on_decline, INVITATION: self.on_invitation,
                       PING: self.on_ping, PONG: self.on_pong, BYE: self.on_bye, NOISE: self.on_noise,
                       PAIRING: self.on_pairing}[kind]
            handler(*r.fields(LAYOUTS[kind]))

    # Hello and handshake (sections 9.2 and 9.3)

    def on_hello(self, h, whole):
        if self.remote_hello is not None:
            raise Malformed("a second hello")
        if encode_hello(h) != whole:
            raise Malformed("a hello that is not canonical")
        self.remote_hello, self.remote_frame, caps = h, whole, h["capabilities"]
        self.emit("hello", peerID=f"{h['peerID']:016x}", name=h["name"], version=h["version"], capabilities=caps,
                  session=h["session"])
        reason = (VERSION_MISMATCH if h["version"] != VERSION else WRONG_SESSION if h["session"] != self.o.session
                  else AUTHENTICATION_FAILED if not caps & CAP_ENCRYPTION or bool(caps & CAP_PSK) != self.psk
                  else None)
        if reason is None:
            mine = [CHACHAPOLY] if self.o.ciphers is None else self.o.ciphers
            self.cipher = cipher_choice(mine, ciphers_taken(h["extensions"]))
            reason = AUTHENTICATION_FAILED if self.cipher is None else None
        if reason is not None:
            self.send(DECLINE, reason)
            self.emit("helloRefused", reason=reason)
            return self.close("us")
        self.start_noise()
        if self.dialer:
            self.send(NOISE, blob(bytes(self.noise.write_message(b""))))  # message 1, empty payload

    def start_noise(self):
        self.noise = NoiseConnection.from_name(
            f"Noise_{'XXpsk3' if self.psk else 'XX'}_25519_{CIPHER_PARTS[self.cipher]}_SHA256".encode())
        self.noise.set_as_initiator() if self.dialer else self.noise.set_as_responder()
        self.noise.set_keypair_from_private_bytes(Keypair.STATIC, self.static)
        d, a = (self.local_frame, self.remote_frame) if self.dialer else (self.remote_frame, self.local_frame)
        self.noise.set_prologue(b"LanSession v3 prologue" + len(d).to_bytes(4, "little") + d
                                + len(a).to_bytes(4, "little") + a)
        if self.psk:
            self.noise.set_psks(psk=session_psk(self.o.secret, self.o.session))
        self.noise.start_handshake()
        self.hs = self.noise.noise_protocol.handshake_state  # holds the remote static key after the handshake

    def on_noise(self, handshake_message):
        if self.noise is None or self.handshaken:
            raise Malformed("an unexpected noise message")
        final = self.dialer or self.step == 1  # message 2 at the dialer, message 3 at the acceptor
        try:
            payload = Reader(self.noise.read_message(handshake_message))
            if final:  # the handshake payload: signing key, statements
                signing, statements = payload.raw(32), skip_statements(payload, 8)
                payload.end()
            reply = None if self.step == 1 else self.noise.write_message(self.signing_public + varint(0))
        except Exception as error:  # a tag that does not verify, a wrong length, a bad key or payload
            self.failed = True
            self.emit("handshakeFailed", error=f"{type(error).__name__}: {error}")
            return self.close("us")  # without a word
        if reply is not None:
            self.send(NOISE, blob(bytes(reply)))  # message 2 at the acceptor, 3 at the dialer
        self.step = 1
        if final:
            self.opening = self.sealing = True
            self.finish_handshake(signing, statements)

    def finish_handshake(self, signing, statements):
        remote_key, h = self.hs.rs.public_bytes, self.noise.get_handshake_hash()
        proven, claimed = peer_id(remote_key), self.remote_hello["peerID"]
        self.code = pairing_code(h)
        self.emit("handshake", h=h.hex(), code=self.code, remotePeerID=f"{proven:016x}",
                  remoteFingerprint=fingerprint(remote_key), localPeerID=f"{peer_id(self.static_public):016x}",
                  localFingerprint=fingerprint(self.static_public), remoteSigningKey=signing.hex(),
                  remoteStatements=statements, protocol=self.noise.noise_protocol.name.decode())
        if proven != claimed:
            self.impostor = True
            self.send(DECLINE, AUTHENTICATION_FAILED)
            self.emit("impostorRefused", claimed=f"{claimed:016x}", proven=f"{proven:016x}")
            return self.close("us")
        self.handshaken = True
        if self.o.pair:
            self.send(PAIRING, REQUEST)
            self.emit("pairing", code=self.code)
            if self.o.confirm:
                self.send(PAIRING, CONFIRM)
                self.confirmed = True
        elif self.dialer:
            self.invite()

    # After the handshake (sections 3.3 and 9.5)

    def invite(self):
        if not (self.o.no_invite or self.invited or self.o.mode == "relay"):
            self.invited = True
            self.send(INVITATION, blob(b""), varint(30000))

    def on_pairing(self, step):
        self.emit("pairingStep", step=step)
        if step == REQUEST and self.o.confirm and not self.confirmed:
            self.send(PAIRING, CONFIRM)
            self.confirmed = True
        self.peer_confirmed |= step == CONFIRM
        self.pairing_over |= step in (CONFIRM, REJECT)
        if self.dialer and self.confirmed and self.peer_confirmed:
            self.invite()

    def on_invitation(self, context, timeout):
        self.emit("invitation", context=context.hex(), timeoutMs=timeout)
        self.token, self.accepted = secrets.randbits(64), True
        self.send(ACCEPT, self.token.to_bytes(8, "little"))
        self.emit("acceptedInvitation", token=f"{self.token:016x}")
        self.start_pings()

    def on_accept(self, token):
        self.token, self.accepted = token, True
        self.emit("accepted", token=f"{token:016x}")
        self.start_pings()

    def on_decline(self, reason):
        self.decline_reason = reason
        self.emit("declined", reason=reason)
        self.close("peer")

    def on_bye(self, reason):
        self.bye_reason = reason
        self.emit("bye", reason=reason)
        self.close("peer")

    def start_pings(self):
        if self.o.pings > 0 and self.ping_out is None and not self.rtts:
            self.pings_left = self.o.pings
            self.ping()

    def ping(self):
        self.pings_left -= 1
        self.ping_out = self.o.pings - self.pings_left  # nonces 1, 2, ...
        self.send(PING, varint(self.ping_out), varint(time.monotonic_ns() // 1000), blob(b""))

    def on_ping(self, nonce, stamp, payload):
        self.send(PONG, varint(nonce), varint(stamp), blob(payload))

    def on_pong(self, nonce, stamp, _payload):
        if nonce != self.ping_out:
            return
        self.rtts.append(time.monotonic_ns() // 1000 - stamp)
        self.ping_out = None
        if self.pings_left > 0:
            return self.ping()
        self.emit("pongs", count=len(self.rtts), medianMicros=int(statistics.median(self.rtts)))

    def busy(self):
        """Whether this side still has work of its own on the link; --hold counts from when it has none."""
        if not self.handshaken or self.o.mode == "relay" or (self.o.pair and not self.pairing_over):
            return True
        if (self.invited or not self.dialer) and not self.accepted:
            return True
        return self.pings_left > 0 or self.ping_out is not None

    def summary(self):
        return {"handshake": self.handshaken, "handshakeFailed": self.failed, "impostor": self.impostor,
                "code": self.code, "accepted": self.accepted,
                "token": None if self.token is None else f"{self.token:016x}", "pongs": len(self.rtts),
                "declineReason": self.decline_reason, "byeReason": self.bye_reason, "closedBy": self.closed_by,
                "kinds": self.kinds}


# Running

def connect(host, port, deadline):
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic()))
            sock.settimeout(10)
            return sock
        except OSError as error:
            if time.monotonic() >= deadline - 0.2:
                return emit("connectFailed", error=str(error))
            time.sleep(0.1)


def run(o):
    deadline, keys = time.monotonic() + o.seconds, load_keys(o.key_file)
    links, server, relay_printed = {}, None, False
    relay = o.mode == "relay"
    if o.mode in ("accept", "relay"):
        family = socket.AF_INET6 if ":" in o.host else socket.AF_INET
        server = socket.create_server((o.host, o.listen_port), family=family)
    if o.mode in ("dial", "relay"):
        sock = connect(o.dial_host, o.dial_port, deadline)
        if sock is not None:
            links["dialled"] = Link(sock, True, o, keys, "dialled" if relay else None)
    while time.monotonic() < deadline and (server or any(not link.closed for link in links.values())):
        now = time.monotonic()
        for link in links.values():
            if not link.closed and link.idle_since is None and not link.busy():
                link.idle_since = now
            hold = o.hold if o.hold is not None else (0 if link.dialer else None)
            if not link.closed and link.idle_since is not None and hold is not None and now - link.idle_since >= hold:
                link.close("us", bye=LEAVING)
        if relay and not relay_printed and all(name in links and links[name].handshaken for name in
                                               ("accepted", "dialled")):
            relay_printed = True
            emit("relayCodes", codeToAcceptedSide=links["accepted"].code, codeToDialledSide=links["dialled"].code)
        open_links = {link.sock: link for link in links.values() if not link.closed}
        readable, _, _ = select.select(list(open_links) + ([server] if server else []), [], [], 0.05)
        for ready in readable:
            if ready is server:
                sock, _ = server.accept()
                sock.settimeout(10)
                server.close()
                server = None
                links["accepted"] = Link(sock, False, o, keys, "accepted" if relay else None)
            elif ready in open_links:
                open_links[ready].on_readable()
    for link in links.values():
        link.close("us", bye=LEAVING)
    if server:
        server.close()
    if relay:
        return emit("done", mode="relay", links={name: link.summary() for name, link in links.items()})
    link = next(iter(links.values()), None)
    emit("done", mode=o.mode, connected=link is not None, **(link.summary() if link else {}))


def main():
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--host", default="127.0.0.1", help="address to listen on (accept, relay)")
    common.add_argument("--session", default="e2e", help="session name")
    common.add_argument("--name", default="python-peer", help="display name")
    common.add_argument("--secret-file", help="admit by this file's secret (Noise XXpsk3; one final newline dropped)")
    common.add_argument("--key-file", help="device keys (64 bytes, mode 0600), made if missing; else random ones")
    common.add_argument("--claim", help="put this peer id (16 hex digits) in the hello: an impostor")
    common.add_argument("--pings", type=int, default=0, help="pings to send, one at a time, once accepted")
    common.add_argument("--pair", action="store_true", help="ask to pair after the handshake")
    common.add_argument("--confirm", action="store_true", help="confirm the pairing at once")
    common.add_argument("--hold", type=float, help="seconds to stay once done (default: dialer 0, acceptor: wait)")
    common.add_argument("--no-invite", action="store_true", help="dialer: send no invitation")
    common.add_argument("--seconds", type=float, default=15.0, help="hard overall time limit")
    common.add_argument("--ciphers", help="the hello's cipher list, e.g. aesgcm,chachapoly (default: none, as an older "
                        "release: ChaChaPoly)")
    parser = argparse.ArgumentParser(description="An independent LanSession peer (wire format version 3).")
    modes = parser.add_subparsers(dest="mode", required=True)
    for mode, arguments in (("dial", ["dial_host", "dial_port"]), ("accept", ["listen_port"]),
                            ("relay", ["listen_port", "dial_host", "dial_port"])):
        sub = modes.add_parser(mode, parents=[common])
        for argument in arguments:
            sub.add_argument(argument, type=int if argument.endswith("port") else str)
    o = parser.parse_args()
    if o.claim is not None and (len(o.claim) != 16 or any(c not in "0123456789abcdefABCDEF" for c in o.claim)):
        parser.error("--claim takes 16 hex digits")
    if len(o.name.encode()) > 63 or len(o.session.encode()) > 63:
        parser.error("names are at most 63 UTF-8 bytes")
    o.secret = None
    if o.secret_file:
        with open(o.secret_file, "rb") as f:
            o.secret = f.read()
        o.secret = o.secret[:-1] if o.secret.endswith(b"\n") else o.secret
        if not o.secret:
            parser.error("the secret is empty")
    if o.ciphers is not None:
        names = o.ciphers.split(",")
        if any(n not in CIPHER_NAMES for n in names) or len(set(names)) != len(names):
            parser.error("--ciphers takes a comma-separated list of aesgcm and chachapoly")
        o.ciphers = [CIPHER_NAMES[n] for n in names]
    o.pair = o.pair or o.mode == "relay"
    run(o)
    return 0


if __name__ == "__main__":
    sys.exit(main())
