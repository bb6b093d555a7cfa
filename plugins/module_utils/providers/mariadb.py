# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mariadb-operator v0.38.1 (k8s.mariadb.com/v1alpha1): backups and restores of the OpenStack clusters' databases.

Each OpenStack cluster's MariaDB is the one its ControlPlane controls (the c5c3-operator names it after the
ControlPlane's database clusterRef). A Backup without spec.schedule is one Job of the Backup's name, with it a
CronJob; a Restore is one Job (mariadb-operator pkg/controller/batch). Their only status is the condition Complete
(pkg/condition/complete.go), which the engine's readiness table reads (k8s/readiness.py). Field names as the v0.38.1
CRDs define them. Pure Python.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.timestamps import duration_seconds
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming

API_VERSION = "k8s.mariadb.com/v1alpha1"
# Backup.spec.storage: exactly one (the webhook's BackupStorage.Validate).
STORAGE_KINDS = ("s3", "persistentVolumeClaim", "volume")
COMPRESSIONS = ("none", "bzip2", "gzip")
# What the collection's Backups are, on their label: the inventory's schedule, or one taken on demand.
PURPOSE_LABEL = "c5c3.io/backup"
SCHEDULED, ON_DEMAND = "scheduled", "on-demand"
SCHEDULED_SUFFIX = "-scheduled"
RESTORE_SUFFIX = "-restore"
# A Job's name goes into its pods' job-name label: at most 63 characters.
MAX_NAME = 63
FIELD = "cobaltcore_database_backup"


def run_record(obj):
    """Whether a live object is one a run made and no inventory declares: an on-demand Backup (backup.yml -e
    backup_id, upgrade.yml's pre-release backup) or a Restore (restore.yml)."""
    if (obj.get("apiVersion") or "").partition("/")[0] != API_VERSION.partition("/")[0]:
        return False
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return obj.get("kind") == "Restore" or (obj.get("kind") == "Backup" and labels.get(PURPOSE_LABEL) == ON_DEMAND)


def settings_problems(settings, field=FIELD):
    """Every problem of the backup settings: storage (exactly one of STORAGE_KINDS, as a mapping), schedule (a
    five-field cron expression), max_retention (a duration), compression, backoff_limit."""
    if not isinstance(settings, dict):
        return [problem(field, "must be a mapping, got %r" % (settings,))]
    problems = []
    storage = settings.get("storage")
    kinds = sorted(k for k in (storage or {}) if k in STORAGE_KINDS) if isinstance(storage, dict) else []
    if len(kinds) != 1 or len(storage) != 1 or not isinstance(storage[kinds[0]], dict):
        problems.append(problem(field + ".storage", "must hold exactly one of %s, as a mapping (mariadb-operator's "
                                "Backup spec.storage), got %r" % (", ".join(STORAGE_KINDS), storage)))
    elif kinds == ["s3"] and not all(storage["s3"].get(k) for k in ("bucket", "endpoint")):
        problems.append(problem(field + ".storage.s3", "needs bucket and endpoint"))
    schedule = settings.get("schedule")
    if schedule not in (None, "") and (not isinstance(schedule, str) or len(schedule.split()) != 5):
        problems.append(problem(field + ".schedule", "must be a cron expression of five fields, got %r" % (schedule,)))
    retention = settings.get("max_retention")
    if retention is not None and not duration_seconds(retention):
        problems.append(problem(field + ".max_retention", "must be a duration (e.g. 720h), got %r" % (retention,)))
    if settings.get("compression", "none") not in COMPRESSIONS:
        problems.append(problem(field + ".compression", "must be one of %s, got %r"
                                % (", ".join(COMPRESSIONS), settings.get("compression"))))
    limit = settings.get("backoff_limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        problems.append(problem(field + ".backoff_limit", "must be a whole number >= 0, got %r" % (limit,)))
    unknown = sorted(set(settings) - {"storage", "schedule", "max_retention", "compression", "backoff_limit"})
    if unknown:
        problems.append(problem(field, "unknown keys %s" % ", ".join(unknown)))
    return problems


def databases(mariadbs, namespaces=None):
    """[(namespace, MariaDB name)] of the MariaDBs a ControlPlane controls (the OpenStack clusters' own databases),
    sorted; namespaces, when given, keeps only those."""
    found = []
    for obj in mariadbs:
        meta = obj.get("metadata") or {}
        owner = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
        if owner is None or owner.get("kind") != naming.CONTROL_PLANE_KIND:
            continue
        if namespaces is None or meta.get("namespace") in namespaces:
            found.append((meta.get("namespace"), meta.get("name")))
    return sorted(found)


def backup_name(mariadb, backup_id=None):
    """<mariadb>-scheduled for the inventory's schedule, <mariadb>-<backup_id> for one taken on demand."""
    return mariadb + (SCHEDULED_SUFFIX if backup_id is None else "-" + backup_id)


def name_problems(names, field):
    return [problem(field, "%r would name a Backup %s, which is not a DNS-1123 label of at most %d characters"
                    % (value, name, MAX_NAME)) for value, name in names
            if not kube_names.is_dns1123_label(name) or len(name) > MAX_NAME]


def backup_manifest(namespace, mariadb, settings, backup_id=None):
    """The Backup of one MariaDB: scheduled (backup_id None; the settings' schedule) or one taken now."""
    spec = {"mariaDbRef": {"name": mariadb}, "storage": dict(settings["storage"]),
            "compression": settings.get("compression") or "none"}
    if settings.get("max_retention"):
        spec["maxRetention"] = settings["max_retention"]
    if settings.get("backoff_limit") is not None:
        spec["backoffLimit"] = settings["backoff_limit"]
    if backup_id is None:
        spec["schedule"] = {"cron": settings["schedule"]}
    labels = {naming.MANAGED_BY_LABEL: naming.MANAGED_BY, PURPOSE_LABEL: SCHEDULED if backup_id is None else ON_DEMAND}
    return {"apiVersion": API_VERSION, "kind": "Backup",
            "metadata": {"name": backup_name(mariadb, backup_id), "namespace": namespace, "labels": labels},
            "spec": spec}


def restore_manifest(namespace, mariadb, backup):
    """The Restore of one MariaDB from one of its Backups (backupRef: the Backup's storage and its latest dump)."""
    return {"apiVersion": API_VERSION, "kind": "Restore",
            "metadata": {"name": backup + RESTORE_SUFFIX, "namespace": namespace,
                         "labels": {naming.MANAGED_BY_LABEL: naming.MANAGED_BY}},
            "spec": {"mariaDbRef": {"name": mariadb}, "backupRef": {"name": backup}}}


def scheduled_plan(mariadbs, settings, existing):
    """(Backups to apply, Backups to delete) for the inventory's schedule: one scheduled Backup per OpenStack cluster
    with a schedule, none without; existing are the collection's scheduled Backups found (deleted when unwanted).
    Raises InputError naming every problem of the settings."""
    problems = settings_problems(settings) if settings else []
    wanted = []
    if settings and settings.get("schedule") and not problems:
        names = [(mariadb, backup_name(mariadb)) for unused, mariadb in mariadbs]
        problems.extend(name_problems(names, FIELD))
        wanted = [backup_manifest(namespace, mariadb, settings) for namespace, mariadb in mariadbs]
    if problems:
        raise InputError(problems)
    keep = set((m["metadata"]["namespace"], m["metadata"]["name"]) for m in wanted)
    unwanted = [{"apiVersion": API_VERSION, "kind": "Backup",
                 "metadata": {"name": o["metadata"]["name"], "namespace": o["metadata"]["namespace"]}}
                for o in existing if (o["metadata"]["namespace"], o["metadata"]["name"]) not in keep]
    return wanted, unwanted


def on_demand_plan(mariadbs, settings, backup_id):
    """The Backups to take now, one per MariaDB, named <mariadb>-<backup_id>. Raises InputError naming every problem."""
    problems = settings_problems(settings)
    if not isinstance(backup_id, str) or not kube_names.is_dns1123_label(backup_id):
        problems.append(problem("backup_id", "must be a DNS-1123 label (e.g. a change ticket), got %r" % (backup_id,)))
    elif not problems:
        problems.extend(name_problems([(backup_id, backup_name(m, backup_id)) for unused, m in mariadbs], "backup_id"))
    if problems:
        raise InputError(problems)
    return [backup_manifest(namespace, mariadb, settings, backup_id) for namespace, mariadb in mariadbs]
