"""The Gardener front: the garden's API as clients see it, with Shoot's adminkubeconfig subresource.

Upstream, Shoots are served by gardener-apiserver (an aggregated API) whose `shoots/adminkubeconfig`
subresource mints a short-lived client certificate for the Shoot's API server. In the lab Shoot
is a CRD on the garden's kube-apiserver, and this front stands before it:

- TLS with the garden's serving certificate; a client certificate of the garden's CA is required.
- Every request is passed to the garden's API server unchanged -- bodies, streamed (watch)
  responses, upgrades and errors -- as the client's identity (the front authenticates with the
  garden's admin certificate and impersonates the client's CN and O; a client's own
  Impersonate-* headers are honoured only when a SubjectAccessReview allows them).
- Except `POST .../namespaces/<ns>/shoots/<name>/adminkubeconfig`, answered as
  gardener-apiserver v1.146.3 does (pkg/apiserver/registry/core/shoot/storage/kubeconfig.go,
  admin_kubeconfig.go; pkg/api/authentication/validation): expirationSeconds defaults to 3600,
  must be at least 600, is capped at 86400 (--shoot-admin-kubeconfig-max-expiration); the
  kubeconfig has one cluster per kube-apiserver address in status.advertisedAddresses, and a fresh
  client certificate (CN gardener.cloud:admin:<user>, O gardener.cloud:system:admins or
  gardener.cloud:project:admins) signed by the CA of the lab cluster that plays the Shoot. The
  lab adds O=system:masters, so the certificate is admin on a lab cluster without Gardener's
  RBAC bindings.

The same process serves gardener-apiserver's Shoot update rule for `gardener.cloud/operation` as a
mutating webhook of the garden's API server (shoot_admission.py), so it holds for every writer.
"""

import base64
import http.client
import json
import re
import select
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import yaml

from .. import config, kube, pki
from . import shoot_admission
from .loop import log

NAME = "garden-front"
ADMIN_KUBECONFIG = re.compile(
    r"^/apis/core\.gardener\.cloud/v1beta1/namespaces/([^/]+)/shoots/([^/]+)/adminkubeconfig/?$")
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te",
              "trailer", "trailers", "transfer-encoding", "upgrade", "expect"}
DEFAULT_EXPIRATION = 60 * 60
MIN_EXPIRATION = 10 * 60
MAX_EXPIRATION = 24 * 60 * 60
MAX_UINT32 = 4294967295
KUBE_APISERVER_ADDRESSES = ("external", "internal", "wildcard-tls-seed-bound", "unmanaged")
USER_PREFIX = "gardener.cloud:admin:"
SYSTEM_ADMINS = "gardener.cloud:system:admins"
PROJECT_ADMINS = "gardener.cloud:project:admins"
REQUEST_KIND = "AdminKubeconfigRequest"
REQUEST_GROUP = "authentication.gardener.cloud"


def status_body(code, reason, message, details=None):
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason}
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


def invalid(kind, group, name, field, error_type, body_text):
    """apierrors.NewInvalid with one field error."""
    reason = {"Invalid value": "FieldValueInvalid", "Too long": "FieldValueTooLong"}[error_type]
    message = "%s.%s %s is invalid: %s: %s" % (kind, group, json.dumps(name), field, body_text)
    causes = [{"reason": reason, "message": body_text, "field": field}]
    return status_body(422, "Invalid", message, {"name": name, "group": group, "kind": kind, "causes": causes})


class Front(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, garden, clusters):
        self.garden = garden
        self.clusters = clusters
        self.local = threading.local()
        super().__init__(("127.0.0.1", config.GARDEN_FRONT_PORT), Handler)
        serving = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        serving.load_cert_chain(str(garden.pki / "server.crt"), str(garden.pki / "server.key"))
        serving.verify_mode = ssl.CERT_REQUIRED
        serving.load_verify_locations(str(garden.pki / "ca.crt"))
        serving.set_alpn_protocols(["http/1.1"])
        self.socket = serving.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)
        upstream = ssl.create_default_context(cafile=str(garden.pki / "ca.crt"))
        upstream.load_cert_chain(str(garden.pki / "admin.crt"), str(garden.pki / "admin.key"))
        upstream.set_alpn_protocols(["http/1.1"])
        self.upstream_context = upstream
        self.upstream_port = garden.port

    def api(self):
        """An admin session to the garden's API server (one per thread)."""
        if not hasattr(self.local, "session"):
            self.local.session = kube._session(self.garden)
        return self.local.session

    def allowed(self, who, attributes):
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                  "spec": {"user": who["user"], "groups": who["groups"], "resourceAttributes": attributes}}
        if who.get("uid"):
            review["spec"]["uid"] = who["uid"]
        if who.get("extra"):
            review["spec"]["extra"] = who["extra"]
        resp = self.api().post(self.garden.server + "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                               json=review, timeout=10)
        resp.raise_for_status()
        return bool((resp.json().get("status") or {}).get("allowed"))

    def cluster_for(self, shoot, url):
        """The lab cluster that plays a Shoot: the one behind its advertised URL, else its label or name."""
        netloc = urlsplit(url).netloc
        for cluster in self.clusters:
            if urlsplit(cluster.server).netloc == netloc:
                return cluster
        label = (shoot["metadata"].get("labels") or {}).get("c5c3.io/cluster") or shoot["metadata"]["name"]
        return next((c for c in self.clusters if c.name == label), None)

    def handle_error(self, request, client_address):
        log("connection from %s: %s" % (client_address, sys.exc_info()[1]))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "lab-gardener-front"
    timeout = 600  # idle keep-alive connections

    def setup(self):
        self.request.settimeout(30)
        self.request.do_handshake()
        super().setup()
        self.upstream = None

    def finish(self):
        try:
            super().finish()
        finally:
            if self.upstream is not None:
                self.upstream.close()

    def log_message(self, format, *args):  # noqa: A002 -- BaseHTTPRequestHandler's signature
        pass

    # Identity --------------------------------------------------------------------

    def certificate_identity(self):
        subject = (self.connection.getpeercert() or {}).get("subject", ())
        names = [value for rdn in subject for key, value in rdn if key == "commonName"]
        groups = [value for rdn in subject for key, value in rdn if key == "organizationName"]
        return {"user": names[0] if names else "", "groups": groups}

    def requested_impersonation(self):
        """The client's own Impersonate-* headers, or None."""
        user = self.headers.get("Impersonate-User")
        groups = self.headers.get_all("Impersonate-Group") or []
        uid = self.headers.get("Impersonate-Uid")
        extra = {}
        for key, value in self.headers.items():
            if key.lower().startswith("impersonate-extra-"):
                extra.setdefault(key[len("impersonate-extra-"):].lower(), []).append(value)
        if not (user or groups or uid or extra):
            return None
        return {"user": user or "", "groups": groups, "uid": uid, "extra": extra}

    def impersonation_denied(self, who, wanted):
        """The Forbidden Status when `who` may not impersonate `wanted`, else None."""
        checks = []
        if wanted["user"].startswith("system:serviceaccount:") and wanted["user"].count(":") == 3:
            _, _, namespace, name = wanted["user"].split(":")
            checks.append(({"verb": "impersonate", "resource": "serviceaccounts", "namespace": namespace,
                            "name": name}, "serviceaccounts", name))
        elif wanted["user"]:
            checks.append(({"verb": "impersonate", "resource": "users", "name": wanted["user"]}, "users",
                           wanted["user"]))
        for group in wanted["groups"]:
            checks.append(({"verb": "impersonate", "resource": "groups", "name": group}, "groups", group))
        if wanted.get("uid"):
            checks.append(({"verb": "impersonate", "group": "authentication.k8s.io", "resource": "uids",
                            "name": wanted["uid"]}, "uids", wanted["uid"]))
        for key, values in wanted["extra"].items():
            for value in values:
                checks.append(({"verb": "impersonate", "group": "authentication.k8s.io", "resource": "userextras",
                                "subresource": key, "name": value}, "userextras", value))
        for attributes, resource, name in checks:
            if not self.server.allowed(who, attributes):
                message = '%s "%s" is forbidden: User "%s" cannot impersonate resource "%s" in API group "%s" %s' % (
                    resource, name, who["user"], resource, attributes.get("group", ""),
                    'in the namespace "%s"' % attributes["namespace"] if attributes.get("namespace")
                    else "at the cluster scope")
                return status_body(403, "Forbidden", message, {"name": name, "kind": resource})
        return None

    # Dispatch ----------------------------------------------------------------------

    def do_any(self):
        try:
            body = self.read_body()
        except (ValueError, OSError):
            self.send_json(400, status_body(400, "BadRequest", "malformed request body"))
            self.close_connection = True
            return
        who = self.certificate_identity()
        wanted = self.requested_impersonation()
        if wanted:
            denied = self.impersonation_denied(who, wanted)
            if denied:
                self.send_json(403, denied)
                return
            who = wanted
        match = ADMIN_KUBECONFIG.match(urlsplit(self.path).path)
        if match:
            if self.command == "POST":
                self.admin_kubeconfig(match.group(1), match.group(2), body, who)
            else:
                self.send_json(405, status_body(405, "MethodNotAllowed",
                                                "the server does not allow this method on the requested resource", {}))
            return
        if "upgrade" in [t.strip().lower() for t in self.headers.get("Connection", "").split(",")]:
            self.tunnel(body, who)
            return
        self.forward(body, who)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_any

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = self.headers.get("Content-Length")
        return self.rfile.read(int(length)) if length else None

    def send_json(self, code, obj):
        data = json.dumps(obj, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def upstream_headers(self, who, keep_upgrade=False):
        listed = {t.strip().lower() for t in self.headers.get("Connection", "").split(",") if t.strip()}
        headers = []
        for key, value in self.headers.items():
            lower = key.lower()
            if lower in ("host", "authorization", "content-length") or lower.startswith("impersonate-"):
                continue
            if (lower in HOP_BY_HOP or lower in listed) and not (keep_upgrade and lower in ("connection", "upgrade")):
                continue
            headers.append((key, value))
        headers.append(("Host", "127.0.0.1:%d" % self.server.upstream_port))
        headers.append(("Impersonate-User", who["user"]))
        headers += [("Impersonate-Group", g) for g in who["groups"]]
        if who.get("uid"):
            headers.append(("Impersonate-Uid", who["uid"]))
        for key, values in (who.get("extra") or {}).items():
            headers += [("Impersonate-Extra-%s" % key, v) for v in values]
        return headers

    # Pass-through --------------------------------------------------------------------

    def _send_upstream(self, body, who):
        for attempt in (1, 2):
            if self.upstream is None:
                self.upstream = http.client.HTTPSConnection("127.0.0.1", self.server.upstream_port,
                                                            context=self.server.upstream_context, timeout=3600)
            try:
                self.upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for key, value in self.upstream_headers(who):
                    self.upstream.putheader(key, value)
                if body is not None:
                    self.upstream.putheader("Content-Length", str(len(body)))
                self.upstream.endheaders(body)
                return self.upstream.getresponse()
            except (http.client.RemoteDisconnected, http.client.ImproperConnectionState, BrokenPipeError,
                    ConnectionResetError):
                # A kept-alive upstream connection the API server had closed, or one left mid-exchange by a
                # response that was never read to its end (ResponseNotReady, CannotSendRequest): once more on a new one.
                self.upstream.close()
                self.upstream = None
                if attempt == 2:
                    raise

    def forward(self, body, who):
        try:
            resp = self._send_upstream(body, who)
        except (OSError, http.client.HTTPException) as exc:
            if self.upstream is not None:  # the next request starts on a new connection
                self.upstream.close()
                self.upstream = None
            log("%s %s: garden API server unreachable: %r" % (self.command, self.path, exc))
            self.send_json(502, status_body(502, "InternalError", "garden API server unreachable: %s" % exc))
            return
        no_body = self.command == "HEAD" or resp.status in (204, 304) or 100 <= resp.status < 200
        length = resp.getheader("Content-Length")
        self.send_response_only(resp.status, resp.reason)
        for key, value in resp.getheaders():
            if key.lower() not in HOP_BY_HOP and key.lower() != "content-length":
                self.send_header(key, value)
        chunked = length is None and not no_body
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        elif length is not None:
            self.send_header("Content-Length", length)
        self.end_headers()
        try:
            if chunked:
                while True:
                    data = resp.read1(65536)
                    if not data:
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.write(b"0\r\n\r\n")
            elif not no_body:
                while True:
                    data = resp.read(65536)
                    if not data:
                        break
                    self.wfile.write(data)
        except OSError:
            # The client went away (a watch it ended) or the API server closed the stream.
            self.close_connection = True
            resp.close()
            self.upstream.close()
            self.upstream = None
            return
        if resp.will_close:
            self.upstream.close()
            self.upstream = None

    def tunnel(self, body, who):
        """Connection: Upgrade (exec, attach, port-forward): relay bytes both ways once the API server switches."""
        raw = socket.create_connection(("127.0.0.1", self.server.upstream_port), timeout=30)
        upstream = self.server.upstream_context.wrap_socket(raw, server_hostname="127.0.0.1")
        lines = ["%s %s HTTP/1.1" % (self.command, self.path)]
        lines += ["%s: %s" % kv for kv in self.upstream_headers(who, keep_upgrade=True)]
        if body is not None:
            lines.append("Content-Length: %d" % len(body))
        upstream.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b""))
        client = self.connection
        upstream.settimeout(None)
        client.settimeout(None)
        self.close_connection = True
        try:
            while True:
                readable, _, _ = select.select([client, upstream], [], [], 600)
                if not readable:
                    return
                for sock in readable:
                    other = upstream if sock is client else client
                    while True:
                        data = sock.recv(65536)
                        if not data:
                            return
                        other.sendall(data)
                        if not sock.pending():
                            break
        except OSError:
            return
        finally:
            upstream.close()

    # shoots/adminkubeconfig ------------------------------------------------------------

    def admin_kubeconfig(self, namespace, name, body, who):
        server = self.server
        if not server.allowed(who, {"namespace": namespace, "verb": "create", "group": "core.gardener.cloud",
                                    "resource": "shoots", "subresource": "adminkubeconfig", "name": name}):
            message = ('shoots.core.gardener.cloud "%s" is forbidden: User "%s" cannot create resource '
                       '"shoots/adminkubeconfig" in API group "core.gardener.cloud" in the namespace "%s"'
                       % (name, who["user"], namespace))
            self.send_json(403, status_body(403, "Forbidden", message, {
                "name": name, "group": "core.gardener.cloud", "kind": "shoots"}))
            return
        try:
            request = json.loads(body or b"{}")
            if not isinstance(request, dict) or request.get("kind", REQUEST_KIND) != REQUEST_KIND:
                raise ValueError("want kind %s" % REQUEST_KIND)
            seconds = (request.get("spec") or {}).get("expirationSeconds", DEFAULT_EXPIRATION)
            if seconds is None:
                seconds = DEFAULT_EXPIRATION
            if isinstance(seconds, bool) or not isinstance(seconds, int):
                raise ValueError("spec.expirationSeconds must be an integer")
        except ValueError as exc:
            self.send_json(400, status_body(400, "BadRequest", "the object provided is unrecognized (must be of "
                                            "type %s): %s" % (REQUEST_KIND, exc)))
            return
        if seconds < MIN_EXPIRATION:
            self.send_json(422, invalid(REQUEST_KIND, REQUEST_GROUP, "", "spec.expirationSeconds", "Invalid value",
                                        "Invalid value: %d: may not specify a duration less than 10 minutes" % seconds))
            return
        if seconds > MAX_UINT32:
            self.send_json(422, invalid(REQUEST_KIND, REQUEST_GROUP, "", "spec.expirationSeconds", "Too long",
                                        "Too long: may not be more than %d bytes" % MAX_UINT32))
            return
        groups = [SYSTEM_ADMINS] if server.allowed(who, {"verb": "list", "group": "v1", "resource": "Secret"}) \
            else [PROJECT_ADMINS]
        resp = server.api().get(server.garden.server + "/apis/core.gardener.cloud/v1beta1/namespaces/%s/shoots/%s"
                                % (namespace, name), timeout=10)
        if resp.status_code != 200:
            self.send_json(resp.status_code, resp.json())
            return
        shoot = resp.json()
        advertised = (shoot.get("status") or {}).get("advertisedAddresses")
        addresses = [a for a in advertised or [] if a.get("name") in KUBE_APISERVER_ADDRESSES]
        if not addresses:
            value = json.dumps([{"Name": a.get("name"), "URL": a.get("url")} for a in advertised]
                               if advertised else None, separators=(",", ":"))
            self.send_json(422, invalid(
                REQUEST_KIND, REQUEST_GROUP, name, "status.status", "Invalid value",
                "Invalid value: %s: no suitable advertised address for kube-apiserver found in "
                ".status.advertisedAddresses" % value))
            return
        cluster = server.cluster_for(shoot, addresses[0]["url"])
        if cluster is None:
            cause = ('could not get client CA secret: internalsecrets.core.gardener.cloud "%s.ca-client" not found'
                     % name)
            self.send_json(500, status_body(500, "InternalError", "Internal error occurred: %s" % cause,
                                            {"causes": [{"message": cause}]}))
            return
        seconds = min(seconds, MAX_EXPIRATION)
        cert, key, not_after = pki.issue_client_certificate(cluster.pki, USER_PREFIX + who["user"],
                                                            groups + ["system:masters"], seconds)
        kubeconfig = self.render_kubeconfig(namespace, name, addresses, (cluster.pki / "ca.crt").read_bytes(),
                                            cert, key)
        metadata = dict(request.get("metadata") or {})
        metadata.setdefault("creationTimestamp", None)
        self.send_json(201, {
            "kind": REQUEST_KIND, "apiVersion": "%s/v1alpha1" % REQUEST_GROUP, "metadata": metadata,
            "spec": {"expirationSeconds": seconds},
            "status": {"kubeconfig": base64.b64encode(kubeconfig).decode(),
                       "expirationTimestamp": not_after.strftime("%Y-%m-%dT%H:%M:%SZ")}})
        log("adminkubeconfig %s/%s for %s: %s, %ds" % (namespace, name, who["user"], cluster.name, seconds))

    @staticmethod
    def render_kubeconfig(namespace, name, addresses, ca_pem, cert_pem, key_pem):
        """secrets.ControlPlaneSecretConfig's kubeconfig: a cluster and context per address, one user."""
        auth = "%s--%s" % (namespace, name)
        first = "%s-%s" % (auth, addresses[0]["name"])
        clusters, contexts = [], []
        for address in addresses:
            cluster_name = "%s-%s" % (auth, address["name"])
            cluster = {"server": "https://%s" % urlsplit(address["url"]).netloc}
            if address["name"] != "wildcard-tls-seed-bound":
                cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
            clusters.append({"name": cluster_name, "cluster": cluster})
            contexts.append({"name": cluster_name, "context": {"cluster": cluster_name, "user": first}})
        doc = {"apiVersion": "v1", "kind": "Config", "clusters": clusters, "contexts": contexts,
               "current-context": first, "preferences": {},
               "users": [{"name": first, "user": {"client-certificate-data": base64.b64encode(cert_pem).decode(),
                                                  "client-key-data": base64.b64encode(key_pem).decode()}}]}
        return yaml.safe_dump(doc, sort_keys=True).encode()


def main():
    clusters = config.clusters()
    gardens = [c for c in clusters if config.GARDEN_GROUP in c.groups]
    if not gardens:
        raise SystemExit("inventories/lab has no host in group %s" % config.GARDEN_GROUP)
    front = Front(gardens[0], clusters)
    # gardener-apiserver's Shoot strategy (the operation annotation) before clients get in.
    shoot_admission.start(gardens[0])
    log("%s: serving https://127.0.0.1:%d for %s" % (NAME, config.GARDEN_FRONT_PORT, gardens[0].server))
    front.serve_forever()
