# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Backups of the region's OVN databases, and the restore of the Northbound one (pure Python).

The databases are reachable only inside the control-plane cluster, at the endpoints the OVNCluster publishes
(status.endpoints.northbound / .southbound, OVSDB remotes such as tcp:ovn-nb.ovn-system.svc.cluster.local:6641).
So each backup and each restore is a Job there, in the OVNCluster's namespace, whose container runs
`ovsdb-client`:

- backup <id>: `ovsdb-client backup` of OVN_Northbound and OVN_Southbound into <volume>/<id>/nb.db and sb.db (a
  standalone database file each, written under a temporary name and then renamed, so a file there is whole);
- restore <id>: `ovsdb-client restore` of <volume>/<id>/nb.db into OVN_Northbound, one transaction that replaces
  the database's contents (the rows get new UUIDs). The Southbound database is not restored: ovn-northd computes it
  from the Northbound one, and the chassis register themselves again.

The backups live on a volume: a PersistentVolumeClaim the collection creates (storage.persistentVolumeClaim, its
spec), or a volume source of the operator's (storage.volume, e.g. NFS). The Jobs are the record of each backup:
restore.yml restores only from a backup whose Job completed.

Scheduled backups (settings.schedule, a cron schedule): the CronJob ovn-backup-scheduled makes the same Job on
schedule. Its Jobs are named ovn-backup-scheduled-<n> by the CronJob controller, so each one's backup id is
scheduled-<n> (read from the pod's job-name label), and restore.yml takes it like any other. After its backup a
scheduled Job removes the oldest scheduled backups beyond settings.keep; backups taken on demand are never removed.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming

FIELD = "cobaltcore_ovn_backup"
STORAGE_KINDS = ("persistentVolumeClaim", "volume")
CLAIM = "ovn-database-backups"
MOUNT_PATH = "/backups"
BACKUP, RESTORE = "backup", "restore"
ID_LABEL = "c5c3.io/ovn-backup"
DATABASES = (("nb", "northbound", "OVN_Northbound"), ("sb", "southbound", "OVN_Southbound"))
# A Job's name goes into its pods' job-name label: at most 63 characters.
MAX_ID = 63 - len("ovn-restore-")
DEFAULT_BACKOFF_LIMIT = 2
SCHEDULE = "schedule"
SCHEDULED = "scheduled"
CRON_JOB = "ovn-backup-" + SCHEDULED
DEFAULT_KEEP = 7
_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")

_BACKUP_LINES = [
    'dir="$BACKUP_DIR/$BACKUP_ID"',
    'mkdir -p "$dir"',
    'ovsdb-client backup "$OVN_NB_REMOTE" OVN_Northbound > "$dir/nb.db.part"',
    'ovsdb-client backup "$OVN_SB_REMOTE" OVN_Southbound > "$dir/sb.db.part"',
    'mv "$dir/nb.db.part" "$dir/nb.db"',
    'mv "$dir/sb.db.part" "$dir/sb.db"',
]
SCRIPTS = {
    BACKUP: "\n".join(_BACKUP_LINES + ['ls -l "$dir"']),
    # A scheduled Job's id is its name's (ovn-backup-scheduled-<n>); the newest KEEP scheduled backups stay (by
    # modification time; an on-demand backup is never named so).
    SCHEDULED: "\n".join(['BACKUP_ID="${JOB_NAME#ovn-backup-}"'] + _BACKUP_LINES + [
        'ls -1dt "$BACKUP_DIR"/%s-*/ | tail -n +$((KEEP + 1)) | while read -r old; do rm -rf "$old"; done' % SCHEDULED,
        'ls -1 "$BACKUP_DIR"',
    ]),
    RESTORE: "\n".join([
        'file="$BACKUP_DIR/$BACKUP_ID/nb.db"',
        'test -s "$file" || { echo "no Northbound backup at $file" >&2; exit 1; }',
        'ovsdb-client restore "$OVN_NB_REMOTE" OVN_Northbound < "$file"',
    ]),
}


def settings_problems(settings, field=FIELD):
    """Every problem of the OVN backup settings: image (an image with ovsdb-client), storage (exactly one of
    persistentVolumeClaim - a PersistentVolumeClaim's spec - or volume - a volume source), pod_annotations,
    backoff_limit."""
    if not isinstance(settings, dict):
        return [problem(field, "must be a mapping, got %r" % (settings,))]
    problems = []
    if not isinstance(settings.get("image"), str) or not settings["image"].strip():
        problems.append(problem(field + ".image", "must name an image that has ovsdb-client, got %r"
                                % (settings.get("image"),)))
    storage = settings.get("storage")
    kinds = [k for k in (storage or {}) if k in STORAGE_KINDS] if isinstance(storage, dict) else []
    if len(kinds) != 1 or len(storage) != 1 or not isinstance(storage[kinds[0]], dict) or not storage[kinds[0]]:
        problems.append(problem(field + ".storage", "must hold exactly one of %s, as a mapping, got %r"
                                % (", ".join(STORAGE_KINDS), storage)))
    annotations = settings.get("pod_annotations")
    if annotations is not None and (not isinstance(annotations, dict) or
                                    not all(isinstance(v, str) for v in annotations.values())):
        problems.append(problem(field + ".pod_annotations", "must map names to strings, got %r" % (annotations,)))
    limit = settings.get("backoff_limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        problems.append(problem(field + ".backoff_limit", "must be a whole number >= 0, got %r" % (limit,)))
    schedule = settings.get("schedule")
    if schedule is not None and not (isinstance(schedule, str) and (
            len(schedule.split()) == 5 or schedule.strip() in _MACROS)):
        problems.append(problem(field + ".schedule", "must be a cron schedule (five fields, or %s), got %r"
                                % (", ".join(_MACROS), schedule)))
    keep = settings.get("keep")
    if keep is not None and (isinstance(keep, bool) or not isinstance(keep, int) or keep < 1):
        problems.append(problem(field + ".keep", "must be a whole number >= 1 (the scheduled backups kept), got %r"
                                % (keep,)))
    unknown = sorted(set(settings) - {"image", "storage", "pod_annotations", "backoff_limit", "schedule", "keep"})
    if unknown:
        problems.append(problem(field, "unknown keys %s" % ", ".join(unknown)))
    return problems


def id_problems(backup_id, field="backup_id"):
    if not isinstance(backup_id, str) or not kube_names.is_dns1123_label(backup_id) or len(backup_id) > MAX_ID:
        return [problem(field, "must be a DNS-1123 label of at most %d characters (e.g. a change ticket), got %r"
                        % (MAX_ID, backup_id))]
    return []


def check(settings, backup_id=None):
    """Raises InputError naming every problem of the settings and the backup id (when there is one)."""
    problems = settings_problems(settings) + (id_problems(backup_id) if backup_id is not None else [])
    if problems:
        raise InputError(problems)


def remotes(cluster, where):
    """{"nb": remote, "sb": remote} from the OVNCluster's status.endpoints; InputError when it is missing or has
    not published both."""
    endpoints = ((cluster or {}).get("status") or {}).get("endpoints") or {}
    missing = [key for unused, key, unused_db in DATABASES if not endpoints.get(key)]
    if cluster is None:
        raise InputError([problem("ovn", "%s does not exist: the region has no OVN databases to back up" % where)])
    if missing:
        raise InputError([problem("ovn", "%s publishes no %s endpoint yet (status.endpoints)"
                                  % (where, " and ".join(missing)))])
    return dict((short, endpoints[key]) for short, key, unused in DATABASES)


def job_name(action, backup_id):
    return "ovn-%s-%s" % (action, backup_id)


def claim_manifest(namespace, settings):
    """The PersistentVolumeClaim of the backups, when the settings ask for one (else None)."""
    spec = (settings.get("storage") or {}).get("persistentVolumeClaim")
    if spec is None:
        return None
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": CLAIM, "namespace": namespace, "labels": {naming.MANAGED_BY_LABEL: naming.MANAGED_BY}},
            "spec": spec}


def volume(settings):
    storage = settings.get("storage") or {}
    if "persistentVolumeClaim" in storage:
        return {"name": "backups", "persistentVolumeClaim": {"claimName": CLAIM}}
    return dict(storage["volume"], name="backups")


def job_manifest(action, namespace, backup_id, settings, endpoints):
    """The Job of a backup (both databases) or of a restore (the Northbound database) of backup_id."""
    labels = {"app.kubernetes.io/name": "ovn-database-" + action, naming.MANAGED_BY_LABEL: naming.MANAGED_BY,
              ID_LABEL: backup_id}
    env = [{"name": "BACKUP_ID", "value": backup_id}, {"name": "BACKUP_DIR", "value": MOUNT_PATH},
           {"name": "OVN_NB_REMOTE", "value": endpoints["nb"]}]
    if action == BACKUP:
        env.append({"name": "OVN_SB_REMOTE", "value": endpoints["sb"]})
    template_meta = {"labels": dict(labels)}
    if settings.get("pod_annotations"):
        template_meta["annotations"] = dict(settings["pod_annotations"])
    container = {"name": action, "image": settings["image"], "command": ["/bin/sh", "-ec", SCRIPTS[action]],
                 "env": env, "volumeMounts": [{"name": "backups", "mountPath": MOUNT_PATH}]}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": job_name(action, backup_id), "namespace": namespace, "labels": labels},
            "spec": {"backoffLimit": settings.get("backoff_limit", DEFAULT_BACKOFF_LIMIT),
                     "template": {"metadata": template_meta, "spec": {
                         "restartPolicy": "Never", "containers": [container], "volumes": [volume(settings)]}}}}


def cron_job_manifest(namespace, settings, endpoints):
    """The CronJob of the scheduled backups: the backup Job on settings.schedule, each keeping the newest
    settings.keep scheduled backups on the volume (and as many of its Jobs, the backups' records)."""
    job = job_manifest(BACKUP, namespace, SCHEDULED, settings, endpoints)
    labels = dict(job["metadata"]["labels"], **{"app.kubernetes.io/name": "ovn-database-" + SCHEDULED})
    keep = settings.get("keep", DEFAULT_KEEP)
    template = job["spec"]["template"]
    container = template["spec"]["containers"][0]
    container["command"] = ["/bin/sh", "-ec", SCRIPTS[SCHEDULED]]
    container["env"] = [{"name": "JOB_NAME", "valueFrom": {"fieldRef": {
        "fieldPath": "metadata.labels['%s']" % kube_names.JOB_NAME_LABEL}}}, {"name": "KEEP", "value": str(keep)}] + [
        e for e in container["env"] if e["name"] != "BACKUP_ID"]
    template["metadata"]["labels"] = dict(labels)
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": CRON_JOB, "namespace": namespace, "labels": labels},
            "spec": {"schedule": settings["schedule"], "concurrencyPolicy": "Forbid",
                     "successfulJobsHistoryLimit": keep, "failedJobsHistoryLimit": 1,
                     "jobTemplate": {"metadata": {"labels": dict(labels)}, "spec": job["spec"]}}}


def files(backup_id):
    return ["%s/%s.db" % (backup_id, short) for short, unused, unused_db in DATABASES]


def run_record(obj):
    """Whether a live object is one a run made and no inventory declares: a backup or restore Job."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return obj.get("kind") == "Job" and ID_LABEL in labels
