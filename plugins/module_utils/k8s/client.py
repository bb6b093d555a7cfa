# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The client layer: one Kubernetes API client per module call.

Auth options and their K8S_AUTH_* environment variables are those of
kubernetes.core, so one module_defaults group serves both collections; the
collection's own loader (k8s.kubeconfig) reads them and the kubeconfig, and
requests go over the standard library's http.client, on keep-alive connections
(urllib3, a tenth of a module's start-up, is imported only to reach the server
through a proxy; the kubernetes package, about half of it, only for users with a
legacy `auth-provider`). Discovery is lazy and per group-version (one small
request each, cached for the call, refreshed when a kind is missing, e.g. right
after its CRD was applied), instead of the full discovery kubernetes.core runs
in every task.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import http.client
import json
import os
import random
import shutil
import ssl
import tempfile
import threading
import time

try:
    from urllib.parse import quote, urlencode, urlsplit
except ImportError:  # pragma: no cover - Python 2 is not supported
    quote = urlencode = urlsplit = None

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import collection
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import kubeconfig

FIELD_MANAGER = collection.NAME
RETRY_STATUSES = (409, 429, 500, 502, 503, 504)
MAX_BACKOFF = 8.0
# apply runs 8 workers; a smaller pool would drop and reopen their connections.
POOL_SIZE = 10
# The options and their K8S_AUTH_* variables (kubernetes.core's), read by k8s.kubeconfig.
AUTH_ENV = kubeconfig.AUTH_ENV
# The Accept header of a LIST that returns each item's metadata only (meta.k8s.io/v1).
PARTIAL_METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


class KubeError(Exception):
    """An API error worth a clear message: status, reason, and the server's field causes."""

    def __init__(self, message, status=None, reason=None, causes=None, request=None):
        super(KubeError, self).__init__(message)
        self.status = status
        self.reason = reason
        self.causes = causes or []
        self.request = request

    def as_dict(self):
        return {"status": self.status, "reason": self.reason, "causes": self.causes, "request": self.request}


class ResourceType:
    """What discovery knows of a kind: its REST resource name and scope."""

    def __init__(self, api_version, kind, name, namespaced):
        self.api_version = api_version
        self.kind = kind
        self.name = name
        self.namespaced = namespaced

    def path(self, namespace=None, name=None, subresource=None):
        base = "/api/v1" if self.api_version == "v1" else "/apis/%s" % self.api_version
        if self.namespaced and namespace:
            base += "/namespaces/%s" % quote(namespace, safe="")
        base += "/%s" % self.name
        if name:
            base += "/%s" % quote(name, safe="")
        if subresource:
            base += "/%s" % subresource
        return base


def ssl_context(endpoint, cert_data=None, key_data=None):
    """The TLS context of an endpoint: its CA (or the system's), its client certificate, verification.

    Certificates given as data go through files in a private directory (the ssl module loads
    them from files only) that is removed as soon as the context holds them.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if not endpoint.verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        try:
            if endpoint.ca_data:
                context.load_verify_locations(cadata=endpoint.ca_data)
            elif endpoint.ca_file:
                context.load_verify_locations(cafile=endpoint.ca_file)
            else:
                context.load_default_certs()
        except (ssl.SSLError, ValueError, IOError, OSError) as exc:
            raise KubeError("%s: the certificate authority cannot be loaded: %s" % (endpoint.source, exc))
    cert_data = cert_data or endpoint.cert_data
    key_data = key_data or endpoint.key_data
    if not (cert_data or endpoint.cert_file):
        return context
    private = tempfile.mkdtemp(prefix="cobaltcore-tls-") if cert_data or key_data else None
    try:
        cert_file = _private_file(private, "client.crt", cert_data) if cert_data else endpoint.cert_file
        key_file = _private_file(private, "client.key", key_data) if key_data else endpoint.key_file
        context.load_cert_chain(cert_file, key_file)
    except (ssl.SSLError, ValueError, IOError, OSError) as exc:
        raise KubeError("%s: the client certificate and key cannot be loaded: %s"
                        % (endpoint.source, getattr(exc, "reason", None) or exc))
    finally:
        if private:
            shutil.rmtree(private, ignore_errors=True)
    return context


def _private_file(directory, name, text):
    path = os.path.join(directory, name)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)
    return path


class TransportError(Exception):
    """The request got no answer (connection refused or reset, timeout, TLS failure).

    permanent: a server certificate the client does not trust, which no retry changes.
    """

    def __init__(self, message, permanent=False):
        super(TransportError, self).__init__(message)
        self.permanent = permanent


def _untrusted(exc):
    """Whether a failure, or the failure it wraps, is a certificate verification failure."""
    while exc is not None:
        if isinstance(exc, ssl.SSLCertVerificationError):
            return True
        exc = getattr(exc, "reason", None) or exc.__cause__ or exc.__context__
    return False


class _HTTPSConnection(http.client.HTTPSConnection):
    """HTTPS whose TLS server name (SNI and the certificate's name) may differ from the host connected to."""

    def __init__(self, host, port, timeout, context, server_hostname):
        http.client.HTTPSConnection.__init__(self, host, port, timeout=timeout, context=context)
        self.server_hostname = server_hostname or host

    def connect(self):
        http.client.HTTPConnection.connect(self)
        self.sock = self._context.wrap_socket(self.sock, server_hostname=self.server_hostname)


class ConnectionPool:
    """Keep-alive connections to one API server over http.client: one per request in flight (apply's
    workers), reused after it."""

    def __init__(self, endpoint, context):
        url = urlsplit(endpoint.host)
        self.https = url.scheme == "https"
        self.hostname, self.port = url.hostname, url.port
        self.prefix = url.path.rstrip("/")  # a server URL may carry a path (a proxying API gateway)
        self.context, self.server_hostname = context, endpoint.tls_server_name
        self.idle = []
        self.lock = threading.Lock()

    def _connect(self, timeout):
        if self.https:
            return _HTTPSConnection(self.hostname, self.port, timeout, self.context, self.server_hostname)
        return http.client.HTTPConnection(self.hostname, self.port, timeout=timeout)

    def request(self, method, path, body, headers, timeout):
        """(status, headers, data) of one request; a kept-alive connection the server closed meanwhile is
        replaced once, as any HTTP client does."""
        for attempt in (0, 1):
            with self.lock:
                conn = self.idle.pop() if self.idle else None
            reused = conn is not None
            conn = conn or self._connect(timeout)
            try:
                conn.putrequest(method, self.prefix + path, skip_accept_encoding=True)
                for name, value in headers:
                    conn.putheader(name, value)
                if body is not None:
                    conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body)
                response = conn.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                if reused and attempt == 0 and isinstance(exc, (ConnectionError, http.client.RemoteDisconnected)):
                    continue
                raise TransportError("%s: %s" % (type(exc).__name__, exc) if str(exc) else type(exc).__name__,
                                     permanent=_untrusted(exc))
            if response.will_close:
                conn.close()
            else:
                with self.lock:
                    self.idle.append(conn)
            return response.status, response.headers, data
        raise TransportError("no connection")  # pragma: no cover - the loop returns or raises

    def clear(self):
        with self.lock:
            idle, self.idle = self.idle, []
        for conn in idle:
            conn.close()


class ProxyPool:
    """The server through an HTTP(S) or SOCKS proxy: urllib3's proxy managers, imported for such users only."""

    def __init__(self, endpoint, context):
        try:
            import urllib3
        except ImportError as exc:
            raise KubeError("%s: the proxy %s needs the Python package urllib3: %s" % (endpoint.source, endpoint.proxy, exc))
        self.urllib3 = urllib3
        self.host = endpoint.host.rstrip("/")
        options = dict(maxsize=POOL_SIZE, block=False)
        if endpoint.is_https:
            options.update(ssl_context=context, cert_reqs="CERT_REQUIRED" if endpoint.verify else "CERT_NONE")
            if endpoint.tls_server_name:
                options["server_hostname"] = endpoint.tls_server_name
            if not endpoint.verify:
                urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        headers = urllib3.util.make_headers(**endpoint.proxy_headers) if endpoint.proxy_headers else None
        if endpoint.proxy.lower().startswith("socks"):
            try:
                from urllib3.contrib.socks import SOCKSProxyManager
            except ImportError as exc:
                raise KubeError("%s: the SOCKS proxy %s needs the Python package PySocks: %s"
                                % (endpoint.source, endpoint.proxy, exc))
            self.manager = SOCKSProxyManager(endpoint.proxy, headers=headers, **options)
        else:
            self.manager = urllib3.ProxyManager(endpoint.proxy, proxy_headers=headers, **options)

    def request(self, method, path, body, headers, timeout):
        from urllib3._collections import HTTPHeaderDict  # urllib3 1.26 has it here only
        fields = HTTPHeaderDict()
        for name, value in headers:
            fields.add(name, value)
        try:
            response = self.manager.request(method, self.host + path, body=body, headers=fields, timeout=timeout,
                                            retries=False, preload_content=True)
        except self.urllib3.exceptions.HTTPError as exc:
            raise TransportError(str(exc), permanent=_untrusted(exc))
        return response.status, response.headers, response.data

    def clear(self):
        self.manager.clear()


def connection_pool(endpoint, context):
    """The endpoint's connections: direct, or through its proxy."""
    return ProxyPool(endpoint, context) if endpoint.proxy else ConnectionPool(endpoint, context)


def legacy_auth_provider(endpoint):
    """A function returning the Authorization header of an `auth-provider` user (OIDC, GCP).

    Those plugins are deprecated in Kubernetes; the kubernetes package still implements them,
    so it is imported here, for such users only.
    """
    name, document, context = endpoint.auth_provider
    try:
        from kubernetes import client as k8s_client
        from kubernetes import config as k8s_config
    except ImportError:
        raise KubeError("%s: the user's auth-provider %s needs the Python package kubernetes, which is not "
                        "installed (or use an exec credential plugin instead)" % (endpoint.source, name))
    configuration = k8s_client.Configuration()
    try:
        k8s_config.load_kube_config_from_dict(document, context=context, client_configuration=configuration)
    except Exception as exc:  # the loader raises several unrelated types
        raise KubeError("%s: auth-provider %s: %s" % (endpoint.source, name, exc))

    def headers():
        found = {}
        # auth_settings() also runs the provider's refresh hook.
        for setting in configuration.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                found[setting["key"]] = setting["value"]
        return found
    return headers


class KubeClient:
    """Raw REST over one connection pool, with retries, request counts and lazy discovery."""

    def __init__(self, auth, retries=8, backoff=0.5, request_timeout=30, retry_budget=60):
        try:
            self.endpoint = kubeconfig.resolve(auth)
        except InputError as exc:
            raise KubeError("cannot load Kubernetes credentials: %s" % exc)
        self.host = self.endpoint.host.rstrip("/")
        self.headers = [("Accept", "application/json"), ("User-Agent", FIELD_MANAGER)]
        if self.endpoint.impersonate_user:
            self.headers.append(("Impersonate-User", self.endpoint.impersonate_user))
        for group in self.endpoint.impersonate_groups:
            # One header per group: the API server does not split a comma-separated value.
            self.headers.append(("Impersonate-Group", group))
        self._credential = None
        self._legacy_headers = legacy_auth_provider(self.endpoint) if self.endpoint.auth_provider else None
        self._auth_lock = threading.Lock()
        self.pool = None
        if self.endpoint.exec_plugin:
            self._refresh_credential()
        else:
            self.pool = connection_pool(self.endpoint, ssl_context(self.endpoint) if self.endpoint.is_https else None)
        self.retries = retries
        self.backoff = backoff
        self.request_timeout = request_timeout
        self.retry_budget = retry_budget
        self._unreachable = None
        self.requests = {}
        self._discovery = {}
        self._lock = threading.Lock()
        self._discovery_lock = threading.Lock()

    # -- credentials ---------------------------------------------------------

    def _refresh_credential(self, stale=None):
        """Run the exec plugin (again); a new client certificate gets a new pool."""
        with self._auth_lock:
            if stale is not None and self._credential is not stale:
                return  # another worker refreshed it already
            try:
                credential = self.endpoint.exec_plugin.run()
            except InputError as exc:
                raise KubeError("cannot load Kubernetes credentials: %s" % exc)
            if self.pool is None or credential.cert_data:
                context = None
                if self.endpoint.is_https:
                    context = ssl_context(self.endpoint, credential.cert_data, credential.key_data)
                self.pool = connection_pool(self.endpoint, context)
            self._credential = credential

    def _auth_headers(self):
        credential = self._credential
        if credential is not None and credential.expired(time.time()):
            self._refresh_credential(credential)
            credential = self._credential
        headers = {}
        token = credential.token if credential is not None and credential.token else self.endpoint.token
        if token:
            headers["Authorization"] = "Bearer %s" % token
        if self._legacy_headers is not None:
            headers.update(self._legacy_headers())
        if self.endpoint.username and self.endpoint.password:
            basic = "%s:%s" % (self.endpoint.username, self.endpoint.password)
            headers["Authorization"] = "Basic " + base64.b64encode(basic.encode("utf-8")).decode("ascii")
        return headers

    def close(self):
        if self.pool is not None:
            self.pool.clear()

    # -- requests ------------------------------------------------------------

    def request(self, method, path, body=None, query=None, content_type="application/json", allow=(), accept=None):
        """Send one request; returns (status, decoded body). Retries transient faults.

        Statuses in `allow` (e.g. 404) are returned instead of raised; `accept` replaces the Accept header.
        """
        if self._unreachable is not None:
            raise self._unreachable
        target = path + ("?" + urlencode(query) if query else "")
        payload = None
        if body is not None:
            payload = json.dumps(body).encode("utf-8")
        attempt = 0
        reauthenticated = False
        deadline = time.time() + self.retry_budget
        while True:
            attempt += 1
            credential = self._credential
            headers = self.headers + list(self._auth_headers().items())
            if accept:
                headers = [(name, accept if name == "Accept" else value) for name, value in headers]
            if payload is not None:
                headers.append(("Content-Type", content_type))
            with self._lock:
                self.requests[method] = self.requests.get(method, 0) + 1
            try:
                status, response_headers, raw = self.pool.request(method, target, payload, headers,
                                                                  self.request_timeout)
            except TransportError as exc:
                if not exc.permanent and attempt <= self.retries and self._sleep(attempt, None, deadline):
                    continue
                # Later requests of this call (other objects, other workers) fail at once.
                self._unreachable = KubeError("cannot reach the API server at %s after %d attempts: %s"
                                              % (self.host, attempt, exc), request=_describe(method, path))
                raise self._unreachable
            data = _decode(raw)
            if status < 400 or status in allow:
                return status, data
            if status == 401 and self.endpoint.exec_plugin and not reauthenticated:
                # As kubectl: a refused exec credential is fetched once more (it may have been revoked early).
                reauthenticated = True
                self._refresh_credential(credential)
                continue
            if (status in RETRY_STATUSES and not _permanent(status, content_type, data) and attempt <= self.retries
                    and self._sleep(attempt, response_headers.get("Retry-After"), deadline)):
                continue
            raise api_error(method, path, status, data)

    def _sleep(self, attempt, retry_after, deadline):
        """Back off before the next attempt; False when that would pass the request's deadline."""
        try:
            delay = min(max(float(retry_after), 0.0), MAX_BACKOFF)
        except (TypeError, ValueError):
            delay = min(self.backoff * (2 ** (attempt - 1)), MAX_BACKOFF) * (0.5 + random.random() / 2)
        if time.time() + delay > deadline:
            return False
        time.sleep(delay)
        return True

    # -- discovery -----------------------------------------------------------

    def resource(self, api_version, kind):
        """The ResourceType of a kind; refreshes its group-version once if the kind is missing."""
        with self._discovery_lock:
            for refresh in (False, True):
                if refresh or api_version not in self._discovery:
                    self._discovery[api_version] = self._discover(api_version)
                found = self._discovery[api_version].get(kind)
                if found:
                    return found
        raise KubeError("the API server does not serve kind %s in %s (is its CRD installed?)" % (kind, api_version),
                        status=404, reason="NotFound")

    def forget(self, api_version):
        self._discovery.pop(api_version, None)

    def _discover(self, api_version):
        path = "/api/v1" if api_version == "v1" else "/apis/%s" % api_version
        status, data = self.request("GET", path, allow=(404, 503))
        if status != 200:
            return {}
        kinds = {}
        for item in data.get("resources", []):
            if "/" not in item["name"]:
                kinds[item["kind"]] = ResourceType(api_version, item["kind"], item["name"], item["namespaced"])
        return kinds

    # -- objects -------------------------------------------------------------

    def get(self, rtype, name, namespace=None):
        status, data = self.request("GET", rtype.path(namespace, name), allow=(404,))
        return data if status == 200 else None

    def list(self, rtype, namespace=None, label_selector=None, field_selector=None, metadata_only=False):
        """The items; with metadata_only their metadata alone (PartialObjectMetadata: a Secret's data never
        leaves the API server)."""
        query = {}
        if label_selector:
            query["labelSelector"] = label_selector
        if field_selector:
            query["fieldSelector"] = field_selector
        status, data = self.request("GET", rtype.path(namespace), query=query or None,
                                    accept=PARTIAL_METADATA_LIST if metadata_only else None)
        items = data.get("items") or []  # a PartialObjectMetadataList of nothing has items: null
        for item in items:
            # Items of a List carry no apiVersion and kind; readiness rules and no-op checks need them.
            item.setdefault("apiVersion", rtype.api_version)
            item.setdefault("kind", rtype.kind)
        return items

    def server_side_apply(self, rtype, obj, field_manager=FIELD_MANAGER, force=False, dry_run=False):
        meta = obj["metadata"]
        query = {"fieldManager": field_manager}
        if force:
            query["force"] = "true"
        if dry_run:
            query["dryRun"] = "All"
        status, data = self.request("PATCH", rtype.path(meta.get("namespace"), meta["name"]), body=obj,
                                    query=query, content_type="application/apply-patch+yaml")
        return data

    def delete(self, rtype, name, namespace=None, propagation="Foreground", dry_run=False):
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
        if dry_run:
            # In the body: the API server reads a DELETE's query parameters only when it has no body.
            body["dryRun"] = ["All"]
        status, data = self.request("DELETE", rtype.path(namespace, name), body=body, allow=(404,))
        return status != 404


def _permanent(status, content_type, data):
    """Errors with a retryable status that no retry can fix."""
    if content_type != "application/apply-patch+yaml":
        return False
    # 409 on apply is a field conflict; a 500 naming an undeclared field is a schema mismatch.
    message = (data.get("message") or "") if isinstance(data, dict) else ""
    return status == 409 or (status == 500 and "not declared in schema" in message)


def _decode(raw):
    if not raw:
        return {}
    try:
        return json.loads(raw.decode("utf-8"))
    except ValueError:
        return {"message": raw.decode("utf-8", "replace")[:500]}


def _describe(method, path):
    return "%s %s" % (method, path)


VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def api_error(method, path, status, data):
    """A KubeError whose message says what was refused and why, with the server's field errors."""
    reason = data.get("reason") if isinstance(data, dict) else None
    message = data.get("message", "") if isinstance(data, dict) else str(data)
    causes = ((data.get("details") or {}).get("causes") or []) if isinstance(data, dict) else []
    if status == 403:
        text = "forbidden: the credentials may not %s %s (%s)" % (VERBS.get(method, method), path, message)
    elif status == 422:
        fields = ["%s: %s" % (c.get("field", "?"), c.get("message", "")) for c in causes]
        text = "invalid object (%s): %s" % (path, "; ".join(fields) or message)
    elif status == 500 and "not declared in schema" in message:
        text = "invalid object (%s): %s" % (path, message)
    elif status == 409 and "conflict" in message.lower():
        text = "%s; set force_conflicts to take over these fields" % message
    else:
        text = "%s %s failed with %s %s: %s" % (method, path, status, reason or "", message)
    return KubeError(text, status=status, reason=reason, causes=causes, request=_describe(method, path))
