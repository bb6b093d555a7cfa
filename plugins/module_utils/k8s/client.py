# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The client layer: one Kubernetes API client per module call.

Auth options and their K8S_AUTH_* environment variables are those of
kubernetes.core, so one module_defaults group serves both collections.
Discovery is lazy and per group-version (one small request each, cached for
the call, refreshed when a kind is missing, e.g. right after its CRD was
applied), instead of the full discovery kubernetes.core runs in every task.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import random
import threading
import time

try:
    from urllib.parse import quote, urlencode
except ImportError:  # pragma: no cover - Python 2 is not supported
    quote = urlencode = None

try:
    import urllib3
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config
    HAS_KUBERNETES = True
    KUBERNETES_IMPORT_ERROR = None
except ImportError as exc:  # pragma: no cover - reported by the module
    HAS_KUBERNETES = False
    KUBERNETES_IMPORT_ERROR = exc

FIELD_MANAGER = "c5c3.cobaltcore"
RETRY_STATUSES = (409, 429, 500, 502, 503, 504)
MAX_BACKOFF = 8.0

# Environment variables kubernetes.core reads for the same options.
AUTH_ENV = {
    "kubeconfig": "K8S_AUTH_KUBECONFIG", "context": "K8S_AUTH_CONTEXT", "host": "K8S_AUTH_HOST",
    "api_key": "K8S_AUTH_API_KEY", "username": "K8S_AUTH_USERNAME", "password": "K8S_AUTH_PASSWORD",
    "validate_certs": "K8S_AUTH_VERIFY_SSL", "ca_cert": "K8S_AUTH_SSL_CA_CERT",
    "client_cert": "K8S_AUTH_CERT_FILE", "client_key": "K8S_AUTH_KEY_FILE", "proxy": "K8S_AUTH_PROXY",
    "no_proxy": "K8S_AUTH_NO_PROXY", "impersonate_user": "K8S_AUTH_IMPERSONATE_USER",
    "impersonate_groups": "K8S_AUTH_IMPERSONATE_GROUPS",
}


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


def _env_value(option, value):
    if value is not None:
        return value
    raw = os.environ.get(AUTH_ENV.get(option, ""), None)
    if raw is None:
        return None
    if option == "validate_certs":
        return raw.lower() in ("1", "true", "yes", "on")
    if option == "impersonate_groups":
        return [g.strip() for g in raw.split(",") if g.strip()]
    return raw


def build_configuration(auth):
    """A kubernetes.client.Configuration from kubernetes.core-style auth options."""
    opts = dict((key, _env_value(key, auth.get(key))) for key in AUTH_ENV)
    configuration = k8s_client.Configuration()
    kubeconfig, context = opts["kubeconfig"], opts["context"]
    if isinstance(kubeconfig, dict):
        k8s_config.load_kube_config_from_dict(kubeconfig, context=context, client_configuration=configuration)
    elif kubeconfig or not opts["host"]:
        path = os.path.expanduser(kubeconfig) if kubeconfig else None
        k8s_config.load_kube_config(config_file=path, context=context, client_configuration=configuration)
    if opts["host"]:
        configuration.host = opts["host"]
    if opts["api_key"]:
        configuration.api_key = {"authorization": "Bearer %s" % opts["api_key"]}
    if opts["username"]:
        configuration.username = opts["username"]
        configuration.password = opts["password"]
    for option, attribute in (("ca_cert", "ssl_ca_cert"), ("client_cert", "cert_file"), ("client_key", "key_file")):
        if opts[option]:
            setattr(configuration, attribute, os.path.expanduser(opts[option]))
    if opts["validate_certs"] is not None:
        configuration.verify_ssl = opts["validate_certs"]
    if opts["proxy"]:
        configuration.proxy = opts["proxy"]
    if opts["no_proxy"]:
        configuration.no_proxy = opts["no_proxy"]
    proxy_headers = auth.get("proxy_headers") or {}
    if any(proxy_headers.values()):
        configuration.proxy_headers = urllib3.util.make_headers(
            proxy_basic_auth=proxy_headers.get("proxy_basic_auth"),
            basic_auth=proxy_headers.get("basic_auth"), user_agent=proxy_headers.get("user_agent"))
    return configuration, opts


class KubeClient:
    """Raw REST over one connection pool, with retries, request counts and lazy discovery."""

    def __init__(self, auth, retries=8, backoff=0.5, request_timeout=30, retry_budget=60):
        if not HAS_KUBERNETES:
            raise KubeError("the Python 'kubernetes' package is required: %s" % KUBERNETES_IMPORT_ERROR)
        try:
            self.configuration, opts = build_configuration(auth)
        except Exception as exc:  # the loader raises several unrelated types
            raise KubeError("cannot load Kubernetes credentials: %s" % exc)
        self.api_client = k8s_client.ApiClient(self.configuration)
        self.pool = self.api_client.rest_client.pool_manager
        self.headers = {"Accept": "application/json", "User-Agent": FIELD_MANAGER}
        if opts["impersonate_user"]:
            self.headers["Impersonate-User"] = opts["impersonate_user"]
        if opts["impersonate_groups"]:
            self.headers["Impersonate-Group"] = ",".join(opts["impersonate_groups"])
        self.retries = retries
        self.backoff = backoff
        self.request_timeout = request_timeout
        self.retry_budget = retry_budget
        self._unreachable = None
        self.requests = {}
        self._discovery = {}
        self._lock = threading.Lock()
        self._discovery_lock = threading.Lock()

    # -- requests ------------------------------------------------------------

    def _auth_headers(self):
        headers = {}
        # auth_settings() also runs the refresh hook of exec and OIDC credentials.
        for setting in self.configuration.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[setting["key"]] = setting["value"]
        if self.configuration.username and self.configuration.password:
            headers.update(urllib3.util.make_headers(
                basic_auth="%s:%s" % (self.configuration.username, self.configuration.password)))
        return headers

    def request(self, method, path, body=None, query=None, content_type="application/json", allow=()):
        """Send one request; returns (status, decoded body). Retries transient faults.

        Statuses in `allow` (e.g. 404) are returned instead of raised.
        """
        if self._unreachable is not None:
            raise self._unreachable
        url = self.configuration.host.rstrip("/") + path
        if query:
            url += "?" + urlencode(query)
        headers = dict(self.headers, **self._auth_headers())
        payload = None
        if body is not None:
            headers["Content-Type"] = content_type
            payload = json.dumps(body)
        attempt = 0
        deadline = time.time() + self.retry_budget
        while True:
            attempt += 1
            with self._lock:
                self.requests[method] = self.requests.get(method, 0) + 1
            try:
                response = self.pool.request(method, url, body=payload, headers=headers,
                                             timeout=self.request_timeout, retries=False, preload_content=True)
            except urllib3.exceptions.HTTPError as exc:
                if attempt <= self.retries and self._sleep(attempt, None, deadline):
                    continue
                # Later requests of this call (other objects, other workers) fail at once.
                self._unreachable = KubeError("cannot reach the API server at %s after %d attempts: %s"
                                              % (self.configuration.host, attempt, exc),
                                              request=_describe(method, path))
                raise self._unreachable
            status = response.status
            data = _decode(response.data)
            if status < 400 or status in allow:
                return status, data
            if (status in RETRY_STATUSES and not _permanent(status, content_type, data) and attempt <= self.retries
                    and self._sleep(attempt, response.headers.get("Retry-After"), deadline)):
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

    def list(self, rtype, namespace=None, label_selector=None, field_selector=None):
        query = {}
        if label_selector:
            query["labelSelector"] = label_selector
        if field_selector:
            query["fieldSelector"] = field_selector
        status, data = self.request("GET", rtype.path(namespace), query=query or None)
        items = data.get("items", [])
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
        query = {"dryRun": "All"} if dry_run else None
        status, data = self.request("DELETE", rtype.path(namespace, name), body=body, query=query, allow=(404,))
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
