#!/usr/bin/env python3
"""An https receiver for the notification tests: serves on a loopback port the kernel picks
(written to PORT_FILE once listening) with CERT and KEY, and appends each POSTed body to OUT, one
a line, with the request's target and Host header on a line before it. Answers 200."""
import http.server
import ssl
import sys

cert, key, port_file, out = sys.argv[1:5]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(out, "ab") as f:
            f.write(("target=%s host=%s sni=%s\n" % (self.path, self.headers.get("Host"),
                                                     getattr(self.server, "sni", ""))).encode())
            f.write(body + b"\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)


def remember_sni(sock, name, _ctx):
    server.sni = name or ""


ctx.sni_callback = remember_sni
server.socket = ctx.wrap_socket(server.socket, server_side=True)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os  # noqa: E402
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
