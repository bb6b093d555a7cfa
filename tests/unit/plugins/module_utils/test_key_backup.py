"""region/key_backup: names, input checks, the document and what a restore takes of it."""

import json

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import key_backup as kb


def fernet(namespace, name="keystone-fernet-keys", value="a2V5"):
    return {"kind": "Secret", "namespace": namespace, "name": name, "type": "Opaque", "data": {"0": value}}


def test_names_and_the_keystone_secrets():
    assert kb.secret_name("lab-control-plane", "t1") == "keys-lab-control-plane-t1"
    assert kb.keystone_secrets("keystone") == {"fernet": "keystone-fernet-keys", "credential": "keystone-credential-keys"}


def test_input_problems_name_every_field():
    assert kb.settings_problems({"passphrase": "a long enough passphrase", "namespace": "cobaltcore-backups"}) == []
    problems = kb.settings_problems({"passphrase": "short", "namespace": "Not A Namespace"})
    assert [p.split(":")[0] for p in problems] == ["settings.passphrase", "settings.namespace"], problems
    assert kb.settings_problems({"namespace": "ok"})[0].startswith("settings.passphrase: must be a string of at least 16")
    assert kb.name_problems("st-pool-a", "db-1") == []
    assert [p.split(":")[0] for p in kb.name_problems("St_Pool", "x" * 64)] == ["cluster", "backup_id"]


def test_the_document_is_canonical_and_parses_back():
    objects = [fernet("openstack-b"), fernet("openstack", "keystone-credential-keys"), fernet("openstack")]
    text = kb.document("lab-control-plane", "keystone", objects, "2026-12-06T10:00:00Z")
    assert text == kb.document("lab-control-plane", "keystone", list(reversed(objects)), "2026-12-06T10:00:00Z")
    found = kb.parse(text, "ns/keys-x-1")
    assert [(o["namespace"], o["name"]) for o in found["objects"]] == [
        ("openstack", "keystone-credential-keys"), ("openstack", "keystone-fernet-keys"),
        ("openstack-b", "keystone-fernet-keys")]
    assert kb.contents_line(found["objects"]).startswith("Secret openstack/keystone-credential-keys, Secret openstack/")
    with pytest.raises(InputError, match="backup_id: the key backup ns/keys-x-1 decrypts, but to no key backup"):
        kb.parse(b"\xff", "ns/keys-x-1")
    with pytest.raises(InputError, match="format c5c3.cobaltcore/key-backup/v1"):
        kb.parse(json.dumps({"format": "other", "objects": []}).encode(), "ns/keys-x-1")


def test_exported_keeps_kind_name_type_and_data_only():
    live = {"metadata": {"name": "rook-ceph-mon", "namespace": "rook-ceph", "uid": "u", "ownerReferences": [{}]},
            "type": "kubernetes.io/rook", "data": {"fsid": "Zg=="}}
    assert kb.exported(dict(live, kind="Secret")) == {
        "kind": "Secret", "namespace": "rook-ceph", "name": "rook-ceph-mon", "type": "kubernetes.io/rook",
        "data": {"fsid": "Zg=="}}
    configmap = {"kind": "ConfigMap", "metadata": {"name": "rook-ceph-mon-endpoints", "namespace": "rook-ceph"},
                 "data": {"data": "a=10.0.0.1:6789"}}
    assert "type" not in kb.exported(configmap)


def test_the_store_secret_names_its_contents_and_holds_only_the_vault_text():
    secret = kb.store_secret("cobaltcore-backups", "st-pool-a", "ceph", "t1", b"$ANSIBLE_VAULT;1.1;AES256\n00\n",
                             [fernet("rook-ceph", "rook-ceph-mon")], "2026-12-06T10:00:00Z")
    assert secret["metadata"]["name"] == "keys-st-pool-a-t1"
    assert secret["metadata"]["labels"] == {"c5c3.io/backup": "keys", "c5c3.io/backup-cluster": "st-pool-a",
                                            "c5c3.io/backup-id": "t1", "c5c3.io/backup-keys": "ceph"}
    assert secret["metadata"]["annotations"]["c5c3.io/backup-contents"] == "Secret rook-ceph/rook-ceph-mon"
    assert list(secret["data"]) == ["keys.vault"]


def test_a_restore_takes_both_kinds_of_the_namespace_or_names_what_the_backup_holds():
    backup = {"objects": [fernet("openstack"), fernet("openstack", "keystone-credential-keys", "Yw=="),
                          fernet("openstack-b")]}
    assert kb.keystone_restores(backup, "b/k", "openstack", "keystone") == [
        ("fernet", "keystone-fernet-keys", {"0": "a2V5"}), ("credential", "keystone-credential-keys", {"0": "Yw=="})]
    with pytest.raises(InputError) as error:
        kb.keystone_restores(backup, "b/k", "openstack-b", "keystone")
    assert error.value.problems == ["backup_id: the key backup b/k holds no keystone-credential-keys in namespace "
                                    "openstack-b (it holds keys of: openstack, openstack-b)"]


def test_the_staging_patch_is_a_rotation_jobs():
    assert kb.staging_patch({"0": "a2V5"}, "2026-12-06T10:00:00Z") == {
        "metadata": {"annotations": {"cobaltcore.c5c3.io/rotation-completed-at": "2026-12-06T10:00:00Z"}},
        "data": {"0": "a2V5"}}
