# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift of one object: how the live object differs from its manifest, field by field.

Three findings, each a list of {field, ...} with the field as a path (``spec.values.replicas``,
``metadata.labels[c5c3.io/pool]``, ``spec.ports[name=http]``):

- ``fields``: a declared field whose live value differs, or that is missing ({field, declared, live});
  a field this field manager set before and the manifest no longer declares ({field, declared: <absent>, live}):
  the next apply removes it;
- ``foreign``: a field another field manager (not one of the collection's, which all begin with its name) set on
  an object the collection owns (its managed-by label), that the manifest does not declare ({field, managers, live}).
  A server-side dry run does not show these: the apply leaves them. Status, finalizers and owner references are the
  controllers' and are left out.

Secret values are redacted. Nothing here talks to the API server: the Applier calls it with what it read.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import re

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import collection
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.masking import SECRET_KINDS

# Set by the collection's action plugins for drift.yml's check-mode run: the file a module writes its objects' drift to.
DRIFT_ENV = "COBALTCORE_DRIFT_FILE"
ABSENT = "<absent>"
# The keys of a finding that hold values (the field and its managers are names).
VALUE_KEYS = ("declared", "live")
REDACTED = "<redacted>"
# The collection's name: the value of its managed-by label, and how each of its field managers begins.
COLLECTION = collection.NAME
# The label of the objects the collection creates (and so owns); Nodes it only labels do not carry it.
OWNER_LABEL = (collection.MANAGED_BY_LABEL, COLLECTION)
# Fields the API server and the controllers keep on every object: never another manager's drift.
CONTROLLER_FIELDS = (("metadata", "finalizers"), ("metadata", "ownerReferences"), ("status",))
SECRET_FIELDS = ("data", "stringData")
EMPTY = (None, {}, [])
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def field_text(path):
    """A path of segments (("f", key), ("k", {..}), ("v", value), ("i", n)) as text."""
    text = ""
    for kind, key in path:
        if kind == "f":
            text += (".%s" % key if text else key) if _PLAIN_KEY.match(key) else "[%s]" % key
        elif kind == "k":
            text += "[%s]" % ",".join("%s=%s" % (k, key[k]) for k in sorted(key))
        elif kind == "v":
            text += "[=%s]" % json.dumps(key)
        else:
            text += "[%d]" % key
    return text


def _segments(fields_v1, prefix=()):
    """The leaf paths of a managedFields entry's fieldsV1."""
    leaves = []
    for raw, sub in (fields_v1 or {}).items():
        if raw == ".":
            continue
        kind, key = raw[0], raw[2:]
        if kind in ("k", "v"):
            key = json.loads(key)
        elif kind == "i":
            key = int(key)
        elif kind != "f":
            continue
        path = prefix + ((kind, key),)
        children = _segments(sub, path)
        leaves.extend(children or [path])
    return leaves


def _step(node, segment):
    """(found, value) of one path segment in node."""
    kind, key = segment
    if kind == "f":
        return (True, node[key]) if isinstance(node, dict) and key in node else (False, None)
    if not isinstance(node, list):
        return False, None
    if kind == "k":
        matches = [item for item in node if isinstance(item, dict) and all(item.get(k) == v for k, v in key.items())]
        return (True, matches[0]) if matches else (False, None)
    if kind == "v":
        return (key in node), key
    return (key < len(node), node[key] if key < len(node) else None)


def _first_undeclared(desired, path):
    """The shortest prefix of path that desired does not declare, or None when desired declares the path (or a
    value that holds it as a whole, a list or a scalar)."""
    node = desired
    for index, segment in enumerate(path):
        if not isinstance(node, (dict, list)):
            return None
        found, node = _step(node, segment)
        if not found:
            return path[:index + 1]
    return None


def _value(obj, path):
    node = obj
    for segment in path:
        found, node = _step(node, segment)
        if not found:
            return ABSENT
    return node


def is_subset(desired, live):
    """True when every field of desired has the same value in live (lists item by item).

    A null or empty map/list in the manifest matches an absent field: the server stores neither.
    """
    if isinstance(desired, dict):
        return isinstance(live, dict) and all(
            is_subset(v, live[k]) if k in live else v in EMPTY for k, v in desired.items())
    if isinstance(desired, list):
        return (isinstance(live, list) and len(desired) == len(live)
                and all(is_subset(d, v) for d, v in zip(desired, live)))
    if isinstance(desired, bool) or isinstance(live, bool):
        return type(desired) is type(live) and desired == live  # True == 1 in Python, not in YAML
    return desired == live or (desired in EMPTY and live in EMPTY)


def _differences(desired, live, path=()):
    """(path, declared, live) of every declared field whose live value differs (maps field by field, lists whole)."""
    if isinstance(desired, dict) and isinstance(live, dict):
        found = []
        for key, value in desired.items():
            if key in live:
                found.extend(_differences(value, live[key], path + (("f", key),)))
            elif value not in EMPTY:
                found.append((path + (("f", key),), value, ABSENT))
        return found
    return [] if is_subset(desired, live) else [(path, desired, live)]


def _entries(obj, field_manager, own):
    """The managedFields entries of own (this field manager's applies) or of the others: not the collection's own
    field managers (another phase's, the release step's), not status writes."""
    for entry in (obj.get("metadata") or {}).get("managedFields") or []:
        manager = entry.get("manager") or ""
        if own:
            if manager == field_manager and entry.get("operation") == "Apply":
                yield entry
        elif not manager.startswith(COLLECTION) and entry.get("subresource") != "status":
            yield entry


def _undeclared(desired, live, entries):
    """{prefix: set of managers} of the fields the entries own that desired does not declare, once per prefix."""
    found = {}
    for entry in entries:
        for path in _segments(entry.get("fieldsV1")):
            if any(path[:len(c)] == tuple(("f", k) for k in c) for c in CONTROLLER_FIELDS):
                continue
            prefix = _first_undeclared(desired, path)
            if prefix is not None and _value(live, prefix) is not ABSENT:
                found.setdefault(prefix, set()).add(entry.get("manager") or "")
    return found


def map_values(entry, transform):
    """A drift entry with each finding's declared and live value passed through transform (masked, redacted)."""
    entry = dict(entry)
    for key in ("fields", "foreign"):
        if key in entry:
            entry[key] = [dict(f, **dict((k, transform(f[k])) for k in VALUE_KEYS if k in f)) for f in entry[key]]
    return entry


def owned(desired):
    """Whether the collection created the object (its manifest carries the collection's managed-by label)."""
    key, value = OWNER_LABEL
    return ((desired.get("metadata") or {}).get("labels") or {}).get(key) == value


def _redacted(kind, path, value):
    if kind in SECRET_KINDS and path and path[0] in (("f", k) for k in SECRET_FIELDS) and value is not ABSENT:
        return REDACTED
    return value


def findings(desired, live, field_manager):
    """The object's drift: {fields: [...], foreign: [...]} with the lists that are not empty, or {} without drift.

    desired is the normalized manifest, live the object as read (None: missing, the caller says so)."""
    kind = desired.get("kind")
    fields = [dict(field=field_text(path), declared=_redacted(kind, path, declared),
                   live=_redacted(kind, path, value))
              for path, declared, value in _differences(desired, live)]
    released = _undeclared(desired, live, _entries(live, field_manager, own=True))
    fields.extend(dict(field=field_text(path), declared=ABSENT, live=_redacted(kind, path, _value(live, path)))
                  for path in sorted(released, key=field_text))
    result = {}
    if fields:
        result["fields"] = fields
    if owned(desired):
        others = _undeclared(desired, live, _entries(live, field_manager, own=False))
        foreign = [dict(field=field_text(path), managers=sorted(managers),
                        live=_redacted(kind, path, _value(live, path)))
                   for path, managers in sorted(others.items(), key=lambda item: field_text(item[0]))]
        if foreign:
            result["foreign"] = foreign
    return result
