# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The apply layer's pure parts: manifest checks, ordering, no-op detection, diffs."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import (
    REDACTED, apply_order, field_diff, is_subset, needs_apply, normalize, owned_paths)

MANAGER = "c5c3.cobaltcore"


def cm(name="a", namespace="ns", **data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": data}


def live_with(obj, fields, manager=MANAGER, operation="Apply"):
    live = dict(obj)
    live["metadata"] = dict(obj["metadata"], resourceVersion="7", uid="u",
                            managedFields=[{"manager": manager, "operation": operation, "fieldsType": "FieldsV1",
                                            "fieldsV1": fields}])
    return live


def test_normalize_reports_every_problem_at_once():
    with pytest.raises(InputError) as err:
        normalize([cm(), "text", {"kind": "ConfigMap", "metadata": {}}, cm()])
    assert err.value.problems == [
        "manifest 1: must be a mapping, got str",
        "manifest 2 apiVersion: is required",
        "manifest 2 metadata.name: is required",
        "manifest 3: ConfigMap ns/a is listed twice (also manifest 0)",
    ]


def test_normalize_defaults_namespace_drops_status_and_turns_string_data_into_data():
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"},
              "status": {"x": 1}}
    (out,) = normalize([secret], "default")
    assert out["metadata"]["namespace"] == "default"
    assert "status" not in out and "stringData" not in out
    assert out["data"] == {"k": base64.b64encode(b"v").decode()}
    assert "data" not in secret  # the caller's manifest is untouched


def test_apply_order_puts_crds_then_namespaces_first_and_keeps_the_rest_in_order():
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "c"}}
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}
    ordered = apply_order([cm("x"), ns, cm("y"), crd])
    assert [o["metadata"]["name"] for o in ordered] == ["c", "n", "x", "y"]


def test_subset_compares_lists_item_by_item_and_ignores_server_defaults_inside():
    desired = {"spec": {"ports": [{"port": 80}]}}
    assert is_subset(desired, {"spec": {"ports": [{"port": 80, "protocol": "TCP"}], "extra": 1}})
    assert not is_subset(desired, {"spec": {"ports": [{"port": 80}, {"port": 81}]}})
    assert not is_subset(desired, {"spec": {"ports": [{"port": 8080}]}})
    assert not is_subset({"a": 1}, {})


def test_owned_paths_read_only_this_managers_apply_entries():
    fields = {"f:data": {".": {}, "f:a": {}}, "f:spec": {"f:items": {"k:{\"name\":\"x\"}": {"f:v": {}}}}}
    live = live_with(cm(a="1"), fields)
    live["metadata"]["managedFields"].append(
        {"manager": "other", "operation": "Apply", "fieldsV1": {"f:data": {"f:b": {}}}})
    assert owned_paths(live, MANAGER) == {("data",), ("data", "a"), ("spec",), ("spec", "items")}
    assert owned_paths(live_with(cm(a="1"), fields, operation="Update"), MANAGER) == set()


def test_needs_apply_only_for_new_different_or_shrinking_manifests():
    desired = cm(a="1")
    assert needs_apply(desired, None, MANAGER)
    owned = {"f:data": {"f:a": {}}}
    assert not needs_apply(desired, live_with(cm(a="1", other="foreign"), owned), MANAGER)
    assert needs_apply(desired, live_with(cm(a="2"), owned), MANAGER)
    # This manager set b before; a manifest without b must be sent so the server removes it.
    assert needs_apply(desired, live_with(cm(a="1", b="2"), {"f:data": {"f:a": {}, "f:b": {}}}), MANAGER)


def test_field_diff_shows_only_managed_fields_and_redacts_secrets():
    desired = cm(a="2")
    before = live_with(cm(a="1", foreign="x"), {"f:data": {"f:a": {}, "f:gone": {}}})
    after = dict(cm(a="2", foreign="x"))
    diff = field_diff(desired, before, after, MANAGER)
    assert diff["before"]["data"] == {"a": "1"}
    assert diff["after"]["data"] == {"a": "2"}
    assert "managedFields" not in diff["before"]["metadata"]
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n"}, "data": {"k": "czE="}}
    diff = field_diff(secret, None, dict(secret), MANAGER)
    assert diff["before"] == {} and diff["after"]["data"] == {"k": REDACTED}


def test_subset_tells_booleans_from_numbers_and_empty_from_absent():
    assert not is_subset({"v": True}, {"v": 1})
    assert not is_subset({"v": 0}, {"v": False})
    assert is_subset({"data": {}, "labels": None, "rules": []}, {})
    assert not is_subset({"data": {"a": "1"}}, {})


def test_a_field_dropped_inside_a_list_item_needs_an_apply():
    fields = {"f:spec": {"f:ports": {'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}, "f:targetPort": {}}},
                         "f:args": {}, "f:finalizers": {'v:"a"': {}}}}
    live = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "n", "managedFields": [
        {"manager": MANAGER, "operation": "Apply", "fieldsV1": fields}]},
        "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}], "args": ["x"], "finalizers": ["a"]}}
    same = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "n"},
            "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}], "args": ["x"], "finalizers": ["a"]}}
    assert not needs_apply(same, live, MANAGER)
    dropped = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "n"},
               "spec": {"ports": [{"port": 80, "protocol": "TCP"}], "args": ["x"], "finalizers": ["a"]}}
    assert needs_apply(dropped, live, MANAGER)
    no_set_value = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "n"},
                    "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}], "args": ["x"],
                             "finalizers": []}}
    assert needs_apply(no_set_value, live, MANAGER)


def test_secret_data_is_normalized_and_string_data_must_be_strings():
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n"},
              "data": {"wrapped": "YWJj\nZGVm\n"}}
    (out,) = normalize([secret])
    assert out["data"] == {"wrapped": "YWJjZGVm"}
    with pytest.raises(InputError) as err:
        normalize([{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n"},
                    "stringData": {"enabled": True}}])
    assert err.value.problems == ["manifest 0 stringData.enabled: must be a string, got bool (Secret n/s)"]
