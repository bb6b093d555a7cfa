# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tests' reads of a lab cluster as `kubectl get ... -o json` answers them, over one kept-alive connection.

A kubectl process costs ~0.13 s to start, find the resource and connect; the tests read the clusters thousands
of times (a tenant's state alone is 13 reads). `get()` answers the forms the tests use (a resource, or a resource
and a name; -n, -A, -l, --field-selector) with the same JSON kubectl prints, resolving the resource from the
cluster's discovery as kubectl's REST mapper does (the group's preferred version first); any other form raises
Unsupported and the caller asks kubectl.
"""

import requests

from regionlab import config, kube

NOT_FOUND = object()  # get()'s answer for a named object the API server says is not there


class Unsupported(Exception):
    """An argument list, or a resource, this reader leaves to kubectl."""


class Busy(Exception):
    """The API server answered 429/5xx or not at all: the caller retries as for kubectl."""


def _parse(args):
    """(resource, name, namespace, all_namespaces, params) of `kubectl get` arguments."""
    positional, namespace, every, params = [], None, False, {}
    options = {"-n": "namespace", "--namespace": "namespace", "-l": "labelSelector", "--selector": "labelSelector",
               "--field-selector": "fieldSelector"}
    items = list(args)
    while items:
        arg = items.pop(0)
        if arg in ("-A", "--all-namespaces"):
            every = True
            continue
        key, value = (arg.split("=", 1) + [None])[:2] if arg.startswith("--") else (arg, None)
        if key in options:
            if value is None:
                if not items:
                    raise Unsupported(arg)
                value = items.pop(0)
            if options[key] == "namespace":
                namespace = value
            else:
                params[options[key]] = value
        elif arg.startswith("-") or "," in arg or "/" in arg:
            raise Unsupported(arg)
        else:
            positional.append(arg)
    if len(positional) not in (1, 2):
        raise Unsupported(" ".join(args))
    return positional[0], (positional[1] if len(positional) == 2 else None), namespace, every, params


def _as_kubectl_prints(obj):
    """kubectl get leaves out managedFields unless asked (--show-managed-fields)."""
    obj.get("metadata", {}).pop("managedFields", None)
    return obj


class Reader(object):
    """One cluster's reads: its discovery (refreshed when a resource is unknown) and a kept-alive session."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.session = kube._session(cluster)
        self.names = None

    def _json(self, path, params=None):
        try:
            resp = self.session.get(self.cluster.server + path, params=params, timeout=30)
        except (requests.RequestException, OSError) as ex:
            raise Busy(str(ex))
        if resp.status_code == 429 or resp.status_code >= 500:
            raise Busy("%s %s" % (resp.status_code, resp.text[:300]))
        return resp

    def _discover(self):
        """{name: (group, version, plural, kind, namespaced)} under every name kubectl accepts for a resource."""
        names = {}

        def add(group, version, resources):
            for res in resources:
                if "/" in res["name"]:
                    continue  # a subresource
                entry = (group, version, res["name"], res["kind"], res["namespaced"])
                keys = [res["name"], res.get("singularName") or "", res["kind"].lower()] + res.get("shortNames", [])
                for key in keys:
                    if key:
                        names.setdefault(key, entry)
                        if group:
                            names.setdefault("%s.%s" % (key, group), entry)
                            names.setdefault("%s.%s.%s" % (key, version, group), entry)

        add("", "v1", self._json("/api/v1").json()["resources"])
        for group in self._json("/apis").json()["groups"]:
            preferred = group["preferredVersion"]["version"]
            versions = [preferred] + [v["version"] for v in group["versions"] if v["version"] != preferred]
            for version in versions:
                resp = self._json("/apis/%s/%s" % (group["name"], version))
                if resp.status_code == 200:
                    add(group["name"], version, resp.json()["resources"])
        return names

    def resolve(self, resource):
        if self.names is None or resource not in self.names:
            self.names = self._discover()
        if resource not in self.names:
            raise Unsupported(resource)
        return self.names[resource]

    def get(self, args):
        """The parsed JSON kubectl would print for `get <args> -o json`, NOT_FOUND for a missing named object."""
        resource, name, namespace, every, params = _parse(args)
        group, version, plural, kind, namespaced = self.resolve(resource)
        api_version = "%s/%s" % (group, version) if group else version
        path = "/apis/%s" % api_version if group else "/api/v1"
        if namespaced and not every:
            path += "/namespaces/%s" % (namespace or "default")
        path += "/" + plural
        if name is not None:
            if every or params:
                raise Unsupported(" ".join(args))
            resp = self._json(path + "/" + name)
            if resp.status_code == 404:
                details = (resp.json() if resp.headers.get("Content-Type", "").startswith("application/json")
                           else {}).get("details") or {}
                if details.get("name") == name:
                    return NOT_FOUND
                self.names = None  # the resource itself went away: kubectl says so
                raise Unsupported(resource)
            if resp.status_code != 200:
                raise Unsupported("%s: %s" % (resp.status_code, resp.text[:300]))
            return _as_kubectl_prints(resp.json())
        resp = self._json(path, params=params)
        if resp.status_code != 200:
            self.names = None
            raise Unsupported("%s: %s" % (resp.status_code, resp.text[:300]))
        items = resp.json().get("items") or []
        for item in items:  # a LIST's items carry no kind; kubectl's List does
            item.setdefault("apiVersion", api_version)
            item.setdefault("kind", kind)
            _as_kubectl_prints(item)
        return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


_READERS = {}


def reader(cluster_name):
    """The Reader of a lab cluster (one per cluster and process)."""
    if cluster_name not in _READERS:
        try:
            found = config.cluster(cluster_name)
        except KeyError:
            raise Unsupported(cluster_name) from None
        _READERS[cluster_name] = Reader(found)
    return _READERS[cluster_name]
