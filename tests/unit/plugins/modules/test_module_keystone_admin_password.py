# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""keystone_admin_password: a new password in the Secret the Keystone CR names, accepted by the Keystone, the old
one refused; the same id writes nothing; refusals before any write; no password in the output."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import admin_password
from ansible_collections.c5c3.cobaltcore.plugins.modules import keystone_admin_password

from module_harness import SECRET, assert_hidden, run_module
from module_harness import keystone, kube  # noqa: F401  # pylint: disable=unused-import
from test_module_control_plane_health import add_control_plane, add_owned
from test_module_control_plane_health import cluster  # noqa: F401  # pylint: disable=unused-import

ARGS = {"control_planes": [{"namespace": "openstack", "name": "lab"}], "rotation_id": "pw-1", "wait_timeout": 3,
        "wait_sleep": 1}


def password_of(kube):  # noqa: F811
    secret = kube.find("v1", "Secret", "keystone-admin-credentials", "openstack")
    return base64.b64decode(secret["data"]["password"]).decode()


@pytest.fixture
def region(cluster, keystone, monkeypatch):  # noqa: F811
    keystone.bootstrap()
    add_control_plane(cluster, uid="uid-lab")
    cr = add_owned(cluster, "keystone", uid="uid-lab")
    cr["spec"] = {"bootstrap": {"adminUser": "admin", "adminPasswordSecretRef": {
        "name": "keystone-admin-credentials", "key": "password"}}}
    cr["status"]["endpoint"] = keystone.url
    cr["status"]["conditions"] = [{"type": "BootstrapReady", "status": "True", "reason": "BootstrapComplete",
                                   "message": "Keystone bootstrap completed successfully"}]
    cluster.add({"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "keystone-admin-credentials", "namespace": "openstack"},
        "data": {"password": base64.b64encode(SECRET.encode()).decode()}})
    cluster.operator = True
    real = keystone_admin_password.KeystoneAdminPasswordModule.authenticate

    def bootstrapped(self, rotation, password):
        """The keystone-operator: a changed password in the Secret is bootstrapped before Keystone is asked."""
        if cluster.operator:
            keystone.state.named("users", "admin")["password"] = password_of(cluster)
        return real(self, rotation, password)
    monkeypatch.setattr(keystone_admin_password.KeystoneAdminPasswordModule, "authenticate", bootstrapped)
    cluster.keystone = keystone
    return cluster


def puts(kube):  # noqa: F811
    return [c for c in kube.calls if c[0] == "PUT"]


def test_check_mode_plans_and_writes_nothing(region):
    result, text = run_module(keystone_admin_password.main, ARGS, check_mode=True)
    assert result["changed"] and not puts(region)
    assert [r["state"] for r in result["rotations"]] == ["planned"]
    assert_hidden(text, SECRET)


def test_the_new_password_is_taken_and_the_old_refused_and_the_same_id_writes_nothing(region):
    result, text = run_module(keystone_admin_password.main, ARGS)
    new = password_of(region)
    assert result["changed"] and new != SECRET and len(new) == 32
    assert result["rotations"] == [{"control_plane": "openstack/lab", "keystone": "openstack/keystone",
                                    "secret": "openstack/keystone-admin-credentials", "state": "done",
                                    "old_password_refused": True}]
    secret = region.find("v1", "Secret", "keystone-admin-credentials", "openstack")
    assert secret["metadata"]["annotations"][admin_password.ROTATION_ID_ANNOTATION] == "pw-1"
    assert_hidden(text, SECRET, new, base64.b64encode(new.encode()).decode())
    region.calls[:] = []
    again, text = run_module(keystone_admin_password.main, ARGS)
    assert not again["changed"] and not puts(region) and password_of(region) == new
    assert again["rotations"][0]["old_password_refused"] is None  # the old one is not known any more
    assert_hidden(text, new)


def test_a_keystone_that_never_takes_the_password_is_named_at_the_timeout(region):
    region.operator = False
    cr = region.find("keystone.openstack.c5c3.io/v1alpha1", "Keystone", "keystone", "openstack")
    cr["status"]["conditions"][0].update(status="False", reason="BootstrapFailed", message="job has permanently failed")
    result, text = run_module(keystone_admin_password.main, ARGS)
    assert result["failed"] and "did not accept the new admin password" in result["msg"]
    assert "openstack/keystone: Keystone answers 401; BootstrapReady False BootstrapFailed" in result["msg"]
    assert_hidden(text, SECRET, password_of(region))


def test_refusals_name_every_cluster_before_any_write(region):
    region.kinds[("external-secrets.io/v1", "ExternalSecret")] = ("externalsecrets", True)
    region.add({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
                "metadata": {"name": "keystone-admin-credentials", "namespace": "openstack"}})
    args = dict(ARGS, tenants=["acme"], password_length=12)
    result, unused = run_module(keystone_admin_password.main, args)
    assert result["failed"] and "password_length: 12 is shorter than 24" in result["msg"] and not puts(region)
    result, unused = run_module(keystone_admin_password.main, dict(ARGS, tenants=["acme"]))
    assert "ControlPlane openstack-acme/acme does not exist" in result["msg"]
    assert "synced by its ExternalSecret from OpenBao" in result["msg"] and not puts(region)
