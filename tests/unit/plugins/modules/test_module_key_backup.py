# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""key_backup: a backup of the Keystones' or Rook's keys, encrypted so that ansible-vault opens it, on the store
cluster; the same id keeps it; check mode writes nothing; a restore goes through the keystone-operator's staging
Secret and waits until the keys are back; refusals before any write; no key in any output."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import json

import pytest
from ansible.parsing.vault import VaultLib, VaultSecret

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import key_rotation as kr
from ansible_collections.c5c3.cobaltcore.plugins.modules import key_backup

from module_harness import _merge, assert_hidden, run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import
from test_module_control_plane_health import add_control_plane, add_owned
from test_module_control_plane_health import cluster  # noqa: F401  # pylint: disable=unused-import

PASSPHRASE = "the lab's key backup passphrase"
STORE = "cobaltcore-backups"
KEYS = {"fernet": ["ZmVybmV0LWtleS1vbmUtLS0tLS0tLS0tLS0tLS0tLS0tLS0=", "ZmVybmV0LWtleS10d28tLS0tLS0tLS0tLS0tLS0tLS0tLS0="],
        "credential": ["Y3JlZGVudGlhbC1rZXktLS0tLS0tLS0tLS0tLS0tLS0tLS0="]}
MON_KEY = "QVFCZ0h6Vm1vbi1zZWNyZXQtbmV2ZXItc2hvd24tLS0tLS0tLQ=="
ARGS = {"cluster": "lab-control-plane", "backup_id": "t1", "settings": {"passphrase": PASSPHRASE}, "store_kubeconfig": {},
        "wait_timeout": 3, "wait_sleep": 1}


def secret(name, namespace, data, secret_type="Opaque"):
    return {"apiVersion": "v1", "kind": "Secret", "type": secret_type,
            "metadata": {"name": name, "namespace": namespace}, "data": data}


def add_keystone(kube, namespace, cp):  # noqa: F811
    add_control_plane(kube, name=cp, namespace=namespace, uid="uid-" + cp)
    add_owned(kube, "keystone", namespace=namespace, uid="uid-" + cp, cp=cp)
    for kind, values in KEYS.items():
        kube.add(secret(kr.keys_secret("keystone", kind), namespace, dict((str(i), v) for i, v in enumerate(values))))
        kube.add(secret(kr.staging_secret("keystone", kind), namespace, {}))


@pytest.fixture
def region(cluster):  # noqa: F811
    add_keystone(cluster, "openstack", "lab")
    add_keystone(cluster, "openstack-b", "b")
    cluster.kinds[("v1", "Event")] = ("events", True)
    cluster.refuse = False

    def operator(method, path, body, query):
        """The PATCH of a staging Secret, and the keystone-operator's commit of it (or its refusal)."""
        name, namespace = path.rsplit("/", 1)[1], path.split("/namespaces/")[1].split("/")[0]
        staging = cluster.find("v1", "Secret", name, namespace)
        if method != "PATCH" or staging is None:
            return 404, {}
        staged = _merge(staging, body)
        if cluster.refuse:
            cluster.add({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev", "namespace": namespace},
                         "involvedObject": {"kind": "Keystone", "name": "keystone"}, "reason": "RotationRejected",
                         "lastTimestamp": "2999-01-01T00:00:00Z",
                         "message": "staging secret %s rejected: too few keys" % name})
            return 200, staged
        target = cluster.find("v1", "Secret", name[:-len("-rotation")], namespace)
        target["data"] = staged["data"]
        target["metadata"].setdefault("annotations", {})[kr.COMPLETED_AT] = \
            staged["metadata"]["annotations"][kr.COMPLETED_AT]
        return 200, staged
    cluster.on_request = operator
    return cluster


def stored(kube, name="keys-lab-control-plane-t1"):  # noqa: F811
    return kube.find("v1", "Secret", name, STORE)


def opened(kube, name="keys-lab-control-plane-t1"):  # noqa: F811
    text = base64.b64decode(stored(kube, name)["data"]["keys.vault"])
    return json.loads(VaultLib([("default", VaultSecret(PASSPHRASE.encode()))]).decrypt(text))


def writes(kube):  # noqa: F811
    return [c for c in kube.calls if c[0] in ("PATCH", "POST", "PUT", "DELETE") and not (len(c) == 5 and c[4])]


def test_a_keystone_backup_opens_with_ansible_vault_and_shows_no_key(region):
    result, text = run_module(key_backup.main, ARGS)
    assert result["changed"] and result["result"] == "created", result
    assert result["backup"] == "cobaltcore-backups/keys-lab-control-plane-t1"
    document = opened(region)
    assert document["cluster"] == "lab-control-plane" and document["keys"] == "keystone"
    held = dict(((o["namespace"], o["name"]), o["data"]) for o in document["objects"])
    assert held[("openstack-b", "keystone-fernet-keys")] == {"0": KEYS["fernet"][0], "1": KEYS["fernet"][1]}
    assert sorted(held) == [(ns, n) for ns in ("openstack", "openstack-b")
                            for n in ("keystone-credential-keys", "keystone-fernet-keys")]
    assert result["contents"] == stored(region)["metadata"]["annotations"]["c5c3.io/backup-contents"]
    assert "Secret openstack-b/keystone-fernet-keys" in result["contents"]
    assert_hidden(text, *(KEYS["fernet"] + KEYS["credential"]))
    assert_hidden(text, *[base64.b64decode(v).decode() for v in KEYS["fernet"]])
    region.calls[:] = []
    again, unused = run_module(key_backup.main, ARGS)
    assert not again["changed"] and again["result"] == "unchanged" and not writes(region)


def test_check_mode_writes_nothing(region):
    result, unused = run_module(key_backup.main, ARGS, check_mode=True)
    assert result["changed"] and result["result"] == "created" and stored(region) is None
    assert region.find("v1", "Namespace", STORE) is None


def test_a_ceph_backup_keeps_rooks_secrets_and_the_mon_endpoints(region):
    region.add(secret("rook-ceph-mon", "rook-ceph", {"ceph-secret": MON_KEY, "fsid": "ZnNpZA=="}, "kubernetes.io/rook"))
    region.add(secret("rook-ceph-client-openstack-b", "rook-ceph", {"openstack-b": MON_KEY[::-1]}, "kubernetes.io/rook"))
    region.add(secret("an-operators-own", "rook-ceph", {"x": "eA=="}))
    region.add({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "rook-ceph-mon-endpoints", "namespace": "rook-ceph"},
                "data": {"data": "a=10.0.0.1:6789"}})
    args = dict(ARGS, cluster="st-pool-a", keys="ceph")
    result, text = run_module(key_backup.main, args)
    assert result["changed"], result
    document = opened(region, "keys-st-pool-a-t1")
    assert [(o["kind"], o["name"]) for o in document["objects"]] == [
        ("ConfigMap", "rook-ceph-mon-endpoints"), ("Secret", "rook-ceph-client-openstack-b"), ("Secret", "rook-ceph-mon")]
    assert stored(region, "keys-st-pool-a-t1")["metadata"]["labels"]["c5c3.io/backup-keys"] == "ceph"
    assert_hidden(text, MON_KEY, MON_KEY[::-1])


def test_a_pool_without_rooks_cluster_is_refused(region):
    result, unused = run_module(key_backup.main, dict(ARGS, cluster="st-pool-a", keys="ceph"))
    assert result["failed"] and "namespace rook-ceph has no Secret rook-ceph-mon" in result["msg"]
    assert stored(region, "keys-st-pool-a-t1") is None


def test_bad_input_names_every_field_and_writes_nothing(region):
    result, text = run_module(key_backup.main, dict(ARGS, backup_id="T 1", settings={
        "passphrase": "short", "namespace": "No Namespace"}))
    assert result["failed"] and result["msg"].startswith("invalid input, nothing was changed: ")
    for field in ("backup_id:", "settings.passphrase:", "settings.namespace:"):
        assert field in result["msg"], result["msg"]
    assert not writes(region)
    assert_hidden(text, "short")


def restore_args(**extra):
    return dict(dict(ARGS, action="restore", namespace="openstack-b", confirm="openstack-b"), **extra)


def test_a_restore_gives_the_keystone_its_keys_back_through_the_staging_secret(region):
    run_module(key_backup.main, ARGS)
    production = region.find("v1", "Secret", "keystone-fernet-keys", "openstack-b")
    production["data"] = {"0": KEYS["credential"][0], "1": KEYS["fernet"][0], "2": KEYS["fernet"][1]}
    region.calls[:] = []
    planned, unused = run_module(key_backup.main, restore_args(), check_mode=True)
    assert planned["changed"] and planned["restored"] == ["openstack-b/keystone-fernet-keys"] and not writes(region)
    result, text = run_module(key_backup.main, restore_args())
    assert result["changed"] and result["result"] == "restored", result
    assert production["data"] == {"0": KEYS["fernet"][0], "1": KEYS["fernet"][1]}
    (patch,) = [c for c in region.calls if c[0] == "PATCH"]
    assert patch[1].endswith("/namespaces/openstack-b/secrets/keystone-fernet-keys-rotation")
    assert kr.COMPLETED_AT in patch[2]["metadata"]["annotations"]
    assert_hidden(text, *(KEYS["fernet"] + KEYS["credential"]))
    region.calls[:] = []
    again, unused = run_module(key_backup.main, restore_args())
    assert not again["changed"] and again["result"] == "unchanged" and not writes(region)


def test_a_restore_the_operator_refuses_fails_naming_it(region):
    run_module(key_backup.main, ARGS)
    region.find("v1", "Secret", "keystone-credential-keys", "openstack")["data"] = {"0": KEYS["fernet"][0]}
    region.refuse = True
    result, unused = run_module(key_backup.main, restore_args(namespace="openstack", confirm="openstack"))
    assert result["failed"] and "refused the restored keys of Keystone openstack/keystone" in result["msg"]
    assert "RotationRejected: staging secret keystone-credential-keys-rotation rejected" in result["msg"]


def test_a_restore_is_refused_before_any_write(region):
    run_module(key_backup.main, ARGS)
    region.calls[:] = []
    result, unused = run_module(key_backup.main, restore_args(confirm="openstack"))
    assert result["failed"] and "confirm: must be openstack-b" in result["msg"]
    result, text = run_module(key_backup.main, restore_args(settings={"passphrase": "another passphrase of sixteen"}))
    assert result["failed"] and "cannot be read: the passphrase does not open it" in result["msg"]
    assert_hidden(text, "another passphrase of sixteen")
    result, unused = run_module(key_backup.main, restore_args(backup_id="t2"))
    assert result["failed"] and "no key backup t2" in result["msg"]
    region.find("v1", "Secret", "keystone-fernet-keys", "openstack-b")["data"] = {}
    region.find("v1", "Secret", "keystone-fernet-keys-rotation", "openstack-b")["data"] = {"0": KEYS["fernet"][0]}
    result, unused = run_module(key_backup.main, restore_args())
    assert result["failed"] and "holds keys the keystone-operator has not applied yet" in result["msg"]
    assert not writes(region)
