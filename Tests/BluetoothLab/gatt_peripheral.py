"""A stand-in for sessiond's GATT face under BlueZ's bluetoothd, to check the lab's central (gatt_central.py) alone.

A GATT application registered with org.bluez.GattManager1 on ADAPTER, and an LE advertisement (type peripheral, the
LanSession service UUID; with --service-data, service data as in docs/wire-format.md 4.3, which bluetoothd 5.66
refuses as too long beside the UUID) registered with org.bluez.LEAdvertisingManager1, both through the system bus with
dbus-fast (bleak's dependency). It serves the three characteristics of section 4.2: identity (read), command (write,
write without response), events (read, notify: a move for each move, a counterState with its own total after each
increment). A write that is no pickUp, move, drop or counterIncrement frame is answered with org.bluez.Error.Failed,
which bluetoothd sends as ATT error 0x80, but only with --write-only (a command characteristic without
write-without-response): for one with it, bluetoothd 5.66 answers every write itself and calls WriteValue without
waiting for a reply, so the error goes nowhere (dbus-fast logs it).

Lines on stdin act as the device's user: `increment N`, `move VIEW X Y`. Run in a boot with bluetoothd as
`scripts/btlab run --bluetoothd python3 Tests/BluetoothLab/gatt_peripheral.py hci1 ...` beside
`python3 Tests/BluetoothLab/gatt_central.py hci0 <hci1's address> 30`; it prints one JSON object per line
({"registered"}, {"advertising"}, then one per write and per line) and ends on SIGTERM or at the end of stdin.
"""

import argparse
import asyncio
import json
import os
import signal
import struct
import sys

from dbus_fast import BusType, DBusError, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.service import PropertyAccess, ServiceInterface, dbus_property, method

SERVICE = "4c414e53-4553-5349-4f4e-0000000000a0"
PEER = 0x1122334455667788
ROOT = "/org/lansession/fixture"


def emit(**fields):
    print(json.dumps(fields), flush=True)


def varint(value):
    out = bytearray()
    while True:
        out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def framed(body):
    return varint(len(body)) + body


class Face:
    """The device's state as its user and the central change it."""

    def __init__(self):
        self.count = 0
        self.sequence = 0
        self.holder = None
        self.events = None  # the events characteristic, to notify

    def increment(self, times):
        for _ in range(times):
            self.count += 1
            self.events.notify(framed(bytes([0x28, 1]) + struct.pack("<Q", PEER) + varint(self.count)))

    def move(self, view, x, y):
        self.sequence = (self.sequence + 1) & 0xFFFF
        self.events.notify(framed(struct.pack("<BBffH", 0x25, view, x, y, self.sequence)))

    def command(self, data):
        """One framed command from a central; False when it is none."""
        if len(data) < 2 or data[0] != len(data) - 1:
            return False
        kind, body = data[1], data[2:]
        if kind == 0x24 and len(body) == 1:
            self.holder = body[0]
        elif kind == 0x25 and len(body) == 11:
            view, x, y, _ = struct.unpack("<BffH", body)
            self.move(view, x, y)
        elif kind == 0x26 and len(body) == 9:
            self.holder = None
        elif kind == 0x27 and len(body) == 1 and 1 <= body[0] <= 127:
            self.increment(body[0])
        else:
            return False
        return True


class Service(ServiceInterface):
    def __init__(self):
        super().__init__("org.bluez.GattService1")

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return SERVICE

    @dbus_property(access=PropertyAccess.READ)
    def Primary(self) -> "b":
        return True


class Characteristic(ServiceInterface):
    def __init__(self, suffix, flags, face, value=b""):
        super().__init__("org.bluez.GattCharacteristic1")
        self.uuid = SERVICE[:-2] + suffix
        self.flags = flags
        self.face = face
        self.value = value
        self.notifying = False

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return self.uuid

    @dbus_property(access=PropertyAccess.READ)
    def Service(self) -> "o":
        return ROOT + "/service0"

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> "as":
        return self.flags

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> "ay":
        return self.value

    @method()
    def ReadValue(self, options: "a{sv}") -> "ay":
        offset = options.get("offset", Variant("q", 0)).value
        return self.value[offset:]

    @method()
    def WriteValue(self, value: "ay", options: "a{sv}"):
        kind = options.get("type", Variant("s", "?")).value
        accepted = self.face.command(bytes(value))
        emit(write=bytes(value).hex(), type=kind, accepted=accepted)
        if not accepted:
            raise DBusError("org.bluez.Error.Failed", "not a command")

    @method()
    def StartNotify(self):
        self.notifying = True
        emit(notifying=True)

    @method()
    def StopNotify(self):
        self.notifying = False
        emit(notifying=False)

    def notify(self, value):
        self.value = value
        if self.notifying:
            self.emit_properties_changed({"Value": value})


class Advertisement(ServiceInterface):
    def __init__(self, service_data):
        super().__init__("org.bluez.LEAdvertisement1")
        tag = bytes.fromhex("6092f4")  # FNV-1a of "lab", low 24 bits
        self.service_data = {SERVICE: Variant("ay", bytes([1]) + struct.pack("<Q", PEER) + b"\x95" + tag)}
        self.with_service_data = service_data

    @dbus_property(access=PropertyAccess.READ)
    def Type(self) -> "s":
        return "peripheral"

    @dbus_property(access=PropertyAccess.READ)
    def ServiceUUIDs(self) -> "as":
        return [SERVICE]

    @dbus_property(access=PropertyAccess.READ)
    def ServiceData(self) -> "a{sv}":
        return self.service_data if self.with_service_data else {}

    @method()
    def Release(self):
        emit(advertisement_released=True)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("adapter")
    parser.add_argument("--service-data", action="store_true", help="service data in the advertisement (4.3)")
    parser.add_argument(
        "--write-only", action="store_true", help="the command characteristic without write-without-response"
    )
    arguments = parser.parse_args()
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    face = Face()
    identity = f'peer {PEER:016x} "fixture" session "lab" fingerprint -'.encode()
    characteristics = [
        Characteristic("a1", ["read"], face, identity),
        Characteristic("a2", ["write"] if arguments.write_only else ["write-without-response", "write"], face),
        Characteristic("a3", ["read", "notify"], face),
    ]
    face.events = characteristics[2]
    objects = {ROOT + "/service0": [Service()]}
    for index, characteristic in enumerate(characteristics):
        objects[f"{ROOT}/service0/char{index}"] = [characteristic]
    for path, interfaces in objects.items():
        for interface in interfaces:
            bus.export(path, interface)
    # GetManagedObjects on ROOT, which bluetoothd calls, is dbus-fast's own: every object exported below ROOT.
    adapter = f"/org/bluez/{arguments.adapter}"
    introspection = await bus.introspect("org.bluez", adapter)
    proxy = bus.get_proxy_object("org.bluez", adapter, introspection)
    await proxy.get_interface("org.bluez.GattManager1").call_register_application(ROOT, {})
    emit(registered=True)
    bus.export(ROOT + "/advertisement0", Advertisement(arguments.service_data))
    await proxy.get_interface("org.bluez.LEAdvertisingManager1").call_register_advertisement(
        ROOT + "/advertisement0", {}
    )
    emit(advertising=True, service_data=arguments.service_data)

    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, lambda: stop.done() or stop.set_result(None))

    pending = bytearray()

    def readable():
        data = os.read(0, 4096)
        if not data:
            loop.remove_reader(0)
            stop.done() or stop.set_result(None)
            return
        pending.extend(data)
        while b"\n" in pending:
            line, _, rest = bytes(pending).partition(b"\n")
            pending[:] = rest
            words = line.decode().split()
            if words[:1] == ["increment"]:
                face.increment(int(words[1]))
            elif words[:1] == ["move"]:
                face.move(int(words[1]), float(words[2]), float(words[3]))
            emit(user=words, count=face.count)

    loop.add_reader(0, readable)
    await stop


if __name__ == "__main__":
    asyncio.run(main())
