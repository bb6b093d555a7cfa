#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: database_restore
short_description: Restore an OpenStack cluster's database from one of its Backups (a mariadb-operator Restore)
version_added: 0.6.0
description:
  - Creates the Restore C(<backup>-restore) (C(k8s.mariadb.com/v1alpha1)) of the MariaDB the Backup O(backup) of
    namespace O(namespace) names, from that Backup (C(backupRef) - its storage and its latest dump), and with O(wait)
    waits until mariadb-operator reports it complete (condition C(Complete), reason C(JobComplete)); a failed one
    (C(JobFailed)) fails the module, naming it.
  - Refused before anything is written unless O(confirm) is O(namespace), the Backup exists, is complete (not
    failed, not running) and names a MariaDB that exists.
  - A Restore of that name that is complete already is not run again (C(changed=false)); delete it to restore from
    the same Backup again.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.operator_wait
attributes:
  check_mode:
    description: Checks the Backup and sends the Restore as a server-side dry run; nothing is written.
    support: full
  diff_mode:
    description: The Restore's fields before and after.
    support: full
options:
  namespace:
    description: The OpenStack cluster's namespace (C(openstack) for the region's, C(openstack-<name>) for a tenant's).
    type: str
    required: true
  backup:
    description: The Backup to restore from, in O(namespace).
    type: str
    required: true
  confirm:
    description: The namespace again; the restore overwrites the cluster's databases.
    type: str
    required: true
  wait:
    description: Wait until the Restore is complete.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Restore the tenant's database from the backup taken before the upgrade
  c5c3.cobaltcore.database_restore:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    namespace: openstack-customer-a-prod
    backup: mariadb-pre-2026-1
    confirm: openstack-customer-a-prod
"""

RETURN = r"""
restore:
  description: The Restore, C({namespace, name, result}).
  returned: always
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import readiness
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import ref_of
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import OPERATOR_WAIT_SPEC, KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import mariadb


class DatabaseRestoreModule(KubeModule):
    argument_spec = dict(
        namespace=dict(type="str", required=True),
        backup=dict(type="str", required=True),
        confirm=dict(type="str", required=True),
        wait=dict(type="bool", default=True),
        **OPERATOR_WAIT_SPEC
    )

    def run(self):
        namespace, name = self.params["namespace"], self.params["backup"]
        if self.params["confirm"] != namespace:
            raise InputError([problem("confirm", "must be %s (the namespace whose databases the restore overwrites), "
                                      "got %r" % (namespace, self.params["confirm"]))])
        backup = self.client.get(self.client.resource(mariadb.API_VERSION, "Backup"), name, namespace)
        if backup is None:
            raise InputError([problem("backup", "no Backup %s in namespace %s" % (name, namespace))])
        verdict = readiness.evaluate(backup)
        if not verdict.ready:
            raise InputError([problem("backup", "Backup %s/%s is not a complete backup: %s"
                                      % (namespace, name, "; ".join(verdict.missing)))])
        database = ((backup.get("spec") or {}).get("mariaDbRef") or {}).get("name")
        if self.client.get(self.client.resource(mariadb.API_VERSION, "MariaDB"), database, namespace) is None:
            raise InputError([problem("backup", "Backup %s/%s names MariaDB %s, which does not exist"
                                      % (namespace, name, database))])
        restore = mariadb.restore_manifest(namespace, database, name)
        (result,) = self.record(self.applier().apply([restore]))
        self.results["restore"] = {"namespace": namespace, "name": result["name"], "result": result["result"]}
        if self.params["wait"] and not self.check_mode:
            Waiter(self.client, sleep=self.params["wait_sleep"], progress=self.progress).wait(
                [ref_of(restore)], self.params["wait_timeout"])


def main():
    DatabaseRestoreModule()()


if __name__ == "__main__":
    main()
