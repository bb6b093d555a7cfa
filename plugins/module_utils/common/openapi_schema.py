# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The subset of OpenAPI v3 schema that CRDs and XRDs use for validation and
defaulting: type, enum, minimum, maximum, minItems, required, properties,
additionalProperties (a schema), items and default.

Unlike the API server, which prunes unknown fields and drops nulls, every such
value is reported here: a field that would silently vanish is a mistake.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy

from collections.abc import Mapping

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import problem

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "boolean": "a boolean",
    "array": "a list",
    "object": "a mapping",
}


def type_name(value):
    """How a value's type reads in a message: string, integer, list, mapping, null..."""
    if value is None:
        return "null"
    for name, check in _TYPE_CHECKS.items():
        if check(value):
            return _TYPE_NAMES[name].split(" ", 1)[1]
    return type(value).__name__


def is_type(value, expected):
    return _TYPE_CHECKS[expected](value)


def _is_integer(value):
    # bool is a subclass of int in Python; YAML true is not an integer.
    return isinstance(value, int) and not isinstance(value, bool)


_TYPE_CHECKS = {
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "boolean": lambda value: isinstance(value, bool),
    "array": lambda value: isinstance(value, (list, tuple)),
    "object": lambda value: isinstance(value, Mapping),
}


def join_path(path, key):
    """Dotted path of a field below path."""
    return "%s.%s" % (path, key) if path else key


def index_path(path, index):
    return "%s[%d]" % (path, index)


def validate(schema, value, path, subject=None):
    """Every way value breaks schema, as problems ('[<subject> ]<path>: <message>')."""
    return [problem(field, message, subject) for field, message in _validate(schema, value, path)]


def _validate(schema, value, path):
    """Every way value breaks schema, as (path, message) pairs."""
    expected = schema.get("type")
    if expected is not None and not is_type(value, expected):
        return [(path, "must be %s, got %s" % (_TYPE_NAMES[expected], type_name(value)))]
    problems = []
    if "enum" in schema and value not in schema["enum"]:
        problems.append((path, "must be one of %s, got %r" % (
            ", ".join(schema["enum"]), value)))
    if "minimum" in schema and value < schema["minimum"]:
        problems.append((path, "must be at least %d, got %d" % (schema["minimum"], value)))
    if "maximum" in schema and value > schema["maximum"]:
        problems.append((path, "must be at most %d, got %d" % (schema["maximum"], value)))
    if expected == "array":
        problems.extend(_validate_array(schema, value, path))
    if expected == "object":
        problems.extend(_validate_object(schema, value, path))
    return problems


def _validate_array(schema, value, path):
    problems = []
    if len(value) < schema.get("minItems", 0):
        problems.append((path, "must have at least %d item(s)" % schema["minItems"]))
    if "items" in schema:
        for index, item in enumerate(value):
            problems.extend(_validate(schema["items"], item, index_path(path, index)))
    return problems


def _validate_object(schema, value, path):
    problems = []
    properties = schema.get("properties", {})
    for key in schema.get("required", ()):
        if key not in value:
            problems.append((join_path(path, key), "is required"))
    for key, item in value.items():
        if not isinstance(key, str):
            problems.append((path, "field names must be strings, got %s %r" % (
                type_name(key), key)))
        elif key in properties:
            problems.extend(_validate(properties[key], item, join_path(path, key)))
        elif "additionalProperties" in schema:
            problems.extend(_validate(schema["additionalProperties"], item, join_path(path, key)))
        else:
            problems.append((join_path(path, key), "unknown field"))
    return problems


def with_defaults(schema, value):
    """A copy of value with every schema default filled in.

    Defaults of nested fields are applied even where the enclosing object is
    absent, so a claim without 'services' still gets the service defaults.
    Call it on values that validate() accepted.
    """
    if schema.get("type") == "object" and isinstance(value, Mapping):
        result = {}
        for key, item in value.items():
            sub = schema.get("properties", {}).get(key, {})
            result[key] = with_defaults(sub, item)
        for key, sub in schema.get("properties", {}).items():
            if key in result:
                continue
            if "default" in sub:
                result[key] = copy.deepcopy(sub["default"])
            elif sub.get("type") == "object":
                filled = with_defaults(sub, {})
                if filled:
                    result[key] = filled
        return result
    if schema.get("type") == "array" and isinstance(value, (list, tuple)):
        return [with_defaults(schema.get("items", {}), item) for item in value]
    return copy.deepcopy(value)
