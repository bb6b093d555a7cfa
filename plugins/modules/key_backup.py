#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: key_backup
short_description: Back up a cluster's Keystone or Ceph keys, encrypted, to the management cluster, and restore Keystone keys
version_added: 0.6.0
description:
  - "O(action=backup): reads the keys of the cluster (the module's Kubernetes connection) and stores them, encrypted
    with the passphrase of O(settings), as the Secret C(keys-<cluster>-<backup_id>) (key C(keys.vault), labels
    C(c5c3.io/backup: keys), C(c5c3.io/backup-cluster), C(c5c3.io/backup-id), C(c5c3.io/backup-keys)) in the
    namespace of O(settings) on the store cluster (O(store_kubeconfig), the region's management cluster). The
    namespace is created when it does not exist."
  - "O(keys=keystone): of every ControlPlane's Keystone CR, the keystone-operator's Secrets C(<keystone>-fernet-keys)
    and C(<keystone>-credential-keys). O(keys=ceph): in O(namespace) (Rook's), every Secret of type
    C(kubernetes.io/rook) - C(rook-ceph-mon) with the fsid and the mon and admin keys, the daemons' keyrings, the
    CephClients' keys - and the ConfigMap C(rook-ceph-mon-endpoints): what Rook's disaster-recovery guide keeps."
  - The encryption is ansible-vault's (format 1.1, AES256), so C(ansible-vault decrypt) opens a backup with the same
    passphrase. The Secret's annotation C(c5c3.io/backup-contents) names what it holds; no value leaves the module.
  - A backup of that id that exists already is kept as it is (C(changed=false)); a new id takes a new backup.
  - "O(action=restore): decrypts the backup C(keys-<cluster>-<backup_id>) and gives the Keystone of O(namespace) its
    fernet and credential keys back, through the keystone-operator's own path for new keys: the keys go on the staging
    Secret C(<keystone>-<kind>-keys-rotation) with the annotation C(cobaltcore.c5c3.io/rotation-completed-at), as a
    rotation Job's do; the operator validates them and copies them onto C(<keystone>-<kind>-keys). Waits until the
    production Secret holds them; a refusal of the operator (event C(RotationRejected) or C(RotationAnnotationInvalid))
    fails naming it. Keys that equal the backup's already are not touched. O(confirm) must name O(namespace)."
  - Everything is checked before anything is written - the input, the backup (it exists, the passphrase opens it, it
    holds the namespace's keys), the Keystone and its staging Secrets (none holds keys being applied); any problem
    fails naming all of them.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.operator_wait
  - c5c3.cobaltcore.progress
attributes:
  check_mode:
    description: Reads both clusters and reports what would be written; nothing is written and nothing is encrypted.
    support: full
  diff_mode:
    description: Not supported (the backups are encrypted; the values never leave the module).
    support: none
options:
  action:
    description: Take a backup, or restore a Keystone's keys from one.
    type: str
    choices: [backup, restore]
    default: backup
  keys:
    description: Which keys the cluster keeps - the Keystones' (the control-plane cluster) or Rook's (a storage pool).
      O(action=restore) restores Keystone keys only.
    type: str
    choices: [keystone, ceph]
    default: keystone
  cluster:
    description: The source cluster's inventory name; it names the backup (C(keys-<cluster>-<backup_id>)).
    type: str
    required: true
  backup_id:
    description: Names the backup (a lowercase DNS-1123 label, for example the database backup's id).
    type: str
    required: true
  settings:
    description: The inventory's C(cobaltcore_key_backup).
    type: dict
    required: true
    suboptions:
      passphrase:
        description:
          - Encrypts and opens the backups (at least 16 characters). Keep it in the inventory's vault, and a copy of
            it outside the region; without it no backup can be read.
        type: str
        required: true
      namespace:
        description: The namespace of the backups on the store cluster.
        type: str
        default: cobaltcore-backups
  store_kubeconfig:
    description: Kubeconfig of the cluster that keeps the backups (path or dict), the region's management cluster.
    type: raw
    required: true
  store_context:
    description: Context of O(store_kubeconfig); omitted, its current one.
    type: str
  namespace:
    description:
      - O(keys=ceph) - Rook's namespace on the storage pool (default C(rook-ceph)). O(action=restore) - the OpenStack
        cluster's namespace whose Keystone gets its keys back (required).
    type: str
  confirm:
    description: O(action=restore) - must equal O(namespace); the restore replaces that Keystone's keys.
    type: str
"""

EXAMPLES = r"""
- name: Back up the Keystones' keys of the control-plane cluster (backup db-2026-12-06)
  c5c3.cobaltcore.key_backup:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    cluster: "{{ inventory_hostname }}"
    keys: keystone
    backup_id: db-2026-12-06
    settings: "{{ cobaltcore_key_backup }}"
    store_kubeconfig: "{{ hostvars[groups['management'][0]].cobaltcore_kubeconfig }}"

- name: Back up a storage pool's Ceph keys
  c5c3.cobaltcore.key_backup:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    cluster: st-pool-a
    keys: ceph
    backup_id: db-2026-12-06
    settings: "{{ cobaltcore_key_backup }}"
    store_kubeconfig: "{{ hostvars[groups['management'][0]].cobaltcore_kubeconfig }}"

- name: Give a tenant's Keystone its keys of that backup back
  c5c3.cobaltcore.key_backup:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    action: restore
    cluster: "{{ inventory_hostname }}"
    backup_id: db-2026-12-06
    namespace: openstack-customer-a-prod
    confirm: openstack-customer-a-prod
    settings: "{{ cobaltcore_key_backup }}"
    store_kubeconfig: "{{ hostvars[groups['management'][0]].cobaltcore_kubeconfig }}"
"""

RETURN = r"""
backup:
  description: C(<store namespace>/<name>) of the backup's Secret on the store cluster.
  returned: always
  type: str
contents:
  description: What the backup holds, by name (C(Secret <namespace>/<name>, ...)).
  returned: when the backup exists or was taken
  type: str
result:
  description: C(created), or C(unchanged) (a backup of that id exists); for a restore C(restored) or C(unchanged).
  returned: always
  type: str
restored:
  description: O(action=restore) - the production Secrets whose keys were (or in check mode would be) put back.
  returned: always
  type: list
  elements: str
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

import base64

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps, vault_format
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import Applier
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import OPERATOR_WAIT_SPEC, KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import c5c3_api
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import key_backup
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import key_rotation
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.naming import ROOK_NAMESPACE


class KeyBackupModule(KubeModule):
    argument_spec = dict(
        action=dict(type="str", choices=["backup", "restore"], default="backup"),
        keys=dict(type="str", choices=list(key_backup.KINDS), default="keystone", no_log=False),
        cluster=dict(type="str", required=True),
        backup_id=dict(type="str", required=True),
        settings=dict(type="dict", required=True, options=dict(
            passphrase=dict(type="str", required=True, no_log=True),
            namespace=dict(type="str", default=key_backup.DEFAULT_NAMESPACE),
        )),
        store_kubeconfig=dict(type="raw", required=True, no_log=True),
        store_context=dict(type="str"),
        namespace=dict(type="str"),
        confirm=dict(type="str"),
        **OPERATOR_WAIT_SPEC
    )
    other_kubeconfigs = ("store_kubeconfig",)

    def run(self):
        params = self.params
        problems = key_backup.name_problems(params["cluster"], params["backup_id"])
        problems += key_backup.settings_problems(params["settings"])
        if params["action"] == "restore":
            if params["keys"] != "keystone":
                problems.append(problem("keys", "a restore gives Keystone keys back; Ceph's are restored with Rook's "
                                        "disaster-recovery guide (docs/backup.md)"))
            if not params["namespace"]:
                problems.append(problem("namespace", "the OpenStack cluster's namespace whose keys to restore is "
                                        "required"))
            elif params["confirm"] != params["namespace"]:
                problems.append(problem("confirm", "must be %s (the restore replaces its Keystone's keys), got %r"
                                        % (params["namespace"], params["confirm"])))
        if problems:
            raise InputError(problems)
        # The cluster's own API first: a connection that does not work fails before the store is read.
        self.secrets = self.client.resource("v1", "Secret")
        self.namespace = params["settings"]["namespace"]
        self.results["backup"] = "%s/%s" % (self.namespace,
                                            key_backup.secret_name(params["cluster"], params["backup_id"]))
        self.results["restored"] = []
        with self.other_client(params["store_kubeconfig"], params["store_context"]) as self.store:
            stored = self.store.get(self.store.resource("v1", "Secret"),
                                    key_backup.secret_name(params["cluster"], params["backup_id"]),
                                    self.namespace)
            if stored:
                self.results["contents"] = (stored["metadata"].get("annotations") or {}).get(
                    key_backup.CONTENTS_ANNOTATION, "")
            if params["action"] == "backup":
                self.backup(stored)
            else:
                self.restore(stored)

    # The backup.

    def backup(self, stored):
        params = self.params
        if stored:
            self.results["result"] = "unchanged"
            return
        objects = self.keystone_objects() if params["keys"] == "keystone" else self.ceph_objects()
        taken = timestamps.format_datetime()
        self.results["contents"] = key_backup.contents_line(objects)
        if self.check_mode:
            vaulttext = b""
        else:
            vaulttext = vault_format.encrypt(key_backup.document(params["cluster"], params["keys"], objects, taken),
                                             params["settings"]["passphrase"])
        manifests = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}},
            key_backup.store_secret(self.namespace, params["cluster"], params["keys"], params["backup_id"],
                                    vaulttext, objects, taken),
        ]
        applier = Applier(self.store, check_mode=self.check_mode)
        self.record(applier.apply(manifests), via="store_kubeconfig")
        self.results["result"] = "created"

    def keystone_objects(self):
        """The production key Secrets of every ControlPlane's Keystone; InputError naming each one missing."""
        problems, objects = [], []
        planes = c5c3_api.control_planes(self.client)
        if not planes:
            raise InputError([problem("keys", "the cluster has no ControlPlane, so no Keystone keys to back up")])
        for plane in planes:
            keystone = c5c3_api.keystone_of(self.client, plane)
            subject = c5c3_api.subject_of(plane)
            if keystone is None:
                problems.append(problem("keys", "ControlPlane %s has no Keystone CR yet" % subject))
                continue
            namespace, name = keystone["metadata"]["namespace"], keystone["metadata"]["name"]
            for secret_name in key_backup.keystone_secrets(name).values():
                live = self.client.get(self.secrets, secret_name, namespace)
                if live is None:
                    problems.append(problem("keys", "Keystone %s/%s has no Secret %s: the keystone-operator has not "
                                            "made its keys yet" % (namespace, name, secret_name)))
                    continue
                objects.append(key_backup.exported(dict(live, kind="Secret")))
        self.hide_secret_values(objects)
        if problems:
            raise InputError(problems)
        return objects

    def ceph_objects(self):
        """Rook's Secrets and mon endpoints of the namespace; InputError when Rook keeps none there."""
        namespace = self.params["namespace"] or ROOK_NAMESPACE
        found = self.client.list(self.secrets, namespace,
                                 field_selector="type=%s" % key_backup.ROOK_SECRET_TYPE)
        objects = [key_backup.exported(dict(s, kind="Secret")) for s in found]
        self.hide_secret_values(objects)
        configmaps = self.client.resource("v1", "ConfigMap")
        for name in key_backup.ROOK_CONFIGMAPS:
            live = self.client.get(configmaps, name, namespace)
            if live is not None:
                objects.append(key_backup.exported(dict(live, kind="ConfigMap")))
        if not any(o["kind"] == "Secret" and o["name"] == "rook-ceph-mon" for o in objects):
            raise InputError([problem("keys", "namespace %s has no Secret rook-ceph-mon: Rook has made no Ceph cluster "
                                      "there yet" % namespace)])
        return objects

    # The restore.

    def restore(self, stored):
        params = self.params
        namespace = params["namespace"]
        problems = []
        if stored is None:
            raise InputError([problem("backup_id", "no key backup %s: the store has no Secret %s" % (
                params["backup_id"], self.results["backup"]))])
        try:
            plaintext = vault_format.decrypt(base64.b64decode((stored.get("data") or {}).get(key_backup.DATA_KEY, "")),
                                             params["settings"]["passphrase"])
        except vault_format.VaultFormatError as error:
            raise InputError([problem("settings.passphrase", "the key backup %s cannot be read: %s" % (
                self.results["backup"], error))])
        backup = key_backup.parse(plaintext, self.results["backup"])
        self.hide_secret_values(backup["objects"])
        keystone = self.keystone_in(namespace)
        if keystone is None:
            raise InputError([problem("namespace", "no ControlPlane with a Keystone CR in namespace %s" % namespace)])
        wanted = key_backup.keystone_restores(backup, self.results["backup"], namespace, keystone)
        plan = []
        for kind, name, data in wanted:
            live = self.client.get(self.secrets, name, namespace)
            if live is not None and (live.get("data") or {}) == data:
                continue
            staging_name = key_rotation.staging_secret(keystone, kind)
            staging = self.client.get(self.secrets, staging_name, namespace)
            if staging is None:
                problems.append(problem("namespace", "Keystone %s/%s has no staging Secret %s: the keystone-operator "
                                        "has not set up its %s keys yet" % (namespace, keystone, staging_name, kind)))
            elif staging.get("data"):
                problems.append(problem("namespace", "the staging Secret %s/%s holds keys the keystone-operator has not "
                                        "applied yet (a rotation is under way); restore once it is done"
                                        % (namespace, staging_name)))
            plan.append((kind, name, staging_name, data))
        if problems:
            raise InputError(problems)
        self.results["restored"] = ["%s/%s" % (namespace, name) for unused, name, unused2, unused3 in plan]
        self.results["result"] = "restored" if plan else "unchanged"
        self.results["changed"] = bool(plan)
        if self.check_mode or not plan:
            return
        started = timestamps.format_datetime()
        for unused, unused2, staging_name, data in plan:
            self.client.request("PATCH", self.secrets.path(namespace, staging_name),
                                body=key_backup.staging_patch(data, started),
                                content_type="application/merge-patch+json")
        self.await_applied(namespace, keystone, plan, started)

    def keystone_in(self, namespace):
        for plane in c5c3_api.control_planes(self.client, namespace):
            keystone = c5c3_api.keystone_of(self.client, plane)
            if keystone is not None:
                return keystone["metadata"]["name"]
        return None

    def await_applied(self, namespace, keystone, plan, started):
        events_type = self.client.resource("v1", "Event")

        def attempt():
            waiting = [name for unused, name, unused2, data in plan
                       if ((self.client.get(self.secrets, name, namespace) or {}).get("data") or {}) != data]
            events = self.client.list(events_type, namespace, field_selector="involvedObject.kind=Keystone")
            mine = [e for e in events if (e.get("involvedObject") or {}).get("name") == keystone]
            refused = key_rotation.refusals(mine, [staging for unused, unused2, staging, unused3 in plan], started)
            if refused:
                raise WaitError("the keystone-operator refused the restored keys of Keystone %s/%s: %s"
                                % (namespace, keystone, "; ".join(refused)), [])
            offer(self.progress, lambda: "key restore %s: waiting for the keystone-operator to apply %s" % (
                self.results["backup"], ", ".join(waiting)))
            return not waiting, waiting

        done, waiting = poll(attempt, self.params["wait_timeout"], self.params["wait_sleep"])
        if not done:
            raise WaitError("the keystone-operator did not apply the restored keys within %ss: %s still differ from "
                            "the backup" % (self.params["wait_timeout"], ", ".join(waiting)), [])


def main():
    KeyBackupModule()()


if __name__ == "__main__":
    main()
