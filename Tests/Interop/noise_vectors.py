#!/usr/bin/env python3
"""Test vectors for LinkCrypto's Noise handshake, from an independent implementation.

Runs Noise_XX_25519_ChaChaPoly_SHA256, Noise_XXpsk3_25519_ChaChaPoly_SHA256, Noise_XX_25519_AESGCM_SHA256 and
Noise_XXpsk3_25519_AESGCM_SHA256 with Python's `noiseprotocol` package (`pip install noiseprotocol`, module `noise`)
and fixed keys, and prints in hex what
Tests/LinkCryptoTests/NoiseVectorTests.swift checks byte for byte: the three handshake messages, the handshake hash,
one transport message each way, transport messages around a rekey (after every 3 messages), the datagram keys, the
initiator's first sealed datagram and the pairing code.

The sealed datagram (docs/wire-format.md, section 9.4) is made here with the `cryptography` package's AEADs, not with
Noise's: header `88 77 66 55 44 33 22 11 05` (token 0x1122334455667788, datagram sequence 5), the counter 1 as `u64le`,
then the sealed frame `02 27 01` (`counterIncrement` 1); the nonce is 4 zero bytes and the counter as `u64le` for
ChaChaPoly, as `u64be` for AESGCM, the additional data the header and the counter.
"""

import hashlib
import struct
import warnings

from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

import noise.state
from noise.connection import Keypair, NoiseConnection

INITIATOR_STATIC = "afdb168c14f76aa94cd26066d92499134bfe1ed681d279b39aa53c09adaedae7"
INITIATOR_EPHEMERAL = "aeb32fab4b915ca4881189e25fc9e6f7713d72cf2567c4acbc3f3db653656c09"
RESPONDER_STATIC = "bbf036f95c76855158a869b0e9b678fcee5ccf45a1b7429553c8ba6e6e0f339e"
RESPONDER_EPHEMERAL = "8daf806bcaebe67cdf5d3946db2a07c8fe087d2fb7b85f81a8ddf55aa0eb5b04"
PROLOGUE = b"LanSession v3 vectors"
PSK = bytes(range(1, 33))
DATAGRAM_LABEL = b"LanSession v3 datagrams"
PAIRING_LABEL = b"LanSession v3 pairing code"
DATAGRAM_HEADER = bytes.fromhex("887766554433221105")
DATAGRAM_FRAME = bytes.fromhex("022701")

# The fixed ephemeral keys are the point here: the package warns about them.
warnings.filterwarnings("ignore", message="One of ephemeral keypairs is already set")

# Split() is where the final chaining key is known: keep the datagram keys derived from it, per connection.
datagram_keys = {}
original_split = noise.state.SymmetricState.split


def split(self):
    datagram_keys[id(self.noise_protocol)] = self.noise_protocol.hkdf(self.ck, DATAGRAM_LABEL, 2)
    return original_split(self)


noise.state.SymmetricState.split = split


def connection(name, initiator, static, ephemeral, psk):
    conn = NoiseConnection.from_name(name.encode("ascii"))
    if initiator:
        conn.set_as_initiator()
    else:
        conn.set_as_responder()
    conn.set_keypair_from_private_bytes(Keypair.STATIC, bytes.fromhex(static))
    conn.set_keypair_from_private_bytes(Keypair.EPHEMERAL, bytes.fromhex(ephemeral))
    conn.set_prologue(PROLOGUE)
    if psk is not None:
        conn.set_psks(psk=psk)
    conn.start_handshake()
    return conn


def sealed_datagram(name, key, counter):
    """A datagram sealed with `key`: header, `u64le` counter, ciphertext and tag (section 9.4)."""
    field = struct.pack("<Q", counter)
    additional = DATAGRAM_HEADER + field
    if "AESGCM" in name:
        sealed = AESGCM(key).encrypt(b"\0" * 4 + struct.pack(">Q", counter), DATAGRAM_FRAME, additional)
    else:
        sealed = ChaCha20Poly1305(key).encrypt(b"\0" * 4 + field, DATAGRAM_FRAME, additional)
    return additional + sealed


def run(name, psk):
    initiator = connection(name, True, INITIATOR_STATIC, INITIATOR_EPHEMERAL, psk)
    responder = connection(name, False, RESPONDER_STATIC, RESPONDER_EPHEMERAL, psk)
    out = {}
    out["message1"] = bytes(initiator.write_message(b""))
    assert responder.read_message(out["message1"]) == b""
    out["message2"] = bytes(responder.write_message(b"resp"))
    assert initiator.read_message(out["message2"]) == b"resp"
    out["message3"] = bytes(initiator.write_message(b"init"))
    assert responder.read_message(out["message3"]) == b"init"
    assert initiator.handshake_finished and responder.handshake_finished
    out["handshakeHash"] = initiator.get_handshake_hash()
    assert out["handshakeHash"] == responder.get_handshake_hash()

    out["ping"] = initiator.encrypt(b"ping")
    assert responder.decrypt(out["ping"]) == b"ping"
    out["pong"] = responder.encrypt(b"pong")
    assert initiator.decrypt(out["pong"]) == b"pong"
    # Two more from the initiator (nonces 1 and 2), a rekey of that direction, and one after it (nonce 3).
    for label in (b"a", b"b"):
        out["rekey-" + label.decode()] = initiator.encrypt(label)
        assert responder.decrypt(out["rekey-" + label.decode()]) == label
    initiator.rekey_outbound_cipher()
    responder.rekey_inbound_cipher()
    out["rekey-c"] = initiator.encrypt(b"c")
    assert responder.decrypt(out["rekey-c"]) == b"c"

    keys = datagram_keys[id(initiator.noise_protocol)]
    assert keys == datagram_keys[id(responder.noise_protocol)]
    out["datagramKey1"], out["datagramKey2"] = keys
    out["datagram"] = sealed_datagram(name, keys[0], 1)
    digest = hashlib.sha256(PAIRING_LABEL + out["handshakeHash"]).digest()
    code = "%06d" % (int.from_bytes(digest[:4], "big") % 1_000_000)

    print(name)
    for key, value in out.items():
        print(f"  {key} = {value.hex()}")
    print(f"  pairingCode = {code}")


run("Noise_XX_25519_ChaChaPoly_SHA256", None)
run("Noise_XXpsk3_25519_ChaChaPoly_SHA256", PSK)
run("Noise_XX_25519_AESGCM_SHA256", None)
run("Noise_XXpsk3_25519_AESGCM_SHA256", PSK)
