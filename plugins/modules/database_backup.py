#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: database_backup
short_description: Back up the OpenStack clusters' databases (mariadb-operator Backups), on a schedule or now
version_added: 0.6.0
description:
  - The OpenStack clusters of the control-plane cluster are the MariaDBs (C(k8s.mariadb.com/v1alpha1)) a ControlPlane
    controls - the region's and every tenant's; O(namespaces) keeps some of them.
  - Without O(backup_id) - each gets the scheduled Backup C(<mariadb>-scheduled) with O(settings) (a CronJob of
    mariadb-operator's), or none when O(settings) has no C(schedule); the collection's scheduled Backups that are no
    longer wanted (label C(c5c3.io/backup=scheduled)) are deleted.
  - With O(backup_id) - each gets the Backup C(<mariadb>-<backup_id>) now, and with O(wait) the module waits until
    every one is complete (the engine's rule - condition C(Complete) with reason C(JobComplete)); a failed one
    (C(JobFailed)) fails the module at once, naming it. The same id again finds them complete and writes nothing.
  - The settings are checked before anything is written; every problem is named in one message.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.operator_wait
attributes:
  check_mode:
    description: Reads the MariaDBs and Backups and sends the writes as server-side dry runs; nothing is written.
    support: full
  diff_mode:
    description: The Backups' fields before and after.
    support: full
options:
  settings:
    description:
      - The inventory's C(cobaltcore_database_backup) - C(storage) (exactly one of C(s3), C(persistentVolumeClaim),
        C(volume), as mariadb-operator's Backup C(spec.storage)), C(schedule) (a cron expression), C(max_retention)
        (a duration, e.g. C(720h)), C(compression) (C(none), C(bzip2), C(gzip)), C(backoff_limit).
    type: dict
    required: true
  backup_id:
    description: Take a Backup of each database now, named C(<mariadb>-<backup_id>) (a DNS-1123 label).
    type: str
  namespaces:
    description: Only the OpenStack clusters in these namespaces (default - every one).
    type: list
    elements: str
  wait:
    description: With O(backup_id), wait until every Backup is complete.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Back up every OpenStack cluster's database before the release step
  c5c3.cobaltcore.database_backup:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    settings: "{{ cobaltcore_database_backup }}"
    backup_id: pre-2026-1
"""

RETURN = r"""
backups:
  description: The Backups applied, each C({namespace, name, result}).
  returned: always
  type: list
  elements: dict
deleted:
  description: The scheduled Backups deleted (C(<namespace>/<name>)).
  returned: always
  type: list
  elements: str
databases:
  description: The OpenStack clusters' databases found (C(<namespace>/<name>)).
  returned: always
  type: list
  elements: str
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import ref_of
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import OPERATOR_WAIT_SPEC, KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import mariadb


class DatabaseBackupModule(KubeModule):
    argument_spec = dict(
        settings=dict(type="dict", required=True),
        backup_id=dict(type="str"),
        namespaces=dict(type="list", elements="str"),
        wait=dict(type="bool", default=True),
        **OPERATOR_WAIT_SPEC
    )

    def run(self):
        settings, backup_id = self.params["settings"], self.params["backup_id"]
        found = mariadb.databases(self.objects("MariaDB"), self.params["namespaces"])
        self.results["databases"] = ["%s/%s" % entry for entry in found]
        if backup_id is None:
            existing = self.objects("Backup", label_selector="%s=%s" % (mariadb.PURPOSE_LABEL, mariadb.SCHEDULED))
            if self.params["namespaces"] is not None:
                existing = [o for o in existing if o["metadata"]["namespace"] in self.params["namespaces"]]
            wanted, unwanted = mariadb.scheduled_plan(found, settings, existing)
        else:
            wanted, unwanted = mariadb.on_demand_plan(found, settings, backup_id), []
        applier = self.applier()
        applied = self.record(applier.apply(wanted)) if wanted else []
        removed = self.record(applier.remove(unwanted)) if unwanted else []
        self.results["backups"] = [{"namespace": r["namespace"], "name": r["name"], "result": r["result"]}
                                   for r in applied]
        self.results["deleted"] = ["%s/%s" % (r["namespace"], r["name"]) for r in removed if r["result"] == "deleted"]
        if backup_id is not None and self.params["wait"] and not self.check_mode and wanted:
            Waiter(self.client, sleep=self.params["wait_sleep"], progress=self.progress).wait(
                [ref_of(m) for m in wanted], self.params["wait_timeout"])

    def objects(self, kind, **query):
        """Every object of a mariadb-operator kind; none while its CRD is not served (no MariaDB can exist then: a
        region before phase 3, in check mode)."""
        try:
            rtype = self.client.resource(mariadb.API_VERSION, kind)
        except KubeError as exc:
            if exc.status != 404:
                raise
            return []
        return self.client.list(rtype, **query)


def main():
    DatabaseBackupModule()()


if __name__ == "__main__":
    main()
