#!/usr/bin/env python3
"""What a page costs its daemon: CPU of sessiond (by pid, from /proc) while idle without a page, idle with a page
open, and while the page drags a bubble at RATE moves a second, as a browser sends them (the page's WebSocket, its
token cookie and Origin, binary moves). Another daemon's page (--also) is open meanwhile and reads every move, as the
other person's screen would. Prints one JSON object. Used by `scripts/bench web`; needs websocket-client (Selenium's
dependency).
  page-drag-cpu.py --url PAGE_URL --pid PID [--also PAGE_URL --watch PID] [--seconds S] [--rate HZ]"""
import argparse
import json
import os
import struct
import sys
import threading
import time
import urllib.parse

import websocket

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def percent(pids, seconds, during=None):
    """Each pid's CPU, as a percentage of one CPU, over `seconds` (running `during` meanwhile, if given)."""
    before = {pid: cpu_seconds(pid) for pid in pids}
    started = time.monotonic()
    if during:
        during(seconds)
    else:
        time.sleep(seconds)
    elapsed = time.monotonic() - started
    return {pid: round(100 * (cpu_seconds(pid) - before[pid]) / elapsed, 2) for pid in pids}


def open_page(url):
    parts = urllib.parse.urlsplit(url)
    token = urllib.parse.parse_qs(parts.query)["token"][0]
    origin = f"http://{parts.netloc}"
    ws = websocket.create_connection(f"ws://{parts.netloc}/ws", header=[f"Origin: {origin}"],
                                     cookie=f"lansession-page={token}", timeout=5)
    received = [0]

    def drain():  # a page reads everything the daemon pushes
        try:
            while True:
                ws.recv()
                received[0] += 1
        except Exception:
            pass
    threading.Thread(target=drain, daemon=True).start()
    return ws, received


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--pid", type=int, required=True, help="the daemon serving the page")
    parser.add_argument("--watch", type=int, action="append", default=[], help="another daemon to measure")
    parser.add_argument("--also", action="append", default=[], help="another daemon's page, open with this one")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rate", type=float, default=60)
    options = parser.parse_args()
    pids = [options.pid] + options.watch

    without = percent(pids, options.seconds)
    ws, received = open_page(options.url)
    others = [open_page(url) for url in options.also]
    time.sleep(1)
    idle = percent(pids, options.seconds)
    ws.send(json.dumps({"op": "pickup", "view": 1}))
    time.sleep(0.5)
    sent = [0]

    def drag(seconds):
        period = 1 / options.rate
        start = time.monotonic()
        index = 0
        while True:
            due = start + index * period
            if due - start >= seconds:
                break
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            x = 100 + (index % 120)
            y = 150 + (index % 60)
            ws.send_binary(struct.pack("!BBff", 1, 1, x, y))
            index += 1
        sent[0] = index
    dragging = percent(pids, options.seconds, during=drag)
    ws.send(json.dumps({"op": "drop", "view": 1, "x": 100, "y": 100}))
    time.sleep(0.3)
    ws.close()
    for other, _ in others:
        other.close()
    print(json.dumps({"event": "page_cpu", "seconds": options.seconds, "rate_hz": options.rate, "moves": sent[0],
                      "frames_received": received[0],
                      "frames_received_elsewhere": [count[0] for _, count in others],
                      "daemons": [{"pid": pid, "no_page_pct": without[pid], "page_idle_pct": idle[pid],
                                   "dragging_pct": dragging[pid]} for pid in pids]}))


if __name__ == "__main__":
    sys.exit(main())
