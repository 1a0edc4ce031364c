"""A client of sessiond's control socket for the benchmark scripts: one JSON request per line, one reply line each
(or, after `watch`, one event per line). Docs: docs/control-protocol.md."""

import json
import socket
import time


class Control:
    """One connection to a control socket at `path`, retried until `deadline` (time.monotonic()) if it is not
    there yet."""

    def __init__(self, path, deadline=0):
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        self.buffer = b""

    def send(self, request):
        self.sock.sendall(json.dumps(request).encode() + b"\n")

    def line(self):
        """The next line, decoded, waiting for it."""
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("the daemon closed its control socket")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def lines(self):
        """The lines that have arrived, decoded, without waiting for more (call when the socket is readable)."""
        chunk = self.sock.recv(65536)
        if not chunk:
            raise RuntimeError("the daemon closed its control socket")
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()]

    def reply(self):
        """The next reply's result; an error reply raises."""
        reply = self.line()
        if not reply.get("ok"):
            raise RuntimeError(reply.get("error"))
        return reply["result"]

    def ask(self, request):
        self.send(request)
        return self.reply()
