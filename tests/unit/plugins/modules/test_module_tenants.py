# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""secret_copy and tenant_objects against two fake clusters (a storage pool and the control plane)."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import connection
from ansible_collections.c5c3.cobaltcore.plugins.modules import secret_copy, tenant_objects

from module_harness import FakeKube, assert_hidden, run_module

KEY = "AQDkey-of-the-ceph-client-never-shown=="
NEW_KEY = "AQDrotated-key-never-shown-either=="
LABELS = {"app.kubernetes.io/managed-by": "c5c3.cobaltcore", "c5c3.io/openstack-cluster-name": "t"}
COPY = {"source": {"namespace": "rook-ceph", "name": "rook-ceph-client-openstack-t"},
        "target": {"namespace": "openstack-t", "name": "ceph-client-t"}, "key": "userKey", "labels": LABELS,
        "storage_cluster": "st-pool-a"}


@pytest.fixture
def clusters(monkeypatch):
    apis = {"storage.yaml": FakeKube(), "control.yaml": FakeKube()}
    monkeypatch.setattr(connection, "KubeClient", lambda auth, **options: apis[auth["kubeconfig"]].client(auth, **options))
    return apis


def rook_secret(api, key=KEY):
    b64 = base64.b64encode(key.encode()).decode()
    api.add({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/rook",
             "metadata": {"name": "rook-ceph-client-openstack-t", "namespace": "rook-ceph"},
             "data": {"openstack-t": b64, "userID": base64.b64encode(b"openstack-t").decode(), "userKey": b64}})


def copy_secret(**extra):
    args = dict(kubeconfig="storage.yaml", target_kubeconfig="control.yaml", copies=[COPY])
    args.update(extra.pop("args", {}))
    return run_module(secret_copy.main, args, **extra)


def writes(api):
    return [c for c in api.calls if c[0] in ("PATCH", "DELETE")]


def test_secret_copy_copies_once_then_only_when_rook_rotates_the_key(clusters):
    rook_secret(clusters["storage.yaml"])
    result, text = copy_secret(diff=True)
    assert result["changed"] and result["results"][0]["result"] == "created"
    target = clusters["control.yaml"].find("v1", "Secret", "ceph-client-t", "openstack-t")
    assert base64.b64decode(target["data"]["userKey"]).decode() == KEY and target["metadata"]["labels"] == LABELS
    assert list(target["data"]) == ["userKey"]
    assert_hidden(text, KEY)
    before = len(writes(clusters["control.yaml"]))
    result, text = copy_secret()
    assert not result["changed"] and result["results"][0]["result"] == "unchanged"
    assert len(writes(clusters["control.yaml"])) == before
    rook_secret(clusters["storage.yaml"], NEW_KEY)
    result, text = copy_secret(diff=True)
    assert result["changed"] and result["results"][0]["result"] == "configured"
    assert_hidden(text, KEY, NEW_KEY)
    assert writes(clusters["storage.yaml"]) == []


def test_secret_copy_copies_the_user_and_its_key_in_one_write_and_shows_only_the_user(clusters):
    rook_secret(clusters["storage.yaml"])
    both = dict(COPY, key=["userID", "userKey"])
    result, text = copy_secret(args={"copies": [both], "public_keys": ["userID"]}, diff=True)
    assert result["changed"] and result["results"][0]["result"] == "created"
    assert len(writes(clusters["control.yaml"])) == 1
    target = clusters["control.yaml"].find("v1", "Secret", "ceph-client-t", "openstack-t")
    assert dict((k, base64.b64decode(v).decode()) for k, v in target["data"].items()) == {
        "userID": "openstack-t", "userKey": KEY}
    assert_hidden(text, KEY)
    # The user is a name: the results name the source Secret, which holds it, in the clear.
    assert result["results"][0]["source"] == "rook-ceph/rook-ceph-client-openstack-t"
    result, _text = copy_secret(args={"copies": [dict(COPY, key=["userID", "userKey", "adminKey"])]})
    assert result["failed"] and "has no key adminKey" in result["msg"] and "userKey" not in result["msg"]


def test_secret_copy_check_mode_writes_nothing(clusters):
    result, _text = copy_secret(check_mode=True)
    assert result["results"][0]["result"] == "source missing" and not result.get("failed")
    rook_secret(clusters["storage.yaml"])
    result, text = copy_secret(check_mode=True)
    assert result["changed"] and clusters["control.yaml"].find("v1", "Secret", "ceph-client-t", "openstack-t") is None
    assert_hidden(text, KEY)


def test_secret_copy_fails_naming_every_problem_before_writing(clusters):
    result, _text = copy_secret()
    assert result["failed"] and "rook-ceph/rook-ceph-client-openstack-t" in result["msg"]
    bad = [{"source": {"namespace": "x"}, "target": "y", "key": ""}]
    result, _text = copy_secret(args={"copies": bad})
    assert result["failed"]
    for field in ("copies[0].source", "copies[0].target", "copies[0].key"):
        assert field in result["msg"]
    assert writes(clusters["control.yaml"]) == []


def test_tenant_objects_finds_only_the_tenants_objects(clusters):
    storage = clusters["storage.yaml"]
    storage.kinds[("ceph.rook.io/v1", "CephBlockPool")] = ("cephblockpools", True)
    storage.add({"apiVersion": "ceph.rook.io/v1", "kind": "CephBlockPool",
                 "metadata": {"name": "t-volumes", "namespace": "rook-ceph", "labels": LABELS}})
    storage.add({"apiVersion": "ceph.rook.io/v1", "kind": "CephBlockPool",
                 "metadata": {"name": "u-volumes", "namespace": "rook-ceph",
                              "labels": dict(LABELS, **{"c5c3.io/openstack-cluster-name": "u"})}})
    result, _text = run_module(tenant_objects.main, dict(kubeconfig="storage.yaml", name="t", side="storage"))
    assert result["side"] == "storage" and not result["changed"]
    assert result["objects"] == [{"apiVersion": "ceph.rook.io/v1", "kind": "CephBlockPool",
                                  "name": "t-volumes", "namespace": "rook-ceph"}]
