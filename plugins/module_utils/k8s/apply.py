# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The apply layer: server-side apply of many objects per call, without writes on a no-op.

An object is sent only when the desired manifest is not already a subset of
the live object, or when this field manager owns fields the manifest no longer
sets (server-side apply would remove them). Check mode sends the same requests
with dryRun=All, so the API server still validates what would change.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import copy
import json
import time
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.masking import SECRET_KINDS
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import FIELD_MANAGER, KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.drift import REDACTED, findings, is_subset
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.read import Reader

CRD_KIND = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")


def ref_of(obj):
    meta = obj.get("metadata") or {}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
            "name": meta.get("name"), "namespace": meta.get("namespace")}


def _key(obj):
    """A manifest's key as the read layer keys what it read (for a namespaced kind)."""
    return (obj["apiVersion"], obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])


def read_ref_of(obj):
    """ref_of with the manifest's labels, by which the read layer finds objects spread over namespaces."""
    return dict(ref_of(obj), labels=(obj.get("metadata") or {}).get("labels") or {})


def describe(ref):
    """'Kind namespace/name' of a ref or a result, for messages and diff headers."""
    where = "%s/" % ref["namespace"] if ref.get("namespace") else ""
    return "%s %s%s" % (ref["kind"], where, ref["name"])


def normalize(manifests, default_namespace=None):
    """Validate and copy manifests; every problem of every manifest is reported together (InputError)."""
    objects, problems, seen = [], [], {}
    for index, obj in enumerate(manifests):
        where = "manifest %d" % index
        if not isinstance(obj, dict):
            problems.append(problem(where, "must be a mapping, got %s" % type(obj).__name__))
            continue
        missing = [f for f in ("apiVersion", "kind") if not isinstance(obj.get(f), str) or not obj.get(f)]
        if not (obj.get("metadata") or {}).get("name"):
            missing.append("metadata.name")
        if missing:
            problems.extend(problem(field, "is required", where) for field in missing)
            continue
        obj = copy.deepcopy(obj)
        obj.pop("status", None)
        if default_namespace and not obj["metadata"].get("namespace"):
            obj["metadata"]["namespace"] = default_namespace
        if obj["kind"] == "Secret" and obj.get("apiVersion") == "v1":
            problems.extend(problem(field, "%s (%s)" % (message, describe(ref_of(obj))), where)
                            for field, message in _normalize_secret(obj))
        identity = json.dumps([obj["apiVersion"].split("/")[0], obj["kind"], obj["metadata"].get("namespace"),
                               obj["metadata"]["name"]])
        if identity in seen:
            problems.append(problem(where, "%s is listed twice (also %s)" % (describe(ref_of(obj)), seen[identity])))
        seen.setdefault(identity, where)
        objects.append(obj)
    if problems:
        raise InputError(problems)
    return objects


def _normalize_secret(obj):
    """stringData becomes data and data loses line breaks, as the server stores them; returns (field, message)."""
    problems = []
    data = obj.get("data") or {}
    for key, value in list(data.items()):
        if isinstance(value, str):
            data[key] = "".join(value.split())
    for key, value in (obj.pop("stringData", None) or {}).items():
        if not isinstance(value, str):
            # The API server refuses it; str(True) would silently store "True".
            problems.append(("stringData.%s" % key, "must be a string, got %s" % type(value).__name__))
            continue
        data[key] = base64.b64encode(value.encode("utf-8")).decode("ascii")
    if data:
        obj["data"] = data
    return problems


def apply_order(objects):
    """CRDs, then Namespaces, then everything else, each in the given order."""
    def rank(obj):
        if (obj["apiVersion"], obj["kind"]) == CRD_KIND:
            return 0
        return 1 if obj["kind"] == "Namespace" and obj["apiVersion"] == "v1" else 2
    return sorted(objects, key=rank)


# -- change detection ---------------------------------------------------------

def owned_paths(live, field_manager):
    """Map-field paths this manager owns through Apply, from metadata.managedFields."""
    paths = set()
    for entry in (live.get("metadata") or {}).get("managedFields") or []:
        if entry.get("manager") == field_manager and entry.get("operation") == "Apply":
            paths |= _fields_v1_paths(entry.get("fieldsV1") or {})
    return paths


def _fields_v1_paths(node, prefix=()):
    paths = set()
    for key, value in node.items():
        if not key.startswith("f:"):
            continue  # list items (k:, v:, i:) belong to their list field
        path = prefix + (key[2:],)
        paths.add(path)
        paths |= _fields_v1_paths(value or {}, path)
    return paths


def owns_more_than(fields, desired):
    """True when fieldsV1 names a field, list item or set value that desired no longer sets."""
    for key, sub in fields.items():
        if key == ".":
            continue
        kind, raw = key[:2], key[2:]
        if kind == "f:":
            found = isinstance(desired, dict) and raw in desired
            target = desired.get(raw) if found else None
        elif kind == "k:":
            ident = json.loads(raw)
            matches = [d for d in desired if isinstance(d, dict) and all(d.get(k) == v for k, v in ident.items())] \
                if isinstance(desired, list) else []
            found, target = bool(matches), matches[0] if matches else None
        elif kind == "v:":
            found, target = isinstance(desired, list) and json.loads(raw) in desired, None
        elif kind == "i:":
            index = int(raw)
            found = isinstance(desired, list) and index < len(desired)
            target = desired[index] if found else None
        else:
            return True  # a form we do not know: let the server decide
        if not found or (sub and owns_more_than(sub, target)):
            return True
    return False


def namespace_exists(client, name):
    """Whether the namespace exists (a check-mode dry run in a namespace not made yet fails with 404)."""
    return client.get(client.resource("v1", "Namespace"), name) is not None


def needs_apply(desired, live, field_manager):
    if live is None:
        return True
    if not is_subset(desired, live):
        return True
    # Fields (and list items) this manager set before and no longer sets would be removed by the apply.
    for entry in (live.get("metadata") or {}).get("managedFields") or []:
        if entry.get("manager") == field_manager and entry.get("operation") == "Apply":
            if owns_more_than(entry.get("fieldsV1") or {}, desired):
                return True
    return False


# -- diff ---------------------------------------------------------------------

def _project(source, shape):
    """The parts of source that shape names (maps by key, lists whole)."""
    if not isinstance(shape, dict) or not isinstance(source, dict):
        return copy.deepcopy(source)
    return dict((k, _project(source[k], v)) for k, v in shape.items() if k in source)


def _redact(obj):
    if obj and obj.get("kind") in SECRET_KINDS:
        for key in ("data", "stringData"):
            if isinstance(obj.get(key), dict):
                obj[key] = dict((k, REDACTED) for k in obj[key])
    return obj


def _without_noise(obj):
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        for key in ("managedFields", "resourceVersion", "generation", "uid", "creationTimestamp"):
            meta.pop(key, None)
    return obj


def field_diff(desired, before, after, field_manager):
    """before/after limited to the fields this manager sets or owned, Secret values redacted."""
    shape = copy.deepcopy(desired)
    if before:
        for path in owned_paths(before, field_manager):
            node = shape
            for part in path:
                node = node.setdefault(part, {}) if isinstance(node, dict) else {}
    return {
        "before": _redact(_without_noise(_project(before, shape))) if before else {},
        "after": _redact(_without_noise(_project(after, shape))) if after else {},
    }


# -- the applier ----------------------------------------------------------------

class Applier:
    """Applies or removes a batch of objects with one client; returns one result per object."""

    def __init__(self, client, field_manager=FIELD_MANAGER, force_conflicts=False, check_mode=False,
                 diff=False, crd_timeout=60, workers=8, drift=False):
        """drift: each result of a check-mode run carries the object's drift (k8s/drift.py) when it has any."""
        self.client = client
        self.drift = drift and check_mode
        self.field_manager = field_manager
        self.force = force_conflicts
        self.check_mode = check_mode
        self.diff = diff
        self.crd_timeout = crd_timeout
        self.workers = workers
        self._live = {}
        self._planned = set()   # kinds and namespaces this batch creates (check mode)

    def apply(self, objects, live=None):
        """CRDs and Namespaces one by one (later objects need them), then the rest in parallel.

        live: objects the caller has just read, by Reader key (they are not read again)."""
        self._planned = set()
        self._live = dict(live or {})
        ordered = apply_order(objects)
        first = [o for o in ordered if (o["apiVersion"], o["kind"]) == CRD_KIND or o["kind"] == "Namespace"]
        rest = ordered[len(first):]
        results = [self._apply_one(obj) for obj in first]
        # The rest read together (objects of one kind: one LIST where the batch allows), but not what the caller read.
        self._live.update(Reader(self.client, workers=self.workers, skip_unknown=True).read(
            [read_ref_of(obj) for obj in rest if _key(obj) not in self._live]))
        if self.workers > 1 and len(rest) > 1:
            with ThreadPoolExecutor(max_workers=self.workers) as pool:
                results += list(pool.map(self._apply_one, rest))
        else:
            results += [self._apply_one(obj) for obj in rest]
        return results

    def _current(self, rtype, obj, namespace):
        key = (obj["apiVersion"], obj["kind"], namespace, obj["metadata"]["name"])
        if key in self._live:
            return self._live[key]
        return self.client.get(rtype, obj["metadata"]["name"], namespace)

    def _apply_one(self, obj):
        result, live = self._apply_object(obj)
        if self.drift:
            found = object_drift(obj, live, result["result"], self.field_manager, result.pop("conflicts", ()))
            if found:
                result["drift"] = found
        return result

    def _apply_object(self, obj):
        """(result, the live object as read, None when missing)."""
        result = ref_of(obj)
        try:
            rtype = self.client.resource(obj["apiVersion"], obj["kind"])
        except KubeError:
            if self.check_mode and (obj["apiVersion"].split("/")[0], obj["kind"]) in self._planned:
                result.update(result="created", note="its CRD is created in the same call")
                return result, None
            raise
        if not rtype.namespaced:
            obj["metadata"].pop("namespace", None)
            result["namespace"] = None
        elif not obj["metadata"].get("namespace"):
            raise KubeError("%s is namespaced, but neither the manifest nor the namespace option names one"
                            % describe(ref_of(obj)))
        namespace = obj["metadata"].get("namespace")
        if self.check_mode and namespace and ("Namespace", namespace) in self._planned:
            result.update(result="created", note="its namespace is created in the same call")
            return result, None
        live = self._current(rtype, obj, namespace)
        if not needs_apply(obj, live, self.field_manager):
            result["result"] = "unchanged"
            return result, live
        try:
            after = self.client.server_side_apply(rtype, obj, self.field_manager, self.force, self.check_mode)
        except KubeError as error:
            # Check mode after an earlier task that would have created the namespace.
            if self.check_mode and live is None and error.status == 404 and namespace and not self._namespace_exists(namespace):
                result.update(result="created", note="its namespace does not exist yet")
                return result, None
            if not (self.drift and error.status == 409 and error.causes):
                raise
            # Another manager set a declared field: drift to report (the real run fails on it), not a failure here.
            after = self.client.server_side_apply(rtype, obj, self.field_manager, True, True)
            result["conflicts"] = [c.get("message") for c in error.causes]
        if live is None:
            result["result"] = "created"
            self._plan(obj)
        elif not self.check_mode and after["metadata"].get("resourceVersion") == live["metadata"].get("resourceVersion"):
            result["result"] = "unchanged"  # the server found nothing to change
        elif self.check_mode and _without_noise(copy.deepcopy(after)) == _without_noise(copy.deepcopy(live)):
            result["result"] = "unchanged"
        else:
            result["result"] = "configured"
        if self.diff and result["result"] != "unchanged":
            result["diff"] = field_diff(obj, live, after, self.field_manager)
        if (obj["apiVersion"], obj["kind"]) == CRD_KIND and not self.check_mode:
            self._await_established(rtype, after)
        return result, live

    def _namespace_exists(self, name):
        return namespace_exists(self.client, name)

    def _plan(self, obj):
        if obj["kind"] == "Namespace":
            self._planned.add(("Namespace", obj["metadata"]["name"]))
        if (obj["apiVersion"], obj["kind"]) == CRD_KIND:
            self._planned.add((obj["spec"]["group"], obj["spec"]["names"]["kind"]))

    def _await_established(self, rtype, crd):
        name = crd["metadata"]["name"]
        deadline = time.time() + self.crd_timeout
        while True:
            conditions = dict((c.get("type"), c.get("status")) for c in (crd.get("status") or {}).get("conditions") or [])
            if conditions.get("Established") == "True":
                break
            if time.time() > deadline:
                raise KubeError("CRD %s is not Established after %ss" % (name, self.crd_timeout))
            time.sleep(0.2)
            crd = self.client.get(rtype, name) or crd
        for version in crd["spec"].get("versions", []):
            self.client.forget("%s/%s" % (crd["spec"]["group"], version["name"]))

    def remove(self, objects, propagation="Foreground"):
        results = []
        for obj in reversed(apply_order(objects)):
            result = ref_of(obj)
            try:
                rtype = self.client.resource(obj["apiVersion"], obj["kind"])
            except KubeError as exc:
                if exc.status != 404:
                    raise
                result["result"] = "absent"  # its kind is not even served
                results.append(result)
                continue
            namespace = obj["metadata"].get("namespace") if rtype.namespaced else None
            live = self.client.get(rtype, obj["metadata"]["name"], namespace)
            if live is None:
                result["result"] = "absent"
            else:
                self.client.delete(rtype, obj["metadata"]["name"], namespace, propagation, self.check_mode)
                result["result"] = "deleted"
                if self.drift:
                    result["drift"] = {"undeclared": True}
                if self.diff:
                    result["diff"] = {"before": _redact(_without_noise(_project(live, obj))), "after": {}}
            results.append(result)
        return list(reversed(results))


def object_drift(desired, live, result, field_manager, conflicts=()):
    """The drift of an applied object: {missing: true} when it does not exist; another manager's fields when the
    apply would change nothing; every finding (k8s/drift.py) when it would, at least that the server changes it;
    the conflicts with other managers over declared fields that a run without force_conflicts fails on."""
    if live is None:
        return {"missing": True}
    found = findings(desired, live, field_manager)
    if conflicts:
        found["conflicts"] = list(conflicts)
    if result == "unchanged":
        found.pop("fields", None)
    elif not found.get("fields"):
        found["fields"] = [{"field": ".", "declared": "(the manifest)", "live": "(the API server would change it)"}]
    return found


def changed(results):
    return any(r["result"] in ("created", "configured", "deleted") for r in results)


def summary(results):
    counts = {}
    for r in results:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
    return counts
