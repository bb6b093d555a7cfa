"""mariadb-operator's Backup and Restore controllers (v0.38.1), in the c5c3-operator stand-in's process.

Read in mariadb-operator v0.38.1: internal/controller/backup_controller.go and restore_controller.go,
pkg/controller/batch (a Job, or a CronJob for a scheduled Backup, of the CR's name and namespace, controlled by it),
pkg/builder/batch_builder.go (the Job: init container mariadb running mariadb-dump, container mariadb-operator moving
the dump to its storage, volume `backup`; the ServiceAccount named after the CR, spec.backoffLimit, spec.restartPolicy)
and pkg/condition/complete.go (the one condition, Complete):

  Job Failed=True             Complete True   JobFailed    Failed      (a failed Job is "complete" too)
  Job Complete=True           Complete True   JobComplete  Success
  Job suspended               Complete False  JobSuspended Suspended
  otherwise                   Complete False  JobRunning   Running
  CronJob never succeeded     Complete False  CronJobScheduled Scheduled
  CronJob last run failed     Complete False  CronJobScheduled Failed   (upstream's reason for it)
  CronJob last run running    Complete False  CronJobRunning Running
  CronJob last run succeeded  Complete True   CronJobSucess Success   (upstream's spelling)

A Backup whose MariaDB (mariaDbRef, waitForIt true by default) is not Ready=True waits: Complete False, reason
Failed, "MariaDB not ready" ("MariaDB not found" without one). A Restore from a Backup (backupRef) that is not
Complete=True waits with "Backup not complete". No observedGeneration (upstream sets none).

The lab's kube-controller-manager runs the Jobs and CronJobs, KWOK's kubelets run their pods: a Job's pod completes
at once, and fails (KWOK's chaos label) when standins.yaml's failures name the Backup or Restore (`Backup/<ns>/<name>`)
when its Job is made. The lab's MariaDBs are status only, so the dump holds nothing.
"""

from . import loop
from .client import object_path, path

GV = "k8s.mariadb.com/v1alpha1"
MANAGER = "lab-mariadb-operator"
OPERATOR = "mariadb-operator"  # its Deployment (deployments.py)
KINDS = {"Backup": "backups", "Restore": "restores"}
MARIADB_IMAGE = "docker-registry1.mariadb.com/library/mariadb:11.4.5"
OPERATOR_IMAGE = "docker-registry3.mariadb.com/mariadb-operator/mariadb-operator:0.38.1"
STORAGE_MOUNT = "/backup"
KWOK_FAIL = "pod-container-running-failed.stage.kwok.x-k8s.io"


def urls():
    return [path(GV, plural) for plural in KINDS.values()] + [path("batch/v1", "jobs"), path("batch/v1", "cronjobs")]


def _condition(obj, ctype):
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == ctype), {})


def job_condition(job):
    """(status, reason, message) of Complete from the Job, as pkg/condition/complete.go reads it."""
    if _condition(job, "Failed").get("status") == "True":
        return "True", "JobFailed", "Failed"
    if (job.get("spec") or {}).get("suspend"):
        return "False", "JobSuspended", "Suspended"
    if _condition(job, "Complete").get("status") == "True":
        return "True", "JobComplete", "Success"
    return "False", "JobRunning", "Running"


def cronjob_condition(cronjob):
    """(status, reason, message) of Complete from the CronJob's last schedule and last success."""
    status = cronjob.get("status") or {}
    scheduled, succeeded = status.get("lastScheduleTime"), status.get("lastSuccessfulTime")
    if not scheduled or not succeeded:
        return "False", "CronJobScheduled", "Scheduled"
    if succeeded < scheduled:  # RFC 3339 in UTC: the text orders as the time
        if status.get("active"):
            return "False", "CronJobRunning", "Running"
        return "False", "CronJobScheduled", "Failed"
    return "True", "CronJobSucess", "Success"


def _volume(obj):
    """The Job's storage volume `backup`: the Backup's (or the Restore's own) storage; S3 stages in an emptyDir."""
    spec = obj.get("spec") or {}
    storage = spec.get("storage") or spec
    if storage.get("persistentVolumeClaim") is not None:
        return {"name": "backup", "persistentVolumeClaim": {"claimName": obj["metadata"]["name"]}}
    if storage.get("volume"):
        return dict(storage["volume"], name="backup")
    return {"name": "backup", "emptyDir": {}}


def job_spec(obj, mariadb, fail=False):
    """The Backup's or Restore's Job spec (batch_builder.go BuildBackupJob / BuildRestoreJob, in short)."""
    spec, name = obj.get("spec") or {}, obj["metadata"]["name"]
    host = "%s.%s.svc" % (mariadb, obj["metadata"]["namespace"])
    if obj["kind"] == "Backup":
        dump = ["mariadb-dump", "--host=%s" % host, "--all-databases", "--single-transaction",
                "--result-file=%s/backup.sql" % STORAGE_MOUNT]
        init = {"name": "mariadb", "image": MARIADB_IMAGE, "command": dump}
        main = {"name": "mariadb-operator", "image": OPERATOR_IMAGE,
                "args": ["backup", "--path", STORAGE_MOUNT, "--max-retention", str(spec.get("maxRetention") or "720h"),
                         "--compression", str(spec.get("compression") or "none")]}
    else:
        init = {"name": "mariadb-operator", "image": OPERATOR_IMAGE,
                "args": ["backup", "restore", "--path", STORAGE_MOUNT]}
        main = {"name": "mariadb", "image": MARIADB_IMAGE,
                "command": ["sh", "-c", "mariadb --host=%s < %s/backup.sql" % (host, STORAGE_MOUNT)]}
    for container in (init, main):
        container["volumeMounts"] = [{"name": "backup", "mountPath": STORAGE_MOUNT}]
    labels = {"app.kubernetes.io/name": obj["kind"].lower(), "app.kubernetes.io/instance": name}
    if fail:
        labels[KWOK_FAIL] = "true"
    return {"backoffLimit": spec.get("backoffLimit", 5), "template": {
        "metadata": {"labels": labels},
        "spec": {"restartPolicy": spec.get("restartPolicy") or "OnFailure",
                 "serviceAccountName": spec.get("serviceAccountName") or name,
                 "initContainers": [init], "containers": [main], "volumes": [_volume(obj)]}}}


class MariaDBBatch:
    """One pass over every Backup and Restore of the cluster, driven by the c5c3-operator stand-in's loop."""

    def __init__(self, controller, kube):
        self.ctl = controller
        self.kube = kube  # a Kube of field manager MANAGER

    def reconcile(self):
        """One pass; returns the uids of the Backups and Restores seen (their timers are kept)."""
        if not self.ctl.running.runs(OPERATOR):
            return set()
        found = dict((kind, self.kube.list(path(GV, plural))) for kind, plural in KINDS.items())
        if not found["Backup"] and not found["Restore"]:
            return set()
        mariadbs = self.by_key(self.kube.list(path(GV, "mariadbs")))
        jobs = self.by_key(self.kube.list(path("batch/v1", "jobs")))
        cronjobs = self.by_key(self.kube.list(path("batch/v1", "cronjobs")))
        backups = self.by_key(found["Backup"])
        for kind, objects in sorted(found.items()):
            for obj in objects:
                obj.setdefault("kind", kind)
                if obj["metadata"].get("deletionTimestamp") or loop.foreign(obj, MANAGER):
                    continue
                # A new object is left alone for a second, so that a test playing the operator writes first.
                if MANAGER not in loop.status_writers(obj) and not self.ctl.after((obj["metadata"]["uid"], "seen"), 1.0):
                    continue
                self.reconcile_one(obj, mariadbs, backups, jobs, cronjobs)
        return set(o["metadata"]["uid"] for objects in found.values() for o in objects)

    @staticmethod
    def by_key(objects):
        return dict(((o["metadata"]["namespace"], o["metadata"]["name"]), o) for o in objects)

    def reconcile_one(self, obj, mariadbs, backups, jobs, cronjobs):
        meta, spec = obj["metadata"], obj.get("spec") or {}
        namespace = meta["namespace"]
        ref = spec.get("mariaDbRef") or {}
        mariadb = mariadbs.get((ref.get("namespace") or namespace, ref.get("name")))
        if mariadb is None:
            return self.complete(obj, ("False", "Failed", "MariaDB not found"))
        if obj["kind"] == "Backup" and ref.get("waitForIt", True) and _condition(mariadb, "Ready").get("status") != "True":
            self.ctl.next_due = min(self.ctl.next_due, 5.0)  # upstream requeues after 5 s
            return self.complete(obj, ("False", "Failed", "MariaDB not ready"))
        if obj["kind"] == "Restore":
            source = (spec.get("backupRef") or {}).get("name")
            if not source and not spec.get("s3") and not spec.get("volume"):
                return self.complete(obj, ("False", "Failed", "Unable to determine restore source"))
            if source and _condition(backups.get((namespace, source)) or {}, "Complete").get("status") != "True":
                return self.complete(obj, ("False", "Failed", "Backup not complete"))
        self.ensure_service_account(obj)
        fail = bool(self.ctl.settings.get().failure(obj["kind"], namespace, meta["name"]))
        key = (namespace, meta["name"])
        if obj["kind"] == "Backup" and spec.get("schedule"):
            cronjob = cronjobs.get(key) or self.create_cronjob(obj, ref["name"], fail)
            return self.complete(obj, cronjob_condition(cronjob or {}))
        job = jobs.get(key) or self.create_job(obj, ref["name"], fail)
        return self.complete(obj, job_condition(job or {}))

    def ensure_service_account(self, obj):
        meta = obj["metadata"]
        name = (obj.get("spec") or {}).get("serviceAccountName") or meta["name"]
        url = path("v1", "serviceaccounts", meta["namespace"])
        if self.kube.get(path("v1", "serviceaccounts", meta["namespace"], name)) is None:
            self.kube.create(url, {"apiVersion": "v1", "kind": "ServiceAccount",
                                   "metadata": {"name": name, "namespace": meta["namespace"],
                                                "ownerReferences": [loop.owner_reference(obj)]}})

    def create_job(self, obj, mariadb, fail):
        meta = obj["metadata"]
        if ((obj.get("spec") or {}).get("storage") or {}).get("persistentVolumeClaim") is not None:
            self.ensure_claim(obj)
        job = self.kube.create(path("batch/v1", "jobs", meta["namespace"]), {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"], "ownerReferences": [loop.owner_reference(obj)]},
            "spec": job_spec(obj, mariadb, fail)})
        self.ctl.log("%s %s/%s: Job created%s" % (obj["kind"], meta["namespace"], meta["name"],
                                                  " (its pod fails: standins.yaml)" if fail else ""))
        return job

    def create_cronjob(self, obj, mariadb, fail):
        meta, spec = obj["metadata"], obj.get("spec") or {}
        schedule = spec.get("schedule") or {}
        cronjob = {"schedule": schedule.get("cron"), "suspend": bool(schedule.get("suspend")),
                   "concurrencyPolicy": "Forbid", "jobTemplate": {"spec": job_spec(obj, mariadb, fail)}}
        for field in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit", "timeZone"):
            if spec.get(field) is not None:
                cronjob[field] = spec[field]
        created = self.kube.create(path("batch/v1", "cronjobs", meta["namespace"]), {
            "apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"], "ownerReferences": [loop.owner_reference(obj)]},
            "spec": cronjob})
        self.ctl.log("Backup %s/%s: CronJob created (%s)" % (meta["namespace"], meta["name"], schedule.get("cron")))
        return created

    def ensure_claim(self, obj):
        meta = obj["metadata"]
        if self.kube.get(path("v1", "persistentvolumeclaims", meta["namespace"], meta["name"])) is None:
            self.kube.create(path("v1", "persistentvolumeclaims", meta["namespace"]), {
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": meta["name"], "namespace": meta["namespace"], "ownerReferences": [loop.owner_reference(obj)]},
                "spec": obj["spec"]["storage"]["persistentVolumeClaim"]})

    def complete(self, obj, condition):
        conditions = [dict(c) for c in (obj.get("status") or {}).get("conditions") or []]
        if loop.set_condition(conditions, "Complete", *condition):
            meta = obj["metadata"]
            url = object_path(GV, KINDS[obj["kind"]], obj)
            if self.kube.patch(url, obj, {"status": {"conditions": conditions}}, "status") is not None:
                self.ctl.log("%s %s/%s: Complete=%s %s %s" % ((obj["kind"], meta["namespace"], meta["name"])
                                                              + tuple(condition)))
