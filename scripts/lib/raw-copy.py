#!/usr/bin/env python3
"""The raw TCP copy that file transfers are compared with, between test hosts.

    raw-copy.py receive PORT PATH   accept one connection, write what arrives to PATH, fsync, print
                                    {"bytes", "seconds", "cpu_seconds"} (from accept to the synced end) and remove
                                    PATH
    raw-copy.py send HOST PORT PATH send PATH with sendfile, print {"cpu_seconds"} (from connect to close)

cpu_seconds is this process's user and system time over that span: the copy's own, without Python's start.

The receiver prints {"listening": PORT} once it listens; every line is one JSON object.
"""
import json
import os
import socket
import sys
import time


def receive(port, path):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen(1)
    print(json.dumps({"listening": port}), flush=True)
    connection, _ = server.accept()
    start = time.monotonic()
    cpu_start = time.process_time()
    count = 0
    buffer = bytearray(1 << 20)
    with open(path, "wb") as file:
        while True:
            received = connection.recv_into(buffer)
            if not received:
                break
            file.write(memoryview(buffer)[:received])
            count += received
        file.flush()
        os.fsync(file.fileno())
    seconds, cpu_seconds = time.monotonic() - start, time.process_time() - cpu_start
    print(json.dumps({"bytes": count, "seconds": seconds, "cpu_seconds": cpu_seconds}), flush=True)
    os.unlink(path)


def send(host, port, path):
    cpu_start = time.process_time()
    connection = socket.create_connection((host, port))
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        offset = 0
        while offset < size:
            offset += os.sendfile(connection.fileno(), file.fileno(), offset, size - offset)
    connection.close()
    print(json.dumps({"cpu_seconds": time.process_time() - cpu_start}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "receive":
        receive(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(__doc__)
