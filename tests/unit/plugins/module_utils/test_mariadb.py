# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OpenStack clusters' database backups and restores as mariadb-operator v0.38.1 takes them."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import mariadb

S3 = {"s3": {"bucket": "backups", "endpoint": "s3.example.com", "prefix": "eu-de-1"}}
SETTINGS = {"storage": S3, "schedule": "0 2 * * *", "max_retention": "720h", "compression": "gzip"}


def owned(namespace, name, kind="ControlPlane"):
    return {"metadata": {"namespace": namespace, "name": name,
                         "ownerReferences": [{"kind": kind, "name": "x", "controller": True}]}}


MARIADBS = [owned("openstack-t", "mariadb"), owned("openstack", "mariadb"),
            {"metadata": {"namespace": "other", "name": "standalone"}}, owned("app", "db", kind="Deployment")]


def test_the_databases_are_the_mariadbs_a_control_plane_controls():
    assert mariadb.databases(MARIADBS) == [("openstack", "mariadb"), ("openstack-t", "mariadb")]
    assert mariadb.databases(MARIADBS, namespaces=["openstack-t"]) == [("openstack-t", "mariadb")]


def test_a_scheduled_backup_per_cluster_and_the_unwanted_ones_deleted():
    dbs = mariadb.databases(MARIADBS)
    existing = [{"metadata": {"namespace": "openstack-gone", "name": "mariadb-scheduled"}},
                {"metadata": {"namespace": "openstack", "name": "mariadb-scheduled"}}]
    wanted, unwanted = mariadb.scheduled_plan(dbs, SETTINGS, existing)
    assert [(m["metadata"]["namespace"], m["metadata"]["name"]) for m in wanted] == [
        ("openstack", "mariadb-scheduled"), ("openstack-t", "mariadb-scheduled")]
    assert wanted[0]["spec"] == {"mariaDbRef": {"name": "mariadb"}, "storage": S3, "compression": "gzip",
                                 "maxRetention": "720h", "schedule": {"cron": "0 2 * * *"}}
    assert wanted[0]["metadata"]["labels"]["c5c3.io/backup"] == "scheduled"
    assert [(m["metadata"]["namespace"], m["metadata"]["name"]) for m in unwanted] == [
        ("openstack-gone", "mariadb-scheduled")]
    # No schedule (or no settings): every scheduled Backup of the collection goes.
    for settings in (dict(SETTINGS, schedule=""), {}):
        wanted, unwanted = mariadb.scheduled_plan(dbs, settings, existing)
        assert wanted == [] and len(unwanted) == 2


def test_an_on_demand_backup_per_cluster_without_a_schedule():
    backups = mariadb.on_demand_plan(mariadb.databases(MARIADBS), dict(SETTINGS, backoff_limit=0), "pre-2026-1")
    assert [b["metadata"]["name"] for b in backups] == ["mariadb-pre-2026-1", "mariadb-pre-2026-1"]
    assert "schedule" not in backups[0]["spec"] and backups[0]["spec"]["backoffLimit"] == 0
    assert backups[0]["metadata"]["labels"]["c5c3.io/backup"] == "on-demand"


def test_a_restore_names_its_backup():
    restore = mariadb.restore_manifest("openstack", "mariadb", "mariadb-pre-2026-1")
    assert restore["metadata"]["name"] == "mariadb-pre-2026-1-restore"
    assert restore["spec"] == {"mariaDbRef": {"name": "mariadb"}, "backupRef": {"name": "mariadb-pre-2026-1"}}


@pytest.mark.parametrize("settings, fields", [
    ({"storage": {}}, ["cobaltcore_database_backup.storage"]),
    ({"storage": dict(S3, volume={"emptyDir": {}})}, ["cobaltcore_database_backup.storage"]),
    ({"storage": {"s3": {"bucket": "b"}}}, ["cobaltcore_database_backup.storage.s3"]),
    ({"storage": S3, "schedule": "daily", "max_retention": "30 days", "compression": "zip", "backoff_limit": -1,
      "retention": 3}, ["cobaltcore_database_backup.schedule", "cobaltcore_database_backup.max_retention",
                        "cobaltcore_database_backup.compression", "cobaltcore_database_backup.backoff_limit",
                        "cobaltcore_database_backup: unknown keys retention"]),
    ("s3", ["cobaltcore_database_backup: must be a mapping"]),
])
def test_bad_settings_are_refused_naming_every_field(settings, fields):
    with pytest.raises(InputError) as error:
        mariadb.on_demand_plan(mariadb.databases(MARIADBS), settings, "b1")
    for field in fields:
        assert field in str(error.value)


def test_a_backup_id_that_cannot_name_a_backup_is_refused():
    for backup_id in ("Pre_Upgrade", "x" * 60, ""):
        with pytest.raises(InputError) as error:
            mariadb.on_demand_plan(mariadb.databases(MARIADBS), SETTINGS, backup_id)
        assert "backup_id" in str(error.value)
