# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real local HTTP(S) servers for the tests: a test CA that issues certificates, and a scripted API
server (http.server in a thread) that records every request it answered."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import ipaddress
import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


# -- a test PKI ----------------------------------------------------------------------------------------------

def _name(cn, org=None):
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attributes)


def _pem_key(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


class CA:
    def __init__(self, cn):
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name(cn))
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(minutes=1))
                     .not_valid_after(now + datetime.timedelta(days=1))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.pem = self.cert.public_bytes(serialization.Encoding.PEM).decode()

    def issue(self, cn, org=None, dns=(), ips=(), usage=ExtendedKeyUsageOID.SERVER_AUTH):
        """(certificate PEM, key PEM) signed by this CA."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        builder = (x509.CertificateBuilder().subject_name(_name(cn, org)).issuer_name(self.cert.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=1))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        names = [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.PEM).decode(), _pem_key(key)


# -- a scripted API server --------------------------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _serve(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        peer = None
        if isinstance(self.connection, ssl.SSLSocket):
            cert = self.connection.getpeercert()
            if cert:
                peer = dict(item[0] for item in cert["subject"])
        seen = {"method": self.command, "path": self.path, "headers": self.headers, "body": body, "peer": peer,
                "client_port": self.client_address[1]}
        status, payload, headers = self.server.api.answer(seen)
        raw = json.dumps(payload).encode() if payload is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_PATCH = do_DELETE = do_POST = do_PUT = _serve


class API:
    """Answers by (method, path without query): a list of answers, the last one repeated; records requests."""

    def __init__(self, tls=None, host="127.0.0.1"):
        self.routes = {}
        self.seen = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.server.api = self
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        scheme = "https" if tls is not None else "http"
        self.url = "%s://%s:%d" % (scheme, host, self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def route(self, method, path, *answers):
        self.routes[(method, path)] = list(answers)

    def answer(self, seen):
        with self.lock:
            self.seen.append(seen)
            answers = self.routes.get((seen["method"], seen["path"].split("?")[0]))
            if not answers:
                return 404, {"kind": "Status", "reason": "NotFound", "message": "not found"}, None
            answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if callable(answer):
            answer = answer(seen)
        status, payload = answer[:2]
        return status, payload, answer[2] if len(answer) > 2 else None

    def count(self, method=None, path=None):
        return len([s for s in self.seen if (method is None or s["method"] == method)
                    and (path is None or s["path"].split("?")[0] == path)])

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def https_api(pki, cert="server", client_ca=None):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*pki["files"][cert])
    if client_ca:
        context.verify_mode = ssl.CERT_OPTIONAL
        context.load_verify_locations(cadata=client_ca)
    return API(tls=context)
