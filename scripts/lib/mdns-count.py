"""Counts the mDNS packets crossing a lab's switch: run in the switch's network namespace (NAME-sw) on its bridge, it
only receives (a packet socket), never sends. Every IPv4 UDP frame to or from port 5353 that the bridge floods is
written to OUT as one line, "TIME_NS QR BYTES" (wall clock; QR 0 a query, 1 a response), until SIGTERM. Used by
`scripts/bench mesh` (scripts/lib/mesh-bench.py reads the lines).

  mdns-count.py BRIDGE OUT"""

import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
MDNS_PORT = 5353


def main():
    bridge, out = sys.argv[1], sys.argv[2]
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.bind((bridge, 0))
    sock.settimeout(0.2)
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.__setitem__(0, False))
    with open(out, "w", buffering=1) as log:
        while running[0]:
            try:
                frame = sock.recv(65535)
            except socket.timeout:
                continue
            except InterruptedError:
                continue
            now = time.time_ns()
            if len(frame) < 14 + 20 + 8 + 4 or frame[12:14] != b"\x08\x00":
                continue  # not IPv4
            ip = frame[14:]
            header = (ip[0] & 0x0F) * 4
            if ip[9] != 17 or len(ip) < header + 8 + 4:
                continue  # not UDP
            source, destination = struct.unpack("!HH", ip[header:header + 4])
            if MDNS_PORT not in (source, destination):
                continue
            flags = ip[header + 8 + 2]
            log.write(f"{now} {flags >> 7} {len(frame)}\n")


if __name__ == "__main__":
    main()
