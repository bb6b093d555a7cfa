# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The read layer: the live state of many objects with as few requests as the batch allows.

Per kind:

- objects spread over namespaces (a tenant or more each) that share label keys come from one LIST
  across namespaces selecting those labels' values (``key in (a,b,...)``), however many of them
  each namespace holds: one request for fifty tenants, not one per tenant;
- what that LIST did not return (its live copy may lack a label its manifest sets, and a caller
  such as generated_secret must see what it holds; or it does not exist), and every batch of one
  namespace: several objects of one namespace come from one LIST of that namespace;
- everything else is a GET, several side by side.

A LIST across namespaces that the credentials may not make (403) or that the server refuses
falls back to GETs.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from concurrent.futures import ThreadPoolExecutor

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError

# From this many objects of one kind, one LIST is cheaper than a GET each.
LIST_FROM = 3
# A label whose values among the objects are more than this is left out of the selector (URL length).
MAX_SELECTOR_VALUES = 200
GET_WORKERS = 8
FALLBACK_STATUSES = (400, 403)


def label_selector(refs):
    """A set-based selector of the labels every ref carries, or None when they share no label key."""
    common = None
    for ref in refs:
        labels = ref.get("labels")
        if not isinstance(labels, dict):
            return None
        keys = set(k for k, v in labels.items() if isinstance(v, str))
        common = keys if common is None else common & keys
        if not common:
            return None
    terms = []
    for key in sorted(common or ()):
        values = sorted(set(ref["labels"][key] for ref in refs))
        if len(values) <= MAX_SELECTOR_VALUES:
            terms.append("%s in (%s)" % (key, ",".join(values)))
    return ",".join(terms) or None


class Reader:
    """Reads a batch of refs (apiVersion, kind, name, namespace, optional labels) with one client."""

    def __init__(self, client, list_from=LIST_FROM, workers=GET_WORKERS, skip_unknown=False):
        """skip_unknown: refs of kinds the server does not serve are left out of the result (the caller
        reports them) instead of raising KubeError."""
        self.client = client
        self.list_from = list_from
        self.workers = workers
        self.skip_unknown = skip_unknown

    def key(self, ref):
        """(apiVersion, kind, namespace or None for a cluster-scoped kind, name)."""
        rtype = self.client.resource(ref["apiVersion"], ref["kind"])
        return (ref["apiVersion"], ref["kind"], ref.get("namespace") if rtype.namespaced else None, ref["name"])

    def read(self, refs):
        """{key: the live object or None when it does not exist} for every ref of a served kind."""
        groups = {}
        for ref in refs:
            try:
                rtype = self.client.resource(ref["apiVersion"], ref["kind"])
            except KubeError:
                if self.skip_unknown:
                    continue
                raise
            namespace = ref.get("namespace") if rtype.namespaced else None
            if rtype.namespaced and not namespace:
                if self.skip_unknown:
                    continue
                raise KubeError("%s is namespaced: name the namespace of %s" % (ref["kind"], ref["name"]))
            by_namespace = groups.setdefault((ref["apiVersion"], ref["kind"]), (rtype, {}))[1]
            by_namespace.setdefault(namespace, {}).setdefault(ref["name"], ref)
        found, gets = {}, []
        for (api_version, kind), (rtype, by_namespace) in groups.items():
            members = dict(((namespace, name), ref) for namespace, refs in by_namespace.items()
                           for name, ref in refs.items())
            if len(by_namespace) > 1 and len(members) >= self.list_from and rtype.namespaced:
                selector = label_selector(list(members.values()))
                if selector:
                    self._list(rtype, None, selector, members, found, complete=False)
            for namespace, refs in by_namespace.items():
                left = dict((name, ref) for name, ref in refs.items() if (api_version, kind, namespace, name) not in found)
                if len(left) >= self.list_from:
                    self._list(rtype, namespace, None, left, found, complete=True)
                else:
                    gets.extend((rtype, namespace, name) for name in left)
        found.update(self._get_all(gets))
        return found

    def _list(self, rtype, namespace, selector, members, found, complete):
        """Records the members the LIST returns; complete: the LIST shows all of them (the absent ones are None).
        A refused LIST across namespaces records nothing: its members are read by namespace."""
        try:
            items = self.client.list(rtype, namespace, label_selector=selector)
        except KubeError as error:
            if namespace is None and error.status in FALLBACK_STATUSES:
                return
            raise
        for item in items:
            meta = item["metadata"]
            name, item_namespace = meta["name"], meta.get("namespace") if rtype.namespaced else None
            if (name if complete else (item_namespace, name)) in members:
                found[(rtype.api_version, rtype.kind, item_namespace, name)] = item
        if complete:
            for name in members:
                found.setdefault((rtype.api_version, rtype.kind, namespace, name), None)

    def _get_all(self, gets):
        def get(entry):
            rtype, namespace, name = entry
            return (rtype.api_version, rtype.kind, namespace, name), self.client.get(rtype, name, namespace)
        if len(gets) > 1 and self.workers > 1:
            with ThreadPoolExecutor(max_workers=min(self.workers, len(gets))) as pool:
                return dict(pool.map(get, gets))
        return dict(get(entry) for entry in gets)


# One read of an info module (cluster_info, gardener_cluster_info): an object by name, or a list.
INFO_READ_SPEC = dict(
    api_version=dict(type="str", required=True),
    kind=dict(type="str", required=True),
    name=dict(type="str"),
    namespace=dict(type="str"),
    label_selector=dict(type="str"),
    field_selector=dict(type="str"),
    metadata_only=dict(type="bool", default=False),
)


def info_read_problems(objects, module):
    """The problems of an info module's reads (INFO_READ_SPEC): it never reads a Secret's data."""
    problems = [problem("objects[%d].kind" % index, "%s reads Secrets only as a list with metadata_only" % module)
                for index, item in enumerate(objects)
                if item["kind"] == "Secret" and item["api_version"] == "v1" and (item["name"] or not item["metadata_only"])]
    problems += [problem("objects[%d]" % index, "a read by name takes no label_selector or field_selector")
                 for index, item in enumerate(objects)
                 if item["name"] and (item["label_selector"] or item["field_selector"])]
    return problems


def _without_managed_fields(obj):
    (obj.get("metadata") or {}).pop("managedFields", None)
    return obj


def _only_metadata(obj, rtype):
    """The object's kind (the server names each item of a metadata list PartialObjectMetadata) and metadata."""
    return {"apiVersion": rtype.api_version, "kind": rtype.kind, "metadata": obj.get("metadata")}


def info_read(client, item):
    """An info module's read (INFO_READ_SPEC): {api_version, kind, name, items, error, status}. A kind the server does
    not serve (404) and a read it refuses (403) are answers, in error and status; a server that fails raises."""
    found = {"api_version": item["api_version"], "kind": item["kind"], "name": item.get("name"),
             "items": [], "error": None, "status": None}
    try:
        rtype = client.resource(item["api_version"], item["kind"])
        namespace = item.get("namespace") if rtype.namespaced else None
        if item.get("name"):
            found["items"] = [obj for obj in [client.get(rtype, item["name"], namespace)] if obj]
        else:
            found["items"] = client.list(rtype, namespace, label_selector=item.get("label_selector"),
                                         field_selector=item.get("field_selector"),
                                         metadata_only=item.get("metadata_only"))
        found["items"] = [_without_managed_fields(_only_metadata(obj, rtype) if item.get("metadata_only") else obj)
                          for obj in found["items"]]
    except KubeError as exc:
        if exc.status not in (403, 404):
            raise
        found.update(error=str(exc), status=exc.status)
    return found
