"""The end-to-end row of `scripts/bench net`: an increment asked of host 1's sessiond over its control socket until
the counter event shows in a watch of host 2's sessiond (what session-client increment → session-client watch does,
without starting a process each time). Prints: ROW P50 P90 P99 (microseconds).

  e2e-increment.py ROW CONTROL1 CONTROL2 COUNT"""

import sys
import time

from control_socket import Control


def main():
    row, path1, path2, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    sender, watcher = Control(path1), Control(path2)
    sender.send({"command": "status"})
    me = sender.reply()["peerID"]
    watcher.send({"command": "watch"})
    watcher.line()
    samples = []
    for index in range(count + count // 10):  # the first tenth warms up
        start = time.perf_counter_ns()
        sender.send({"command": "increment", "count": 1})
        while True:
            event = watcher.line()
            if event.get("event") == "counter" and event.get("peerID") == me:
                break
        end = time.perf_counter_ns()
        reply = sender.line()
        if not reply.get("ok"):
            sys.exit(f"e2e-increment: {reply.get('error')}")
        if index >= count // 10:
            samples.append((end - start) / 1000)
    samples.sort()
    pick = lambda q: samples[min(len(samples) - 1, int(len(samples) * q))]
    print(row, round(pick(0.5), 1), round(pick(0.9), 1), round(pick(0.99), 1))


if __name__ == "__main__":
    main()
