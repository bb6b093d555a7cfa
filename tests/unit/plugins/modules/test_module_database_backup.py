# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""database_backup and database_restore against a fake control-plane cluster with mariadb-operator's kinds."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import mariadb
from ansible_collections.c5c3.cobaltcore.plugins.modules import database_backup, database_restore

from module_harness import kube, kubeconfig, run_module  # noqa: F401  # pylint: disable=unused-import

GV = mariadb.API_VERSION
SETTINGS = {"storage": {"s3": {"bucket": "b", "endpoint": "s3.example.com"}}, "schedule": "0 2 * * *",
            "max_retention": "168h", "compression": "gzip"}


@pytest.fixture
def cluster(kube):
    for kind, plural in (("MariaDB", "mariadbs"), ("Backup", "backups"), ("Restore", "restores")):
        kube.kinds[(GV, kind)] = (plural, True)
    for namespace in ("openstack", "openstack-t"):
        kube.add({"apiVersion": GV, "kind": "MariaDB", "metadata": {
            "name": "mariadb", "namespace": namespace,
            "ownerReferences": [{"kind": "ControlPlane", "name": "cp", "controller": True}]}})
    kube.add({"apiVersion": GV, "kind": "MariaDB", "metadata": {"name": "other", "namespace": "apps"}})
    return kube


def backups(kube):
    return sorted((ns, name) for (v, k, ns, name) in kube.objects if k == "Backup")


def complete(kube, namespace, name, reason="JobComplete"):
    backup = kube.find(GV, "Backup", name, namespace)
    backup["status"] = {"conditions": [{"type": "Complete", "status": "True", "reason": reason,
                                        "message": "Success" if reason == "JobComplete" else "Failed"}]}


def run(module, **args):
    return run_module(module.main, dict(args, kubeconfig=kubeconfig()))


def test_the_schedule_gives_each_cluster_a_scheduled_backup_and_takes_it_away_without_one(cluster):
    result, unused = run(database_backup, settings=SETTINGS)
    assert result["changed"] and result["databases"] == ["openstack/mariadb", "openstack-t/mariadb"]
    assert backups(cluster) == [("openstack", "mariadb-scheduled"), ("openstack-t", "mariadb-scheduled")]
    assert cluster.find(GV, "Backup", "mariadb-scheduled", "openstack")["spec"]["schedule"] == {"cron": "0 2 * * *"}
    result, unused = run(database_backup, settings=SETTINGS)
    assert not result["changed"]
    result, unused = run(database_backup, settings=dict(SETTINGS, schedule=""))
    assert result["changed"] and sorted(result["deleted"]) == ["openstack-t/mariadb-scheduled",
                                                               "openstack/mariadb-scheduled"]
    assert backups(cluster) == []


def test_a_backup_taken_now_is_waited_for_and_a_failed_one_fails_naming_it(cluster):
    # Complete already (the same id again): nothing is written and the wait passes at once.
    for namespace in ("openstack", "openstack-t"):
        cluster.add(mariadb.backup_manifest(namespace, "mariadb", SETTINGS, "pre-2026-1"))
        complete(cluster, namespace, "mariadb-pre-2026-1")
    result, unused = run(database_backup, settings=SETTINGS, backup_id="pre-2026-1", wait_timeout=5, wait_sleep=1)
    assert not result.get("failed") and not result["changed"], result
    complete(cluster, "openstack-t", "mariadb-pre-2026-1", reason="JobFailed")
    result, unused = run(database_backup, settings=SETTINGS, backup_id="pre-2026-1", wait_timeout=5, wait_sleep=1)
    assert result["failed"] and "mariadb-pre-2026-1" in result["msg"] and "JobFailed" in result["msg"], result["msg"]


def test_bad_settings_write_nothing(cluster):
    result, unused = run(database_backup, settings={"storage": {}}, backup_id="Bad_Id")
    assert result["failed"] and "cobaltcore_database_backup.storage" in result["msg"] and "backup_id" in result["msg"]
    assert backups(cluster) == []


def test_a_restore_needs_the_confirmation_and_a_complete_backup(cluster):
    cluster.add(mariadb.backup_manifest("openstack-t", "mariadb", SETTINGS, "b1"))
    result, unused = run(database_restore, namespace="openstack-t", backup="b1", confirm="openstack")
    assert result["failed"] and "confirm: must be openstack-t" in result["msg"]
    result, unused = run(database_restore, namespace="openstack-t", backup="mariadb-b1", confirm="openstack-t")
    assert result["failed"] and "is not a complete backup" in result["msg"]
    result, unused = run(database_restore, namespace="openstack-t", backup="nope", confirm="openstack-t")
    assert result["failed"] and "no Backup nope in namespace openstack-t" in result["msg"]
    assert not [k for k in cluster.objects if k[1] == "Restore"]
    complete(cluster, "openstack-t", "mariadb-b1")
    result, unused = run(database_restore, namespace="openstack-t", backup="mariadb-b1", confirm="openstack-t",
                         wait=False)
    assert result["changed"] and result["restore"] == {"namespace": "openstack-t", "name": "mariadb-b1-restore",
                                                       "result": "created"}
    restore = cluster.find(GV, "Restore", "mariadb-b1-restore", "openstack-t")
    assert restore["spec"] == {"mariaDbRef": {"name": "mariadb"}, "backupRef": {"name": "mariadb-b1"}}
