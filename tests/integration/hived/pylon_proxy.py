#!/usr/bin/env python3
"""OpenPAI's pylon in front of the HiveD test server, for tests: HTTPS on
loopback, and /a/<host>:<port>/<path> proxied to the upstream's /<path> (as
pylon's general-purpose proxy does; the host and port in the path are not
used: the upstream is given). Every request is logged as
"METHOD PATH AUTHORIZATION" ("-" when none) to the log file. Any other path is
pylon's 404 page (HTML).

  pylon_proxy.py --upstream http://127.0.0.1:PORT --port-file F --log F
                 --tls-cert C --tls-key K
"""

import argparse
import http.server
import os
import re
import ssl
import urllib.error
import urllib.request


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        with open(self.server.log, "a") as f:
            f.write("%s %s %s\n" % (self.command, self.path, self.headers.get("Authorization", "-")))
        m = re.match(r"^/a/[^/]+:\d+(/.*)$", self.path)
        if not m:
            self.answer(404, b"<html><body><h1>404 Not Found</h1><hr>nginx</body></html>", "text/html")
            return
        try:
            with urllib.request.urlopen(self.server.upstream + m.group(1)) as r:
                self.answer(r.status, r.read(), r.headers.get("Content-Type", "application/json"))
        except urllib.error.HTTPError as e:
            self.answer(e.code, e.read(), e.headers.get("Content-Type", "application/json"))

    def answer(self, status, body, ctype):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--tls-cert", required=True)
    ap.add_argument("--tls-key", required=True)
    args = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.upstream = args.upstream.rstrip("/")
    srv.log = args.log
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.tls_cert, args.tls_key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
