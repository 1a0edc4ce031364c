"""A central that is not LanSession's: bleak, through BlueZ's bluetoothd, against a device's GATT face.

Checks what a phone app that knows only GATT would do with LanSession's face (docs/wire-format.md, sections 4.2 and
4.3), as the lab's `check --bluez` runs it (scripts/btlab run --bluetoothd, bleak on PYTHONPATH):

1. scans on ADAPTER filtered by the LanSession service UUID until ADDRESS is reported (how long it took);
2. connects, reads the identity characteristic (A1);
3. subscribes to the events characteristic (A3);
4. writes without response to the command characteristic (A2): pick-up of view 0, a move of view 0 to
   (100.5, -20.25), 5 increments;
5. writes `ff ff`, which is no command, with response, and reports the ATT error code it is answered with (0x80);
6. listens for notifications until a line arrives on stdin or the listening window (--listen, TIMEOUT by default)
   ends: whoever drives the script starts the device user's moves and increments once it printed
   {"subscribed": true}, and ends the window with a line;
7. measures GATT round trips (--round-trips, 0 for none): one increment written without response, then the
   counterState notification that it causes, one after the other.

Run as `python3 gatt_central.py ADAPTER ADDRESS TIMEOUT`. Output: one JSON object per line, in this order:
{"found_after_s"}, {"connected_after_s"}, {"characteristics"}, {"identity"}, {"subscribed"}, {"writes"},
{"bad_write_error"}, {"notification"} for each one as it arrives, {"gatt_round_trip"}, {"done"}; an {"error"} ends
the run early with status 1.
"""

import argparse
import asyncio
import json
import re
import struct
import sys
import time

from bleak import BleakClient, BleakScanner
from bleak.exc import BleakDBusError, BleakError

try:
    from bleak.exc import BleakGATTProtocolError
except ImportError:  # bleak before 3.0: the error's text holds the code
    BleakGATTProtocolError = None

SERVICE = "4c414e53-4553-5349-4f4e-0000000000a0"
IDENTITY = "4c414e53-4553-5349-4f4e-0000000000a1"
COMMAND = "4c414e53-4553-5349-4f4e-0000000000a2"
EVENTS = "4c414e53-4553-5349-4f4e-0000000000a3"

PICK_UP_VIEW_0 = bytes.fromhex("022400")
MOVE_VIEW_0 = bytes.fromhex("0c25000000c9420000a2c10100")  # to (100.5, -20.25), sequence 1
INCREMENT_5 = bytes.fromhex("022705")
INCREMENT_1 = bytes.fromhex("022701")
NOT_A_COMMAND = bytes.fromhex("ffff")


def emit(**fields):
    print(json.dumps(fields), flush=True)


def varint(data, at):
    """An unsigned LEB128 at `at`: (value, the offset after it)."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def decode_event(data):
    """One framed event (section 4.2) as a dict; {"kind": "unknown"} for anything else."""
    try:
        length, at = varint(data, 0)
        body = data[at : at + length]
        kind = body[0]
        if kind == 0x25:
            view, x, y, sequence = struct.unpack_from("<BffH", body, 1)
            return {"kind": "move", "view": view, "x": x, "y": y, "sequence": sequence}
        if kind == 0x29:
            view, holder, x, y = struct.unpack_from("<BQff", body, 1)
            return {"kind": "bubbleState", "view": view, "holder": f"{holder:016x}", "x": x, "y": y}
        if kind == 0x28:
            count, at = varint(body, 1)
            entries = {}
            for _ in range(count):
                (peer,) = struct.unpack_from("<Q", body, at)
                entries[f"{peer:016x}"], at = varint(body, at + 8)
            return {"kind": "counterState", "entries": entries}
    except (IndexError, struct.error):
        pass
    return {"kind": "unknown"}


def att_error_code(error):
    """The ATT error code in a failed write's exception, as "0x80", or None."""
    if BleakGATTProtocolError is not None and isinstance(error, BleakGATTProtocolError):
        return f"0x{int(error.code):02x}"
    match = re.search(r"ATT error: (0x[0-9a-fA-F]+)", str(error))
    return f"0x{int(match.group(1), 16):02x}" if match else None


async def find(adapter, address, timeout):
    """Scans on `adapter` with the service UUID as filter until `address` is reported."""
    found = asyncio.get_running_loop().create_future()

    def seen(device, advertisement):
        if device.address.upper() == address.upper() and not found.done():
            found.set_result((device, advertisement))

    started = time.monotonic()
    async with BleakScanner(seen, service_uuids=[SERVICE], bluez={"adapter": adapter}):
        device, advertisement = await asyncio.wait_for(found, timeout)
    emit(
        found_after_s=round(time.monotonic() - started, 3),
        service_uuids=advertisement.service_uuids,
        service_data={uuid: data.hex() for uuid, data in advertisement.service_data.items()},
        rssi=advertisement.rssi,
        name=advertisement.local_name,
    )
    return device


async def wait_for_stdin_line(window):
    """Returns after a line on stdin (EOF is not one) or after `window` seconds."""
    loop = asyncio.get_running_loop()
    line = loop.create_future()

    def readable():
        data = sys.stdin.buffer.raw.read(4096)
        if not data:
            loop.remove_reader(0)
        elif b"\n" in data and not line.done():
            line.set_result(None)

    try:
        loop.add_reader(0, readable)
    except (OSError, ValueError):  # stdin that cannot be polled (a file, /dev/null): the window only
        await asyncio.sleep(window)
        return
    try:
        await asyncio.wait_for(line, window)
    except asyncio.TimeoutError:
        pass
    finally:
        loop.remove_reader(0)


def percentile(sorted_values, fraction):
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


async def round_trips(client, events, peer, count):
    """`count` increments of 1, each written without response, each awaited as the counterState it causes."""
    latest = None
    times = []
    lost = 0
    # Start from the device's current total: a read of the events characteristic is not enough (it holds the last
    # event of any kind), so the first increment is only a warm-up that tells the total.
    for index in range(count + 1):
        while not events.empty():
            events.get_nowait()
        started = time.perf_counter_ns()
        await client.write_gatt_char(COMMAND, INCREMENT_1, response=False)
        deadline = time.monotonic() + 2
        while True:
            remaining = deadline - time.monotonic()
            try:
                event = await asyncio.wait_for(events.get(), max(remaining, 0.001))
            except asyncio.TimeoutError:
                lost += index > 0
                latest = None
                break
            if event["kind"] != "counterState":
                continue
            totals = event["entries"]
            total = totals.get(peer) if peer in totals else max(totals.values(), default=None)
            if total is None or (latest is not None and total <= latest):
                continue
            if index > 0 and latest is not None:
                times.append((time.perf_counter_ns() - started) / 1000)
            latest = total
            break
    times.sort()
    result = {"count": len(times), "lost": lost}
    if times:
        result.update(
            p50_us=round(percentile(times, 0.5)),
            p90_us=round(percentile(times, 0.9)),
            p99_us=round(percentile(times, 0.99)),
        )
    emit(gatt_round_trip=result)


CONNECT_ATTEMPTS = 3


async def run(arguments):
    device = await find(arguments.adapter, arguments.address, arguments.timeout)
    started = time.monotonic()
    # A connection that drops during service discovery is tried again, as apps do (on the lab's emulated
    # controllers about one first connection in four is dropped so); each attempt is reported.
    client = None
    for attempt in range(1, CONNECT_ATTEMPTS + 1):
        client = BleakClient(device, timeout=arguments.timeout, bluez={"adapter": arguments.adapter})
        try:
            await client.connect()
            break
        except BleakError as error:
            emit(connect_failed=f"attempt {attempt}: {error}")
            if attempt == CONNECT_ATTEMPTS:
                raise
            await asyncio.sleep(1)
    try:
        emit(connected_after_s=round(time.monotonic() - started, 3), connect_attempts=attempt)
        service = client.services.get_service(SERVICE)
        if service is None:
            emit(error="no LanSession service", services=[s.uuid for s in client.services])
            return 1
        emit(characteristics={c.uuid: c.properties for c in service.characteristics})

        identity = (await client.read_gatt_char(IDENTITY)).decode("utf-8", "replace")
        emit(identity=identity)
        match = re.match(r"peer ([0-9a-f]{16}) ", identity)
        peer = match.group(1) if match else None

        events = asyncio.Queue()

        def notified(_, data):
            event = decode_event(bytes(data))
            emit(notification=bytes(data).hex(), event=event)
            events.put_nowait(event)

        await client.start_notify(EVENTS, notified)
        emit(subscribed=True)

        for data in (PICK_UP_VIEW_0, MOVE_VIEW_0, INCREMENT_5):
            await client.write_gatt_char(COMMAND, data, response=False)
        emit(writes=["pickUp 0", "move 0 (100.5, -20.25)", "increment 5"])

        try:
            await client.write_gatt_char(COMMAND, NOT_A_COMMAND, response=True)
            emit(bad_write_error=None, bad_write_detail="accepted")
        except (BleakDBusError, BleakError) as error:
            detail = error.args[-1] if BleakGATTProtocolError and isinstance(error, BleakGATTProtocolError) else error
            emit(bad_write_error=att_error_code(error), bad_write_detail=f"{type(error).__name__}: {detail}")

        await wait_for_stdin_line(arguments.listen if arguments.listen is not None else arguments.timeout)
        if arguments.round_trips:
            await round_trips(client, events, peer, arguments.round_trips)
        await client.stop_notify(EVENTS)
    finally:
        await client.disconnect()
    emit(done=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("adapter", help="the central's adapter, as BlueZ names it (hci0)")
    parser.add_argument("address", help="the device's LE public address")
    parser.add_argument("timeout", type=float, help="seconds for the scan and for the connection")
    parser.add_argument("--listen", type=float, help="seconds to wait for notifications (TIMEOUT by default)")
    parser.add_argument("--round-trips", type=int, default=100, help="increments timed one by one (0: none)")
    arguments = parser.parse_args()
    try:
        status = asyncio.run(run(arguments))
    except asyncio.TimeoutError:
        emit(error=f"{arguments.address} not found or not connected within {arguments.timeout} s")
        status = 1
    except (BleakError, OSError) as error:
        emit(error=f"{type(error).__name__}: {error}")
        status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
