"""A small Kubernetes REST client for the stand-ins, and watches that only wake them up.

Every status or metadata write is a JSON merge patch that carries the resourceVersion it was
computed from, so the API server refuses it (409) when anything changed meanwhile -- a label the
collection applied, a status a test wrote -- and the next pass decides again on fresh data.
Objects a stand-in creates as an operator would (the c5c3-operator's Keystone CR) go through
server-side apply under its own field manager. Nothing is ever written with a whole-object PUT.
"""

import json
import threading
import time

import requests

from .. import kube


class ApiError(Exception):
    def __init__(self, code, body):
        super().__init__("HTTP %s: %s" % (code, body.get("message") if isinstance(body, dict) else body))
        self.code = code
        self.body = body


def path(api_version, plural, namespace=None, name=None, subresource=None):
    """/api/v1/... or /apis/<group>/<version>/... for a resource, an object or its subresource."""
    parts = ["/api/v1" if api_version == "v1" else "/apis/" + api_version]
    if namespace:
        parts += ["namespaces", namespace]
    parts.append(plural)
    if name:
        parts.append(name)
    if subresource:
        parts.append(subresource)
    return "/".join(parts)


def object_path(api_version, plural, obj, subresource=None):
    meta = obj["metadata"]
    return path(api_version, plural, meta.get("namespace"), meta["name"], subresource)


class Kube:
    """Admin access to one lab cluster's API server, writing as field manager `manager`."""

    def __init__(self, cluster, manager):
        self.cluster = cluster
        self.manager = manager
        self.session = kube._session(cluster)

    def request(self, method, url_path, body=None, params=None, content_type="application/json", timeout=15):
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = json.dumps(body)
        resp = self.session.request(method, self.cluster.server + url_path, data=data, params=params,
                                    headers=headers, timeout=timeout)
        try:
            payload = resp.json()
        except ValueError:
            payload = resp.text
        if resp.status_code >= 400:
            raise ApiError(resp.status_code, payload)
        return payload

    def list(self, url_path):
        """The items; none while the kind is not served (its operator's chart comes in phase 3)."""
        try:
            return self.request("GET", url_path).get("items", [])
        except ApiError as exc:
            if exc.code == 404:
                return []
            raise

    def get(self, url_path):
        try:
            return self.request("GET", url_path)
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    def create(self, url_path, obj):
        """POST; None when it exists already."""
        try:
            return self.request("POST", url_path, obj, params={"fieldManager": self.manager})
        except ApiError as exc:
            if exc.code == 409:
                return None
            raise

    def patch(self, url_path, obj, patch, subresource=None):
        """Merge patch guarded by obj's resourceVersion; None on conflict or when the object is gone."""
        body = dict(patch)
        body["metadata"] = dict(patch.get("metadata") or {}, resourceVersion=obj["metadata"]["resourceVersion"])
        target = url_path + ("/" + subresource if subresource else "")
        try:
            return self.request("PATCH", target, body, params={"fieldManager": self.manager},
                                content_type="application/merge-patch+json")
        except ApiError as exc:
            if exc.code in (404, 409):
                return None
            raise

    def apply(self, url_path, obj, force=True):
        """Server-side apply of obj (the fields this manager owns) at its object path."""
        params = {"fieldManager": self.manager}
        if force:
            params["force"] = "true"
        return self.request("PATCH", url_path, obj, params=params, content_type="application/apply-patch+yaml")

    def delete(self, url_path):
        try:
            return self.request("DELETE", url_path, {"kind": "DeleteOptions", "apiVersion": "v1",
                                                     "propagationPolicy": "Background"})
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise


class Waker:
    """Watches resources and sets `event` on every change; the stand-ins then re-list.

    The watch payload is not used: each pass works on fresh lists, so a missed or
    reconnected watch costs at most one resync period.
    """

    def __init__(self, cluster, url_paths, event, log):
        self.cluster = cluster
        self.event = event
        self.log = log
        for url_path in url_paths:
            threading.Thread(target=self._watch, args=(url_path,), daemon=True).start()

    def _watch(self, url_path):
        session = kube._session(self.cluster)
        base = self.cluster.server + url_path
        while True:
            try:
                listed = session.get(base, params={"limit": "1"}, timeout=10)
                if listed.status_code == 404:  # not served yet: phase 3 installs the CRD
                    time.sleep(2)
                    continue
                listed.raise_for_status()
                version = listed.json()["metadata"]["resourceVersion"]
                self.event.set()
                with session.get(base, params={"watch": "1", "resourceVersion": version, "timeoutSeconds": "240"},
                                 stream=True, timeout=(10, 300)) as resp:
                    if resp.status_code != 200:
                        raise RuntimeError("watch %s: HTTP %d" % (url_path, resp.status_code))
                    for chunk in resp.iter_content(chunk_size=None):  # whatever has arrived
                        if chunk:
                            self.event.set()
            except (requests.RequestException, RuntimeError, ValueError, KeyError) as exc:
                self.log("watch %s: %s; retrying" % (url_path, exc))
                time.sleep(1)
