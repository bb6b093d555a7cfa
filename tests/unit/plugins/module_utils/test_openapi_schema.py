# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.openapi_schema import (
    type_name, validate, with_defaults)

SCHEMA = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer", "minimum": 1, "maximum": 5, "default": 3},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "items": {"type": "array", "minItems": 1, "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "nested": {"type": "object", "properties": {
            "flag": {"type": "boolean", "default": False},
            "free": {"type": "string"},
        }},
    },
}


def test_valid_value_has_no_problems():
    assert validate(SCHEMA, {"name": "x", "count": 5, "mode": "a", "items": ["i"],
                             "labels": {"k": "v"}, "nested": {"flag": True}}, "spec") == []


@pytest.mark.parametrize("value, expected", [
    ({}, [("spec.name", "is required")]),
    ({"name": 1}, [("spec.name", "must be a string, got integer")]),
    ({"name": "x", "count": True}, [("spec.count", "must be an integer, got boolean")]),
    ({"name": "x", "count": 0}, [("spec.count", "must be at least 1, got 0")]),
    ({"name": "x", "count": 6}, [("spec.count", "must be at most 5, got 6")]),
    ({"name": "x", "count": 2.5}, [("spec.count", "must be an integer, got float")]),
    ({"name": "x", "mode": "c"}, [("spec.mode", "must be one of a, b, got 'c'")]),
    ({"name": "x", "items": []}, [("spec.items", "must have at least 1 item(s)")]),
    ({"name": "x", "items": ["a", 2]}, [("spec.items[1]", "must be a string, got integer")]),
    ({"name": "x", "items": "a"}, [("spec.items", "must be a list, got string")]),
    ({"name": "x", "labels": {"k": 1}}, [("spec.labels.k", "must be a string, got integer")]),
    ({"name": "x", "other": 1}, [("spec.other", "unknown field")]),
    ({"name": "x", "nested": {"flag": "yes"}}, [("spec.nested.flag", "must be a boolean, got string")]),
    ({"name": "x", "nested": None}, [("spec.nested", "must be a mapping, got null")]),
    ({"name": "x", 1: 2}, [("spec", "field names must be strings, got integer 1")]),
    ([], [("spec", "must be a mapping, got list")]),
])
def test_each_rule_reports_path_and_message(value, expected):
    assert validate(SCHEMA, value, "spec") == ["%s: %s" % item for item in expected]


def test_all_problems_are_collected():
    problems = validate(SCHEMA, {"count": 9, "mode": "z", "x": 1}, "spec")
    assert [problem.split(":")[0] for problem in problems] == ["spec.name", "spec.count", "spec.mode", "spec.x"]


def test_a_subject_comes_before_the_path():
    assert validate(SCHEMA, {"name": 1}, "spec", "tenant-a/a") == ["tenant-a/a spec.name: must be a string, got integer"]
    assert validate(SCHEMA, [], "", "region") == ["region: must be a mapping, got list"]


def test_defaults_fill_missing_fields_even_in_absent_objects():
    assert with_defaults(SCHEMA, {"name": "x"}) == {"name": "x", "count": 3, "nested": {"flag": False}}


def test_defaults_keep_given_values_and_do_not_touch_the_input():
    value = {"name": "x", "count": 1, "nested": {"free": "y"}}
    assert with_defaults(SCHEMA, value) == {"name": "x", "count": 1,
                                            "nested": {"free": "y", "flag": False}}
    assert value == {"name": "x", "count": 1, "nested": {"free": "y"}}


def test_defaults_are_copies():
    schema = {"type": "object", "properties": {"l": {"type": "array", "default": ["a"]}}}
    with_defaults(schema, {})["l"].append("b")
    assert schema["properties"]["l"]["default"] == ["a"]


@pytest.mark.parametrize("value, name", [
    (None, "null"), ("s", "string"), (1, "integer"), (True, "boolean"), ([], "list"),
    ({}, "mapping"), (1.5, "float"),
])
def test_type_names(value, name):
    assert type_name(value) == name
