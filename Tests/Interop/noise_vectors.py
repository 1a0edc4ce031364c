#!/usr/bin/env python3
"""Test vectors for LinkCrypto's Noise handshake, from an independent implementation.

Runs Noise_XX_25519_ChaChaPoly_SHA256, Noise_XXpsk3_25519_ChaChaPoly_SHA256, Noise_XX_25519_AESGCM_SHA256 and
Noise_XXpsk3_25519_AESGCM_SHA256 with Python's `noiseprotocol` package (`pip install noiseprotocol`, module `noise`)
and fixed keys, and prints in hex what
Tests/LinkCryptoTests/NoiseVectorTests.swift checks byte for byte: the three handshake messages, the handshake hash,
one transport message each way, transport messages around a rekey (after every 3 messages), the datagram keys and
the pairing code.
"""

import hashlib
import warnings

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
