"""A small Kubernetes REST client for the stand-ins, and watches that only wake them up.

Every status or metadata write is a JSON merge patch that carries the resourceVersion it was
computed from, so the API server refuses it (409) when anything changed meanwhile -- a label the
collection applied, a status a test wrote -- and the next pass decides again on fresh data.
Objects a stand-in creates as an operator would (the c5c3-operator's Keystone CR) go through
server-side apply under its own field manager. Nothing is ever written with a whole-object PUT.

A collection a Waker watches is read from the API server only when it may have changed: the last
answer is kept while its watch stays open, sees no event and no write of this process reaches that
resource on that API server (upstream's controllers read from informer caches for the same reason: a
pass that lists every kind on every wake-up costs the API servers a LIST per kind, and most kinds did
not change). The same holds for one object of a watched collection (a Secret a Keystone CR names, read
on every pass): its last GET answer, found or not, is kept until the watch reports an event for that
object. A write counts for its resource in any version and namespace; what it changes elsewhere
(a deleted namespace's objects, a garbage-collected dependent) the server changes later, and the watch
of that collection reports it.
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


class Collection:
    """What this process knows of one watched collection: whether its watch is open, how many events it
    has seen (in all, and per object), and the last answers to a read of it and of its objects, with the
    counts they were read at."""

    def __init__(self):
        self.lock = threading.Lock()
        self.open = False
        self.events = 0
        self.kept = None  # (events, writes, response body)
        self.epoch = 0  # counts the watch's openings and closings: events in between were not seen
        self.object_events = {}  # (namespace or None, name) -> events seen for that object
        self.objects = {}  # (namespace or None, name) -> (mark, HTTP status, response body)

    def changed(self, open_now, key=None, gone=False):
        """An event (of the object `key`, or of any when it is unknown), or the watch opened or closed."""
        with self.lock:
            if open_now != self.open or (open_now and key is None):
                self.epoch += 1
            self.open = open_now
            self.events += 1
            if key is not None:
                self.object_events[key] = self.object_events.get(key, 0) + 1
                if gone:
                    self.objects.pop(key, None)

    def object_mark(self, key, writes):
        with self.lock:
            return (self.epoch, self.object_events.get(key, 0), writes) if self.open else None

    def keep_object(self, key, mark, writes, status, body):
        with self.lock:
            if mark is not None and self.open and mark == (self.epoch, self.object_events.get(key, 0), writes):
                self.objects[key] = (mark, status, body)

    def cached_object(self, key, writes):
        """(HTTP status, body) of the last read of the object while nothing changed it, else None."""
        with self.lock:
            kept = self.objects.get(key)
            if self.open and kept is not None and kept[0] == (self.epoch, self.object_events.get(key, 0), writes):
                return kept[1:]
            return None

    def mark(self, writes):
        """The counts before a read; None while the watch is not open (nothing is kept then)."""
        with self.lock:
            return (self.events, writes) if self.open else None

    def keep(self, mark, writes, body):
        with self.lock:
            if mark is not None and self.open and mark == (self.events, writes):
                self.kept = (self.events, writes, body)

    def cached(self, writes):
        with self.lock:
            if self.open and self.kept is not None and self.kept[:2] == (self.events, writes):
                return self.kept[2]
            return None


# (API server URL, collection path) -> Collection; (API server URL, group, resource) -> the writes this
# process sent to that resource of that API server.
_COLLECTIONS = {}
_WRITES = {}
_WRITES_LOCK = threading.Lock()
# Subresources of a namespace: /api/v1/namespaces/<name>/<these> names no namespaced resource.
NAMESPACE_SUBRESOURCES = ("status", "finalize")


def collection(server, url_path):
    return _COLLECTIONS.setdefault((server, url_path), Collection())


def resource_of(url_path):
    """(API group, resource) of a request path, whatever its version and namespace (one storage serves
    them all): ("", "secrets") for /api/v1/namespaces/x/secrets/y, ("c5c3.io", "controlplanes") for
    /apis/c5c3.io/v1alpha1/controlplanes."""
    parts = [part for part in url_path.split("?", 1)[0].split("/") if part]
    if parts[:1] == ["api"]:
        group, rest = "", parts[2:]
    else:
        group, rest = (parts[1] if len(parts) > 1 else ""), parts[3:]
    if len(rest) >= 3 and rest[0] == "namespaces" and not (len(rest) == 3 and rest[2] in NAMESPACE_SUBRESOURCES):
        return group, rest[2]
    return group, rest[0] if rest else ""


def object_of(url_path):
    """(collection path, (namespace or None, name)) of an object's path, None for anything else:
    /api/v1/namespaces/x/secrets/y -> ("/api/v1/secrets", ("x", "y")), /api/v1/namespaces/x -> ("/api/v1/namespaces",
    (None, "x"))."""
    parts = [part for part in url_path.split("/") if part]
    prefix = parts[:2] if parts[:1] == ["api"] else parts[:3]
    rest = parts[len(prefix):]
    if len(rest) == 4 and rest[0] == "namespaces":
        return "/" + "/".join(prefix + [rest[2]]), (rest[1], rest[3])
    if len(rest) == 2:
        return "/" + "/".join(prefix + [rest[0]]), (None, rest[1])
    return None


def _event_key(line):
    """(namespace or None, name, deleted) of a watch event's object; None when the line says no object."""
    try:
        event = json.loads(line)
        meta = event["object"]["metadata"]
        return meta.get("namespace"), meta["name"], event.get("type") == "DELETED"
    except (ValueError, KeyError, TypeError):
        return None


def _written(server, url_path):
    key = (server,) + resource_of(url_path)
    with _WRITES_LOCK:
        _WRITES[key] = _WRITES.get(key, 0) + 1


class Kube:
    """Admin access to one lab cluster's API server, writing as field manager `manager`."""

    def __init__(self, cluster, manager):
        self.cluster = cluster
        self.manager = manager
        self.session = kube._session(cluster)

    def request(self, method, url_path, body=None, params=None, content_type="application/json", timeout=15):
        server = self.cluster.server
        watched = _COLLECTIONS.get((server, url_path)) if method == "GET" and not params else None
        if watched is not None:
            written = (server,) + resource_of(url_path)
            kept = watched.cached(_WRITES.get(written, 0))
            if kept is not None:
                return json.loads(kept)
            mark = watched.mark(_WRITES.get(written, 0))
        one = object_of(url_path) if method == "GET" and not params else None
        parent = _COLLECTIONS.get((server, one[0])) if one else None
        if parent is not None:
            written = (server,) + resource_of(url_path)
            kept = parent.cached_object(one[1], _WRITES.get(written, 0))
            if kept is not None:
                status, payload = kept[0], json.loads(kept[1])
                if status >= 400:
                    raise ApiError(status, payload)
                return payload
            object_mark = parent.object_mark(one[1], _WRITES.get(written, 0))
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = json.dumps(body)
        try:
            resp = self.session.request(method, server + url_path, data=data, params=params,
                                        headers=headers, timeout=timeout)
        finally:
            if method != "GET":
                _written(server, url_path)  # also after a failed write: it may have reached the server
        try:
            payload = resp.json()
        except ValueError:
            payload = resp.text
        if parent is not None and resp.status_code in (200, 404):
            parent.keep_object(one[1], object_mark, _WRITES.get(written, 0), resp.status_code, resp.content)
        if resp.status_code >= 400:
            raise ApiError(resp.status_code, payload)
        if watched is not None:
            watched.keep(mark, _WRITES.get(written, 0), resp.content)
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
    """Watches resources and sets `event` on every change; the stand-ins then list again.

    The watch payload only says which object changed: a pass reads the collection or the object again
    (from the API server unless nothing changed since the last read, see Collection), so a missed or
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
        watched = collection(self.cluster.server, url_path)
        while True:
            watched.changed(False)
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
                    watched.changed(True)
                    pending = b""
                    try:
                        for chunk in resp.iter_content(chunk_size=None):  # whatever has arrived
                            if not chunk:
                                continue
                            lines = (pending + chunk).split(b"\n")
                            pending = lines.pop()
                            for line in lines:
                                found = _event_key(line)
                                if found is None:
                                    watched.changed(True)
                                else:
                                    watched.changed(True, found[:2], gone=found[2])
                            self.event.set()
                    finally:
                        watched.changed(False)
            except (requests.RequestException, RuntimeError, ValueError, KeyError) as exc:
                self.log("watch %s: %s; retrying" % (url_path, exc))
                time.sleep(1)
