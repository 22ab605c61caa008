#!/usr/bin/env python3
"""A misbehaving HTTP(S) server on loopback, for tests of what paictl does when a
server (OpenPAI's REST server, HiveD, Azure Resource Manager) answers badly.

Every request gets the same behaviour unless a --route matches its path first.

Usage:
  hostile_server.py [--host 127.0.0.1] [--port 0] --port-file FILE
                    [--pid-file FILE] [--log FILE]
                    [--tls-cert CERT --tls-key KEY]
                    [--route REGEX=BEHAVIOUR]... BEHAVIOUR

  --port-file FILE   written (atomically) with the port once the server listens;
                     wait for it before starting the client.
  --pid-file FILE    written with the server's pid (stop it with kill PID).
  --log FILE         one JSON line per request: {"method", "path", "behaviour", "time"}.
  --tls-cert/--tls-key  serve HTTPS with this certificate (PEM files).
  --route REGEX=BEHAVIOUR  requests whose path (with the query) matches REGEX
                     (re.search) get BEHAVIOUR; the first matching route wins.

BEHAVIOUR (NAME or NAME:ARG):
  ok:JSON            200 with the given JSON text (a well-behaved answer).
  deep-array:N       200, a valid JSON document N arrays deep: [[[...]]].
  deep-object:N      200, a valid JSON document N objects deep: {"a":{"a":...}}.
  deep-open:N        200, N '[' and nothing else (invalid and deep).
  big:BYTES          200 with Content-Length BYTES: a JSON string of that size,
                     sent as fast as the client reads it.
  endless            200, no Content-Length, a JSON array that never ends
                     ([0,0,0,...), until the client closes the connection.
  endless-chunked    the same, with Transfer-Encoding: chunked.
  endless-headers    a status line then header lines that never end.
  not-json           200, Content-Type: application/json, an HTML page.
  empty              200 with an empty body (Content-Length: 0).
  silent             reads the request, never answers, keeps the connection open.
  silent-accept      accepts the connection, never reads, never answers.
  headers-only       200 with Content-Length: 100, then nothing (connection kept open).
  close              reads the request, closes the connection without a byte.
  drip:SECONDS       200, a valid JSON body sent one byte every SECONDS.
  retry-after:SECONDS  503 with Retry-After: SECONDS and a JSON error body.
  status:CODE        CODE with a JSON error body {"code": "Hostile", "message": ...}.

Examples:
  hostile_server.py --port-file /tmp/port deep-array:1000000
  hostile_server.py --port-file /tmp/port --route '^/api/v2/info=ok:{"launcherType":"k8s"}' endless
  hostile_server.py --port-file /tmp/port --tls-cert c.pem --tls-key k.pem retry-after:99999

Exit: runs until SIGTERM/SIGINT; 2 for bad arguments.
"""

import argparse
import http.client
import json
import os
import re
import signal
import socket
import socketserver
import ssl
import sys
import threading
import time

CHUNK = 64 * 1024


def parse_behaviour(text):
    name, _, arg = text.partition(":")
    known = {
        "ok", "deep-array", "deep-object", "deep-open", "big", "endless", "endless-chunked",
        "endless-headers", "not-json", "empty", "silent", "silent-accept", "headers-only",
        "close", "drip", "retry-after", "status",
    }
    if name not in known:
        raise argparse.ArgumentTypeError("unknown behaviour %r (see --help)" % name)
    needs_int = {"deep-array", "deep-object", "deep-open", "big", "retry-after", "status"}
    if name in needs_int:
        try:
            int(arg)
        except ValueError:
            raise argparse.ArgumentTypeError("%s needs an integer argument: %s:N" % (name, name))
    if name == "drip":
        try:
            float(arg or "1")
        except ValueError:
            raise argparse.ArgumentTypeError("drip needs seconds: drip:0.5")
    if name == "ok":
        try:
            json.loads(arg)
        except ValueError as e:
            raise argparse.ArgumentTypeError("ok:JSON needs valid JSON: %s" % e)
    return (name, arg)


def parse_route(text):
    # The JSON of ok: may hold '='; split at the first '=' that is followed by a behaviour name.
    for m in re.finditer("=", text):
        left, right = text[: m.start()], text[m.end():]
        try:
            return (re.compile(left), parse_behaviour(right))
        except (argparse.ArgumentTypeError, re.error):
            continue
    raise argparse.ArgumentTypeError("--route needs REGEX=BEHAVIOUR, got %r" % text)


class Handler(socketserver.BaseRequestHandler):
    def setup(self):
        self.request.settimeout(None)

    def read_request(self):
        """Reads one request head (and a Content-Length body); returns (method, path) or None."""
        buf = b""
        while b"\r\n\r\n" not in buf:
            try:
                data = self.request.recv(CHUNK)
            except OSError:
                return None
            if not data:
                return None
            buf += data
            if len(buf) > 1 << 20:
                return None
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) < 2:
            return None
        length = 0
        for line in lines[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "content-length":
                try:
                    length = int(v.strip())
                except ValueError:
                    length = 0
        while len(rest) < length:
            try:
                data = self.request.recv(CHUNK)
            except OSError:
                return None
            if not data:
                break
            rest += data
        return parts[0], parts[1]

    def send(self, data):
        try:
            self.request.sendall(data)
            return True
        except OSError:
            return False

    def head(self, status, headers):
        text = "HTTP/1.1 %d %s\r\n" % (status, http.client.responses.get(status, "Hostile"))
        for k, v in headers:
            text += "%s: %s\r\n" % (k, v)
        return self.send((text + "\r\n").encode())

    def answer(self, status, body, ctype="application/json", extra=()):
        headers = [("Content-Type", ctype), ("Content-Length", str(len(body))), ("Connection", "close")]
        headers.extend(extra)
        if self.head(status, headers):
            self.send(body)

    def hold(self):
        """Keeps the connection open until the client goes or the server stops."""
        self.request.settimeout(1.0)
        while not self.server.stopping:
            try:
                if not self.request.recv(CHUNK):
                    return
            except socket.timeout:
                continue
            except OSError:
                return

    def stream(self, first, piece, chunked=False):
        data = first
        while not self.server.stopping:
            out = data
            if chunked:
                out = b"%x\r\n" % len(data) + data + b"\r\n"
            if not self.send(out):
                return
            data = piece

    def behaviour_for(self, path):
        for regex, behaviour in self.server.routes:
            if regex.search(path):
                return behaviour
        return self.server.behaviour

    def handle(self):
        if self.server.behaviour[0] == "silent-accept" and not self.server.routes:
            self.log("?", "?", "silent-accept")
            # Never read: the client's request stays in the kernel's buffers.
            while not self.server.stopping:
                time.sleep(0.2)
            return
        req = self.read_request()
        if req is None:
            return
        method, path = req
        name, arg = self.behaviour_for(path)
        self.log(method, path, name + (":" + arg if arg else ""))
        if name == "ok":
            self.answer(200, arg.encode())
        elif name == "deep-array":
            n = int(arg)
            self.answer(200, b"[" * n + b"]" * n)
        elif name == "deep-object":
            n = int(arg)
            self.answer(200, b'{"a":' * n + b"1" + b"}" * n)
        elif name == "deep-open":
            self.answer(200, b"[" * int(arg))
        elif name == "big":
            n = int(arg)
            if self.head(200, [("Content-Type", "application/json"), ("Content-Length", str(n)),
                               ("Connection", "close")]):
                sent, block = 0, b"x" * CHUNK
                if n >= 2 and not self.send(b'"'):
                    return
                sent = 1 if n >= 2 else 0
                while sent < n - 1 and not self.server.stopping:
                    part = block[: min(CHUNK, n - 1 - sent)]
                    if not self.send(part):
                        return
                    sent += len(part)
                self.send(b'"' if n >= 2 else b"x" * (n - sent))
        elif name in ("endless", "endless-chunked"):
            chunked = name == "endless-chunked"
            headers = [("Content-Type", "application/json"), ("Connection", "close")]
            if chunked:
                headers.append(("Transfer-Encoding", "chunked"))
            if self.head(200, headers):
                self.stream(b"[0", b",0" * (CHUNK // 2), chunked)
        elif name == "endless-headers":
            if self.send(b"HTTP/1.1 200 OK\r\n"):
                self.stream(b"", b"X-Hostile: " + b"h" * 1000 + b"\r\n")
        elif name == "not-json":
            self.answer(200, b"<html><body><h1>Welcome to nginx!</h1></body></html>\n")
        elif name == "empty":
            self.answer(200, b"")
        elif name == "silent":
            self.hold()
        elif name == "headers-only":
            if self.head(200, [("Content-Type", "application/json"), ("Content-Length", "100")]):
                self.hold()
        elif name == "close":
            pass
        elif name == "drip":
            delay = float(arg or "1")
            body = b'{"hostile": "drip"}'
            if self.head(200, [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                               ("Connection", "close")]):
                for i in range(len(body)):
                    if self.server.stopping or not self.send(body[i:i + 1]):
                        return
                    time.sleep(delay)
        elif name == "retry-after":
            body = json.dumps({"code": "ServerBusy", "message": "try again later",
                               "error": {"code": "ServerBusy", "message": "try again later"}}).encode()
            self.answer(503, body, extra=[("Retry-After", arg)])
        elif name == "status":
            code = int(arg)
            body = json.dumps({"code": "Hostile", "message": "status %d from the hostile server" % code,
                               "error": {"code": "Hostile", "message": "status %d" % code}}).encode()
            self.answer(code, body)

    def log(self, method, path, behaviour):
        if not self.server.log_path:
            return
        line = json.dumps({"method": method, "path": path, "behaviour": behaviour, "time": time.time()})
        with self.server.log_lock:
            with open(self.server.log_path, "a") as f:
                f.write(line + "\n")


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    stopping = False

    def get_request(self):
        sock, addr = super().get_request()
        if self.tls is not None:
            # The handshake happens in the handler's thread, so a silent client stalls nobody.
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def finish_request(self, request, client_address):
        if self.tls is not None:
            try:
                request.settimeout(30)
                request.do_handshake()
            except (OSError, ssl.SSLError):
                return
        super().finish_request(request, client_address)


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--pid-file")
    ap.add_argument("--log")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--route", action="append", default=[], type=parse_route)
    ap.add_argument("behaviour", type=parse_behaviour)
    args = ap.parse_args()
    if bool(args.tls_cert) != bool(args.tls_key):
        ap.error("--tls-cert and --tls-key go together")

    server = Server((args.host, args.port), Handler)
    server.behaviour = args.behaviour
    server.routes = args.route
    server.log_path = args.log
    server.log_lock = threading.Lock()
    server.tls = None
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        server.tls = ctx

    def stop(*_):
        server.stopping = True
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.pid_file:
        write_atomic(args.pid_file, "%d\n" % os.getpid())
    write_atomic(args.port_file, "%d\n" % server.server_address[1])
    server.serve_forever(poll_interval=0.2)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
