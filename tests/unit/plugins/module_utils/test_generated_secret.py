# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets whose values are generated once, never regenerated, never dropped."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

import pytest
import yaml

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import generated_secret as gs
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError


def b64(text):
    return base64.b64encode(text.encode()).decode()


def spec(**fields):
    base = {"name": "glance-keystone-user", "namespace": "openstack", "generate": ["password"]}
    base.update(fields)
    return gs.validate([base])[0]


def data_of(manifest):
    return dict((k, base64.b64decode(v).decode()) for k, v in manifest["data"].items())


def test_generate_is_letters_and_digits_of_the_length():
    value = gs.generate(40)
    assert len(value) == 40 and value.isalnum()
    assert gs.generate(40) != value


def test_absent_secret_gets_generated_values():
    manifest, generated = gs.desired_secret(spec(generate=[{"key": "password", "length": 20}]), None)
    assert generated == ["password"]
    assert len(data_of(manifest)["password"]) == 20
    assert manifest["type"] == "Opaque"
    assert manifest["metadata"] == {"name": "glance-keystone-user", "namespace": "openstack"}


def test_present_value_is_kept_and_other_keys_are_not_dropped():
    live = {"type": "Opaque", "data": {"password": b64("existing"), "extra": b64("kept"), "binary": "//79"}}
    manifest, generated = gs.desired_secret(spec(), live)
    assert generated == []
    assert data_of(dict(manifest, data={k: v for k, v in manifest["data"].items() if k != "binary"})) == {
        "password": "existing", "extra": "kept"}
    assert manifest["data"]["binary"] == "//79"


def test_empty_value_is_generated_again():
    _manifest, generated = gs.desired_secret(spec(), {"data": {"password": ""}})
    assert generated == ["password"]


def test_the_live_type_is_kept():
    manifest, dummy = gs.desired_secret(spec(), {"type": "kubernetes.io/basic-auth", "data": {"password": b64("x")}})
    assert manifest["type"] == "kubernetes.io/basic-auth"


def test_templates_use_generated_and_given_values():
    s = spec(values={"auth_url": "http://k/v3"},
             templates={"clouds.yaml": {"clouds": {"glance": {"auth": {"auth_url": "${auth_url}",
                                                                       "password": "${password}"}}}}})
    manifest, dummy = gs.desired_secret(s, None, generator=lambda n: "p" * n)
    data = data_of(manifest)
    expected = {"auth_url": "http://k/v3", "password": "p" * 32}
    assert yaml.safe_load(data["clouds.yaml"]) == {"clouds": {"glance": {"auth": expected}}}
    assert data["auth_url"] == "http://k/v3"


def test_values_from_copies_a_field_of_another_object():
    s = spec(name="glance-keystone-credentials", generate=["value"],
             values_from=[{"key": "application_credential_id", "api_version": "openstack.k-orc.cloud/v1alpha1",
                           "kind": "ApplicationCredential", "name": "glance", "field": "status.id"}],
             templates={"id": "${application_credential_id}"})
    ref = gs.reference(s["values_from"][0])
    assert ref == ("openstack.k-orc.cloud/v1alpha1", "ApplicationCredential", "openstack", "glance")
    manifest, dummy = gs.desired_secret(s, None, {ref: {"status": {"id": "abc"}}})
    assert data_of(manifest)["application_credential_id"] == "abc"
    assert data_of(manifest)["id"] == "abc"
    with pytest.raises(InputError, match="^Secret openstack/glance-keystone-credentials values_from\\[0\\]: "
                       "ApplicationCredential openstack/glance has no status.id yet"):
        gs.desired_secret(s, None, {ref: {"status": {}}})
    with pytest.raises(InputError, match="values_from\\[0\\]: ApplicationCredential openstack/glance .* does not exist"):
        gs.desired_secret(s, None, {ref: None})


def test_template_that_refers_to_an_unknown_key_fails_naming_it():
    with pytest.raises(InputError, match="^Secret openstack/glance-keystone-user templates.x: refers to 'nope'"):
        gs.desired_secret(spec(templates={"x": "${nope}"}), None)
    with pytest.raises(InputError, match="^Secret openstack/glance-keystone-user templates.y.a\\[1\\]: refers to 'nope'"):
        gs.desired_secret(spec(templates={"y": {"a": ["${password}", "${nope}"]}}), None)


def test_validate_reports_every_problem():
    with pytest.raises(InputError) as error:
        gs.validate([
            {"name": "Bad_Name", "namespace": "ns", "generate": ["k"]},
            {"name": "s", "generate": [{"key": "k", "length": 4}]},
            {"name": "t", "namespace": "ns", "generate": ["a"], "values": {"a": "x", "b": 1}},
            {"name": "u", "namespace": "ns"},
            {"name": "v", "namespace": "ns", "generate": ["bad key"], "values_from": [{"key": "x"}]},
            {"name": "t", "namespace": "ns", "generate": ["a"]},
        ])
    assert error.value.problems == [
        "secrets[0].name: 'Bad_Name' is not a valid Secret name",
        "secrets[1].namespace: None is missing or invalid",
        "secrets[1].generate[0].length: must be an integer of at least 16, got 4",
        "secrets[1]: nothing to generate, set or render",
        "secrets[2].values.b: must be a string, got int",
        "secrets[2].values.a: a is set more than once (also secrets[2].generate[0].key)",
        "secrets[3]: nothing to generate, set or render",
        "secrets[4].values_from[0].api_version: is required (a non-empty string)",
        "secrets[4].values_from[0].kind: is required (a non-empty string)",
        "secrets[4].values_from[0].name: is required (a non-empty string)",
        "secrets[4].values_from[0].field: is required (a non-empty string)",
        "secrets[4].generate[0].key: 'bad key' is not a valid Secret key (letters, digits, '-', '_', '.')",
        "secrets[5]: Secret ns/t is listed twice (also secrets[2])",
    ]
    with pytest.raises(InputError, match="^secrets: must be a list$"):
        gs.validate({"name": "x"})


def test_field_of():
    assert gs.field_of({"status": {"id": "x", "n": 3, "m": {}}}, "status.id") == "x"
    assert gs.field_of({"status": {"n": 3}}, "status.n") == "3"
    assert gs.field_of({"status": {"m": {}}}, "status.m") is None
    assert gs.field_of({}, "status.id") is None
