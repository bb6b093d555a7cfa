# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mappings.plain_copy and deep_merge: copies of the data only, in plain types, never of the containers' own state."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from collections.abc import Mapping

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.mappings import deep_merge, plain_copy


class TaggedStr(str):
    """Like Ansible's tagged strings: a str subclass with state of its own."""


class LazyMapping(Mapping):
    """Like Ansible's lazily templated dicts: data behind a context that must not be copied."""

    def __init__(self, data):
        self._data = data

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)

    def __deepcopy__(self, memo):
        raise AssertionError("the container was deep-copied, not its data")


class LazyDict(dict):
    """Like Ansible's lazily templated dicts, which filters get (a dict subclass): copy.deepcopy would copy
    their templating context too."""

    def __deepcopy__(self, memo):
        raise AssertionError("the container was deep-copied, not its data")


def test_plain_copy_makes_plain_containers_and_strs_and_shares_nothing():
    inner = {"cidr": TaggedStr("10.0.0.0/16"), "list": [1, (2, 3)]}
    value = LazyMapping({"networking": LazyMapping(inner), "flag": True, "none": None, "ratio": 1.5})
    copied = plain_copy(value)
    assert copied == {"networking": {"cidr": "10.0.0.0/16", "list": [1, [2, 3]]}, "flag": True, "none": None,
                      "ratio": 1.5}
    assert copied.__class__ is dict and copied["networking"].__class__ is dict
    assert copied["networking"]["cidr"].__class__ is str and copied["networking"]["list"][1].__class__ is list
    copied["networking"]["list"].append(4)
    assert inner["list"] == [1, (2, 3)]


def test_plain_copy_deep_copies_anything_else():
    original = {"set": {1, 2}}
    copied = plain_copy(original)
    assert copied == original and copied["set"] is not original["set"]


@pytest.mark.parametrize("base, override, merged", [
    ({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}}, {"a": {"b": 1, "c": 3}}),
    ({"a": {"b": 1}}, {"a": [1]}, {"a": [1]}),
    ({"a": 1}, None, {"a": 1}),
    ({}, {"a": {"b": 1}}, {"a": {"b": 1}}),
])
def test_deep_merge(base, override, merged):
    assert deep_merge(base, override) == merged


def test_deep_merge_of_lazy_settings_copies_their_data_only():
    base = LazyMapping({"networking": LazyMapping({"type": TaggedStr("calico"), "pods": "100.64.0.0/12"})})
    merged = deep_merge(base, LazyMapping({"networking": LazyMapping({"pods": TaggedStr("10.1.0.0/16")})}))
    assert merged == {"networking": {"type": "calico", "pods": "10.1.0.0/16"}}
    assert merged["networking"]["pods"].__class__ is str
