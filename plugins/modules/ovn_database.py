#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: ovn_database
short_description: Back up the region's OVN databases now or on a schedule, or restore the Northbound one, with ovsdb-client in a Job
version_added: 0.6.0
description:
  - The OVN databases are reachable only inside the control-plane cluster, at the endpoints the OVNCluster publishes
    (C(status.endpoints)). The module runs C(ovsdb-client) there, as a Job in the OVNCluster's namespace, with the
    image and the volume of O(settings).
  - O(action=backup) - the Job C(ovn-backup-<backup_id>) writes C(ovsdb-client backup) of C(OVN_Northbound) and
    C(OVN_Southbound) to C(<backup_id>/nb.db) and C(<backup_id>/sb.db) on the volume. With the C(persistentVolumeClaim)
    storage the module also applies the claim C(ovn-database-backups).
  - O(action=schedule) - with C(schedule) in O(settings), applies the CronJob C(ovn-backup-scheduled), which makes
    the backup Job on that schedule. Its Jobs are named C(ovn-backup-scheduled-<n>), so their backup ids are
    C(scheduled-<n>), restored like any other. Each keeps the newest C(keep) (default 7) scheduled backups on the
    volume and removes the older ones; backups taken on demand stay. Without C(schedule) the CronJob is deleted
    if it exists. Takes no O(backup_id).
  - O(action=restore) - refused unless the backup's Job completed; the Job C(ovn-restore-<backup_id>) replaces the
    Northbound database's contents with C(<backup_id>/nb.db) (C(ovsdb-client restore), one transaction). The
    Southbound database is not restored - ovn-northd computes it from the Northbound one. O(confirm) must name the
    namespace again.
  - A Job of that name that exists already is not made again - a complete one reports C(changed=false), a failed one
    fails the module naming it (delete it to run it again), a running one is waited for. With O(wait) the module
    waits until the Job is complete; a failed Job fails it at once.
  - Every problem of the settings and the id is named in one message before anything is written.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.operator_wait
  - c5c3.cobaltcore.progress
attributes:
  check_mode:
    description: Reads the OVNCluster and the Jobs and sends the writes as server-side dry runs; nothing is written.
    support: full
  diff_mode:
    description: Not supported.
    support: none
options:
  action:
    description: Take a backup, keep the scheduled backups as O(settings) says, or restore the Northbound database from one.
    type: str
    choices: [backup, schedule, restore]
    required: true
  backup_id:
    description:
      - The backup's id - a DNS-1123 label of at most 51 characters (e.g. a change ticket). Required with
        O(action=backup) and O(action=restore).
    type: str
  settings:
    description:
      - The inventory's C(cobaltcore_ovn_backup) - C(image) (an image with C(ovsdb-client), e.g. the OVN image the
        region runs), C(storage) (exactly one of C(persistentVolumeClaim), the claim's spec, or C(volume), a volume
        source such as C(nfs)), C(pod_annotations), C(backoff_limit) (default 2), C(schedule) (a cron schedule of
        the scheduled backups) and C(keep) (how many scheduled backups stay, default 7).
    type: dict
    required: true
  confirm:
    description: With O(action=restore), the namespace again (the restore overwrites its Northbound database).
    type: str
  namespace:
    description: The OVNCluster's namespace, where the Jobs run.
    type: str
    default: ovn-system
  name:
    description: The OVNCluster's name.
    type: str
    default: ovn
  wait:
    description: Wait until the Job is complete.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Back up the OVN databases before the change
  c5c3.cobaltcore.ovn_database:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    action: backup
    backup_id: chg-4711
    settings: "{{ cobaltcore_ovn_backup }}"

- name: Keep the scheduled backups as the inventory says (cobaltcore_ovn_backup.schedule, keep)
  c5c3.cobaltcore.ovn_database:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    action: schedule
    settings: "{{ cobaltcore_ovn_backup }}"

- name: Restore the Northbound database from that backup
  c5c3.cobaltcore.ovn_database:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    action: restore
    backup_id: chg-4711
    confirm: ovn-system
    settings: "{{ cobaltcore_ovn_backup }}"
"""

RETURN = r"""
job:
  description: The Job, C({namespace, name, result}); C(result) is the apply's, or C(exists) for one made before.
  returned: with O(action=backup) and O(action=restore)
  type: dict
cron_job:
  description: The CronJob, C({namespace, name, result}); C(result) is the apply's, or C(absent) without a schedule.
  returned: with O(action=schedule)
  type: dict
files:
  description: The backup's files on the volume (relative to it).
  returned: with O(action=backup) and O(action=restore)
  type: list
  elements: str
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import drift, readiness
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import ref_of
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import OPERATOR_WAIT_SPEC, KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError, Waiter
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ovn_api, ovn_backup


class OvnDatabaseModule(KubeModule):
    argument_spec = dict(
        action=dict(type="str", required=True, choices=[ovn_backup.BACKUP, ovn_backup.SCHEDULE, ovn_backup.RESTORE]),
        backup_id=dict(type="str"),
        settings=dict(type="dict", required=True),
        confirm=dict(type="str"),
        namespace=dict(type="str", default="ovn-system"),
        name=dict(type="str", default="ovn"),
        wait=dict(type="bool", default=True),
        **OPERATOR_WAIT_SPEC
    )

    module_kwargs = dict(required_if=[("action", ovn_backup.BACKUP, ("backup_id",)),
                                      ("action", ovn_backup.RESTORE, ("backup_id",))])

    def run(self):
        action, backup_id, settings = self.params["action"], self.params["backup_id"], self.params["settings"]
        namespace = self.params["namespace"]
        if action == ovn_backup.SCHEDULE:
            return self.schedule(namespace, settings)
        ovn_backup.check(settings, backup_id)
        if action == ovn_backup.RESTORE and self.params["confirm"] != namespace:
            raise InputError([problem("confirm", "must be %s (the namespace whose Northbound database the restore "
                                      "overwrites), got %r" % (namespace, self.params["confirm"]))])
        where = "OVNCluster %s/%s" % (namespace, self.params["name"])
        endpoints = ovn_backup.remotes(ovn_api.ovn_cluster(self.client, self.params["name"], namespace), where)
        jobs = self.client.resource("batch/v1", "Job")
        self.results["files"] = ovn_backup.files(backup_id)
        if action == ovn_backup.RESTORE:
            self.require_backup(jobs, namespace, backup_id)
        job = ovn_backup.job_manifest(action, namespace, backup_id, settings, endpoints)
        name = job["metadata"]["name"]
        existing = self.client.get(jobs, name, namespace)
        if existing is None:
            claim = ovn_backup.claim_manifest(namespace, settings) if action == ovn_backup.BACKUP else None
            results = self.record(self.applier().apply([m for m in (claim, job) if m is not None]))
            result = results[-1]["result"]
        else:
            verdict = readiness.evaluate(existing)
            if verdict.terminal:
                raise WaitError("Job %s/%s failed: %s; delete it to run the %s %s again"
                                % (namespace, name, "; ".join(verdict.missing), action, backup_id), [])
            result = "exists"
        self.results["job"] = {"namespace": namespace, "name": name, "result": result}
        if self.params["wait"] and not self.check_mode:
            Waiter(self.client, sleep=self.params["wait_sleep"], progress=self.progress).wait(
                [ref_of(job)], self.params["wait_timeout"])

    def schedule(self, namespace, settings):
        ovn_backup.check(settings)
        cron_jobs = self.client.resource("batch/v1", "CronJob")
        ref = {"namespace": namespace, "name": ovn_backup.CRON_JOB}
        if not settings.get("schedule"):
            existing = self.client.get(cron_jobs, ovn_backup.CRON_JOB, namespace)
            if existing is None or not drift.owned(existing):
                self.results["cron_job"] = dict(ref, result="absent")
                return
            results = self.record(self.applier().remove([existing]))
            self.results["cron_job"] = dict(ref, result=results[0]["result"])
            return
        where = "OVNCluster %s/%s" % (namespace, self.params["name"])
        endpoints = ovn_backup.remotes(ovn_api.ovn_cluster(self.client, self.params["name"], namespace), where)
        claim = ovn_backup.claim_manifest(namespace, settings)
        results = self.record(self.applier(force_conflicts=True).apply(
            [m for m in (claim, ovn_backup.cron_job_manifest(namespace, settings, endpoints)) if m is not None]))
        self.results["cron_job"] = dict(ref, result=results[-1]["result"])

    def require_backup(self, jobs, namespace, backup_id):
        name = ovn_backup.job_name(ovn_backup.BACKUP, backup_id)
        backup = self.client.get(jobs, name, namespace)
        if backup is None:
            raise InputError([problem("backup_id", "no OVN backup %s: no Job %s/%s" % (backup_id, namespace, name))])
        verdict = readiness.evaluate(backup)
        if not verdict.ready:
            raise InputError([problem("backup_id", "OVN backup %s is not complete (Job %s/%s: %s)"
                                      % (backup_id, namespace, name, "; ".join(verdict.missing)))])


def main():
    OvnDatabaseModule()()


if __name__ == "__main__":
    main()
