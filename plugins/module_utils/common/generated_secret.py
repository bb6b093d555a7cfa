# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets whose values are generated once: pure logic of c5c3.cobaltcore.generated_secret.

``desired_secret(spec, live, found)`` returns the Secret manifest to apply and the
keys it generated. A value is generated only when the live Secret lacks the key (or
holds an empty value); every key the live Secret holds is kept, so a re-run never
regenerates or drops anything. ``values`` are set as given; ``values_from`` copies a
field of another object (``found``: what the module read, by reference; a Secret's
``data.<key>`` decoded);
``templates`` are rendered from the Secret's values (generated ones included) with
``${key}``.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import re
import secrets
import string

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import masking
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.secret_data import decoded, field_of
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem, within
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.templating import render_template

ALPHABET = string.ascii_letters + string.digits
MIN_LENGTH = 16
DEFAULT_LENGTH = 32
_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


def generate(length):
    """A random value of letters and digits (safe in YAML, INI, URLs and shells)."""
    return "".join(secrets.choice(ALPHABET) for dummy in range(length))


def _generate_entries(value, where, problems):
    entries = []
    for index, item in enumerate(value or []):
        here = "%s.generate[%d]" % (where, index)
        if isinstance(item, str):
            item = {"key": item}
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            problems.append(problem(here, "must be a key or a mapping with a key"))
            continue
        length = item.get("length", DEFAULT_LENGTH)
        if isinstance(length, bool) or not isinstance(length, int) or length < MIN_LENGTH:
            problems.append(problem(here + ".length", "must be an integer of at least %d, got %r" % (MIN_LENGTH, length)))
            continue
        entries.append({"key": item["key"], "length": length, "at": here + ".key"})
    return entries


def _keys(where, generated, values_from, values, templates):
    """[(field, key)] of every key a spec sets, in the order they are set."""
    keys = [(entry["at"], entry["key"]) for entry in generated + values_from]
    for what, mapping in (("values", values), ("templates", templates)):
        if isinstance(mapping, dict):
            keys.extend(("%s.%s.%s" % (where, what, key), key) for key in mapping)
    return keys


def _without_at(entry):
    return dict((key, value) for key, value in entry.items() if key != "at")


def validate(specs, default_namespace=None):
    """Normalized specs; raises InputError listing every problem of every spec."""
    problems, result, seen = [], [], {}
    if not isinstance(specs, list):
        raise InputError([problem("secrets", "must be a list")])
    for index, spec in enumerate(specs):
        where = "secrets[%d]" % index
        if not isinstance(spec, dict):
            problems.append(problem(where, "must be a mapping"))
            continue
        name = spec.get("name")
        namespace = spec.get("namespace") or default_namespace
        if not kube_names.is_dns1123_subdomain(name):
            problems.append(problem(where + ".name", "%r is not a valid Secret name" % (name,)))
        if not kube_names.is_dns1123_label(namespace):
            problems.append(problem(where + ".namespace", "%r is missing or invalid" % (namespace,)))
        if (namespace, name) in seen:
            problems.append(problem(where, "Secret %s/%s is listed twice (also %s)" % (namespace, name, seen[(namespace, name)])))
        seen.setdefault((namespace, name), where)
        generated = _generate_entries(spec.get("generate"), where, problems)
        values_from = _values_from(spec.get("values_from"), namespace, where, problems)
        values = spec.get("values") or {}
        templates = spec.get("templates") or {}
        labels = spec.get("labels") or {}
        for what, mapping in (("values", values), ("templates", templates), ("labels", labels)):
            if not isinstance(mapping, dict):
                problems.append(problem("%s.%s" % (where, what), "must be a mapping"))
        for key, value in (values.items() if isinstance(values, dict) else []):
            if not isinstance(value, str):
                problems.append(problem("%s.values.%s" % (where, key), "must be a string, got %s" % type(value).__name__))
        keys = _keys(where, generated, values_from, values, templates)
        first = {}
        for field, key in keys:
            if not isinstance(key, str) or not _KEY.match(key):
                problems.append(problem(field, "%r is not a valid Secret key (letters, digits, '-', '_', '.')" % (key,)))
            elif key in first:
                problems.append(problem(field, "%s is set more than once (also %s)" % (key, first[key])))
            else:
                first[key] = field
        if not keys:
            problems.append(problem(where, "nothing to generate, set or render"))
        result.append({"name": name, "namespace": namespace, "labels": labels,
                       "generate": [_without_at(entry) for entry in generated],
                       "values_from": [_without_at(entry) for entry in values_from],
                       "values": values, "templates": templates})
    if problems:
        raise InputError(problems)
    return result


def _values_from(value, namespace, where, problems):
    entries = []
    for index, item in enumerate(value or []):
        here = "%s.values_from[%d]" % (where, index)
        if not isinstance(item, dict):
            problems.append(problem(here, "must be a mapping"))
            continue
        missing = [k for k in ("key", "api_version", "kind", "name", "field") if not isinstance(item.get(k), str)
                   or not item.get(k)]
        for key in missing:
            problems.append(problem("%s.%s" % (here, key), "is required (a non-empty string)"))
        if missing:
            continue
        entries.append({"key": item["key"], "api_version": item["api_version"], "kind": item["kind"],
                        "name": item["name"], "namespace": item.get("namespace") or namespace,
                        "field": item["field"], "at": here + ".key"})
    return entries


def masked_strings(specs, default_namespace=None):
    """(secret, public) strings of the specs' values and templates (no_log options, read unvalidated).

    What they hold goes into a Secret, so it is masked; a number, or a string that a
    Secret's name, namespace, labels or keys show anyway, hides nothing and is public
    (masking it would star out the Secret's name or a request count in the result).
    """
    secret, public = set(), set()
    for spec in specs if isinstance(specs, list) else []:
        if not isinstance(spec, dict):
            continue
        given = [spec.get("values"), spec.get("templates")]
        strings = masking.leaves(given)
        labels = spec.get("labels") if isinstance(spec.get("labels"), dict) else {}
        identifiers = [spec.get("name"), spec.get("namespace") or default_namespace]
        identifiers += [str(k) for k in labels] + [v for v in labels.values() if isinstance(v, str)]
        for option in ("values", "templates"):
            identifiers += [str(k) for k in (spec.get(option) if isinstance(spec.get(option), dict) else {})]
        for entry in spec.get("generate") if isinstance(spec.get("generate"), list) else []:
            identifiers.append(entry.get("key") if isinstance(entry, dict) else entry)
        for entry in spec.get("values_from") if isinstance(spec.get("values_from"), list) else []:
            identifiers.append(entry.get("key") if isinstance(entry, dict) else None)
        shown = masking.numbers(given) | masking.public_within(strings, identifiers)
        secret.update(strings - shown)
        public.update(shown)
    # A string one Secret's name shows is out in the result anyway, whichever spec also holds it.
    return secret - public, public


def reference(entry):
    """The object a values_from entry reads, as a hashable key."""
    return (entry["api_version"], entry["kind"], entry["namespace"], entry["name"])


def _copied(obj, field):
    """The string at a field of an object; a Secret's data.<key> decoded."""
    if obj.get("kind") == "Secret" and field.startswith("data."):
        return decoded(obj).get(field[len("data."):])
    return field_of(obj, field)


def desired_secret(spec, live, found=None, generator=generate):
    """(manifest, generated keys) for one validated spec and the live Secret (None when absent).

    found maps reference(entry) of every values_from entry to the object read (None: absent).
    """
    problems = []
    copied = {}
    subject = "Secret %s/%s" % (spec["namespace"], spec["name"])
    for index, entry in enumerate(spec["values_from"]):
        obj = (found or {}).get(reference(entry))
        what = "%s %s/%s" % (entry["kind"], entry["namespace"], entry["name"])
        value = _copied(obj, entry["field"]) if obj is not None else None
        field = "values_from[%d]" % index
        if obj is None:
            problems.append(problem(field, "%s (for key %s) does not exist" % (what, entry["key"]), subject))
        elif not value:
            problems.append(problem(field, "%s has no %s yet (for key %s)" % (what, entry["field"], entry["key"]), subject))
        else:
            copied[entry["key"]] = value
    if problems:
        raise InputError(problems)
    live_data = dict(((live or {}).get("data") or {}))
    values = decoded(live)
    generated = []
    for entry in spec["generate"]:
        if not values.get(entry["key"]):
            values[entry["key"]] = generator(entry["length"])
            generated.append(entry["key"])
    values.update(copied)
    values.update(spec["values"])
    for key, template in spec["templates"].items():
        try:
            values[key] = render_template(template, values, "templates.%s" % key)
        except InputError as error:
            raise InputError(within(subject, error.problems))
    data = dict(live_data)  # binary values stay as they are
    for key, value in values.items():
        data[key] = base64.b64encode(value.encode("utf-8")).decode("ascii")
    manifest = {"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": spec["name"], "namespace": spec["namespace"]},
                "data": data}
    if spec["labels"]:
        manifest["metadata"]["labels"] = dict(spec["labels"])
    # Always the live type (immutable), so the field stays this manager's and a re-run owns the same fields.
    manifest["type"] = (live or {}).get("type") or "Opaque"
    return manifest, generated
