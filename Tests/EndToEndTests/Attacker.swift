/// A hostile neighbour, as a Python program run in its own test host: it speaks the wire format by hand (hellos,
/// invitations, counts), records and replays a member's handshake through a relay, floods hellos and holds idle
/// connections. Its output is one JSON line.
enum Attacker {
    static let program = #"""
        import json, os, random, resource, select, socket, struct, sys, threading, time

        def varint(n):
            out = bytearray()
            while True:
                b = n & 0x7f
                n >>= 7
                if n:
                    out.append(b | 0x80)
                else:
                    out.append(b)
                    return bytes(out)

        def string(s):
            b = s.encode()
            return varint(len(b)) + b

        def frame(body):
            return varint(len(body)) + body

        def hello(peer, incarnation, name="intruder", session="e2e"):
            return frame(bytes([0x01]) + varint(3) + struct.pack("<QQ", peer, incarnation) + varint(3) + varint(0)
                         + string(name) + string(session) + varint(0))

        def invitation():
            return frame(bytes([0x04]) + varint(0) + varint(30000))

        def increment(count):
            return frame(bytes([0x27]) + varint(count))

        def counter_state(entries):
            body = bytes([0x28]) + varint(len(entries))
            for peer, count in entries:
                body += struct.pack("<Q", peer) + varint(count)
            return frame(body)

        def read_varint(data, i):
            shift = value = 0
            while i < len(data):
                b = data[i]; i += 1
                value |= (b & 0x7f) << shift
                if not b & 0x80:
                    return value, i
                shift += 7
            return None, i

        def kinds(data):
            out, i = [], 0
            while i < len(data):
                length, j = read_varint(data, i)
                if length is None or j + length > len(data) or length == 0:
                    break
                out.append(data[j])
                i = j + length
            return out

        def converse(host, port, payload, seconds=5.0):
            s = socket.create_connection((host, port), timeout=seconds)
            s.sendall(payload)
            data, closed, deadline = b"", False, time.time() + seconds
            while time.time() < deadline:
                r, _, _ = select.select([s], [], [], max(0.0, deadline - time.time()))
                if not r:
                    break
                try:
                    chunk = s.recv(65536)
                except OSError:
                    closed = True
                    break
                if not chunk:
                    closed = True
                    break
                data += chunk
            s.close()
            return {"closed": closed, "kinds": kinds(data), "bytes": len(data)}

        mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
        if mode == "sniff":
            # A capture on the lab's bridge (host: the interface, port: seconds): every frame's bytes, searched for the
            # hex markers given, each reported found or not.
            markers = [bytes.fromhex(m) for m in sys.argv[4:]]
            sniffer = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
            if host != "any":
                sniffer.bind((host, 0))
            found, frames, total, deadline = set(), 0, 0, time.time() + port
            print(json.dumps({"listening": True}), flush=True)
            while time.time() < deadline:
                r, _, _ = select.select([sniffer], [], [], 0.2)
                if not r:
                    continue
                packet = sniffer.recv(65536)
                frames += 1
                total += len(packet)
                for index, marker in enumerate(markers):
                    if marker in packet:
                        found.add(index)
            print(json.dumps({"frames": frames, "bytes": total,
                              "found": [sys.argv[4 + i] for i in sorted(found)]}), flush=True)
            sys.exit(0)
        if mode == "probe":
            s = socket.create_connection((host, port), timeout=5)
            data = b""
            while len(data) < 30:
                data += s.recv(4096)
            s.close()
            length, i = read_varint(data, 0)
            version, i = read_varint(data, i + 1)
            peer, incarnation = struct.unpack_from("<QQ", data, i)
            print(json.dumps({"peer": "%016x" % peer, "incarnation": incarnation}))
        elif mode == "impostor":
            peer, incarnation, victim = int(sys.argv[4], 16), int(sys.argv[5]), int(sys.argv[6], 16)
            payload = (hello(peer, incarnation, name="h2") + invitation() + increment(1168)
                       + counter_state([(victim, 5000), (peer, 5000)]))
            print(json.dumps(converse(host, port, payload)))
        elif mode == "flood":
            # 32 threads, each opening its share one after another (closing them 4 at a time), each sending one hello.
            count, started, opened, lock = int(sys.argv[4]), time.time(), [0], threading.Lock()
            def flood(share):
                batch = []
                for n in range(share):
                    try:
                        s = socket.create_connection((host, port), timeout=5)
                        s.sendall(hello(random.getrandbits(64) | 1, random.getrandbits(64)))
                        batch.append(s)
                        with lock:
                            opened[0] += 1
                    except OSError:
                        pass
                    if len(batch) >= 4:
                        for s in batch:
                            s.close()
                        batch = []
                for s in batch:
                    s.close()
            threads = [threading.Thread(target=flood, args=(count // 32 + (1 if i < count % 32 else 0),)) for i in range(32)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            print(json.dumps({"opened": opened[0], "seconds": round(time.time() - started, 2)}))
        elif mode == "idle":
            count, seconds = int(sys.argv[4]), float(sys.argv[5])
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            sockets, started = [], time.time()
            for n in range(count):
                try:
                    s = socket.create_connection((host, port), timeout=5)
                    sockets.append(s)
                except OSError:
                    pass
            opened, last_close, open_set = len(sockets), 0.0, set(sockets)
            connecting = round(time.time() - started, 2)
            started = time.time()
            poller, by_fd = select.poll(), {s.fileno(): s for s in sockets}
            for s in sockets:
                poller.register(s, select.POLLIN | select.POLLHUP | select.POLLERR)
            while open_set and time.time() - started < seconds:
                for fd, _ in poller.poll(200):
                    s = by_fd[fd]
                    if s not in open_set:
                        continue
                    try:
                        chunk = s.recv(4096)
                    except OSError:
                        chunk = b""
                    if not chunk:
                        open_set.discard(s)
                        poller.unregister(fd)
                        last_close = time.time() - started
            print(json.dumps({"opened": opened, "connectSeconds": connecting, "stillOpen": len(open_set),
                              "lastClosedAfter": round(last_close, 2)}))
            for s in sockets:
                s.close()
        elif mode == "relay":
            listen_port, record, seconds = int(sys.argv[4]), sys.argv[5], float(sys.argv[6])
            server = socket.socket()
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(("0.0.0.0", listen_port))
            server.listen(4)
            server.settimeout(seconds)
            client, _ = server.accept()
            upstream = socket.create_connection((host, port), timeout=5)
            recorded = bytearray()
            deadline = time.time() + seconds
            while time.time() < deadline:
                r, _, _ = select.select([client, upstream], [], [], 0.2)
                for s in r:
                    chunk = s.recv(65536)
                    if not chunk:
                        deadline = 0
                        break
                    if s is client:
                        recorded += chunk
                        upstream.sendall(chunk)
                    else:
                        client.sendall(chunk)
            with open(record, "wb") as f:
                f.write(recorded)
            greeting = frame(bytes([0x20]) + string(sys.argv[7]))
            print(json.dumps({"recorded": len(recorded), "clearSession": string("e2e") in recorded,
                              "clearGreeting": greeting in recorded}))
        elif mode == "replay":
            with open(sys.argv[4], "rb") as f:
                payload = f.read()
            print(json.dumps(converse(host, port, payload)))
        """#
}
