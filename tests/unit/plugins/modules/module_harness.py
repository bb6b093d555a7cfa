# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running the collection's modules in-process, as Ansible runs them, for module-level tests.

* run_module(main, args): set_module_args-style (ansible.module_utils.testing.patch_module_args),
  returns the result and the module's whole output, exactly what Ansible would receive and store.
* FakeKube: the Kubernetes API behind the KubeClient seam (connection.KubeClient(auth)), an object
  store with the client's methods; every client a module builds is recorded with its auth options.
* KeystoneServer: a small Keystone v3 over real HTTP on 127.0.0.1, so openstacksdk and keystoneauth
  run unchanged (discovery, tokens, the identity calls the Keystone modules make).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import copy
import io
import json
import re
import threading
import uuid
from contextlib import redirect_stdout
from unittest import mock
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from ansible.module_utils import _internal
from ansible.module_utils.common import warnings
from ansible.module_utils.testing import patch_module_args

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import connection
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError, ResourceType, api_error
from ansible_collections.c5c3.cobaltcore.plugins.modules import (
    keystone_bootstrap_check, keystone_endpoint_regions, keystone_role_assignments, keystone_token_check, keystone_verify,
    korc_credentials)

SECRET = "s3cr3t-Passw0rd-never-shown"
SECRET_B64 = base64.b64encode(SECRET.encode()).decode()
TOKEN = "kube-token-0123456789-never-shown"
CLIENT_KEY_DATA = base64.b64encode(b"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIKEYKEYKEY\n-----END EC PRIVATE KEY-----\n").decode()


# Each Keystone module with the least it needs to run.
KEYSTONE_MODULES = {
    keystone_bootstrap_check: {},
    keystone_endpoint_regions: {"region": "RegionOne", "endpoints": [
        {"service": "keystone", "type": "identity", "interface": "public", "url": "http://k/v3"}]},
    keystone_role_assignments: {"assignments": [{"user": "admin", "project": "admin", "roles": ["admin"]}]},
    keystone_token_check: {},
    keystone_verify: {"namespace": "openstack", "region": "RegionOne", "services": [
        {"name": "keystone", "type": "identity", "public_url": "http://k/v3", "internal_url": "http://k/v3"}]},
    korc_credentials: {"namespace": "openstack"},
}


def kubeconfig(cluster="c", user="u", token=TOKEN, server="https://127.0.0.1:6443"):
    """An in-memory kubeconfig whose public strings are short on purpose (a cluster named c, v1)."""
    return {"apiVersion": "v1", "kind": "Config", "current-context": "ctx",
            "clusters": [{"name": cluster, "cluster": {"server": server}}],
            "users": [{"name": user, "user": {"token": token, "client-key-data": CLIENT_KEY_DATA}}],
            "contexts": [{"name": "ctx", "context": {"cluster": cluster, "user": user}}]}


def run_module(main, args, check_mode=False, diff=False, no_log=False):
    """(result, whole output) of one module run with these arguments."""
    args = dict(args, _ansible_check_mode=check_mode, _ansible_diff=diff, _ansible_no_log=no_log,
                _ansible_remote_tmp="/tmp", _ansible_keep_remote_files=False)
    out = io.StringIO()
    # As in the module's own process: warnings go into the result, and none are left from other tests.
    with patch_module_args(args), redirect_stdout(out), mock.patch.object(_internal, "is_controller", False), \
            mock.patch.object(warnings, "_global_warnings", {}), mock.patch.object(warnings, "_global_deprecations", {}):
        with pytest.raises(SystemExit):
            main()
    text = out.getvalue()
    return json.loads(text), text


def assert_hidden(text, *secrets):
    for secret in secrets:
        assert secret not in text, "%r appears in the module's output" % secret[:12]
        encoded = base64.b64encode(secret.encode()).decode()
        assert encoded not in text, "the base64 of %r appears in the module's output" % secret[:12]


# ---------------------------------------------------------------------------
# Kubernetes: the API behind the KubeClient seam

IRONCORE = "metal.ironcore.dev/v1alpha1"
GARDENER = "core.gardener.cloud/v1beta1"
KINDS = {
    ("v1", "Namespace"): ("namespaces", False), ("v1", "Secret"): ("secrets", True),
    ("v1", "ConfigMap"): ("configmaps", True),
    (GARDENER, "Shoot"): ("shoots", True), (GARDENER, "Project"): ("projects", False),
    (IRONCORE, "BMC"): ("bmcs", False), (IRONCORE, "BMCSecret"): ("bmcsecrets", False),
    (IRONCORE, "Server"): ("servers", False), (IRONCORE, "ServerClaim"): ("serverclaims", True),
    ("c5c3.io/v1alpha1", "ControlPlane"): ("controlplanes", True),
    ("v1", "Event"): ("events", True), ("ceph.rook.io/v1", "CephBlockPool"): ("cephblockpools", True),
}


def _merge(base, patch):
    result = copy.deepcopy(base)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = _merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _selector_terms(selector):
    """The terms of a label selector: split at the commas outside `in (...)` sets."""
    terms, depth, term = [], 0, ""
    for char in selector or "":
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append(term)
            term = ""
        else:
            term += char
    return [t.strip() for t in terms + [term] if t.strip()]


def _matches(obj, selector):
    """Existence (key), equality (key=value) and set (key in (a,b)) terms, as the API server takes them."""
    labels = obj["metadata"].get("labels") or {}
    for term in _selector_terms(selector):
        if " in (" in term:
            key, values = term[:-1].split(" in (")
            if labels.get(key.strip()) not in [v.strip() for v in values.split(",")]:
                return False
            continue
        key, _eq, value = term.partition("=")
        if key not in labels or (_eq and labels[key] != value):
            return False
    return True


def _field_matches(obj, selector):
    """Equality terms of a field selector (dotted paths, as the API server takes them)."""
    for term in (selector or "").split(","):
        if not term:
            continue
        path, _eq, value = term.partition("=")
        found = obj
        for part in path.split("."):
            found = found.get(part) if isinstance(found, dict) else None
        if found != value:
            return False
    return True


class FakeKube(object):
    """An API server's objects, and the clients the modules build (KubeClient(auth) at its seam)."""

    def __init__(self):
        self.kinds = dict(KINDS)
        self.objects = {}
        self.clients = []        # the auth options of every client built
        self.client_options = []  # and its retry policy
        self.calls = []          # (method, kind, name, namespace, dry_run)
        self.metadata_lists = []  # the kinds listed as metadata only
        self.failures = {}       # (method, kind) -> KubeError raised instead
        self.on_request = None   # callable(method, path, body, query) -> (status, body) for client.request
        self._version = 0

    # what tests set up
    def add(self, obj):
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {})
        self._version += 1
        obj["metadata"]["resourceVersion"] = str(self._version)
        key = (obj["apiVersion"], obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])
        self.objects[key] = obj
        return obj

    def create(self, path, body, dry_run=False):
        """POST of an object to its collection path: 409 when it exists, as the API server does."""
        meta = body["metadata"]
        namespaced = "/namespaces/" in path
        key = (body["apiVersion"], body["kind"], meta.get("namespace") if namespaced else None, meta["name"])
        if key in self.objects:
            return 409, {"reason": "AlreadyExists", "message": "%s already exists" % meta["name"]}
        obj = copy.deepcopy(body)
        if dry_run:
            return 201, obj
        return 201, copy.deepcopy(self.add(obj))

    def update(self, body):
        """PUT of an object: 404 when absent, 409 unless it names the stored resourceVersion."""
        meta = body["metadata"]
        live = self.find(body["apiVersion"], body["kind"], meta["name"], meta.get("namespace"))
        if live is None:
            return 404, {"reason": "NotFound", "message": "not found"}
        if meta.get("resourceVersion") != live["metadata"].get("resourceVersion"):
            return 409, {"reason": "Conflict", "message": "the object has been modified"}
        return 200, copy.deepcopy(self.add(body))

    def find(self, api_version, kind, name, namespace=None):
        return self.objects.get((api_version, kind, namespace, name))

    def client(self, auth, **options):
        self.clients.append(dict(auth))
        self.client_options.append(options)
        return _Client(self)


class _Client(object):
    """The methods of KubeClient that the modules, the Applier and the Waiter call."""

    def __init__(self, api):
        self.api = api
        self.requests = {}

    def _count(self, method, kind=None, name=None, namespace=None, dry_run=False):
        self.requests[method] = self.requests.get(method, 0) + 1
        self.api.calls.append((method, kind, name, namespace, dry_run))
        failure = self.api.failures.get((method, kind))
        if failure is not None:
            raise failure

    def resource(self, api_version, kind):
        if (api_version, kind) not in self.api.kinds:
            raise KubeError("the API server does not serve kind %s in %s (is its CRD installed?)" % (kind, api_version),
                            status=404, reason="NotFound")
        name, namespaced = self.api.kinds[(api_version, kind)]
        return ResourceType(api_version, kind, name, namespaced)

    def forget(self, api_version):
        pass

    def get(self, rtype, name, namespace=None):
        self._count("GET", rtype.kind, name, namespace)
        found = self.api.find(rtype.api_version, rtype.kind, name, namespace if rtype.namespaced else None)
        return copy.deepcopy(found)

    def list(self, rtype, namespace=None, label_selector=None, field_selector=None, metadata_only=False):
        self._count("GET", rtype.kind, None, namespace)
        found = [copy.deepcopy(o) for (v, k, ns, _n), o in sorted(self.api.objects.items(), key=lambda i: str(i[0]))
                 if (v, k) == (rtype.api_version, rtype.kind) and (namespace is None or ns == namespace)
                 and _matches(o, label_selector) and _field_matches(o, field_selector)]
        if metadata_only:  # as the API server answers Accept: ...;as=PartialObjectMetadataList
            self.api.metadata_lists.append(rtype.kind)
            return [{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": o["metadata"]}
                    for o in found]
        return found

    def server_side_apply(self, rtype, obj, field_manager=None, force=False, dry_run=False):
        meta = obj["metadata"]
        self._count("PATCH", rtype.kind, meta["name"], meta.get("namespace"), dry_run)
        key = (rtype.api_version, rtype.kind, meta.get("namespace") if rtype.namespaced else None, meta["name"])
        live = self.api.objects.get(key)
        wanted = meta.get("resourceVersion")
        if wanted and (live is None or live["metadata"].get("resourceVersion") != wanted):
            # The API server's precondition: apply over exactly the version read.
            raise api_error("PATCH", rtype.path(meta.get("namespace"), meta["name"]), 409,
                            {"reason": "Conflict", "message": "the object has been modified"})
        merged = _merge(live or {}, obj)
        if live is None or merged != live:
            self.api._version += 1
            merged["metadata"]["resourceVersion"] = str(self.api._version)
        if not dry_run:
            self.api.objects[key] = merged
        return copy.deepcopy(merged)

    def delete(self, rtype, name, namespace=None, propagation="Foreground", dry_run=False):
        self._count("DELETE", rtype.kind, name, namespace, dry_run)
        key = (rtype.api_version, rtype.kind, namespace if rtype.namespaced else None, name)
        if key not in self.api.objects:
            return False
        if not dry_run:
            del self.api.objects[key]
        return True

    def request(self, method, path, body=None, query=None, content_type="application/json", allow=()):
        self._count(method, path, None, None, bool(query and query.get("dryRun")))
        self.api.calls[-1] = (method, path, body, query)
        if self.api.on_request:
            status, data = self.api.on_request(method, path, body, query)
        elif method == "POST":
            status, data = self.api.create(path, body, bool(query and query.get("dryRun")))
        elif method == "PUT":
            status, data = self.api.update(body)
        else:
            status, data = (404, {})
        if status >= 400 and status not in allow:
            raise api_error(method, path, status, data)
        return status, data


@pytest.fixture
def kube(monkeypatch):
    """The FakeKube every module client of the test talks to."""
    api = FakeKube()
    monkeypatch.setattr(connection, "KubeClient", api.client)
    return api


# ---------------------------------------------------------------------------
# Keystone over HTTP

class KeystoneState(object):
    """What the Keystone holds: domains, projects, users (with passwords), roles, assignments, catalog."""

    def __init__(self):
        self.domains = [{"id": "default", "name": "Default", "enabled": True}]
        self.projects = []
        self.users = []
        self.roles = []
        self.assignments = []     # (user_id, project_id, role_id)
        self.regions = []
        self.services = []
        self.endpoints = []
        self.credentials = []     # application credentials: dict with user_id, project_id, secret, roles
        self.requests = []        # (method, path, query)
        self.down = False         # answer 503 to everything

    def add(self, collection, **fields):
        fields.setdefault("id", uuid.uuid4().hex)
        getattr(self, collection).append(fields)
        return fields

    def named(self, collection, name):
        return next((x for x in getattr(self, collection) if x.get("name") == name), None)

    def grant(self, user, project, role):
        self.assignments.append((self.named("users", user)["id"], self.named("projects", project)["id"],
                                 self.named("roles", role)["id"]))


def _public(entity):
    return dict((k, v) for k, v in entity.items() if k not in ("password", "secret"))


class _KeystoneHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    @property
    def state(self):
        return self.server.state

    def _send(self, status, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status, message):
        self._send(status, {"error": {"code": status, "message": message, "title": "Error"}})

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length)) if length else {}

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_PATCH(self):
        self._dispatch("PATCH")

    def do_PUT(self):
        self._dispatch("PUT")

    def do_DELETE(self):
        self._dispatch("DELETE")

    def do_HEAD(self):
        self._dispatch("HEAD")

    def _dispatch(self, method):
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        query = dict((k, v[0]) for k, v in parse_qs(parts.query, keep_blank_values=True).items())
        body = self._body() if method in ("POST", "PATCH", "PUT") else {}
        self.state.requests.append((method, path, query))
        if self.state.down:
            return self._error(503, "Service Unavailable")
        try:
            self._route(method, path, query, body)
        except Exception as exc:  # a bug of the stand-in shows in the test, not as a hang
            self._error(500, "stand-in error: %r" % exc)

    def _version(self):
        base = "http://%s:%d" % self.server.server_address
        return {"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
                "links": [{"rel": "self", "href": base + "/v3/"}],
                "media-types": [{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}]}

    def _route(self, method, path, query, body):
        state = self.state
        if path == "/" and method == "GET":
            return self._send(300, {"versions": {"values": [self._version()]}})
        if path == "/v3" and method == "GET":
            return self._send(200, {"version": self._version()})
        if path == "/v3/auth/tokens" and method == "POST":
            return self._token(body["auth"])
        if not self._authorized():
            return self._error(401, "The request you have made requires authentication.")
        collections = {"/v3/domains": "domains", "/v3/projects": "projects", "/v3/users": "users",
                       "/v3/roles": "roles", "/v3/regions": "regions", "/v3/services": "services",
                       "/v3/endpoints": "endpoints"}
        if method == "GET" and path in collections:
            name = collections[path]
            items = [_public(x) for x in getattr(state, name)
                     if all(str(x.get(k)) == v for k, v in query.items() if k in ("name", "domain_id", "id"))]
            return self._send(200, {name: items, "links": {"self": path, "next": None, "previous": None}})
        match = re.match(r"^/v3/(regions|endpoints|users|projects|domains)/([^/]+)$", path)
        if match:
            items = getattr(state, match.group(1))
            found = next((x for x in items if x["id"] == match.group(2)), None)
            if found is None:
                return self._error(404, "Could not find %s: %s." % (match.group(1)[:-1], match.group(2)))
            if method == "PATCH":
                found.update(body[match.group(1)[:-1]])
            return self._send(200, {match.group(1)[:-1]: _public(found)})
        if path == "/v3/role_assignments" and method == "GET":
            found = [{"user": {"id": u}, "role": {"id": r}, "scope": {"project": {"id": p}}, "links": {}}
                     for u, p, r in state.assignments
                     if query.get("user.id", u) == u and query.get("scope.project.id", p) == p]
            return self._send(200, {"role_assignments": found, "links": {"self": path, "next": None, "previous": None}})
        match = re.match(r"^/v3/projects/([^/]+)/users/([^/]+)/roles/([^/]+)$", path)
        if match and method in ("PUT", "HEAD", "GET"):
            assignment = (match.group(2), match.group(1), match.group(3))
            if method == "PUT":
                state.assignments.append(assignment)
                return self._send(204)
            return self._send(204 if assignment in state.assignments else 404)
        match = re.match(r"^/v3/users/([^/]+)/application_credentials(?:/([^/]+))?$", path)
        if match:
            return self._application_credentials(method, match.group(1), match.group(2), body)
        return self._error(404, "stand-in: no route for %s %s" % (method, path))

    def _authorized(self):
        return self.headers.get("X-Auth-Token") in self.server.tokens

    def _token(self, auth):
        state = self.state
        methods = auth["identity"]["methods"]
        if "application_credential" in methods:
            given = auth["identity"]["application_credential"]
            credential = next((c for c in state.credentials if c["id"] == given.get("id")), None)
            if credential is None or credential["secret"] != given.get("secret"):
                return self._error(401, "The request you have made requires authentication.")
            user = next(u for u in state.users if u["id"] == credential["user_id"])
            project = next(p for p in state.projects if p["id"] == credential["project_id"])
            roles = [r for r in state.roles if r["name"] in credential["roles"]]
        else:
            given = auth["identity"]["password"]["user"]
            user = next((u for u in state.users if u["name"] == given.get("name") or u["id"] == given.get("id")), None)
            if user is None or user["password"] != given.get("password"):
                return self._error(401, "The request you have made requires authentication.")
            scope = (auth.get("scope") or {}).get("project") or {}
            project = next((p for p in state.projects if p["name"] == scope.get("name") or p["id"] == scope.get("id")),
                           None)
            if project is None:
                return self._error(401, "no project %s" % scope)
            held = set(r for u, p, r in state.assignments if u == user["id"] and p == project["id"])
            roles = [r for r in state.roles if r["id"] in held]
        token = uuid.uuid4().hex
        self.server.tokens.add(token)
        base = "http://%s:%d/v3" % self.server.server_address
        catalog = [{"type": "identity", "name": "keystone", "id": "identity",
                    "endpoints": [{"id": "e-" + i, "interface": i, "region": "RegionOne", "region_id": "RegionOne",
                                   "url": base} for i in ("public", "internal", "admin")]}]
        self._send(201, {"token": {
            "methods": methods, "expires_at": "2999-01-01T00:00:00.000000Z", "issued_at": "2000-01-01T00:00:00.000000Z",
            "user": {"id": user["id"], "name": user["name"], "domain": {"id": "default", "name": "Default"}},
            "project": {"id": project["id"], "name": project["name"], "domain": {"id": "default", "name": "Default"}},
            "roles": [{"id": r["id"], "name": r["name"]} for r in roles], "catalog": catalog,
        }}, headers={"X-Subject-Token": token})

    def _application_credentials(self, method, user_id, credential_id, body):
        state = self.state
        if method == "POST":
            given = body["application_credential"]
            project_id = next(p for u, p, r in state.assignments if u == user_id)
            credential = {"id": uuid.uuid4().hex, "name": given["name"], "description": given.get("description"),
                          "user_id": user_id, "project_id": project_id, "secret": uuid.uuid4().hex,
                          "roles": [r["name"] for r in given.get("roles") or []], "unrestricted": False}
            state.credentials.append(credential)
            return self._send(201, {"application_credential": dict(credential)})
        if method == "DELETE":
            state.credentials = [c for c in state.credentials if c["id"] != credential_id]
            return self._send(204)
        found = [_public(c) for c in state.credentials if c["user_id"] == user_id]
        return self._send(200, {"application_credentials": found, "links": {"next": None}})


class KeystoneServer(object):
    def __init__(self):
        self.state = KeystoneState()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _KeystoneHandler)
        self.httpd.state = self.state
        self.httpd.tokens = set()
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d/v3" % self.httpd.server_address[1]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def bootstrap(self, password=SECRET):
        """What keystone-manage bootstrap creates: the admin user with the admin role on project admin."""
        state = self.state
        state.add("projects", name="admin", domain_id="default", enabled=True)
        state.add("projects", name="service", domain_id="default", enabled=True)
        for role in ("admin", "member", "reader", "service"):
            state.add("roles", name=role)
        state.add("users", name="admin", domain_id="default", enabled=True, password=password)
        state.grant("admin", "admin", "admin")
        state.add("regions", id="RegionOne")
        return self

    def auth(self, user="admin", password=SECRET, project="admin"):
        return {"auth_url": self.url, "username": user, "password": password, "project_name": project,
                "user_domain_name": "Default", "project_domain_name": "Default"}


@pytest.fixture
def keystone(monkeypatch):
    for name in list(__import__("os").environ):
        if name.startswith("OS_"):
            monkeypatch.delenv(name)
    server = KeystoneServer()
    yield server
    server.stop()
