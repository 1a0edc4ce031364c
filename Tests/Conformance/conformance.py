#!/usr/bin/env python3
"""A conformance test peer for LanSession (wire format version 3).

An independent implementation written from docs/wire-format.md (normative) and docs/control-protocol.md, on Python's
standard library, `noiseprotocol` (module `noise`) and `cryptography`. It reuses the encoding helpers of
Tests/Interop/lansession_peer.py (framing, hello, field reader, peer id) and implements the rest itself: the Noise XX
handshake as dialer and as acceptor, sealed records, sealed datagrams with the datagram keys of section 9.4, the
`resume` exchange of section 3.3 as leader and as follower, acknowledgements and a replay buffer, and enough of the
original apps (counter, bubbles, layout; sections 3.2 and 11.7 to 11.9) to act as a member, coordinator included.

It runs next to a real `sessiond` (admission open, no discovery) and drives it with `session-client --json`:

    python3 Tests/Conformance/conformance.py --sessiond-port 47000 --host 127.0.0.1 \\
        --client .build/debug/session-client --control /tmp/x/control.sock --session e2e \\
        --sessiond .build/debug/sessiond --state-dir /tmp/x --seconds 120

--only NAME[,NAME...] runs only those checks; --list prints the checks and exits.

Output: one JSON object per line per check, {"check", "section", "passed", "detail"}, then
{"summary": {"passed": n, "failed": m}}. Exit status 0 when every check passed, 1 otherwise, 2 on a usage error.
When the daemon and the specification disagree, the detail names the section and what each does. Everything ends
within --seconds (checks not started by then are reported failed); only processes started here are stopped, by pid.

Each check makes connections of its own, with keys of its own. A member whose link the daemon closed stays a member
of the daemon's session (lost, not left) and would take one of its --max-peers seats (section 11.2), so after each
check such a peer comes back once with its key and says `bye(leaving)`.

Checks (the names are stable):

    dialer_leader             3.3    dials; this peer's id is the lower one: it sends `resume` first; resume (0, 1),
                                     greeting, counterState, members, no layout from the daemon; connected in `peers`
    dialer_follower           3.3    the same with this peer's id the higher one: the daemon leads and, as the
                                     coordinator, sends `layout`
    acceptor                  3.3    listens; a second sessiond dials it with --peer; listen-port extension;
                                     connected on both sides
    invitation_ask            11.2   a second sessiond with --accept ask holds an invitation (context listed) until
                                     its operator answers: accept connects, decline sends decline(1 rejected)
    increments                3.2    counterIncrement both ways, exactly once; old counts resent do not count; of two
                                     entries the larger wins; an entry for the receiver's own id is ignored and
                                     reported (countClaimedAbove); the daemon never sends this peer its own entry
    ack                       11.5   the daemon acknowledges the sequenced messages it received
    resume_follower           3.3    an abrupt cut with messages in flight both ways (unread here, half written
                                     there), redial, resume with the daemon leading: nothing lost, nothing doubled
    resume_leader             3.3    the same with this peer leading the resume
    late_joiner_bubbles       11.8   a bubble held and moved before this peer joins (the daemon coordinates): its
                                     state arrives, in the order of section 11.11; then its drop and the release
    data                      10.1   data both ways: reliable on the link; unreliable in a sealed datagram once the
                                     probes are answered (datagram sequences and counters 1, 2, 3, ...)
    datagram_fallback         11.6   datagram port announced, probes never answered: `unreliable: fallback`; the
                                     holder sends its position again, and later moves and unreliable data come on
                                     the link
    malformed_kind            4      a sealed record with kind 0x99 closes that link only, without a bye; the daemon
                                     goes on serving
    refuse_version            7      hello with protocol version 2: decline versionMismatch (4), before the session
    refuse_session            11.2   hello for another session: decline wrongSession (5), before encryption
    refuse_encryption         9.3    hello without capability bit 2, or with bit 4: authenticationFailed (7)
    refuse_impostor           9.1    hello claiming a peer id that is not the proven key's: authenticationFailed (7)
    refuse_peer_id            11.2   hello with peer id 0, or the daemon's own: closed without a word
    bad_noise_message         9.3    a Noise message 3 that does not verify: closed without a word, counted
    refuse_early_kind         9.3    a `ping` before the handshake: bye(protocolError)
    malformed_fields          6      count 0, overlong varint, trailing bytes, NaN, frame length 0 or too long, a bad
                                     record tag or length: each closes its link without a bye
    misplaced                 11.2   a second hello, a noise, a second invitation, an accept, a pairing after the
                                     handshake: bye(protocolError)
    ignored                   11     messages that make no sense to the application are ignored and still counted;
                                     an ack above what was sent is not an error
    unknown_extension         3.2    hello extensions of unknown types, and a listen port of one byte, are ignored
    ping_pong                 11.4   `pong` echoes a `ping`'s nonce, timestamp and payload
    resume_gap                11.5   a resume whose `next` is above received + 1: the daemon takes next - 1 as
                                     received and reports `resynchronised`
    restart                   11.4   a new incarnation: the old link gets bye(replaced), numbering starts over
    duplicate_path            3.3    a second link of the same dialler on the same path: the older gets
                                     bye(replaced), the newer goes on with the numbering
    liveness                  11.4   heartbeats every 250 ms; a silent link is closed after 2 s without a bye
    members                   11.3   `members` names the other peers, not the receiver; a peer that says
                                     bye(leaving) is dropped from it
    datagram_replay           9.4    a sealed datagram sent twice counts once; the second is dropped and counted
    datagram_not_sequenced    11.6   messages in datagrams are never counted; a counterIncrement there is ignored;
                                     malformed datagrams are dropped, the link stays
    no_datagram_port          11.6   a hello with datagram port 0: `fallback` at once
    late_joiner_coordinator   11.11  this peer joins with the lowest peer id and a pristine board: it adopts the
                                     daemon's board, which keeps its holder; this peer then coordinates
    peer_moves                3.2    this peer picks up a bubble (granted by the daemon) and moves it: an older move
                                     sequence is dropped, a newer one across the wrap applied; its drop frees it
    peer_coordinator          11.8   this peer is the coordinator: it grants the daemon's pickUp, sees its move and
                                     drop
    holder_lost               11.8   the coordinator frees the bubble of a holder that left and tells the others
    bubble_state_from_member  11.8   a bubbleState from a member that is not the coordinator is ignored
    stream_declined           11.10  a byte stream opened to sessiond while no client listens: streamEnd(side 1,
                                     declined)
    stream_taken              10.2   with a `session-client streams` listener: credit, chunks, end; the listener
                                     reports every byte and the SHA-256
    resource                  10.3   a resource pushed by this peer: credit, chunks, SHA-256, stored byte for byte
    resource_name             10.3   resources named dir/x and ../x: streamEnd(side 1, declined), no credit
"""

import argparse
import base64
import hashlib
import json
import math
import os
import secrets
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback

sys.dont_write_bytecode = True  # nothing written next to the shared helpers
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Interop"))

import lansession_peer as lp  # noqa: E402  (framing, hello, field reader, peer id)
import noise.state  # noqa: E402
from cryptography.exceptions import InvalidTag  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ed25519, x25519  # noqa: E402
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305  # noqa: E402
from noise.connection import Keypair, NoiseConnection  # noqa: E402

# Kinds (section 3.1)
HELLO, ACCEPT, DECLINE, INVITATION, PING, PONG, BYE, ACK, RESUME, MEMBERS, NOISE, TRUST, PAIRING = (
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D)
HANDSHAKE, NEGOTIATE, NEGOTIATE_CONFIRM, LAYOUT, PICKUP, MOVE, DROP, COUNTER_INCREMENT, COUNTER_STATE, \
    BUBBLE_STATE = range(0x20, 0x2A)
DATA, STREAM_OPEN, STREAM_CHUNK, STREAM_CREDIT, STREAM_END, APP_MESSAGE = range(0x30, 0x36)
KIND_NAMES = {
    HELLO: "hello", ACCEPT: "accept", DECLINE: "decline", INVITATION: "invitation", PING: "ping", PONG: "pong",
    BYE: "bye", ACK: "ack", RESUME: "resume", MEMBERS: "members", NOISE: "noise", TRUST: "trust",
    PAIRING: "pairing", HANDSHAKE: "handshake", NEGOTIATE: "negotiate", NEGOTIATE_CONFIRM: "negotiateConfirm",
    LAYOUT: "layout", PICKUP: "pickUp", MOVE: "move", DROP: "drop", COUNTER_INCREMENT: "counterIncrement",
    COUNTER_STATE: "counterState", BUBBLE_STATE: "bubbleState", DATA: "data", STREAM_OPEN: "streamOpen",
    STREAM_CHUNK: "streamChunk", STREAM_CREDIT: "streamCredit", STREAM_END: "streamEnd", APP_MESSAGE: "appMessage"}
CAP_DATAGRAMS, CAP_RESUME, CAP_ENCRYPTION = 1, 2, 4
DECLINE_REASONS = {0: "unspecified", 1: "rejected", 2: "full", 3: "timedOut", 4: "versionMismatch",
                   5: "wrongSession", 6: "duplicateLink", 7: "authenticationFailed", 8: "notTrusted"}
BYE_REASONS = {0: "unspecified", 1: "leaving", 2: "replaced", 3: "protocolError", 4: "removed"}
LEAVING, PROTOCOL_ERROR = 1, 3
MAX_PLAINTEXT, TAG = 16384, 16
PROTOCOL = b"Noise_XX_25519_ChaChaPoly_SHA256"
PROLOGUE_LABEL = b"LanSession v3 prologue"
DATAGRAM_LABEL = b"LanSession v3 datagrams"
BUBBLES = 3
# Where the bubbles start: their centres on the 320 x 480 point board (docs/control-protocol.md, "bubbles").
START = [(160.0, 80.0), (160.0, 200.0), (160.0, 360.0)]

# The datagram keys (section 9.4) come from the final chaining key, which noiseprotocol only has inside Split().
_datagram_keys = {}
_original_split = noise.state.SymmetricState.split


def _split(self):
    _datagram_keys[id(self.noise_protocol)] = self.noise_protocol.hkdf(self.ck, DATAGRAM_LABEL, 2)
    return _original_split(self)


noise.state.SymmetricState.split = _split


class Closed(Exception):
    """The daemon closed the link (or it broke) while this side waited for something."""


class Refused(Exception):
    """A handshake that did not complete: how it ended."""

    def __init__(self, what, decline=None, bye=None):
        super().__init__(what)
        self.what, self.decline, self.bye = what, decline, bye


class CheckFailed(Exception):
    pass


def hexid(value):
    return f"{value:016x}"


def u64(value):
    return value.to_bytes(8, "little")


def f32(value):
    return struct.pack("<f", value)


def msg(kind, *fields):
    return lp.message(kind, *fields)


def fmt_xy(x, y):
    return f"({x:g}, {y:g})"


# Decoding what the daemon sends (sections 3.1, 6 and 10)

def decode_body(kind, r):
    """The fields of a body after its kind byte, as a dict; raises lp.Malformed on anything section 6 rejects."""
    def f32r():
        value = struct.unpack("<f", r.raw(4))[0]
        if not math.isfinite(value):
            raise lp.Malformed("non-finite coordinate")
        return value

    if kind == PING or kind == PONG:
        f = {"nonce": r.varint(32), "timestamp": r.varint(64), "payload": r.bytes(1024)}
    elif kind == ACK:
        f = {"received": r.varint(64)}
    elif kind == RESUME:
        f = {"received": r.varint(64), "next": r.varint(64)}
    elif kind == BYE or kind == DECLINE:
        f = {"reason": r.uint(1)}
    elif kind == ACCEPT:
        f = {"token": r.uint(8)}
    elif kind == INVITATION:
        f = {"context": r.bytes(1024), "timeout": r.varint(32)}
    elif kind == PAIRING:
        f = {"step": r.uint(1)}
    elif kind == NOISE:
        f = {"message": r.bytes(4096)}
    elif kind == MEMBERS:
        members = []
        for _ in range(r.count(64)):
            member = {"peerID": r.uint(8), "name": r.string(63), "endpoints": []}
            for _ in range(r.count(4)):
                member["endpoints"].append((r.string(15), r.string(63), r.varint(16)))
            members.append(member)
        f = {"members": members}
    elif kind == TRUST:
        f = {"statements": lp.skip_statements(r, 64)}
    elif kind == HANDSHAKE:
        f = {"name": r.string(63)}
    elif kind == NEGOTIATE:
        f = {"index": r.uint(1), "timestamp": r.varint(64)}
    elif kind == NEGOTIATE_CONFIRM:
        f = {"index": r.uint(1)}
    elif kind == LAYOUT:
        f = {"entries": [(r.uint(8), r.uint(1)) for _ in range(r.count(128))]}
    elif kind == PICKUP:
        f = {"view": r.uint(1)}
    elif kind == MOVE:
        f = {"view": r.uint(1), "x": f32r(), "y": f32r(), "sequence": r.uint(2)}
    elif kind == DROP:
        f = {"view": r.uint(1), "x": f32r(), "y": f32r()}
    elif kind == COUNTER_INCREMENT:
        f = {"count": r.varint(64)}
        if f["count"] < 1:
            raise lp.Malformed("counterIncrement count 0")
    elif kind == COUNTER_STATE:
        f = {"entries": [(r.uint(8), r.varint(64)) for _ in range(r.count(128))]}
    elif kind == BUBBLE_STATE:
        f = {"view": r.uint(1), "holder": r.uint(8), "x": f32r(), "y": f32r()}
    elif kind == DATA:
        f = {"data": r.bytes(61440)}
    elif kind == APP_MESSAGE:
        f = {"app": r.uint(1), "data": r.bytes(61440)}
        if f["app"] == 0:
            raise lp.Malformed("appMessage number 0")
    elif kind == STREAM_OPEN:
        f = {"id": r.varint(32), "streamKind": r.uint(1), "name": r.string(255), "size": r.varint(64),
             "key": r.raw(16)}
        if f["streamKind"] > 1:
            raise lp.Malformed("stream kind out of range")
    elif kind == STREAM_CHUNK:
        f = {"id": r.varint(32), "offset": r.varint(64), "bytes": r.bytes(61440)}
    elif kind == STREAM_CREDIT:
        f = {"id": r.varint(32), "received": r.varint(64), "limit": r.varint(64)}
        if f["limit"] < f["received"]:
            raise lp.Malformed("streamCredit limit below received")
    elif kind == STREAM_END:
        f = {"id": r.varint(32), "side": r.uint(1), "status": r.uint(1), "digest": r.bytes(32),
             "reason": r.string(255)}
        if f["side"] > 1 or len(f["digest"]) not in (0, 32):
            raise lp.Malformed("streamEnd side or digest out of range")
    else:
        raise lp.Malformed(f"unknown kind 0x{kind:02x}")
    r.end()
    return f


# Keys and identities (section 9.1)

class Identity:
    def __init__(self, material=None):
        material = material or secrets.token_bytes(64)
        self.static = material[:32]
        self.static_public = x25519.X25519PrivateKey.from_private_bytes(self.static).public_key().public_bytes_raw()
        self.signing_public = ed25519.Ed25519PrivateKey.from_private_bytes(
            material[32:]).public_key().public_bytes_raw()
        self.id = lp.peer_id(self.static_public)


def make_identity(predicate=None, tries=60000):
    """A fresh identity whose peer id satisfies `predicate` (within `tries` keys); None if none did."""
    for _ in range(tries if predicate else 1):
        private = secrets.token_bytes(32)
        public = x25519.X25519PrivateKey.from_private_bytes(private).public_key().public_bytes_raw()
        if predicate is None or predicate(lp.peer_id(public)):
            return Identity(private + secrets.token_bytes(32))
    return None


# One member's view of the remote daemon: sequencing across links (3.3, 11.5) and the original apps (11.7 to 11.9)

class Pair:
    def __init__(self, ident, name="conformance"):
        self.ident, self.name = ident, name
        self.incarnation = secrets.randbits(64)
        self.cond = threading.Condition()  # guards everything below and every link's state
        self.remote_id = None
        self.next_seq, self.received, self.ack_sent, self.remote_acked = 1, 0, 0, 0
        self.replay = []  # (sequence, frame) sent and not acknowledged
        self.auto_ack = True
        self.active = None  # the link sequenced messages go on
        self.msgs = []  # sequenced messages received: dicts kind, name, f, seq, link
        self.dgrams = []  # messages received in datagrams
        self.control = []  # control messages received after the handshake: (link number, kind, fields)
        self.violations = []
        self.gaps = []
        self.counts = {}  # the G-Counter as this peer knows it (others' entries)
        self.own_entries = []  # entries about this peer's own id received in counterState
        self.board = [{"holder": 0, "x": x, "y": y} for x, y in START]
        self.pristine = True
        self.adopting = set()
        self.dg_seq = 0  # datagrams sent to the daemon, across links (section 5)
        self.greeted = False
        self.said_bye = False
        self.links_made = 0

    @property
    def leader(self):
        return self.remote_id is not None and self.ident.id < self.remote_id

    coordinator = leader  # two members: the lower peer id is player 0

    def wait(self, predicate, timeout):
        with self.cond:
            return self.cond.wait_for(predicate, timeout)

    def of_kind(self, kind):
        with self.cond:
            return [m for m in self.msgs if m["kind"] == kind]

    # Sending sequenced messages

    def send_seq(self, frame):
        """Numbers a sequenced frame and sends it on the active link (or keeps it for the next resume)."""
        with self.cond:
            seq = self.next_seq
            self.next_seq += 1
            self.replay.append((seq, frame))
            link = self.active
            if link is not None and link.send_active and not link.closed:
                link.write(frame)
            return seq

    def make_resume(self):
        self.ack_sent = self.received
        nxt = self.replay[0][0] if self.replay else self.next_seq
        return msg(RESUME, lp.varint(self.received), lp.varint(nxt))

    def trim(self, upto):
        self.replay = [(s, f) for s, f in self.replay if s > upto]

    # The original apps, as a member (and as the coordinator when this peer's id is the lower one)

    def on_app(self, kind, f, link, via):
        remote = self.remote_id
        if kind == COUNTER_INCREMENT:
            self.counts[remote] = max(self.counts.get(remote, 0), f["count"])
        elif kind == COUNTER_STATE:
            for pid, count in f["entries"]:
                if pid == self.ident.id:
                    self.own_entries.append(count)  # ignored: a peer's own count grows by its own increments
                else:
                    self.counts[pid] = max(self.counts.get(pid, 0), count)
        elif kind == BUBBLE_STATE and f["view"] < BUBBLES:
            # Section 11.8: applied from the coordinator; from any peer while this board is pristine (it adopts that
            # peer's board, the other two bubbles included when they follow).
            if self.pristine:
                self.adopting = {0, 1, 2} - {f["view"]}
            elif f["view"] in self.adopting:
                self.adopting.discard(f["view"])
            elif self.coordinator:
                return
            self.board[f["view"]].update(holder=f["holder"], x=f["x"], y=f["y"])
            self.pristine = False
        elif kind == PICKUP and f["view"] < BUBBLES and self.coordinator:
            bubble = self.board[f["view"]]
            if bubble["holder"] == 0:
                bubble["holder"] = remote
                self.pristine = False
                self.send_seq(msg(BUBBLE_STATE, bytes([f["view"]]), u64(remote), f32(bubble["x"]),
                                  f32(bubble["y"])))
        elif kind == MOVE and f["view"] < BUBBLES and self.board[f["view"]]["holder"] == remote:
            self.board[f["view"]].update(x=f["x"], y=f["y"])
        elif kind == DROP and f["view"] < BUBBLES and self.board[f["view"]]["holder"] == remote:
            self.board[f["view"]].update(holder=0, x=f["x"], y=f["y"])
            if self.coordinator:
                self.send_seq(msg(BUBBLE_STATE, bytes([f["view"]]), u64(0), f32(f["x"]), f32(f["y"])))

    def greet(self):
        """After the first activation: the original app's greeting; the coordinator's layout (section 11.7)."""
        if self.greeted:
            return
        self.greeted = True
        self.send_seq(msg(HANDSHAKE, lp.blob(self.name.encode())))
        if self.coordinator:
            self.send_seq(msg(LAYOUT, lp.varint(2), u64(self.ident.id), bytes([0]), u64(self.remote_id), bytes([1])))


class Link:
    """One TCP link: hello, Noise XX, invitation and accept (synchronously), then a reader thread."""

    def __init__(self, pair, sock, dialer, o, *, version=3, session=None, caps=None, datagrams=False,
                 answer_probes=True, extensions=(), claim=None):
        self.pair, self.sock, self.dialer, self.o = pair, sock, dialer, o
        self.cond = pair.cond
        self.wlock = threading.Lock()
        pair.links_made += 1
        self.number = pair.links_made
        self.inbuf, self.plain = bytearray(), bytearray()
        self.noise = None
        self.opening = self.sealing = False
        self.closed, self.close_reason, self.bye_reason = False, None, None
        self.kinds = []
        self.remote_hello = None
        self.token = None
        self.resume_sent = self.resume_received = False
        self.recv_active = self.send_active = False
        self.ignored_sequenced = 0
        self.pongs = []
        self.protocol_errors = []
        self.paused = False
        self.muted = False  # nothing written (a misplaced message is being tested)
        self.write_error = None
        self.last_write = time.monotonic()
        self.stopping = False
        self.thread = None
        self.udp = None
        self.answer_probes = answer_probes
        self.probes = 0
        self.dgram_errors = []
        self.dk_out = self.dk_in = None
        self.dg_counter = 0
        self.dgram_log = []  # datagrams received: sequence, counter, kinds
        if datagrams:
            self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.udp.bind((o.host, 0))
        if caps is None:
            caps = CAP_ENCRYPTION | CAP_RESUME | (CAP_DATAGRAMS if datagrams else 0)
        self.hello = {"version": version, "peerID": claim if claim is not None else pair.ident.id,
                      "incarnation": pair.incarnation, "capabilities": caps,
                      "port": self.udp.getsockname()[1] if self.udp else 0, "name": pair.name,
                      "session": session if session is not None else o.session, "extensions": list(extensions)}
        self.local_frame = lp.encode_hello(self.hello)

    # Writing

    def write_raw(self, data):
        if self.muted:
            return
        with self.wlock:
            try:
                self.sock.sendall(data)
                self.last_write = time.monotonic()
            except OSError as error:
                self._write_failed(error)

    def write(self, frame):
        """Writes frames (sealed once the handshake is done, in records of at most 16384 bytes)."""
        if not self.sealing:
            return self.write_raw(frame)
        if self.muted:
            return
        with self.wlock:
            out = bytearray()
            for i in range(0, len(frame), MAX_PLAINTEXT):
                record = self.noise.encrypt(bytes(frame[i:i + MAX_PLAINTEXT]))
                out += len(record).to_bytes(2, "little") + record
            try:
                self.sock.sendall(bytes(out))
                self.last_write = time.monotonic()
            except OSError as error:
                self._write_failed(error)

    def _write_failed(self, error):
        """The reader goes on until the end of what the daemon sent (a `bye` may still be there)."""
        self.write_error = str(error)
        if self.thread is None or not self.thread.is_alive():
            self._closed_by(f"write failed: {error}")

    def _closed_by(self, reason):
        if not self.closed:
            self.closed, self.close_reason = True, reason

    # Reading

    def _open_records(self):
        while len(self.inbuf) >= 2:
            length = int.from_bytes(self.inbuf[:2], "little")
            if not TAG <= length <= MAX_PLAINTEXT + TAG:
                raise lp.Malformed(f"record length {length}")
            if len(self.inbuf) < 2 + length:
                return
            try:
                self.plain += self.noise.decrypt(bytes(self.inbuf[2:2 + length]))
            except Exception:
                raise lp.Malformed("a record that does not open") from None
            del self.inbuf[:2 + length]

    def _take(self):
        if self.opening:
            self._open_records()
        return lp.take_frame(self.plain if self.opening else self.inbuf)

    def _next_frame(self, deadline):
        while True:
            got = self._take()
            if got is not None:
                return got
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("timed out")
            ready, _, _ = select.select([self.sock], [], [], remaining)
            if not ready:
                continue
            try:
                data = self.sock.recv(65536)
            except OSError as error:
                self._closed_by(f"reset: {error}")
                raise Closed(str(error)) from None
            if not data:
                self._closed_by("closed by the daemon")
                raise Closed("closed by the daemon")
            self.inbuf += data

    # The handshake (sections 3.3, 9.2, 9.3, 11.2)

    def handshake(self, timeout=5.0, invite=True, corrupt=False):
        """Hello, Noise, invitation/accept. Returns when the link is handshaken; raises Refused otherwise."""
        deadline = time.monotonic() + timeout
        self.write_raw(self.local_frame)  # each side sends its hello at once
        try:
            whole, body = self._expect(deadline, (HELLO,))
            hello = lp.decode_hello(lp.Reader(body, 1))
            self.remote_hello, remote_frame = hello, whole
            with self.cond:
                self.pair.remote_id = hello["peerID"]
            if hello["version"] != 3:
                raise Refused(f"the daemon's hello has version {hello['version']}")
            if not hello["capabilities"] & CAP_ENCRYPTION:
                raise Refused("the daemon's hello lacks the encryption bit")
            self.noise = NoiseConnection.from_name(PROTOCOL)
            self.noise.set_as_initiator() if self.dialer else self.noise.set_as_responder()
            self.noise.set_keypair_from_private_bytes(Keypair.STATIC, self.pair.ident.static)
            d, a = (self.local_frame, remote_frame) if self.dialer else (remote_frame, self.local_frame)
            self.noise.set_prologue(PROLOGUE_LABEL + len(d).to_bytes(4, "little") + d + len(a).to_bytes(4, "little")
                                    + a)
            self.noise.start_handshake()
            hs = self.noise.noise_protocol.handshake_state
            payload = self.pair.ident.signing_public + lp.varint(0)
            if self.dialer:
                self.write_raw(msg(NOISE, lp.blob(bytes(self.noise.write_message(b"")))))
                _, body = self._expect(deadline, (NOISE,))
                self._read_noise(body, final=True)
                self.opening = True  # everything read after message 2 is sealed
                message3 = bytearray(self.noise.write_message(payload))
                if corrupt:
                    message3[-1] ^= 0x01  # a tag that does not verify
                self.write_raw(msg(NOISE, lp.blob(bytes(message3))))
                self.sealing = True
            else:
                _, body = self._expect(deadline, (NOISE,))
                self._read_noise(body, final=False)
                self.write_raw(msg(NOISE, lp.blob(bytes(self.noise.write_message(payload)))))
                _, body = self._expect(deadline, (NOISE,))
                self._read_noise(body, final=True)
                self.opening = self.sealing = True
            keys = _datagram_keys.pop(id(self.noise.noise_protocol))
            self.dk_out, self.dk_in = (keys[0], keys[1]) if self.dialer else (keys[1], keys[0])
            proven = lp.peer_id(hs.rs.public_bytes)
            if proven != hello["peerID"]:
                raise Refused(f"the daemon's proven key is peer id {hexid(proven)}, its hello claims "
                              f"{hexid(hello['peerID'])}")
            if self.dialer:
                if invite:
                    self.write(msg(INVITATION, lp.blob(b""), lp.varint(30000)))
                    _, body = self._expect(deadline, (ACCEPT,))
                    self.token = decode_body(ACCEPT, lp.Reader(body, 1))["token"]
            else:
                _, body = self._expect(deadline, (INVITATION,))
                self.token = secrets.randbits(64) or 1
                self.write(msg(ACCEPT, u64(self.token)))
        except TimeoutError:
            raise Refused(f"timed out; kinds received {self._kind_names()}") from None
        except Closed as error:
            raise Refused(f"link closed ({error}); kinds received {self._kind_names()}") from None
        except lp.Malformed as error:
            raise Refused(f"malformed input from the daemon: {error}") from None
        return self

    def _read_noise(self, body, final):
        handshake_message = decode_body(NOISE, lp.Reader(body, 1))["message"]
        try:
            payload = self.noise.read_message(handshake_message)
        except Exception as error:
            raise Refused(f"a Noise message that does not verify: {type(error).__name__}: {error}") from None
        if final:
            r = lp.Reader(payload)
            r.raw(32)
            lp.skip_statements(r, 8)
            r.end()

    def _expect(self, deadline, kinds):
        """The next frame of one of `kinds`; control frames in between are handled; decline and bye end it."""
        while True:
            whole, body = self._next_frame(deadline)
            kind = body[0]
            self.kinds.append(kind)
            if kind in kinds:
                return whole, body
            if kind == DECLINE:
                reason = decode_body(DECLINE, lp.Reader(body, 1))["reason"]
                raise Refused(f"declined with {reason} ({DECLINE_REASONS.get(reason, '?')})", decline=reason)
            if kind == BYE:
                reason = decode_body(BYE, lp.Reader(body, 1))["reason"]
                raise Refused(f"bye {reason} ({BYE_REASONS.get(reason, '?')})", bye=reason)
            if self.sealing:
                with self.cond:
                    self._dispatch(whole, body)
            else:
                raise Refused(f"unexpected kind 0x{kind:02x} during the handshake")

    def _kind_names(self):
        return [KIND_NAMES.get(k, f"0x{k:02x}") for k in self.kinds]

    # After the handshake: the reader thread

    def start(self):
        """Starts reading; the leader activates the link at once (section 3.3)."""
        with self.cond:
            if self.pair.leader:
                self.write(self.pair.make_resume())
                self.resume_sent = self.recv_active = True
                self.pair.active = self
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self):
        while not self.stopping and not self.closed:
            with self.cond:
                self._process()
                self.cond.notify_all()
            socks = ([] if self.paused else [self.sock]) + ([self.udp] if self.udp else [])
            try:
                ready, _, _ = select.select(socks, [], [], 0.05) if socks else ([], [], time.sleep(0.05))
            except (OSError, ValueError):
                break
            for s in ready:
                if s is self.udp:
                    self._on_datagram()
                    continue
                reason = "closed by the daemon"
                try:
                    data = self.sock.recv(65536)
                except OSError as error:
                    data, reason = None, f"reset: {error}"
                if data:
                    self.inbuf += data
                else:
                    with self.cond:
                        self._process()
                        self._closed_by(reason)
                        self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def _process(self):
        try:
            while not self.closed:
                got = self._take()
                if got is None:
                    break
                self.kinds.append(got[1][0])
                self._dispatch(*got)
        except lp.Malformed as error:
            self.protocol_errors.append(str(error))
            self.pair.violations.append(f"link {self.number}: malformed input from the daemon: {error}")
            self._closed_by(f"malformed input: {error}")
            return
        pair = self.pair
        if pair.auto_ack and self.recv_active and pair.received > pair.ack_sent and not self.closed:
            pair.ack_sent = pair.received
            self.write(msg(ACK, lp.varint(pair.received)))

    def _dispatch(self, whole, body):
        kind, pair = body[0], self.pair
        f = decode_body(kind, lp.Reader(body, 1))
        if kind < 0x20:
            pair.control.append((self.number, kind, f))
        if kind == PING:
            self.write(msg(PONG, lp.varint(f["nonce"]), lp.varint(f["timestamp"]), lp.blob(f["payload"])))
        elif kind == PONG:
            self.pongs.append(f)
        elif kind == ACK:
            pair.remote_acked = max(pair.remote_acked, f["received"])
            pair.trim(f["received"])
        elif kind == RESUME:
            self._on_resume(f)
        elif kind == BYE:
            self.bye_reason = f["reason"]
            self._closed_by(f"bye {f['reason']} ({BYE_REASONS.get(f['reason'], '?')})")
        elif kind == DECLINE:
            self._closed_by(f"decline {f['reason']} after the handshake")
        elif kind in (HELLO, NOISE, ACCEPT, INVITATION, PAIRING):
            pair.violations.append(f"link {self.number}: {KIND_NAMES[kind]} after the handshake")
        elif kind >= 0x20:
            if not self.recv_active:
                self.ignored_sequenced += 1  # not the active link: the sender resends it after the resume
                pair.violations.append(f"link {self.number}: {KIND_NAMES.get(kind)} before the link was active")
                return
            pair.received += 1
            pair.msgs.append({"kind": kind, "name": KIND_NAMES.get(kind), "f": f, "seq": pair.received,
                              "link": self.number, "t": time.monotonic()})
            pair.on_app(kind, f, self, "link")

    def _on_resume(self, f):
        pair = self.pair
        if pair.leader:
            if not self.resume_sent or self.resume_received:
                pair.violations.append(f"link {self.number}: resume from the follower without an activation "
                                       "(section 3.3: the leader sends resume first)")
                return
        else:
            if self.resume_received:
                pair.violations.append(f"link {self.number}: a second resume on the link")
            self.write(pair.make_resume())  # computed before the leader's is applied (section 11.5)
            self.resume_sent = self.recv_active = True
            pair.active = self
        self.resume_received = True
        if f["received"] > pair.next_seq - 1:
            pair.violations.append(f"resume says {f['received']} received, only {pair.next_seq - 1} were sent")
        pair.remote_acked = max(pair.remote_acked, f["received"])
        pair.trim(f["received"])
        if f["next"] > pair.received + 1:
            pair.gaps.append((pair.received, f["next"]))
            pair.received = f["next"] - 1
        self.send_active = True
        for _, frame in pair.replay:
            self.write(frame)
        pair.greet()

    # Datagrams (sections 5, 9.4 and 11.6)

    def _on_datagram(self):
        try:
            data, address = self.udp.recvfrom(4096)
        except OSError:
            return
        if self.dk_in is None or self.token is None:
            return
        try:
            r = lp.Reader(data)
            token, sequence = r.uint(8), r.varint(32)
            header_length = r.pos
            if token != self.token:
                self.dgram_errors.append(f"a datagram with token {hexid(token)}, the link's is {hexid(self.token)}")
                return
            counter = data[header_length:header_length + 8]
            if len(counter) < 8:
                raise lp.Malformed("truncated")
            plain = ChaCha20Poly1305(self.dk_in).decrypt(b"\0" * 4 + counter, data[header_length + 8:],
                                                         data[:header_length + 8])
        except InvalidTag:
            self.dgram_errors.append("a datagram whose tag does not verify with dk of section 9.4")
            return
        except lp.Malformed as error:
            self.dgram_errors.append(f"a malformed datagram: {error}")
            return
        buf, messages = bytearray(plain), []
        try:
            while buf:
                got = lp.take_frame(buf)
                if got is None:
                    raise lp.Malformed("a frame runs past the datagram's end")
                body = got[1]
                messages.append((body[0], decode_body(body[0], lp.Reader(body, 1))))
            if not messages:
                raise lp.Malformed("no frame")
        except lp.Malformed as error:
            self.dgram_errors.append(f"a malformed datagram: {error}")
            return
        with self.cond:
            self.dgram_log.append({"sequence": sequence, "counter": int.from_bytes(counter, "little"),
                                   "kinds": [k for k, _ in messages], "t": time.monotonic()})
            for kind, f in messages:
                if kind == PING:
                    self.probes += 1
                    if self.answer_probes:
                        self.send_datagram(msg(PONG, lp.varint(f["nonce"]), lp.varint(f["timestamp"]),
                                               lp.blob(f["payload"])), address, sequence=0)
                else:
                    self.pair.dgrams.append({"kind": kind, "name": KIND_NAMES.get(kind), "f": f,
                                             "t": time.monotonic()})
                    if kind == MOVE:
                        self.pair.on_app(kind, f, self, "datagram")
            self.cond.notify_all()

    def send_datagram(self, frames, address=None, sequence=None):
        """Seals frames into one datagram of this link (token, sequence, counter) and sends it; returns it."""
        if sequence is None:
            self.pair.dg_seq = (self.pair.dg_seq + 1) & 0xFFFFFFFF
            sequence = self.pair.dg_seq
        self.dg_counter += 1
        header = u64(self.token) + lp.varint(sequence)
        counter = u64(self.dg_counter)
        sealed = ChaCha20Poly1305(self.dk_out).encrypt(b"\0" * 4 + counter, bytes(frames), header + counter)
        datagram = header + counter + sealed
        self.udp.sendto(datagram, address or (self.o.host, self.remote_hello["port"]))
        return datagram

    # Ending

    def stop_reading(self):
        self.stopping = True
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(2)

    def bye(self):
        if not self.closed and self.sealing:
            self.write(msg(BYE, LEAVING))
            if self.send_active or self.recv_active:
                self.pair.said_bye = True
        self.close()

    def abort(self):
        """Closes abruptly: a TCP reset, unread bytes dropped."""
        self.stop_reading()
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close()

    def close(self):
        self.stop_reading()
        with self.cond:
            self._closed_by("closed here")
        for s in (self.sock, self.udp):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass


# The daemon, through session-client

class ControlError(Exception):
    pass


class Control:
    def __init__(self, client, socket_path):
        self.client, self.socket_path = client, socket_path

    def __call__(self, *args, timeout=10):
        command = [self.client, "--control", self.socket_path, "--json", *[str(a) for a in args]]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ControlError(f"session-client {' '.join(map(str, args))}: no answer in {timeout} s") from None
        if done.returncode != 0:
            raise ControlError(f"session-client {' '.join(map(str, args))}: exit {done.returncode}: "
                               f"{done.stderr.strip()[:300]}")
        out = done.stdout.strip()
        return json.loads(out) if out else None

    def peer(self, pid):
        for entry in self("peers"):
            if entry.get("peerID") == hexid(pid):
                return entry
        return None

    def bubble(self, view):
        return next(b for b in self("bubble", "list") if b["view"] == view)


CHILDREN = []


class Watch:
    """`session-client watch --json` in the background, its events kept."""

    def __init__(self, control, seconds=30):
        self.proc = subprocess.Popen(
            [control.client, "--control", control.socket_path, "--json", "watch", "--timeout", str(seconds)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        CHILDREN.append(self.proc)
        self.events, self.cond = [], threading.Condition()
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            self.ready.set()
            with self.cond:
                if isinstance(event, dict) and "event" in event:
                    self.events.append(event)
                self.cond.notify_all()
        self.ready.set()

    def wait(self, predicate, timeout):
        with self.cond:
            return self.cond.wait_for(lambda: predicate(self.events), timeout)

    def stop(self):
        stop_process(self.proc)


def stop_process(proc, grace=3):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(2)
    if proc in CHILDREN:
        CHILDREN.remove(proc)


def poll(fn, timeout, interval=0.1):
    """Calls fn until it returns something true, or the timeout; returns its last value."""
    end = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() >= end:
            return value
        time.sleep(interval)


def free_port(host):
    """A port free for both TCP and UDP on host."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
            t.bind((host, 0))
            port = t.getsockname()[1]
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                    u.bind((host, port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port")


# The checks

def sequenced_names(pair):
    with pair.cond:
        return [m["name"] for m in pair.msgs]


class Run:
    def __init__(self, o):
        self.o = o
        self.ctl = Control(o.client, o.control)
        self.results = []
        self.links = []
        self.pairs = []
        self.daemon_id = None
        self.daemon_name = None

    # Helpers

    def identity(self, relation=None):
        """A fresh identity; relation 'above' or 'below' the daemon's peer id (None: at random)."""
        if relation is None:
            return make_identity()
        if relation == "above":
            ident = make_identity(lambda pid: pid > self.daemon_id)
        else:
            ident = make_identity(lambda pid: pid < self.daemon_id)
        if ident is None:
            raise CheckFailed(f"no key with a peer id {relation} the daemon's {hexid(self.daemon_id)} found")
        return ident

    def dial(self, pair, timeout=5.0, start=True, corrupt=False, **options):
        if pair not in self.pairs:
            self.pairs.append(pair)
        sock = socket.create_connection((self.o.host, self.o.port), timeout=timeout)
        sock.settimeout(10)
        link = Link(pair, sock, True, self.o, **options)
        self.links.append(link)
        link.handshake(timeout, corrupt=corrupt)
        return link.start() if start else link

    def activated(self, pair, link, timeout=5.0):
        if not pair.wait(lambda: link.send_active or link.closed, timeout):
            raise CheckFailed(f"section 3.3: the link was not activated within {timeout} s (leader: "
                              f"{'this peer' if pair.leader else 'the daemon'}; kinds received "
                              f"{link._kind_names()})")
        if link.closed:
            raise CheckFailed(f"the link closed before activation: {link.close_reason}")
        return link

    def connect(self, relation=None, timeout=5.0, ident=None, **options):
        """A fresh member: dials, handshakes, activates. Returns (pair, link)."""
        pair = Pair(ident or self.identity(relation))
        link = self.dial(pair, timeout, **options)
        return pair, self.activated(pair, link, timeout)

    def wait_connected(self, ctl, pid, timeout=5.0):
        return poll(lambda: (lambda e: e if e and e.get("state") == "connected" else None)(ctl.peer(pid)),
                    timeout, 0.1)

    def counter_of(self, pid):
        counter = self.ctl("counter")
        return counter["peers"].get(hexid(pid), {}).get("count", 0), counter

    def ensure_daemon_count(self):
        counter = self.ctl("counter")
        if counter["local"] == 0:
            self.ctl("increment", "-n", 1)
            counter = self.ctl("counter")
        return counter["local"]

    def settle(self, pair, link, timeout=3.0):
        """Sends a sequenced message the receiver ignores and waits for its ack: everything this peer sent before
        has been processed. Returns the sequence number (None on no ack)."""
        seq = pair.send_seq(msg(NEGOTIATE_CONFIRM, 0))  # ignored by the receiver, still counted (section 11.7)
        return seq if pair.wait(lambda: pair.remote_acked >= seq or link.closed, timeout) and not link.closed \
            else None

    def cleanup_links(self):
        for link in self.links:
            try:
                if not link.closed:
                    link.bye()
                else:
                    link.close()
            except Exception:
                pass
        self.links = []
        # A member whose link the daemon closed (or that went silent) stays a member, lost, and takes one of the
        # daemon's seats (--max-peers, section 11.2): it comes back once, with the same key, and leaves.
        left = {pair.ident.id for pair in self.pairs if pair.said_bye}
        gone = {}
        for pair in self.pairs:
            if pair.greeted and pair.ident.id not in left:
                gone[pair.ident.id] = pair.ident
        self.pairs = []
        for ident in gone.values():
            pair = Pair(ident)
            try:
                link = self.dial(pair, 3)
                pair.wait(lambda: link.send_active or link.closed, 3)
                link.bye()
            except (Refused, OSError):
                pass
        self.links = []

    def report(self, name, section, passed, detail):
        line = {"check": name, "section": section, "passed": bool(passed), "detail": detail}
        self.results.append(line)
        print(json.dumps(line), flush=True)

    @staticmethod
    def _try(ctl, *args):
        try:
            return ctl(*args, timeout=3)
        except ControlError:
            return None

    @staticmethod
    def first_resume(pair, link):
        with pair.cond:
            return next(((f["received"], f["next"]) for (n, k, f) in pair.control if k == RESUME and n == link.number),
                        None)

    # 1. dialer role, both sides of the resume exchange (3.3, 11.2, 11.3, 11.5, 11.7)

    def check_dialer(self, leader):
        local = self.ensure_daemon_count()
        pair, link = self.connect("below" if leader else "above")
        notes, problems = [], []
        notes.append(f"this peer {hexid(pair.ident.id)} is the {'leader' if leader else 'follower'} of the daemon "
                     f"{hexid(self.daemon_id)}")
        resume = self.first_resume(pair, link)
        if resume != (0, 1):
            problems.append(f"section 11.5: the daemon's resume on a pair's first link is {resume}, expected (0, 1)")
        else:
            notes.append(f"resume (0, 1) {'answered' if leader else 'from the daemon, answered'}")
        got = pair.wait(lambda: pair.of_kind(HANDSHAKE), 3)
        if not got:
            problems.append("section 11.7: no `handshake` (0x20) greeting from the daemon within 3 s")
        else:
            name = got[0]["f"]["name"]
            notes.append(f"greeting handshake {name!r}")
            if name != self.daemon_name:
                problems.append(f"section 11.7: greeting name {name!r}, the daemon's display name is "
                                f"{self.daemon_name!r}")
            if pair.msgs[0]["kind"] != HANDSHAKE:
                problems.append(f"section 11.7: the first sequenced message is {pair.msgs[0]['name']}, not the "
                                f"`handshake` greeting")
        if pair.wait(lambda: pair.counts.get(self.daemon_id, 0) >= local, 3):
            if not pair.of_kind(COUNTER_STATE):
                problems.append("section 11.9: no counterState when this peer connected")
            else:
                notes.append(f"counterState with the daemon's {local}")
        else:
            problems.append(f"section 11.9: the daemon's count {local} did not arrive within 3 s (have "
                            f"{pair.counts.get(self.daemon_id)})")
        if leader:
            time.sleep(0.3)
            layouts = pair.of_kind(LAYOUT)
            if layouts:
                problems.append(f"section 11.7: the daemon is not the coordinator but sent layout "
                                f"{layouts[0]['f']['entries']}")
            else:
                notes.append("this peer coordinates and sent the layout; none from the daemon")
        else:
            got = pair.wait(lambda: pair.of_kind(LAYOUT), 3)
            expected = sorted([(self.daemon_id, 0), (pair.ident.id, 1)])
            if not got:
                problems.append("section 11.7: no `layout` from the daemon, the coordinator, within 3 s")
            elif sorted(got[-1]["f"]["entries"]) != expected:
                problems.append(f"section 11.7: layout {got[-1]['f']['entries']} is not daemon 0, this peer 1")
            else:
                notes.append("layout daemon 0, this peer 1")
        if pair.wait(lambda: any(k == MEMBERS for (_, k, _) in pair.control), 1.5):
            lists = [f["members"] for (_, k, f) in pair.control if k == MEMBERS]
            named = {m["peerID"] for m in lists[-1]}
            if named & {pair.ident.id, self.daemon_id}:
                problems.append(f"section 11.3: members names the receiver or the sender: "
                                f"{[hexid(p) for p in named]}")
            else:
                notes.append(f"members of {len(named)}")
        else:
            problems.append("section 11.3: no `members` within 1.5 s of connecting")
        entry = self.wait_connected(self.ctl, pair.ident.id, 3)
        if not entry:
            problems.append(f"`session-client peers` does not show {hexid(pair.ident.id)} connected within 3 s: "
                            f"{self.ctl.peer(pair.ident.id)}")
        else:
            notes.append(f"peers: connected, playerIndex {entry.get('playerIndex')}")
            expected_index = 0 if leader else 1
            if entry.get("playerIndex") not in (None, expected_index):
                problems.append(f"section 11.7: playerIndex {entry.get('playerIndex')}, expected {expected_index}")
        problems += pair.violations
        link.bye()
        return not problems, "; ".join(problems + notes)

    # 2. acceptor role

    def check_acceptor(self):
        o = self.o
        listener = socket.create_server((o.host, 0))
        my_port = listener.getsockname()[1]
        state = os.path.join(o.state_dir, f"conformance-d2-{os.getpid()}")
        os.makedirs(state, mode=0o700, exist_ok=True)
        control = os.path.join(state, "control.sock")
        port = free_port(o.host)
        log = open(os.path.join(state, "sessiond.log"), "wb")
        proc = subprocess.Popen([o.sessiond, "--admission", "open", "--no-discovery", "--listen", o.host, "--port",
                                 str(port), "--name", "d2", "--session", o.session, "--state-dir", state,
                                 "--control", control, "--peer", f"{o.host}:{my_port}"],
                                stdout=log, stderr=subprocess.STDOUT)
        CHILDREN.append(proc)
        notes, problems = [], []
        try:
            ctl2 = Control(o.client, control)
            status = poll(lambda: self._try(ctl2, "status"), 8, 0.1)
            if not status:
                raise CheckFailed("the second sessiond did not answer `status` within 8 s")
            d2 = int(status["peerID"], 16)
            # The connection waits in the listen backlog while the key is chosen: this peer leads this time.
            ident = make_identity(lambda pid: pid < d2) or make_identity()
            listener.settimeout(8)
            try:
                sock, _ = listener.accept()
            except socket.timeout:
                raise CheckFailed(f"the second sessiond (--peer {o.host}:{my_port}) did not dial within 8 s") \
                    from None
            sock.settimeout(10)
            pair = Pair(ident)
            link = Link(pair, sock, False, o)
            self.links.append(link)
            link.handshake(5)
            link.start()
            self.activated(pair, link)
            notes.append(f"accepted the invitation of {hexid(d2)} with token {hexid(link.token)}; this peer is "
                         f"the {'leader' if pair.leader else 'follower'}")
            ports = [v for t, v in link.remote_hello["extensions"] if t == 2]
            if ports != [port.to_bytes(2, "little")]:
                problems.append(f"section 3.2: the dialler's hello carries listen port extensions {ports}, "
                                f"expected type 2 = {port} (u16le)")
            else:
                notes.append(f"listen port extension {port}")
            if link.remote_hello["port"] != port:
                problems.append(f"section 11.2: the datagram port is {link.remote_hello['port']}, the session port "
                                f"is {port}")
            if not pair.wait(lambda: pair.of_kind(HANDSHAKE), 3):
                problems.append("section 11.7: no `handshake` greeting within 3 s")
            entry = self.wait_connected(ctl2, ident.id, 4)
            if not entry:
                problems.append(f"the second sessiond's `peers` does not show this peer connected: "
                                f"{ctl2.peer(ident.id)}")
            else:
                notes.append("connected in its peers")
            problems += pair.violations
            link.bye()
        finally:
            listener.close()
            stop_process(proc)
            log.close()
        return not problems, "; ".join(problems + notes)

    def check_invitation_ask(self):
        """11.2: a sessiond that asks (--accept ask) holds an invitation, context and all, until its operator answers:
        `accept` brings the inviter in, `decline` sends decline(1 rejected)."""
        o = self.o
        state = os.path.join(o.state_dir, f"conformance-ask-{os.getpid()}")
        os.makedirs(state, mode=0o700, exist_ok=True)
        control = os.path.join(state, "control.sock")
        port = free_port(o.host)
        log = open(os.path.join(state, "sessiond.log"), "wb")
        proc = subprocess.Popen([o.sessiond, "--admission", "open", "--no-discovery", "--listen", o.host, "--port",
                                 str(port), "--name", "asks", "--session", o.session, "--state-dir", state,
                                 "--control", control, "--accept", "ask"], stdout=log, stderr=subprocess.STDOUT)
        CHILDREN.append(proc)
        notes, problems = [], []
        try:
            ctl2 = Control(o.client, control)
            if not poll(lambda: self._try(ctl2, "status"), 8, 0.1):
                raise CheckFailed("the sessiond with --accept ask did not answer `status` within 8 s")
            for answer in ("accept", "decline"):
                pair = Pair(make_identity())
                sock = socket.create_connection((o.host, port), timeout=5)
                sock.settimeout(10)
                link = Link(pair, sock, True, o)
                self.links.append(link)
                link.handshake(5, invite=False)
                context = f"conformance {answer}".encode()
                link.write(msg(INVITATION, lp.blob(context), lp.varint(30000)))
                held = poll(lambda: [i for i in (self._try(ctl2, "invitations") or [])
                                     if i.get("peerID") == hexid(pair.ident.id)], 5, 0.1)
                if not held:
                    raise CheckFailed(f"section 11.2: the invitation is not listed by `invitations` within 5 s")
                entry = held[0]
                if base64.b64decode(entry.get("context", "")) != context:
                    problems.append(f"section 4: the invitation's context reads {entry.get('context')!r}, sent "
                                    f"{context!r}")
                if answer == "accept":
                    ctl2("accept", entry["id"])
                    _, body = link._expect(time.monotonic() + 5, (ACCEPT,))
                    link.token = decode_body(ACCEPT, lp.Reader(body, 1))["token"]
                    link.start()
                    self.activated(pair, link)
                    if not self.wait_connected(ctl2, pair.ident.id, 4):
                        problems.append("accepted, but `peers` does not show this peer connected")
                    else:
                        notes.append("held until `accept`, then accepted and connected")
                    link.bye()
                else:
                    ctl2("decline", entry["id"], "--reason", "conformance")
                    try:
                        link._expect(time.monotonic() + 5, (ACCEPT,))
                        problems.append("section 11.2: declined by the operator, yet the link was accepted")
                    except Refused as refusal:
                        if refusal.decline != 1:
                            problems.append(f"section 11.2: the operator declined; the inviter got {refusal}, "
                                            f"expected decline(1 rejected)")
                        else:
                            notes.append("held until `decline`, then decline(1 rejected)")
                    link.close()
        finally:
            stop_process(proc)
            log.close()
        return not problems, "; ".join(problems + notes)

    # 3. increments, exactly once both ways (3.2, 11.9)

    def check_increments(self):
        pair, link = self.connect()
        notes, problems = [], []
        pid = pair.ident.id
        watch = Watch(self.ctl, 30)
        try:
            watch.ready.wait(0.5)
            base = self.ctl("counter")["local"]
            for count in range(1, 51):
                pair.send_seq(msg(COUNTER_INCREMENT, lp.varint(count)))
            if not poll(lambda: self.counter_of(pid)[0] == 50, 5, 0.1):
                problems.append(f"section 3.2: after counterIncrement 1..50 the daemon counts "
                                f"{self.counter_of(pid)[0]} for this peer")
            else:
                notes.append("50 increments counted 50")
            self.ctl("increment", "-n", 30)
            if pair.wait(lambda: pair.counts.get(self.daemon_id, 0) >= base + 30, 4):
                incs = [m["f"]["count"] for m in pair.of_kind(COUNTER_INCREMENT)]
                notes.append(f"the daemon's +30 arrived ({base} -> {pair.counts[self.daemon_id]}; counterIncrement "
                             f"{incs[-3:]})")
                if pair.counts[self.daemon_id] != base + 30:
                    problems.append(f"the daemon's count reached {pair.counts[self.daemon_id]}, expected {base + 30}")
            else:
                problems.append(f"section 3.2: the daemon's increment of 30 did not arrive within 4 s (have "
                                f"{pair.counts.get(self.daemon_id)}, expected {base + 30})")
            for count in (10, 25, 50):
                pair.send_seq(msg(COUNTER_INCREMENT, lp.varint(count)))
            pair.send_seq(msg(COUNTER_STATE, lp.varint(2), u64(pid), lp.varint(50), u64(self.daemon_id),
                              lp.varint(base + 1000)))
            last = pair.send_seq(msg(COUNTER_STATE, lp.varint(2), u64(pid), lp.varint(70), u64(pid),
                                     lp.varint(60)))
            if not pair.wait(lambda: pair.remote_acked >= last, 3):
                problems.append(f"section 11.5: no ack up to {last} within 3 s")
            mine, counter = self.counter_of(pid)
            if mine != 70:
                problems.append(f"section 3.2/11.9: after old counts resent (10, 25, 50) and a counterState with "
                                f"this peer at 70 and 60, the daemon counts {mine}, expected 70")
            else:
                notes.append("old counts resent did not count; of two entries the larger (70) won")
            if counter["local"] != base + 30:
                problems.append(f"section 11.9: a counterState entry for the daemon's own id ({base + 1000}) changed "
                                f"its count to {counter['local']}; a receiver ignores its own entry")
            else:
                notes.append("its own entry ignored")
            if watch.wait(lambda evs: any(e.get("event") == "countClaimedAbove" for e in evs), 2):
                notes.append("countClaimedAbove reported")
            else:
                problems.append("section 11.9: a count claimed above the daemon's own was not reported "
                                "(countClaimedAbove)")
            if pair.own_entries:
                problems.append(f"section 11.9: the daemon sent this peer its own entry in counterState: "
                                f"{pair.own_entries}")
            problems += pair.violations
            link.bye()
        finally:
            watch.stop()
        return not problems, "; ".join(problems + notes)

    def check_ack(self):
        pair, link = self.connect()
        last = 0
        for count in range(1, 11):
            last = pair.send_seq(msg(COUNTER_INCREMENT, lp.varint(count)))
        start = time.monotonic()
        ok = pair.wait(lambda: pair.remote_acked >= last, 3)
        delay = time.monotonic() - start
        acks = [f["received"] for (_, k, f) in pair.control if k == ACK]
        link.bye()
        if not ok:
            return False, (f"section 11.5: {last} sequenced messages sent (greeting included); no ack reached "
                           f"{last} within 3 s (acks {acks[-5:]}, resume said {pair.remote_acked})")
        too_high = [a for a in acks if a > last]
        if too_high:
            return False, f"section 11.5: ack {too_high} above the {last} messages sent"
        return True, (f"ack {pair.remote_acked} {delay * 1000:.0f} ms after {last} sequenced messages (acks "
                      f"{acks[-5:]})")

    # 4. resume after a cut

    def check_resume(self, leader):
        pair, link = self.connect("below" if leader else "above")
        pid = pair.ident.id
        notes, problems = [], []
        watch = Watch(self.ctl, 30)
        try:
            watch.ready.wait(0.5)
            pair.wait(lambda: pair.of_kind(HANDSHAKE) and self.daemon_id in pair.counts, 2)
            # Unread bytes from the daemon at the cut: stop reading and acknowledging, and let it send.
            with pair.cond:
                link.paused = True
                pair.auto_ack = False
            time.sleep(0.1)
            for _ in range(3):
                self.ctl("increment", "-n", 1)
            sent_texts = []

            def send(i):
                pair.send_seq(msg(COUNTER_INCREMENT, lp.varint(i)))
                if i % 4 == 0:
                    text = f"cut-{pid:016x}-{i}"
                    sent_texts.append(text)
                    pair.send_seq(msg(DATA, lp.blob(text.encode())))
            for i in range(1, 41):
                send(i)
            # Messages of this side in flight: kept for resending, half of their record written, then a reset.
            with pair.cond:
                link.send_active = False
                first_held = pair.next_seq
                for i in range(41, 45):
                    send(i)
                held = b"".join(f for s, f in pair.replay if s >= first_held)
                record = link.noise.encrypt(held)
                link.write_raw(len(record).to_bytes(2, "little") + record[:len(record) // 2])
                unacked_before = len(pair.replay)
            time.sleep(0.05)
            link.abort()
            background = threading.Thread(target=lambda: [self.ctl("increment", "-n", 1) for _ in range(3)])
            background.start()
            time.sleep(0.3)
            with pair.cond:
                pair.auto_ack = True
                received_before, sent_before = pair.received, pair.next_seq - 1
            link2 = self.dial(pair)
            self.activated(pair, link2)
            background.join(10)
            for i in range(45, 61):
                send(i)
            final = self.ctl("counter")["local"]
            if not poll(lambda: self.counter_of(pid)[0] == 60, 5, 0.1):
                problems.append(f"section 3.3: the daemon counts {self.counter_of(pid)[0]} for this peer after the "
                                f"resume, expected 60")
            else:
                notes.append("the daemon counts exactly 60")
            if not pair.wait(lambda: pair.counts.get(self.daemon_id, 0) >= final, 4):
                problems.append(f"section 3.3: this peer has {pair.counts.get(self.daemon_id)} for the daemon, "
                                f"which counts {final}")
            else:
                notes.append(f"the daemon's {final} received")
            incs = [m["f"]["count"] for m in pair.of_kind(COUNTER_INCREMENT)]
            if any(b <= a for a, b in zip(incs, incs[1:])):
                problems.append(f"section 3.3: counterIncrement counts from the daemon repeat or go back (a "
                                f"message doubled or reordered): {incs}")
            watch.wait(lambda evs: all(any(e.get("event") == "data" and e.get("text") == t for e in evs)
                                       for t in sent_texts), 4)
            with watch.cond:
                seen = [e.get("text") for e in watch.events
                        if e.get("event") == "data" and e.get("peerID") == hexid(pid)]
            missing = [t for t in sent_texts if t not in seen]
            doubled = sorted({t for t in seen if seen.count(t) > 1})
            if missing or doubled:
                problems.append(f"section 3.3/10.1: data across the cut: missing {missing}, doubled {doubled}")
            elif seen != sent_texts:
                problems.append(f"section 3.3: data out of order: {seen}")
            else:
                notes.append(f"{len(sent_texts)} data messages across the cut each once, in order")
            resume = self.first_resume(pair, link2)
            resent_by_daemon = [m["name"] for m in pair.msgs if m["link"] == link2.number
                                and m["seq"] <= (resume[1] if resume else 0) + 10][:6]
            notes.append(f"cut with {unacked_before} frames unacknowledged here (4 of them half written) and the "
                         f"daemon's increments unread; the daemon's resume {resume} against this peer's "
                         f"({received_before}, ...) having sent {sent_before}; first on the new link "
                         f"{resent_by_daemon}")
            if resume and resume[0] > sent_before:
                problems.append(f"section 11.5: the daemon's resume says {resume[0]} received of {sent_before} sent")
            if pair.gaps:
                problems.append(f"section 11.5: a gap was announced in the resume: {pair.gaps}")
            problems += pair.violations
            link2.bye()
        finally:
            watch.stop()
        return not problems, "; ".join(problems + notes)

    def check_resume_gap(self):
        pair, link = self.connect()
        pid = pair.ident.id
        notes, problems = [], []
        watch = Watch(self.ctl, 30)
        try:
            watch.ready.wait(0.5)
            for count in range(1, 4):
                pair.send_seq(msg(COUNTER_INCREMENT, lp.varint(count)))
            if not pair.wait(lambda: pair.remote_acked >= pair.next_seq - 1, 3):
                raise CheckFailed("no ack of the first messages")
            link.abort()
            with pair.cond:  # this side's replay buffer "overflowed": 10 messages can no longer be resent
                acked = pair.next_seq - 1
                pair.replay = []
                pair.next_seq += 10
            time.sleep(0.2)
            link2 = self.dial(pair)
            self.activated(pair, link2)
            seq = pair.send_seq(msg(COUNTER_INCREMENT, lp.varint(4)))
            if pair.wait(lambda: pair.remote_acked >= seq, 3):
                notes.append(f"resume({pair.received}, {acked + 11}) after {acked} received: the next message was "
                             f"acknowledged as {pair.remote_acked}")
                if pair.remote_acked != seq:
                    problems.append(f"section 11.5: ack {pair.remote_acked}, expected {seq}")
            else:
                problems.append(f"section 11.5: after a resume with next {acked + 11} (the daemon had {acked}), "
                                f"message {seq} was not acknowledged within 3 s (acks up to {pair.remote_acked}): the "
                                f"daemon did not take next - 1 as received")
            if watch.wait(lambda evs: any(e.get("event") == "resynchronised" and e.get("peerID") == hexid(pid)
                                          for e in evs), 2):
                event = next(e for e in watch.events if e.get("event") == "resynchronised")
                notes.append(f"resynchronised reported ({event.get('count')} lost)")
                if event.get("count") != 10:
                    problems.append(f"resynchronised count {event.get('count')}, expected 10")
            else:
                problems.append("section 11.5: no `resynchronised` event for the gap")
            if self.counter_of(pid)[0] != 4:
                problems.append(f"the daemon counts {self.counter_of(pid)[0]} for this peer, expected 4")
            problems += pair.violations
            link2.bye()
        finally:
            watch.stop()
        return not problems, "; ".join(problems + notes)

    # 11.4: restart, duplicate links, liveness

    def check_restart(self):
        ident = self.identity()
        old, link1 = self.connect(ident=ident)
        notes, problems = [], []
        for count in range(1, 4):
            old.send_seq(msg(COUNTER_INCREMENT, lp.varint(count)))
        old.wait(lambda: old.remote_acked >= old.next_seq - 1, 3)
        new = Pair(ident)  # the same device, a new incarnation
        link2 = self.dial(new)
        if old.wait(lambda: link1.closed, 3):
            if link1.bye_reason != 2:
                problems.append(f"section 11.4: the old incarnation's link closed with {link1.close_reason}, "
                                f"expected bye(replaced)")
            else:
                notes.append("old link: bye(replaced)")
        else:
            problems.append("section 11.4: the old incarnation's link was not closed within 3 s")
        self.activated(new, link2)
        resume = self.first_resume(new, link2)
        if resume != (0, 1):
            problems.append(f"section 11.5: after a restart the daemon's resume is {resume}, expected (0, 1)")
        else:
            notes.append("numbering reset: resume (0, 1)")
        local = self.ctl("counter")["local"]
        if new.wait(lambda: new.counts.get(self.daemon_id, 0) >= local, 3):
            notes.append("counterState with every entry again")
        else:
            problems.append(f"section 11.9: the restarted peer was not sent the daemon's count {local}")
        seq = new.send_seq(msg(COUNTER_INCREMENT, lp.varint(4)))
        if not new.wait(lambda: new.remote_acked >= seq, 3) or self.counter_of(ident.id)[0] != 4:
            problems.append(f"after the restart the daemon counts {self.counter_of(ident.id)[0]}, expected 4")
        problems += new.violations
        link2.bye()
        return not problems, "; ".join(problems + notes)

    def check_duplicate_path(self):
        pair, link1 = self.connect()
        notes, problems = [], []
        for count in range(1, 4):
            pair.send_seq(msg(COUNTER_INCREMENT, lp.varint(count)))
        pair.wait(lambda: pair.remote_acked >= pair.next_seq - 1, 3)
        sent = pair.next_seq - 1
        link2 = self.dial(pair)  # the same incarnation, the same path (IP address): a duplicate
        if pair.wait(lambda: link1.closed, 3):
            if link1.bye_reason != 2:
                problems.append(f"section 3.3: the older duplicate closed with {link1.close_reason}, expected "
                                f"bye(replaced)")
            else:
                notes.append("the older link: bye(replaced)")
        else:
            problems.append("section 3.3: of two links of one dialler on one path, the older was not closed in 3 s")
        self.activated(pair, link2)
        resume = self.first_resume(pair, link2)
        if resume is None or resume[0] != sent:
            problems.append(f"section 3.3: the daemon's resume on the new link is {resume}, expected received "
                            f"{sent}")
        else:
            notes.append(f"the new link goes on: resume {resume}")
        seq = pair.send_seq(msg(COUNTER_INCREMENT, lp.varint(4)))
        if not pair.wait(lambda: pair.remote_acked >= seq, 3):
            problems.append("no ack on the new link")
        problems += pair.violations
        link2.bye()
        return not problems, "; ".join(problems + notes)

    def check_liveness(self):
        pair, link = self.connect()
        pid = pair.ident.id
        notes, problems = [], []
        time.sleep(0.2)
        with pair.cond:
            pings_before = sum(1 for (n, k, f) in pair.control if k == PING)
        time.sleep(1.0)
        with pair.cond:
            pings = sum(1 for (n, k, f) in pair.control if k == PING) - pings_before
            link.paused = link.muted = True  # nothing is read or sent from now on
            pair.auto_ack = False
        with link.wlock:
            silent_since = link.last_write
        if pings < 3:
            problems.append(f"section 11.4: {pings} heartbeat pings in 1 s of quiet, expected one every 250 ms")
        else:
            notes.append(f"{pings} heartbeats in 1 s of quiet")
        lost = poll(lambda: (self.ctl.peer(pid) or {}).get("state") != "connected", 4, 0.1)
        elapsed = time.monotonic() - silent_since
        with pair.cond:
            link.paused = False
        pair.wait(lambda: link.closed, 2)
        if not lost:
            problems.append("section 11.4: after 4 s of silence the daemon still shows this peer connected")
        else:
            notes.append(f"lost after {elapsed:.1f} s of silence ({(self.ctl.peer(pid) or {}).get('state')})")
            if elapsed < 1.95:
                problems.append(f"section 11.1: the link was given up after {elapsed:.1f} s, before livenessTimeout "
                                f"(2 s)")
        if link.bye_reason is not None:
            problems.append(f"section 11.4: closed with bye {link.bye_reason}; a silent link closes without a bye")
        elif link.closed:
            notes.append("closed without a bye")
        return not problems, "; ".join(problems + notes)

    # 5. bubbles and a late joiner (3.2, 11.8, 11.11)

    def check_late_joiner(self):
        notes, problems = [], []
        view = 0
        self.ensure_daemon_count()
        self.ctl("bubble", "pickup", view)
        if not poll(lambda: self.ctl.bubble(view).get("holder") == hexid(self.daemon_id), 3):
            raise CheckFailed(f"the daemon (alone, its own coordinator) did not get bubble {view}: "
                              f"{self.ctl.bubble(view)}")
        self.ctl("bubble", "move", view, 123, 77)
        board = self.ctl("bubble", "list")
        ident = self.identity("above")
        notes.append(f"this peer's id {hexid(ident.id)} is above the daemon's: the daemon coordinates")
        pair = Pair(ident)
        link = self.dial(pair)
        ok = pair.wait(lambda: {m["f"]["view"] for m in pair.of_kind(BUBBLE_STATE)} >= {0, 1, 2}, 4)
        states = {m["f"]["view"]: m["f"] for m in pair.of_kind(BUBBLE_STATE)}
        if not ok:
            problems.append(f"section 11.8: bubbleState of bubbles 0, 1, 2 did not all arrive within 4 s: "
                            f"{sorted(states)}")
        s0 = states.get(0)
        if s0 and (s0["holder"], s0["x"], s0["y"]) != (self.daemon_id, 123.0, 77.0):
            problems.append(f"bubbleState 0 says holder {hexid(s0['holder'])} at {fmt_xy(s0['x'], s0['y'])}, "
                            f"expected the daemon at (123, 77)")
        elif s0:
            notes.append("bubbleState 0: the daemon holds it at (123, 77)")
        for b in board:
            s = states.get(b["view"])
            if b["view"] != 0 and s:
                holder = int(b["holder"], 16) if b.get("holder") else 0
                if (s["holder"], s["x"], s["y"]) != (holder, float(b["x"]), float(b["y"])):
                    problems.append(f"bubbleState {b['view']} {s} differs from the daemon's list {b}")
        names = sequenced_names(pair)
        order = [n for n in names if n in ("handshake", "counterState", "layout", "bubbleState")]
        expected = ["handshake", "counterState", "layout", "bubbleState", "bubbleState", "bubbleState"]
        if order[:6] != expected:
            problems.append(f"section 11.8/11.11: on connecting the daemon sent {order[:8]}, expected {expected}")
        else:
            notes.append("order handshake, counterState, layout, bubbleState x3")
        self.ctl("bubble", "drop", view)
        freed = pair.wait(lambda: pair.board[0]["holder"] == 0 and any(m["f"]["view"] == 0 for m in pair.of_kind(DROP))
                          and any(m["f"]["view"] == 0 and m["f"]["holder"] == 0 for m in pair.of_kind(BUBBLE_STATE)),
                          3)
        drops = [m for m in pair.of_kind(DROP) if m["f"]["view"] == 0]
        frees = [m for m in pair.of_kind(BUBBLE_STATE) if m["f"]["view"] == 0 and m["f"]["holder"] == 0]
        if freed:
            notes.append("freed: the holder's drop, then the coordinator's bubbleState without holder")
        else:
            if not drops:
                problems.append("section 11.8: the holder's drop did not arrive within 3 s")
            if not frees:
                problems.append("section 11.8: the coordinator did not announce the dropped bubble free "
                                "(bubbleState, holder 0) within 3 s")
        if drops and frees and drops[0]["seq"] > frees[0]["seq"]:
            problems.append("section 11.8: the coordinator's release came before the drop")
        problems += pair.violations
        link.bye()
        return not problems, "; ".join(problems + notes)

    def check_late_joiner_coordinator(self):
        notes, problems = [], []
        view = 0
        self.ctl("bubble", "pickup", view)
        if not poll(lambda: self.ctl.bubble(view).get("holder") == hexid(self.daemon_id), 3):
            raise CheckFailed(f"the daemon (alone, its own coordinator) did not get bubble {view}: "
                              f"{self.ctl.bubble(view)}")
        self.ctl("bubble", "move", view, 123, 77)
        pair, link = self.connect("below")
        notes.append(f"this peer's id {hexid(pair.ident.id)} is below the daemon's: this peer, pristine, "
                     f"coordinates")
        if pair.wait(lambda: {m["f"]["view"] for m in pair.of_kind(BUBBLE_STATE)} >= {0, 1, 2}, 3):
            notes.append("the daemon told its board; adopted")
        else:
            problems.append("section 11.8/11.11: the daemon (board not pristine) did not send its three "
                            "bubbleStates to the new coordinator")
        if (pair.board[0]["holder"], pair.board[0]["x"], pair.board[0]["y"]) != (self.daemon_id, 123.0, 77.0):
            problems.append(f"the adopted board has bubble 0 as {pair.board[0]}")
        if pair.of_kind(LAYOUT):
            problems.append("section 11.7: the daemon sent a layout though it is not the coordinator")
        time.sleep(0.3)
        if self.ctl.bubble(view).get("holder") != hexid(self.daemon_id):
            problems.append(f"the daemon lost its bubble when the coordinator joined: {self.ctl.bubble(view)}")
        self.ctl("bubble", "move", view, 130, 80)
        if not pair.wait(lambda: (pair.board[0]["x"], pair.board[0]["y"]) == (130.0, 80.0), 3):
            problems.append("section 11.8: the holder's move did not reach the coordinator")
        self.ctl("bubble", "drop", view)
        if pair.wait(lambda: pair.board[0]["holder"] == 0, 3):
            notes.append("drop received, announced free by this peer")
        else:
            problems.append("section 11.8: the drop did not reach this peer")
        if not poll(lambda: self.ctl.bubble(view).get("holder") is None, 2):
            problems.append(f"the daemon shows {self.ctl.bubble(view)} after the drop")
        problems += pair.violations
        link.bye()
        return not problems, "; ".join(problems + notes)

    def check_holder_lost(self):
        view = 2
        pair1, link1 = self.connect("above")
        pair2, link2 = self.connect("above")
        notes, problems = [], []
        pair1.send_seq(msg(PICKUP, bytes([view])))
        if not pair1.wait(lambda: pair1.board[view]["holder"] == pair1.ident.id, 3):
            raise CheckFailed(f"the daemon did not grant bubble {view}: {self.ctl.bubble(view)}")
        pair2.wait(lambda: pair2.board[view]["holder"] == pair1.ident.id, 2)
        before = self.ctl.bubble(view)
        link1.bye()
        if poll(lambda: self.ctl.bubble(view).get("holder") is None, 3):
            after = self.ctl.bubble(view)
            notes.append("the coordinator freed the bubble of the peer that left")
            if (after["x"], after["y"]) != (before["x"], before["y"]):
                problems.append(f"section 11.8: the position moved when freed: {before} -> {after}")
        else:
            problems.append(f"section 11.8: the bubble of a holder that left is still held: {self.ctl.bubble(view)}")
        if pair2.wait(lambda: pair2.board[view]["holder"] == 0, 3):
            notes.append("the other member heard it (bubbleState without holder)")
        else:
            problems.append("section 11.8: the remaining member was not sent the freed bubble's bubbleState")
        problems += pair2.violations
        link2.bye()
        return not problems, "; ".join(problems + notes)

    def check_bubble_state_from_member(self):
        view = 1
        self.ctl("bubble", "pickup", view)  # the daemon's board is not pristine
        poll(lambda: self.ctl.bubble(view).get("holder") == hexid(self.daemon_id), 2)
        self.ctl("bubble", "drop", view)
        pair, link = self.connect("above")
        before = self.ctl.bubble(view)
        pair.send_seq(msg(BUBBLE_STATE, bytes([view]), u64(pair.ident.id), f32(5), f32(5)))
        ok = self.settle(pair, link)
        after = self.ctl.bubble(view)
        link.bye()
        if not ok:
            return False, "the link closed or no ack after a member's bubbleState (section 11: ignored, not an error)"
        if after != before:
            return False, (f"section 11.8: a bubbleState from a member that is not the coordinator was applied: "
                           f"{before} -> {after}")
        return True, "a member's bubbleState ignored by a non-pristine board; the link stays"

    # 6. data on both channels (5, 9.4, 10.1, 11.6)

    def check_data(self):
        pair, link = self.connect(datagrams=True, answer_probes=True)
        pid = pair.ident.id
        notes, problems = [], []
        watch = Watch(self.ctl, 30)
        try:
            watch.ready.wait(0.5)
            self.ctl("send", hexid(pid), "--text", "hello")
            if pair.wait(lambda: any(m["f"]["data"] == b"hello" for m in pair.of_kind(DATA)), 3):
                notes.append("reliable `hello` arrived as data on the link")
            else:
                problems.append("section 10.1: `send --text hello` did not arrive as data (0x30) on the link "
                                "within 3 s")
            route = poll(lambda: (self.ctl.peer(pid) or {}).get("unreliable") == "udp", 4, 0.1)
            notes.append(f"{link.probes} probes answered")
            if not route:
                problems.append(f"section 11.6: probes answered but the route is "
                                f"{(self.ctl.peer(pid) or {}).get('unreliable')!r}, not udp, after 4 s")
            got = False
            for attempt in range(3):
                self.ctl("send", hexid(pid), "--unreliable", "--text", f"hello-datagram-{attempt}")
                if pair.wait(lambda: any(m["kind"] == DATA for m in pair.dgrams), 1):
                    got = True
                    break
            on_link = [m["f"]["data"] for m in pair.of_kind(DATA) if m["f"]["data"].startswith(b"hello-datagram")]
            if got:
                notes.append("unreliable data arrived in a sealed datagram (dk2 of section 9.4)")
            else:
                problems.append(f"section 5/9.4: unreliable data did not arrive as a datagram "
                                f"(datagram errors {link.dgram_errors[:2]}; on the link instead: {on_link})")
            with pair.cond:  # this peer probes the daemon: a pong datagram with sequence 0 (section 11.6)
                link.send_datagram(msg(PING, lp.varint(0), lp.varint(987654321), lp.blob(b"")))
            if pair.wait(lambda: any(m["kind"] == PONG for m in pair.dgrams), 2):
                pong = next(m for m in pair.dgrams if m["kind"] == PONG)
                entry = next(d for d in link.dgram_log if PONG in d["kinds"])
                if entry["sequence"] != 0 or pong["f"]["timestamp"] != 987654321:
                    problems.append(f"section 11.6: the pong to a datagram ping has sequence {entry['sequence']} and "
                                    f"timestamp {pong['f']['timestamp']}; expected 0 and the ping's")
                else:
                    notes.append("a datagram ping answered by a pong datagram with sequence 0")
            else:
                problems.append("section 11.6: a ping by datagram was not answered by a pong datagram within 2 s")
            with pair.cond:
                log = list(link.dgram_log)
            counters = [d["counter"] for d in log]
            log = [d for d in log if PONG not in d["kinds"]]
            sequences = [d["sequence"] for d in log]
            if sequences != list(range(1, len(log) + 1)):
                problems.append(f"section 5: the daemon's datagram sequences are {sequences[:12]}, expected 1, 2, "
                                f"3, ...")
            if counters != list(range(1, len(counters) + 1)):
                problems.append(f"section 9.4: the sealed datagram counters are {counters[:12]}, expected 1, 2, "
                                f"3, ...")
            if log and sequences == list(range(1, len(log) + 1)) and counters == list(range(1, len(counters) + 1)):
                notes.append(f"datagrams numbered 1..{len(log)} (sequence), counters 1..{len(counters)}")
            text = f"from-peer-{secrets.token_hex(4)}"
            pair.send_seq(msg(DATA, lp.blob(text.encode())))
            if watch.wait(lambda evs: any(e.get("event") == "data" and e.get("text") == text
                                          and e.get("peerID") == hexid(pid) for e in evs), 3):
                notes.append("this peer's data shown by watch")
            else:
                problems.append(f"section 10.1: data {text!r} from this peer not shown by `watch` within 3 s")
            problems += pair.violations + link.dgram_errors[:3]
            link.bye()
        finally:
            watch.stop()
        return not problems, "; ".join(problems + notes)

    def check_datagram_replay(self):
        pair, link = self.connect(datagrams=True, answer_probes=True)
        pid = pair.ident.id
        notes, problems = [], []
        watch = Watch(self.ctl, 30)
        try:
            watch.ready.wait(0.5)
            poll(lambda: (self.ctl.peer(pid) or {}).get("unreliable") == "udp", 3, 0.1)
            before = self.ctl("status")["droppedDatagrams"]
            text = f"dgram-{secrets.token_hex(4)}"
            with pair.cond:
                datagram = link.send_datagram(msg(DATA, lp.blob(text.encode())))

            def shown(evs):
                return [e for e in evs if e.get("event") == "data" and e.get("text") == text]
            if not watch.wait(lambda evs: shown(evs), 3):
                raise CheckFailed(f"section 5/9.4: a sealed datagram with data {text!r} (dk1) was not shown by "
                                  f"watch within 3 s")
            event = shown(watch.events)[0]
            notes.append(f"datagram data shown (channel {event.get('channel')!r})")
            link.udp.sendto(datagram, (self.o.host, link.remote_hello["port"]))
            dropped = poll(lambda: self.ctl("status")["droppedDatagrams"] > before, 2, 0.1)
            time.sleep(0.3)
            if len(shown(watch.events)) != 1:
                problems.append(f"section 9.4: the replayed datagram was delivered again "
                                f"({len(shown(watch.events))} times)")
            if not dropped:
                problems.append(f"section 9.4: the replay was not counted in status droppedDatagrams "
                                f"({before} -> {self.ctl('status')['droppedDatagrams']})")
            else:
                notes.append("the replay was dropped and counted")
            problems += pair.violations
            link.bye()
        finally:
            watch.stop()
        return not problems, "; ".join(problems + notes)

    def check_datagram_not_sequenced(self):
        pair, link = self.connect(datagrams=True, answer_probes=True)
        pid = pair.ident.id
        notes, problems = [], []
        watch = Watch(self.ctl, 30)
        try:
            watch.ready.wait(0.5)
            poll(lambda: (self.ctl.peer(pid) or {}).get("unreliable") == "udp", 3, 0.1)
            seq = pair.send_seq(msg(COUNTER_INCREMENT, lp.varint(1)))
            pair.wait(lambda: pair.remote_acked >= seq, 3)
            text = f"dg-{secrets.token_hex(4)}"
            with pair.cond:
                link.send_datagram(msg(COUNTER_INCREMENT, lp.varint(99)))  # not a datagram kind: ignored
                link.send_datagram(msg(DATA, lp.blob(text.encode())))  # delivered, never counted
                link.send_datagram(bytes([0x01, 0x99]))  # malformed: dropped, not fatal
                link.send_datagram(bytes([0x05, DATA, 0x01]))  # a frame past the end: dropped
            seq = pair.send_seq(msg(COUNTER_INCREMENT, lp.varint(2)))
            if not pair.wait(lambda: pair.remote_acked >= seq or link.closed, 3) or link.closed:
                raise CheckFailed(f"section 5: after malformed datagrams the link closed or no ack came "
                                  f"({link.close_reason})")
            time.sleep(0.2)
            if pair.remote_acked != seq:
                problems.append(f"section 11.6: the daemon acknowledged {pair.remote_acked} after {seq} sequenced "
                                f"messages: messages in datagrams were counted")
            else:
                notes.append(f"ack {seq}: datagram messages not counted")
            count = self.counter_of(pid)[0]
            if count != 2:
                problems.append(f"section 11.6: the daemon counts {count} for this peer: a counterIncrement in a "
                                f"datagram was applied")
            else:
                notes.append("a counterIncrement in a datagram ignored")
            if watch.wait(lambda evs: any(e.get("event") == "data" and e.get("text") == text for e in evs), 2):
                notes.append("data in a datagram delivered")
            else:
                problems.append("section 11.6: data in a datagram was not delivered")
            notes.append("malformed datagrams dropped, the link stays")
            problems += pair.violations
            link.bye()
        finally:
            watch.stop()
        return not problems, "; ".join(problems + notes)

    def check_no_datagram_port(self):
        pair, link = self.connect(datagrams=False)
        # The daemon's side of the activation may end just after this side's (when it leads, on this peer's answer).
        if not self.wait_connected(self.ctl, pair.ident.id, 3):
            raise CheckFailed("the daemon does not show this peer connected within 3 s")
        routes = []
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            routes.append((self.ctl.peer(pair.ident.id) or {}).get("unreliable"))
        link.bye()
        if set(routes) != {"fallback"}:
            return False, (f"section 11.6: a peer whose hello has datagram port 0 gets `fallback` at once, with no "
                           f"probes; once connected, `peers` showed {sorted(set(routes), key=routes.index)} in "
                           f"{len(routes)} readings over 1 s")
        return True, f"unreliable: fallback at once ({len(routes)} readings in 1 s)"

    # 7. datagram fallback (5, 11.6, 11.8)

    def check_fallback(self):
        view = 1
        self.ctl("bubble", "pickup", view)
        if not poll(lambda: self.ctl.bubble(view).get("holder") == hexid(self.daemon_id), 3):
            raise CheckFailed(f"the daemon did not get bubble {view}: {self.ctl.bubble(view)}")
        self.ctl("bubble", "move", view, 200, 150)
        pair, link = self.connect("above", datagrams=True, answer_probes=False)
        pid = pair.ident.id
        notes, problems = [], []
        start = time.monotonic()
        routes = []

        def fallen():
            entry = self.ctl.peer(pid) or {}
            routes.append(entry.get("unreliable"))
            return entry.get("unreliable") == "fallback"
        if poll(fallen, 6, 0.1):
            notes.append(f"fallback after {time.monotonic() - start:.1f} s (routes seen "
                         f"{sorted(set(r for r in routes if r))}); {link.probes} probes received and opened, "
                         f"none answered")
        else:
            problems.append(f"section 11.6: probes unanswered but `peers` shows unreliable {routes[-1]!r} after "
                            f"6 s ({link.probes} probes received)")
        if link.probes == 0:
            problems.append(f"section 11.6/9.4: no datagram probe opened with dk2 (errors {link.dgram_errors[:2]})")
        with pair.cond:
            times = [d["t"] for d in link.dgram_log if d["kinds"] == [PING]]
        if len(times) >= 3:
            gaps = [b - a for a, b in zip(times, times[1:4])]
            if max(gaps) > 0.45:
                problems.append(f"section 11.6: probes {', '.join(f'{g * 1000:.0f}' for g in gaps)} ms apart while "
                                f"probing, expected every 200 ms")
        if pair.wait(lambda: any(m["f"]["view"] == view and (m["f"]["x"], m["f"]["y"]) == (200.0, 150.0)
                                 for m in pair.of_kind(MOVE)), 2):
            notes.append("on the route change the holder sent its position again on the link")
        else:
            problems.append("section 11.6/11.8: on the route change the holder did not send a `move` with its "
                            "position (200, 150) on the link")
        self.ctl("bubble", "move", view, 210, 160)
        got = pair.wait(lambda: any(m["f"]["view"] == view and (m["f"]["x"], m["f"]["y"]) == (210.0, 160.0)
                                    for m in pair.of_kind(MOVE)), 3)
        by_dgram = [m["f"] for m in pair.dgrams if m["kind"] == MOVE]
        if got:
            notes.append("a later move (210, 160) arrived on the link")
        else:
            problems.append(f"section 5: after fallback the move did not arrive on the link within 3 s (moves by "
                            f"datagram: {by_dgram})")
        moves = [m["f"]["sequence"] for m in pair.of_kind(MOVE) if m["f"]["view"] == view]
        if any((b - a) % 65536 != 1 for a, b in zip(moves, moves[1:])):
            problems.append(f"section 11.8: move sequences {moves} do not count up by 1")
        self.ctl("send", hexid(pid), "--unreliable", "--text", "fallback-data")
        if pair.wait(lambda: any(m["f"]["data"] == b"fallback-data" for m in pair.of_kind(DATA)), 3):
            notes.append("unreliable data on the link as a sequenced message")
        else:
            problems.append("section 5/11.6: unreliable data did not arrive on the link while the route is fallback")
        self.ctl("bubble", "drop", view)
        problems += pair.violations
        link.bye()
        return not problems, "; ".join(problems + notes)

    # 8. malformed and misplaced input (4, 6, 11)

    def check_malformed_kind(self):
        pair, link = self.connect()
        notes, problems = [], []
        time.sleep(0.3)
        with pair.cond:
            link.write(bytes([0x01, 0x99]))
            link.muted = True
        if pair.wait(lambda: link.closed, 3):
            notes.append(f"link closed by the daemon: {link.close_reason}")
            if link.bye_reason is not None:
                problems.append(f"section 4/11: closed with bye {link.bye_reason}; a malformed message closes the "
                                f"link without a bye")
        else:
            problems.append("section 4/6: a record holding kind 0x99 did not close the link within 3 s")
        if not self._try(self.ctl, "status"):
            problems.append("the daemon did not answer `status` afterwards")
        else:
            notes.append("status answers")
        try:
            _, link2 = self.connect()
            notes.append("a fresh peer completes the handshake afterwards")
            link2.bye()
        except (Refused, CheckFailed, OSError) as error:
            problems.append(f"a fresh peer could not connect afterwards: {error}")
        return not problems, "; ".join(problems + notes)

    def check_malformed_fields(self):
        def sealed(link, data):
            link.write(data)

        def raw_record(link, data):
            record = bytearray(link.noise.encrypt(data))
            record[-1] ^= 1
            link.write_raw(len(record).to_bytes(2, "little") + bytes(record))
        cases = [
            ("counterIncrement count 0 (valueOutOfRange)", sealed, msg(COUNTER_INCREMENT, lp.varint(0))),
            ("overlong varint 80 00 (overlongVarint)", sealed, msg(COUNTER_INCREMENT, bytes([0x80, 0x00]))),
            ("trailing bytes after a data payload", sealed, msg(DATA, lp.blob(b"x"), b"\x00")),
            ("move with NaN x (nonFiniteCoordinate)", sealed, msg(MOVE, bytes([0]), struct.pack("<f", float("nan")),
                                                                  f32(1), b"\x01\x00")),
            ("a frame of length 0 (truncated)", sealed, b"\x00"),
            ("a frame length above 65536 (frameTooLong)", sealed, lp.varint(65537)),
            ("a record whose tag does not verify", raw_record, msg(COUNTER_INCREMENT, lp.varint(1))),
            ("a record length of 10", lambda link, data: link.write_raw(b"\x0a\x00" + b"\x00" * 10), b""),
        ]
        problems, notes = [], []
        for name, how, data in cases:
            try:
                pair, link = self.connect()
            except (Refused, CheckFailed, OSError) as error:
                problems.append(f"{name}: could not connect: {error}")
                continue
            time.sleep(0.3)
            with pair.cond:
                how(link, data)
                link.muted = True
            if pair.wait(lambda: link.closed, 3):
                if link.bye_reason is not None:
                    problems.append(f"section 11: {name}: closed with bye {link.bye_reason}, a malformed message "
                                    f"closes without one")
                else:
                    notes.append(f"{name}: closed without a bye")
            else:
                problems.append(f"section 6: {name} did not close the link within 3 s")
                link.bye()
        return not problems, "; ".join(problems + notes)

    def check_misplaced(self):
        cases = [
            ("a second hello", lambda link: link.local_frame),
            ("a noise message after the handshake", lambda link: msg(NOISE, lp.blob(bytes(48)))),
            ("a second invitation", lambda link: msg(INVITATION, lp.blob(b""), lp.varint(30000))),
            ("an accept sent to the acceptor", lambda link: msg(ACCEPT, u64(1))),
            ("pairing on a member's link", lambda link: msg(PAIRING, 1)),
        ]
        problems, notes = [], []
        for name, make in cases:
            try:
                pair, link = self.connect()
            except (Refused, CheckFailed, OSError) as error:
                problems.append(f"{name}: could not connect: {error}")
                continue
            time.sleep(0.3)  # the first exchanges done: nothing of this side unread when the daemon closes
            with pair.cond:
                link.write(make(link))
                link.muted = True
            if pair.wait(lambda: link.closed, 3):
                if link.bye_reason != PROTOCOL_ERROR:
                    problems.append(f"section 11/11.2: {name}: {link.close_reason}; a misplaced message gets "
                                    f"bye(protocolError)")
                else:
                    notes.append(f"{name}: bye(protocolError)")
            else:
                problems.append(f"section 11.2: {name} did not close the link within 3 s")
                link.bye()
        return not problems, "; ".join(problems + notes)

    def check_ignored(self):
        pair, link = self.connect("above")
        notes, problems = [], []
        before = self.ctl("bubble", "list")
        sent = [
            msg(MOVE, bytes([0]), f32(1), f32(2), b"\x07\x00"),  # not the holder
            msg(DROP, bytes([0]), f32(3), f32(4)),  # not the holder
            msg(PICKUP, bytes([7])),  # no such bubble
            msg(NEGOTIATE, bytes([1]), lp.varint(1700000000000)),
            msg(NEGOTIATE_CONFIRM, bytes([1])),
            msg(STREAM_CHUNK, lp.varint(99), lp.varint(0), lp.blob(b"abc")),  # no such stream
            msg(STREAM_END, lp.varint(99), bytes([0, 0]), lp.blob(b""), lp.blob(b"")),
            msg(STREAM_CREDIT, lp.varint(99), lp.varint(0), lp.varint(10)),
            msg(APP_MESSAGE, bytes([200]), lp.blob(b"nobody")),  # no application took 200
        ]
        for frame in sent:
            pair.send_seq(frame)
        link.write(msg(ACK, lp.varint(10 ** 9)))  # above what the daemon sent: not an error
        seq = self.settle(pair, link)
        if seq is None:
            return False, (f"section 11: messages that make no sense to the application (move and drop from a "
                           f"non-holder, pickUp 7, negotiate, negotiateConfirm, streamChunk/End/Credit of no stream, "
                           f"appMessage 200) or an ack above what was sent closed the link or went unacknowledged: "
                           f"{link.close_reason}")
        notes.append(f"{len(sent)} ignored messages counted (ack {pair.remote_acked}); an ack above what was sent "
                     f"accepted")
        time.sleep(0.3)
        after = self.ctl("bubble", "list")
        if after != before:
            problems.append(f"section 11.8: the board changed: {before} -> {after}")
        if any(m["f"]["view"] == 7 for m in pair.of_kind(BUBBLE_STATE)):
            problems.append("section 11.8: a pickUp of view 7 was answered")
        link.write(msg(PING, lp.varint(77), lp.varint(1), lp.blob(b"")))
        if not pair.wait(lambda: any(p["nonce"] == 77 for p in link.pongs), 2):
            problems.append("the link does not answer a ping afterwards")
        problems += pair.violations
        link.bye()
        return not problems, "; ".join(problems + notes)

    # 9. refusals (3.2, 7, 9.1, 9.3, 11.2)

    def refused_hello(self, cases):
        problems, notes = [], []
        for expected, name, options in cases:
            pair = Pair(make_identity())
            try:
                self.dial(pair, 4, **options)
                problems.append(f"{name}: the handshake completed; expected decline {expected} "
                                f"({DECLINE_REASONS[expected]})")
            except Refused as refused:
                if refused.decline == expected:
                    notes.append(f"{name}: decline {expected} ({DECLINE_REASONS[expected]})")
                else:
                    problems.append(f"{name}: expected decline {expected} ({DECLINE_REASONS[expected]}); the "
                                    f"daemon: {refused.what}")
        return not problems, "; ".join(problems + notes)

    def check_impostor(self):
        pair = Pair(make_identity())
        claim = make_identity().id
        try:
            self.dial(pair, 4, claim=claim)
        except Refused as refused:
            if refused.decline == 7:
                return True, "a hello claiming another key's peer id: decline authenticationFailed (7) after the " \
                             "handshake"
            return False, f"section 9.1: expected decline authenticationFailed (7); the daemon: {refused.what}"
        return False, "section 9.1: the daemon accepted a hello whose peer id is not its proven key's"

    def check_refuse_peer_id(self):
        problems, notes = [], []
        for name, claim in (("peer id 0", 0), ("the daemon's own peer id", self.daemon_id)):
            pair = Pair(make_identity())
            try:
                self.dial(pair, 4, claim=claim)
                problems.append(f"{name}: the handshake completed")
            except Refused as refused:
                kinds = self.links[-1]._kind_names()
                if refused.decline is None and refused.bye is None and "closed" in refused.what \
                        and set(kinds) <= {"hello"}:
                    notes.append(f"{name}: closed without a word")
                else:
                    problems.append(f"section 11.2: {name}: expected the link closed without a word; the daemon: "
                                    f"{refused.what}")
        return not problems, "; ".join(problems + notes)

    def check_bad_noise(self):
        before = self.ctl("status")["failedHandshakes"]
        pair = Pair(make_identity())
        try:
            self.dial(pair, 4, corrupt=True)
            return False, "section 9.3: a Noise message 3 with a bad tag completed the handshake"
        except Refused as refused:
            kinds = self.links[-1]._kind_names()
            problems = []
            if refused.decline is not None or refused.bye is not None or set(kinds) - {"hello", "noise"}:
                problems.append(f"section 9.3: a handshake message that fails closes the link without a word; the "
                                f"daemon: {refused.what}, kinds {kinds}")
            after = poll(lambda: self.ctl("status")["failedHandshakes"] > before, 2, 0.1)
            if not after:
                problems.append("section 9.3: status failedHandshakes did not count it")
            return not problems, "; ".join(problems) or "closed without a word; failedHandshakes counted it"

    def check_early_kind(self):
        pair = Pair(make_identity())
        sock = socket.create_connection((self.o.host, self.o.port), timeout=4)
        link = Link(pair, sock, True, self.o)
        self.links.append(link)
        link.write_raw(link.local_frame + msg(PING, lp.varint(1), lp.varint(1), lp.blob(b"")))
        deadline = time.monotonic() + 3
        kinds, bye = [], None
        try:
            while True:
                _, body = link._next_frame(deadline)
                kinds.append(KIND_NAMES.get(body[0], hex(body[0])))
                if body[0] == BYE:
                    bye = decode_body(BYE, lp.Reader(body, 1))["reason"]
                if body[0] == NOISE:
                    return False, "section 9.3: the daemon went on with the handshake after a ping before it"
        except Closed:
            if bye != PROTOCOL_ERROR:
                return False, (f"section 11.2: a ping before the handshake is misplaced: expected bye(protocolError), "
                               f"got {kinds} then a close")
            return True, f"bye(protocolError), then closed ({kinds})"
        except TimeoutError:
            return False, f"section 9.3: a ping before the handshake did not close the link in 3 s ({kinds})"

    def check_unknown_extension(self):
        pair = Pair(make_identity())
        try:
            link = self.dial(pair, 5, extensions=[(77, b"xyz"), (1, b"\x01" * 32), (2, b"\x05")])
        except Refused as refused:
            return False, f"section 3.2: a hello with extensions 77, 1 and a 1-byte 2 was refused: {refused.what}"
        ok = pair.wait(lambda: link.send_active, 4)
        link.bye()
        return ok, ("extension types 77 and 1 and a listen port of one byte ignored; link activated" if ok else
                    "handshake completed but the link was not activated")

    def check_ping_pong(self):
        pair, link = self.connect()
        payload = bytes(range(200)) * 5
        link.write(msg(PING, lp.varint(4242), lp.varint(123456789), lp.blob(payload)))
        ok = pair.wait(lambda: any(p["nonce"] == 4242 for p in link.pongs), 3)
        link.bye()
        if not ok:
            return False, "section 11.4: no pong with nonce 4242 within 3 s"
        pong = next(p for p in link.pongs if p["nonce"] == 4242)
        if (pong["timestamp"], pong["payload"]) != (123456789, payload):
            return False, f"section 11.4: the pong does not echo the timestamp and payload: {pong}"
        return True, "pong echoes nonce, timestamp and a 1000-byte payload"

    def check_peer_moves(self):
        view = 2
        pair, link = self.connect("above")
        pid = pair.ident.id
        notes, problems = [], []
        pair.send_seq(msg(PICKUP, bytes([view])))
        if not pair.wait(lambda: any(m["f"]["view"] == view and m["f"]["holder"] == pid
                                     for m in pair.of_kind(BUBBLE_STATE)), 3):
            raise CheckFailed(f"section 11.8: the daemon (coordinator) did not grant pickUp {view} with a "
                              f"bubbleState naming this peer within 3 s (bubble {self.ctl.bubble(view)})")
        notes.append("pickUp granted by bubbleState")

        def move(x, y, seq):
            return msg(MOVE, bytes([view]), f32(x), f32(y), seq.to_bytes(2, "little"))
        pair.send_seq(move(10, 10, 0xFFF0))
        pair.send_seq(move(20, 20, 0xFFE0))  # older: dropped
        pair.send_seq(move(30, 30, 0x0005))  # newer across the wrap: applied
        pair.send_seq(move(40, 40, 0xFFF8))  # older than 5 after the wrap: dropped
        self.settle(pair, link)
        bubble = self.ctl.bubble(view)
        if (bubble["x"], bubble["y"]) != (30, 30):
            problems.append(f"section 3.2: moves with sequences 0xfff0, 0xffe0, 0x0005, 0xfff8 leave the bubble at "
                            f"{fmt_xy(bubble['x'], bubble['y'])}; expected (30, 30) (serial-number arithmetic)")
        else:
            notes.append("serial-number move order respected across the wrap")
        pair.send_seq(msg(DROP, bytes([view]), f32(60), f32(70)))
        if not poll(lambda: (lambda b: b.get("holder") is None and (b["x"], b["y"]) == (60, 70))(
                self.ctl.bubble(view)), 3):
            problems.append(f"section 11.8: after this peer's drop at (60, 70) the daemon shows "
                            f"{self.ctl.bubble(view)}")
        else:
            notes.append("drop freed it at (60, 70)")
        if pair.wait(lambda: any(m["f"]["view"] == view and m["f"]["holder"] == 0 for m in pair.of_kind(BUBBLE_STATE)),
                     2):
            notes.append("the coordinator announced it free")
        else:
            problems.append("section 11.8: the coordinator did not announce the dropped bubble free")
        problems += pair.violations
        link.bye()
        return not problems, "; ".join(problems + notes)

    def check_peer_coordinator(self):
        view = 2
        pair, link = self.connect("below")
        notes, problems = [], []
        pair.wait(lambda: not pair.pristine, 1)  # the daemon's board, if it tells it
        self.ctl("bubble", "pickup", view)
        if not pair.wait(lambda: any(m["f"]["view"] == view for m in pair.of_kind(PICKUP)), 3):
            raise CheckFailed("section 11.8: the daemon's pickUp did not reach this peer, the coordinator, in 3 s")
        if not poll(lambda: self.ctl.bubble(view).get("holder") == hexid(self.daemon_id), 3):
            problems.append(f"section 11.8: this peer granted bubble {view} by bubbleState, but the daemon shows "
                            f"{self.ctl.bubble(view)}")
        else:
            notes.append("the grant of this peer taken by the daemon")
        self.ctl("bubble", "move", view, 111, 222)
        if pair.wait(lambda: (pair.board[view]["x"], pair.board[view]["y"]) == (111.0, 222.0), 3):
            notes.append("its move arrived")
        else:
            problems.append("the daemon's move did not reach this peer within 3 s")
        self.ctl("bubble", "drop", view)
        if pair.wait(lambda: pair.board[view]["holder"] == 0, 3):
            notes.append("its drop arrived; announced free")
        else:
            problems.append("the daemon's drop did not reach this peer within 3 s")
        time.sleep(0.2)
        if self.ctl.bubble(view).get("holder") is not None:
            problems.append(f"the daemon still shows a holder: {self.ctl.bubble(view)}")
        problems += pair.violations
        link.bye()
        return not problems, "; ".join(problems + notes)

    # 11.3: members and bye

    def check_members(self):
        pair1, link1 = self.connect()
        pair2, link2 = self.connect()
        id1, id2 = pair1.ident.id, pair2.ident.id
        notes, problems = [], []

        def latest(pair):
            lists = [f["members"] for (_, k, f) in pair.control if k == MEMBERS]
            return lists[-1] if lists else None

        def names(pair, other):
            return latest(pair) is not None and other in {m["peerID"] for m in latest(pair)}
        if pair1.wait(lambda: names(pair1, id2), 2) and pair2.wait(lambda: names(pair2, id1), 2):
            notes.append("each peer's members names the other")
            for pair, me in ((pair1, id1), (pair2, id2)):
                ids = [m["peerID"] for m in latest(pair)]
                if me in ids or self.daemon_id in ids:
                    problems.append(f"section 11.3: members names the receiver or the sender: {ids}")
                if ids != sorted(ids):
                    problems.append(f"section 11.3: members not sorted by peer id: {ids}")
        else:
            problems.append(f"section 11.3: members did not name the other peer within 2 s: "
                            f"{[hexid(m['peerID']) for m in latest(pair1) or []]}, "
                            f"{[hexid(m['peerID']) for m in latest(pair2) or []]}")
        link2.bye()
        if pair1.wait(lambda: latest(pair1) is not None and id2 not in {m["peerID"] for m in latest(pair1)}, 2):
            notes.append("after one said bye(leaving), the other's members drop it")
        else:
            problems.append("section 11.3: after bye(leaving) the other peer's members still names it")
        entry = poll(lambda: (lambda e: e if e and e.get("state") != "connected" else None)(self.ctl.peer(id2)), 2)
        if not entry:
            problems.append("section 11.3: after bye(leaving) the daemon still shows the peer connected")
        else:
            notes.append(f"the daemon shows it {entry.get('state')}")
        problems += pair1.violations + pair2.violations
        link1.bye()
        return not problems, "; ".join(problems + notes)

    # 10.2, 10.3, 11.10: streams

    def check_stream_declined(self):
        pair, link = self.connect()
        pair.send_seq(msg(STREAM_OPEN, lp.varint(1), bytes([0]), lp.blob(b"chat"), lp.varint(0), bytes(16)))
        ok = pair.wait(lambda: any(m["f"]["id"] == 1 for m in pair.of_kind(STREAM_END)), 3)
        link.bye()
        if not ok:
            return False, "section 11.10: a byte stream opened to sessiond got no streamEnd within 3 s"
        end = next(m["f"] for m in pair.of_kind(STREAM_END) if m["f"]["id"] == 1)
        if (end["side"], end["status"]) != (1, 3):
            return False, f"section 11.10: expected streamEnd(side 1, declined 3), got {end}"
        return True, "a byte stream to sessiond: streamEnd(side 1, declined)"

    def check_resource_name(self):
        """10.3, 11.10: a resource whose name is no file name (a `/` in it) is declined whole, not stored under its
        last component."""
        pair, link = self.connect()
        names = {1: b"dir/x", 2: b"../x"}
        for stream_id, name in names.items():
            pair.send_seq(msg(STREAM_OPEN, lp.varint(stream_id), bytes([1]), lp.blob(name), lp.varint(1),
                              secrets.token_bytes(16)))
        ok = pair.wait(lambda: {m["f"]["id"] for m in pair.of_kind(STREAM_END)} >= set(names), 3)
        problems = list(pair.violations)
        link.bye()
        if not ok:
            return False, "section 11.10: a resource named with a `/` got no streamEnd within 3 s"
        for stream_id, name in names.items():
            end = next(m["f"] for m in pair.of_kind(STREAM_END) if m["f"]["id"] == stream_id)
            if (end["side"], end["status"]) != (1, 3):
                problems.append(f"section 10.3: {name.decode()!r}: expected streamEnd(side 1, declined 3), got {end}")
        credited = [m["f"] for m in pair.of_kind(STREAM_CREDIT)]
        if credited:
            problems.append(f"section 10.3: a resource named with a `/` got credit {credited}")
        return not problems, "; ".join(problems) or "dir/x and ../x: streamEnd(side 1, declined), no credit"

    def check_stream_taken(self):
        """10.2, 11.10: with a `streams` listener on its control socket, sessiond takes a byte stream, grants credit
        and reads it to its end; the listener reports every byte (count and SHA-256)."""
        o = self.o
        pair, link = self.connect()
        notes, problems = [], []
        content = secrets.token_bytes(100000)
        listener = subprocess.Popen([o.client, "--control", self.ctl.socket_path, "--json", "streams", "--count", "2"],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        CHILDREN.append(listener)
        try:
            # The listener's subscription is not visible from here: open streams until one is taken (a declined
            # one is answered with streamEnd(side 1, declined)).
            taken = None
            for stream_id in range(1, 41):
                name = f"conformance-{stream_id}"
                pair.send_seq(msg(STREAM_OPEN, lp.varint(stream_id), bytes([0]), lp.blob(name.encode()), lp.varint(0),
                                  bytes(16)))

                def answered(sid=stream_id):
                    return (any(m["f"]["id"] == sid for m in pair.of_kind(STREAM_CREDIT))
                            or any(m["f"]["id"] == sid for m in pair.of_kind(STREAM_END)) or link.closed)
                if not pair.wait(answered, 3):
                    raise CheckFailed(f"section 11.10: stream {stream_id} got neither credit nor streamEnd in 3 s")
                if any(m["f"]["id"] == stream_id for m in pair.of_kind(STREAM_CREDIT)):
                    taken = stream_id
                    break
                time.sleep(0.1)
            if taken is None:
                raise CheckFailed("section 11.10: with a `streams` listener, sessiond still declined 40 streams")
            credit = next(m["f"] for m in pair.of_kind(STREAM_CREDIT) if m["f"]["id"] == taken)
            notes.append(f"stream {taken} taken, first credit ({credit['received']}, {credit['limit']})")
            if credit["received"] != 0 or credit["limit"] < len(content):
                problems.append(f"section 10.2: a byte stream's first credit is ({credit['received']}, "
                                f"{credit['limit']}), expected (0, at least the stream window)")
            offset = 0
            while offset < len(content):
                chunk = content[offset:offset + 30000]
                pair.send_seq(msg(STREAM_CHUNK, lp.varint(taken), lp.varint(offset), lp.blob(chunk)))
                offset += len(chunk)
            pair.send_seq(msg(STREAM_END, lp.varint(taken), bytes([0, 0]), lp.blob(b""), lp.blob(b"")))
            reports = []
            deadline = time.monotonic() + 8
            while time.monotonic() < deadline and not any(r.get("phase") in ("finished", "failed") for r in reports):
                ready, _, _ = select.select([listener.stdout], [], [], 0.5)
                if ready:
                    line = listener.stdout.readline()
                    if not line:
                        break
                    try:
                        reports.append(json.loads(line))
                    except ValueError:
                        pass
            end = next((r for r in reports if r.get("phase") in ("finished", "failed")), None)
            digest = hashlib.sha256(content).hexdigest()
            if end is None:
                problems.append(f"the `streams` listener reported no end within 8 s: {reports}")
            elif (end.get("phase"), end.get("bytes"), end.get("sha256")) != ("finished", len(content), digest):
                problems.append(f"section 10.2: the listener reports {end}, expected finished, {len(content)} bytes, "
                                f"SHA-256 {digest[:16]}...")
            else:
                notes.append(f"read to its end: {len(content)} bytes, the same SHA-256")
            problems += pair.violations
            link.bye()
        finally:
            stop_process(listener)
        return not problems, "; ".join(problems + notes)

    def check_resource(self):
        pair, link = self.connect()
        pid = pair.ident.id
        notes, problems = [], []
        content = secrets.token_bytes(100000)
        digest = hashlib.sha256(content).digest()
        name = f"conformance-{secrets.token_hex(4)}.bin"
        watch = Watch(self.ctl, 30)
        try:
            watch.ready.wait(0.5)
            pair.send_seq(msg(STREAM_OPEN, lp.varint(1), bytes([1]), lp.blob(name.encode()), lp.varint(len(content)),
                              secrets.token_bytes(16)))
            offset = 0
            end_time = time.monotonic() + 8
            while offset < len(content) and time.monotonic() < end_time:
                if not pair.wait(lambda: any(m["f"]["id"] == 1 and m["f"]["limit"] > offset
                                             for m in pair.of_kind(STREAM_CREDIT))
                                 or pair.of_kind(STREAM_END) or link.closed, 3):
                    break
                credits = [m["f"] for m in pair.of_kind(STREAM_CREDIT) if m["f"]["id"] == 1]
                if not credits:
                    break
                if offset == 0:
                    offset = credits[0]["received"]
                    notes.append(f"first credit ({credits[0]['received']}, {credits[0]['limit']})")
                limit = min(credits[-1]["limit"], len(content))
                while offset < limit:
                    chunk = content[offset:min(limit, offset + 30000)]
                    pair.send_seq(msg(STREAM_CHUNK, lp.varint(1), lp.varint(offset), lp.blob(chunk)))
                    offset += len(chunk)
            if offset < len(content):
                raise CheckFailed(f"section 10.2: the resource stalled at {offset} of {len(content)} bytes (credits "
                                  f"{[m['f'] for m in pair.of_kind(STREAM_CREDIT)]}, ends "
                                  f"{[m['f'] for m in pair.of_kind(STREAM_END)]})")
            pair.send_seq(msg(STREAM_END, lp.varint(1), bytes([0, 0]), lp.blob(digest), lp.blob(b"")))
            if pair.wait(lambda: any(m["f"]["id"] == 1 for m in pair.of_kind(STREAM_END)), 5):
                end = next(m["f"] for m in pair.of_kind(STREAM_END) if m["f"]["id"] == 1)
                if (end["side"], end["status"], end["digest"]) != (1, 0, digest):
                    problems.append(f"section 10.3: expected streamEnd(side 1, finished, the digest), got {end}")
                else:
                    notes.append("streamEnd(side 1, finished) with the SHA-256")
            else:
                problems.append("section 10.3: no streamEnd from the receiver within 5 s")
            done = watch.wait(lambda evs: any(e.get("event") == "transfer" and e.get("peerID") == hexid(pid)
                                              and (e.get("transfer") or {}).get("phase") == "finished" for e in evs), 3)
            if done:
                event = next(e for e in watch.events if e.get("event") == "transfer"
                             and (e.get("transfer") or {}).get("phase") == "finished")
                path = (event.get("transfer") or {}).get("path")
                try:
                    with open(path, "rb") as f:
                        stored = f.read()
                    if stored != content:
                        problems.append(f"section 10.3: the file stored at {path} differs from what was sent")
                    else:
                        notes.append("stored in the inbox, byte for byte")
                except (OSError, TypeError):
                    notes.append(f"(stored at {path}, not readable here)")
            else:
                problems.append("no finished transfer event in watch")
            problems += pair.violations
            link.bye()
        finally:
            watch.stop()
        return not problems, "; ".join(problems + notes)


CHECKS = [
    ("dialer_leader", "3.3", lambda r: r.check_dialer(True)),
    ("dialer_follower", "3.3", lambda r: r.check_dialer(False)),
    ("acceptor", "3.3", lambda r: r.check_acceptor()),
    ("invitation_ask", "11.2", lambda r: r.check_invitation_ask()),
    ("increments", "3.2", lambda r: r.check_increments()),
    ("ack", "11.5", lambda r: r.check_ack()),
    ("resume_follower", "3.3", lambda r: r.check_resume(False)),
    ("resume_leader", "3.3", lambda r: r.check_resume(True)),
    ("late_joiner_bubbles", "11.8", lambda r: r.check_late_joiner()),
    ("data", "10.1", lambda r: r.check_data()),
    ("datagram_fallback", "11.6", lambda r: r.check_fallback()),
    ("malformed_kind", "4", lambda r: r.check_malformed_kind()),
    ("refuse_version", "7", lambda r: r.refused_hello([
        (4, "protocol version 2", {"version": 2}),
        (4, "version 2 for another session (version is checked first)", {"version": 2, "session": "other"})])),
    ("refuse_session", "11.2", lambda r: r.refused_hello([
        (5, "another session", {"session": "not-" + r.o.session}),
        (5, "another session without encryption (session before encryption)",
         {"session": "not-" + r.o.session, "caps": CAP_RESUME})])),
    ("refuse_encryption", "9.3", lambda r: r.refused_hello([
        (7, "no encryption bit", {"caps": CAP_RESUME}),
        (7, "the preSharedKey bit", {"caps": CAP_RESUME | CAP_ENCRYPTION | 16})])),
    ("refuse_impostor", "9.1", lambda r: r.check_impostor()),
    ("refuse_peer_id", "11.2", lambda r: r.check_refuse_peer_id()),
    ("bad_noise_message", "9.3", lambda r: r.check_bad_noise()),
    ("refuse_early_kind", "9.3", lambda r: r.check_early_kind()),
    ("malformed_fields", "6", lambda r: r.check_malformed_fields()),
    ("misplaced", "11.2", lambda r: r.check_misplaced()),
    ("ignored", "11", lambda r: r.check_ignored()),
    ("unknown_extension", "3.2", lambda r: r.check_unknown_extension()),
    ("ping_pong", "11.4", lambda r: r.check_ping_pong()),
    ("resume_gap", "11.5", lambda r: r.check_resume_gap()),
    ("restart", "11.4", lambda r: r.check_restart()),
    ("duplicate_path", "3.3", lambda r: r.check_duplicate_path()),
    ("liveness", "11.4", lambda r: r.check_liveness()),
    ("members", "11.3", lambda r: r.check_members()),
    ("datagram_replay", "9.4", lambda r: r.check_datagram_replay()),
    ("datagram_not_sequenced", "11.6", lambda r: r.check_datagram_not_sequenced()),
    ("no_datagram_port", "11.6", lambda r: r.check_no_datagram_port()),
    ("late_joiner_coordinator", "11.11", lambda r: r.check_late_joiner_coordinator()),
    ("peer_moves", "3.2", lambda r: r.check_peer_moves()),
    ("peer_coordinator", "11.8", lambda r: r.check_peer_coordinator()),
    ("holder_lost", "11.8", lambda r: r.check_holder_lost()),
    ("bubble_state_from_member", "11.8", lambda r: r.check_bubble_state_from_member()),
    ("stream_declined", "11.10", lambda r: r.check_stream_declined()),
    ("stream_taken", "10.2", lambda r: r.check_stream_taken()),
    ("resource", "10.3", lambda r: r.check_resource()),
    ("resource_name", "10.3", lambda r: r.check_resource_name()),
]


def main():
    parser = argparse.ArgumentParser(description="A conformance test peer for LanSession (wire format version 3).")
    parser.add_argument("--sessiond-port", type=int, dest="port", help="the daemon's TCP port")
    parser.add_argument("--host", default="127.0.0.1", help="the daemon's address, and where this peer binds")
    parser.add_argument("--client", help="session-client")
    parser.add_argument("--control", help="the daemon's control socket")
    parser.add_argument("--session", default="e2e", help="the daemon's session name")
    parser.add_argument("--sessiond", help="sessiond, for a second daemon")
    parser.add_argument("--state-dir", help="a directory for the second daemon's state")
    parser.add_argument("--seconds", type=float, default=120, help="everything ends within this many seconds")
    parser.add_argument("--only", help="comma-separated check names")
    parser.add_argument("--list", action="store_true", help="print the checks and exit")
    o = parser.parse_args()
    if o.list:
        for name, section, _ in CHECKS:
            print(f"{name} {section}")
        return 0
    missing = [flag for flag, value in (("--sessiond-port", o.port), ("--client", o.client),
                                        ("--control", o.control), ("--sessiond", o.sessiond),
                                        ("--state-dir", o.state_dir)) if value is None]
    if missing:
        parser.print_usage(sys.stderr)
        print(f"conformance.py: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    if not (0 < o.port < 65536) or o.seconds <= 0:
        parser.print_usage(sys.stderr)
        print("conformance.py: bad port or seconds", file=sys.stderr)
        return 2
    names = {name for name, _, _ in CHECKS}
    only = set(o.only.split(",")) if o.only else None
    if only and only - names:
        print(f"conformance.py: unknown checks {sorted(only - names)}", file=sys.stderr)
        return 2
    for path in (o.client, o.sessiond):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)) and not shutil.which(path):
            print(f"conformance.py: {path} is not an executable", file=sys.stderr)
            return 2
    os.makedirs(o.state_dir, exist_ok=True)

    started = time.monotonic()
    run = Run(o)
    selected = [c for c in CHECKS if not only or c[0] in only]

    def summary_and_exit(*_, reason=None):
        for proc in list(CHILDREN):
            try:
                proc.kill()
            except OSError:
                pass
        reported = {r["check"] for r in run.results}
        for name, section, _ in selected:
            if name not in reported:
                run.report(name, section, False,
                           reason or f"not run to its end: the time limit of {o.seconds:g} s was reached")
        passed = sum(1 for r in run.results if r["passed"])
        print(json.dumps({"summary": {"passed": passed, "failed": len(run.results) - passed}}), flush=True)
        os._exit(0 if passed == len(run.results) else 1)

    signal.signal(signal.SIGALRM, summary_and_exit)
    signal.setitimer(signal.ITIMER_REAL, max(1.0, o.seconds - 0.5))

    status = poll(lambda: Run._try(run.ctl, "status"), min(10, o.seconds / 2), 0.2)
    if not status:
        run.report("daemon", "-", False, f"the daemon does not answer `status` on {o.control}")
        summary_and_exit(reason="not run: the daemon does not answer")
    run.daemon_id, run.daemon_name = int(status["peerID"], 16), status["name"]

    for name, section, fn in selected:
        if time.monotonic() - started > o.seconds - 4:
            run.report(name, section, False, f"not run: less than 4 s of the {o.seconds:g} s left")
            continue
        try:
            passed, detail = fn(run)
        except (CheckFailed, Refused, ControlError) as error:
            passed, detail = False, str(error)
        except Exception as error:  # a bug here, or something of the daemon's that nothing expected
            passed, detail = False, f"{type(error).__name__}: {error} at {traceback.format_exc(limit=-1).strip()}"
        finally:
            run.cleanup_links()
        run.report(name, section, passed, detail)
    signal.setitimer(signal.ITIMER_REAL, 0)
    passed = sum(1 for r in run.results if r["passed"])
    failed = len(run.results) - passed
    print(json.dumps({"summary": {"passed": passed, "failed": failed}}), flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
