# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Backups of the keys a region keeps outside its databases, encrypted, on the management cluster.

What is kept, per source cluster and backup id:
- keystone: of every Keystone CR on the control-plane cluster, the keystone-operator's production Secrets
  <keystone>-fernet-keys and <keystone>-credential-keys (the credential keys decrypt the credentials stored in the
  Keystone database, so they belong with the database backup of the same id);
- ceph: of a storage pool, what Rook's disaster-recovery guide has an operator keep of the namespace rook-ceph - the
  Secrets Rook makes (type kubernetes.io/rook: rook-ceph-mon with the fsid, the mon and admin keys, the daemons'
  keyrings, the CephClients' keys) and the ConfigMap rook-ceph-mon-endpoints.

The document (JSON) is encrypted in ansible-vault's format (common/vault_format) with the inventory's passphrase and
stored as the Secret keys-<cluster>-<id> (key keys.vault) in the store namespace of the management cluster; its
annotation lists what it holds, by name. A Keystone's keys come back through the keystone-operator's own path for
new keys - its staging Secret <keystone>-<kind>-keys-rotation with the annotation rotation-completed-at, which the
operator validates and copies onto the production Secret (region/key_rotation).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import json

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import key_rotation

KINDS = ("keystone", "ceph")
FORMAT = "c5c3.cobaltcore/key-backup/v1"
DATA_KEY = "keys.vault"
DEFAULT_NAMESPACE = "cobaltcore-backups"
BACKUP_LABEL = "c5c3.io/backup"
BACKUP_VALUE = "keys"
CLUSTER_LABEL = "c5c3.io/backup-cluster"
ID_LABEL = "c5c3.io/backup-id"
KEYS_LABEL = "c5c3.io/backup-keys"
CONTENTS_ANNOTATION = "c5c3.io/backup-contents"
TAKEN_ANNOTATION = "c5c3.io/backup-taken-at"
ROOK_SECRET_TYPE = "kubernetes.io/rook"
ROOK_CONFIGMAPS = ("rook-ceph-mon-endpoints",)
MIN_PASSPHRASE = 16


def secret_name(cluster, backup_id):
    return "keys-%s-%s" % (cluster, backup_id)


def keystone_secrets(keystone):
    """{kind: name} of a Keystone CR's production key Secrets."""
    return dict((kind, key_rotation.keys_secret(keystone, kind)) for kind in key_rotation.KINDS)


def settings_problems(settings):
    """Every problem of the settings {passphrase, namespace} (cobaltcore_key_backup)."""
    problems = []
    passphrase, namespace = settings.get("passphrase"), settings.get("namespace")
    if not isinstance(passphrase, str) or len(passphrase) < MIN_PASSPHRASE:
        problems.append(problem("settings.passphrase", "must be a string of at least %d characters (keep it in the "
                                "inventory's vault: it alone opens the backups)" % MIN_PASSPHRASE))
    if not kube_names.is_dns1123_label(namespace):
        problems.append(problem("settings.namespace", "%r is not a namespace name (a lowercase DNS-1123 label)"
                                % (namespace,)))
    return problems


def name_problems(cluster, backup_id):
    problems = []
    for field, value in (("cluster", cluster), ("backup_id", backup_id)):
        # The backup id and the cluster name are label values too: at most 63 characters, as a DNS-1123 label.
        if not kube_names.is_dns1123_label(value):
            problems.append(problem(field, "%r is not a lowercase DNS-1123 label of at most %d characters (it names "
                                    "the backup's Secret and labels it)" % (value, kube_names.DNS1123_LABEL_MAX)))
    return problems


def contents_line(objects):
    """What a document holds, by name: "Secret openstack/keystone-fernet-keys, ..."."""
    return ", ".join("%s %s/%s" % (o["kind"], o["namespace"], o["name"]) for o in objects)


def document(cluster, keys, objects, taken):
    """The plaintext (bytes) of a backup: canonical JSON of the objects [{kind, namespace, name, type, data}]."""
    ordered = sorted(objects, key=lambda o: (o["namespace"], o["kind"], o["name"]))
    return json.dumps({"format": FORMAT, "cluster": cluster, "keys": keys, "taken": taken, "objects": ordered},
                      sort_keys=True, separators=(",", ":")).encode("utf-8")


def parse(plaintext, backup):
    """The document of the decrypted backup (its Secret's name); InputError when it is none."""
    try:
        found = json.loads(plaintext.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        found = None
    if not isinstance(found, dict) or found.get("format") != FORMAT or not isinstance(found.get("objects"), list):
        raise InputError([problem("backup_id", "the key backup %s decrypts, but to no key backup document of format %s"
                                  % (backup, FORMAT))])
    return found


def exported(obj):
    """The part of a live Secret or ConfigMap a backup keeps."""
    meta = obj["metadata"]
    kept = {"kind": obj.get("kind") or ("Secret" if "type" in obj else "ConfigMap"), "namespace": meta["namespace"],
            "name": meta["name"], "data": dict(obj.get("data") or {})}
    if kept["kind"] == "Secret":
        kept["type"] = obj.get("type") or "Opaque"
    return kept


def store_secret(namespace, cluster, keys, backup_id, vaulttext, objects, taken):
    """The Secret on the management cluster that holds one backup."""
    return {
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": secret_name(cluster, backup_id), "namespace": namespace,
                     "labels": {BACKUP_LABEL: BACKUP_VALUE, CLUSTER_LABEL: cluster, ID_LABEL: backup_id,
                                KEYS_LABEL: keys},
                     "annotations": {CONTENTS_ANNOTATION: contents_line(objects), TAKEN_ANNOTATION: taken}},
        "data": {DATA_KEY: base64.b64encode(vaulttext).decode("ascii")},
    }


def keystone_restores(document, backup, namespace, keystone):
    """[(kind, production Secret name, data)] the document of the backup (its Secret's name) holds for the Keystone
    `keystone` in namespace; InputError naming what it holds when it has not both of its Secrets."""
    wanted = keystone_secrets(keystone)
    held = dict(((o["namespace"], o["name"]), o) for o in document["objects"] if o.get("kind") == "Secret")
    missing = [name for name in wanted.values() if (namespace, name) not in held]
    if missing:
        namespaces = sorted(set(o["namespace"] for o in document["objects"]))
        raise InputError([problem("backup_id", "the key backup %s holds no %s in namespace %s (it holds keys of: %s)"
                                  % (backup, " and no ".join(missing), namespace, ", ".join(namespaces) or "nothing"))])
    return [(kind, wanted[kind], held[(namespace, wanted[kind])]["data"]) for kind in key_rotation.KINDS]


def staging_patch(data, completed_at):
    """The merge patch of the staging Secret that hands the keystone-operator keys to apply, as a rotation Job's does."""
    return {"metadata": {"annotations": {key_rotation.COMPLETED_AT: completed_at}}, "data": dict(data)}
