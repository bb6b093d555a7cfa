"""playbooks/backup.yml and restore.yml on the lab region: every OpenStack cluster's database (the MariaDB its
ControlPlane controls) gets the scheduled Backup site.yml's phase 8 keeps, and a Backup taken on demand; a restore
needs its confirmation and a complete Backup. mariadb-operator's Backup and Restore controllers are the lab's
stand-in (lab/regionlab/standins/mariadb_batch.py); the lab's kube-controller-manager runs their Jobs and CronJobs,
KWOK's kubelets the pods.
"""

import base64
import json
import shutil
import subprocess
import time

from ansible.parsing.vault import VaultLib, VaultSecret

from conftest import REGION_HOST, REPO, _play, failures, get_object, lab_kubectl, objects, run_verbose, \
    standins_restored, task_result, update_standins
from regionlab import config
from regionlab import ovn as data_plane
from regionlab.standins import shell_pods

BACKUP = REPO / "playbooks" / "backup.yml"
RESTORE = REPO / "playbooks" / "restore.yml"
CLUSTERS = ("openstack", "openstack-lab-tenant-a", "openstack-lab-tenant-b", "openstack-lab-tenant-q",
            "openstack-lab-tenant-r")
TENANT = "openstack-lab-tenant-a"


def backups():
    found = json.loads(lab_kubectl(REGION_HOST, "get", "backups.k8s.mariadb.com", "-A", "-o", "json").stdout)["items"]
    return dict(((b["metadata"]["namespace"], b["metadata"]["name"]), b) for b in found)


def complete(obj):
    (found,) = [c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == "Complete"]
    return found["status"], found["reason"], found["message"]


def forget(kind, namespace, *names):
    lab_kubectl(REGION_HOST, "-n", namespace, "delete", kind, "--ignore-not-found", "--wait=true", *names)


def test_site_keeps_a_scheduled_backup_of_every_clusters_database(region):
    found = backups()
    scheduled = sorted(key for key, b in found.items() if b["metadata"]["labels"].get("c5c3.io/backup") == "scheduled")
    assert scheduled == [(namespace, "mariadb-scheduled") for namespace in CLUSTERS]
    for namespace in CLUSTERS:
        backup = found[(namespace, "mariadb-scheduled")]
        assert backup["spec"]["schedule"]["cron"] == "0 3 * * *" and backup["spec"]["mariaDbRef"]["name"] == "mariadb"
        assert complete(backup)[1] in ("CronJobScheduled", "CronJobSucess"), backup["status"]
        cronjob = get_object(REGION_HOST, "-n", namespace, "cronjob", "mariadb-scheduled", missing_ok=False)
        assert cronjob["spec"]["schedule"] == "0 3 * * *" and cronjob["spec"]["concurrencyPolicy"] == "Forbid"
        assert cronjob["metadata"]["ownerReferences"][0]["kind"] == "Backup"
    phase = task_result(region.second.out, "Keep each OpenStack cluster's scheduled database Backup")
    assert not phase["changed"] and set(phase["requests"]) == {"GET"}, phase


def test_a_backup_taken_now_completes_in_every_cluster_and_again_writes_nothing(region):
    rc, out, unused = _play(BACKUP, "-e", "backup_id=t1", "--check")
    assert rc == 0 and not [key for key in backups() if key[1] == "mariadb-t1"], failures(out)
    assert not [name for name in key_backups() if name.endswith("-t1")]
    try:
        rc, out, text = run_verbose(BACKUP, "-e", "backup_id=t1")
        assert rc == 0, failures(out)
        assert_keys_backed_up("t1", text)
        found = backups()
        for namespace in CLUSTERS:
            backup = found[(namespace, "mariadb-t1")]
            assert complete(backup) == ("True", "JobComplete", "Success"), backup["status"]
            assert "schedule" not in backup["spec"] and backup["metadata"]["labels"]["c5c3.io/backup"] == "on-demand"
            job = get_object(REGION_HOST, "-n", namespace, "job", "mariadb-t1", missing_ok=False)
            assert "Complete" in [c["type"] for c in job["status"]["conditions"] if c["status"] == "True"], job["status"]
        rc, out, unused = _play(BACKUP, "-e", "backup_id=t1")
        assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
        # A restore overwrites a cluster's databases: refused without its confirmation, or from what is no backup.
        rc, out, unused = _play(RESTORE, "-e", json.dumps({"cluster": TENANT, "backup": "mariadb-t1",
                                                           "confirm": "openstack"}))
        assert rc != 0 and "confirm: must be %s" % TENANT in task_result(out, "Restore the database of")["msg"]
        rc, out, unused = _play(RESTORE, "-e", json.dumps({"cluster": TENANT, "backup": "mariadb-none",
                                                           "confirm": TENANT}))
        assert rc != 0 and "no Backup mariadb-none in namespace %s" % TENANT in \
            task_result(out, "Restore the database of")["msg"]
        assert objects(REGION_HOST, "restores.k8s.mariadb.com", TENANT) == []
        rc, out, unused = _play(RESTORE, "-e", json.dumps({"cluster": TENANT, "backup": "mariadb-t1",
                                                           "confirm": TENANT}))
        assert rc == 0, failures(out)
        (restore,) = objects(REGION_HOST, "restores.k8s.mariadb.com", TENANT)
        assert restore["metadata"]["name"] == "mariadb-t1-restore"
        assert restore["spec"]["backupRef"] == {"name": "mariadb-t1"}
        assert complete(restore) == ("True", "JobComplete", "Success")
        rc, out, unused = _play(RESTORE, "-e", json.dumps({"cluster": TENANT, "backup": "mariadb-t1",
                                                           "confirm": TENANT}))
        assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    finally:
        forget("restores.k8s.mariadb.com", TENANT, "mariadb-t1-restore")
        for namespace in CLUSTERS:
            forget("backups.k8s.mariadb.com", namespace, "mariadb-t1")
        lab_kubectl(MANAGEMENT, "-n", "cobaltcore-backups", "delete", "secret", "--ignore-not-found",
                    *["keys-%s-t1" % c for c in KEY_CLUSTERS])


def test_a_failed_backup_fails_the_run_naming_it(region):
    settings = dict(json.loads(json.dumps(region_settings())), backoff_limit=0)
    try:
        with standins_restored():
            update_standins(lambda data: data.update(failures=dict(
                data.get("failures") or {}, **{"Backup/%s/mariadb-t2" % TENANT: {"reason": "DumpFailed"}})))
            time.sleep(1)  # the stand-ins re-read the file when it changes
            rc, out, unused = _play(BACKUP, "-e", "backup_id=t2", "-e", json.dumps({
                "cobaltcore_database_backup": settings, "backup_keys": False, "backup_namespaces": ["openstack", TENANT]}))
        assert rc != 0
        message = task_result(out, "Back up each OpenStack cluster's database now")["msg"]
        assert "failed" in message and "%s/mariadb-t2" % TENANT in message and "JobFailed" in message, message
        found = backups()
        assert complete(found[("openstack", "mariadb-t2")])[1] == "JobComplete"
        assert complete(found[(TENANT, "mariadb-t2")]) == ("True", "JobFailed", "Failed")
    finally:
        for namespace in ("openstack", TENANT):
            forget("backups.k8s.mariadb.com", namespace, "mariadb-t2")


# ---------------------------------------------------------------------------
# The keys outside the databases: the Keystones' and each storage pool's Ceph keys, encrypted, on the management
# cluster (module key_backup).

MANAGEMENT = "management-cluster"
KEY_CLUSTERS = (REGION_HOST, "st-pool-a", "st-pool-b")
ROTATE = REPO / "playbooks" / "rotate.yml"


def key_backups():
    found = objects(MANAGEMENT, "secrets", "cobaltcore-backups")
    return dict((s["metadata"]["name"], s) for s in found if s["metadata"]["labels"].get("c5c3.io/backup") == "keys")


def opened(secret):
    """The document of a key backup, opened as `ansible-vault view` opens it, with the lab inventory's passphrase."""
    passphrase = config.KEY_BACKUP_PASSPHRASE.read_bytes().strip()
    text = base64.b64decode(secret["data"]["keys.vault"])
    return json.loads(VaultLib([("default", VaultSecret(passphrase))]).decrypt(text))


def live_data(cluster, namespace, name):
    return (get_object(cluster, "-n", namespace, "secret", name, missing_ok=False).get("data")) or {}


def assert_keys_backed_up(backup_id, text):
    """The key backups of backup_id: one per cluster, each opened with the passphrase and equal to the live keys;
    no key and not the passphrase in the run's -vvv output (text)."""
    found = key_backups()
    assert sorted(n for n in found if n.endswith("-" + backup_id)) == sorted(
        "keys-%s-%s" % (c, backup_id) for c in KEY_CLUSTERS)
    secrets = []
    keystone = opened(found["keys-%s-%s" % (REGION_HOST, backup_id)])
    assert keystone["keys"] == "keystone"
    held = dict(((o["namespace"], o["name"]), o["data"]) for o in keystone["objects"])
    assert sorted(held) == sorted((ns, "keystone-%s-keys" % kind) for ns in CLUSTERS for kind in ("fernet", "credential"))
    for (namespace, name), data in held.items():
        assert data == live_data(REGION_HOST, namespace, name)
        secrets.extend(data.values())
    ceph = found["keys-st-pool-a-%s" % backup_id]
    held = dict(((o["kind"], o["name"]), o) for o in opened(ceph)["objects"])
    assert held[("Secret", "rook-ceph-mon")]["data"] == live_data("st-pool-a", "rook-ceph", "rook-ceph-mon")
    assert held[("Secret", "rook-ceph-mon")]["type"] == "kubernetes.io/rook"
    assert ("ConfigMap", "rook-ceph-mon-endpoints") in held
    assert any(kind == "Secret" and name.startswith("rook-ceph-client-") for kind, name in held)
    assert "Secret rook-ceph/rook-ceph-mon" in ceph["metadata"]["annotations"]["c5c3.io/backup-contents"]
    secrets.extend(held[("Secret", "rook-ceph-mon")]["data"].values())
    for value in secrets:
        assert value not in text and base64.b64decode(value).decode() not in text
    assert config.KEY_BACKUP_PASSPHRASE.read_text().strip() not in text


def test_a_keystone_gets_its_keys_of_a_key_backup_back_after_a_rotation(region):
    try:
        rc, out, unused = _play(BACKUP, "-e", "backup_id=k1", "-e", json.dumps({
            "backup_namespaces": ["openstack"], "backup_ovn": False}))
        assert rc == 0, failures(out)
        backed_up = live_data(REGION_HOST, "openstack", "keystone-fernet-keys")
        rc, out, unused = _play(ROTATE, "-e", json.dumps({"rotate": "fernet", "rotation_id": "after-k1"}))
        assert rc == 0 and live_data(REGION_HOST, "openstack", "keystone-fernet-keys") != backed_up, failures(out)
        restore = {"cluster": "openstack", "key_backup": "k1", "confirm": "openstack"}
        rc, out, unused = _play(RESTORE, "-e", json.dumps(dict(restore, confirm="openstack-lab-tenant-a")))
        assert rc != 0 and "confirm: must be openstack" in task_result(out, "Give the Keystone its keys back")["msg"]
        rc, out, unused = _play(RESTORE, "-e", json.dumps(restore), "--check")
        assert rc == 0 and live_data(REGION_HOST, "openstack", "keystone-fernet-keys") != backed_up, failures(out)
        assert task_result(out, "Give the Keystone its keys back")["restored"] == ["openstack/keystone-fernet-keys"]
        rc, out, unused = _play(RESTORE, "-e", json.dumps(restore))
        assert rc == 0, failures(out)
        assert live_data(REGION_HOST, "openstack", "keystone-fernet-keys") == backed_up
        rc, out, unused = _play(RESTORE, "-e", json.dumps(restore))
        assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    finally:
        forget("backups.k8s.mariadb.com", "openstack", "mariadb-k1")
        lab_kubectl(MANAGEMENT, "-n", "cobaltcore-backups", "delete", "secret", "--ignore-not-found",
                    *["keys-%s-k1" % c for c in KEY_CLUSTERS])


def region_settings():
    """The lab inventory's cobaltcore_database_backup, as the scheduled Backups carry it."""
    spec = backups()[("openstack", "mariadb-scheduled")]["spec"]
    return {"storage": spec["storage"], "schedule": spec["schedule"]["cron"], "max_retention": spec["maxRetention"],
            "compression": spec["compression"]}


# ---------------------------------------------------------------------------
# The OVN databases: ovsdb-client in a Job of ovn-system, its container played by the lab (standins/shell_pods.py)
# with the real ovsdb-client against the lab's real OVN.

OVN_ID = "ovn-probe-1"


def nbctl(*args):
    return subprocess.run(["ovn-nbctl", "--db=" + data_plane.remotes("nb"), "--timeout=10"] + list(args),
                          capture_output=True, text=True, check=True, timeout=30).stdout


def switches():
    return set(nbctl("--bare", "--columns=name", "list", "Logical_Switch").split())


def test_an_ovn_backup_is_real_and_its_restore_brings_the_northbound_contents_back(region):
    nbctl("--may-exist", "ls-add", "probe-before-backup")
    backup_dir = shell_pods.volume_dir("ovn-system", {"nfs": {"server": "backups.lab.invalid", "path": "/ovn"}})
    try:
        rc, out, unused = _play(BACKUP, "-e", json.dumps({"backup_id": OVN_ID, "backup_namespaces": [], "backup_keys": False}))
        assert rc == 0, failures(out)
        taken = task_result(out, "Back up the OVN databases now")
        job = {"namespace": "ovn-system", "name": "ovn-backup-" + OVN_ID, "result": "created"}
        assert taken["changed"] and taken["job"] == job, taken
        # Real ovsdb-client files: the switch is in the Northbound backup, and each is a database ovsdb-tool reads.
        for short, schema in (("nb", "OVN_Northbound"), ("sb", "OVN_Southbound")):
            path = backup_dir / OVN_ID / ("%s.db" % short)
            assert subprocess.run(["ovsdb-tool", "db-name", str(path)], capture_output=True, text=True,
                                  check=True).stdout.strip() == schema
        assert "probe-before-backup" in (backup_dir / OVN_ID / "nb.db").read_text()
        rc, out, unused = _play(BACKUP, "-e", json.dumps({"backup_id": OVN_ID, "backup_namespaces": [], "backup_keys": False}))
        assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
        # After the backup: the switch goes, another comes.
        nbctl("ls-del", "probe-before-backup")
        nbctl("ls-add", "probe-after-backup")
        args = {"cluster": "ovn-system", "backup": OVN_ID, "confirm": "ovn-system"}
        rc, out, unused = _play(RESTORE, "-e", json.dumps(dict(args, confirm="openstack")))
        assert rc != 0 and "confirm: must be ovn-system" in failures(out)[0][2], failures(out)
        rc, out, unused = _play(RESTORE, "-e", json.dumps(dict(args, backup="ovn-no-such")))
        assert rc != 0 and "no OVN backup ovn-no-such" in failures(out)[0][2], failures(out)
        rc, out, unused = _play(RESTORE, "-e", json.dumps(args), "--check")
        assert rc == 0 and "probe-after-backup" in switches(), failures(out)
        assert "ovn-restore-" + OVN_ID not in [j["metadata"]["name"] for j in objects(REGION_HOST, "jobs", "ovn-system")]
        rc, out, unused = _play(RESTORE, "-e", json.dumps(args))
        assert rc == 0, failures(out)
        found = switches()
        assert "probe-before-backup" in found and "probe-after-backup" not in found, found
    finally:
        nbctl("--if-exists", "ls-del", "probe-before-backup")
        nbctl("--if-exists", "ls-del", "probe-after-backup")
        forget("jobs", "ovn-system", "ovn-backup-" + OVN_ID, "ovn-restore-" + OVN_ID)
        shutil.rmtree(backup_dir / OVN_ID, ignore_errors=True)


def wait_complete(name, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        job = get_object(REGION_HOST, "-n", "ovn-system", "job", name, missing_ok=False)
        conditions = dict((c["type"], c) for c in (job.get("status") or {}).get("conditions") or [])
        if conditions.get("Complete", {}).get("status") == "True":
            return job
        assert conditions.get("Failed", {}).get("status") != "True", conditions["Failed"]
        assert time.monotonic() < deadline, "Job %s did not complete: %s" % (name, job.get("status"))
        time.sleep(1)


def test_the_scheduled_ovn_backups_keep_the_newest_and_restore_like_any_other(region):
    """site.yml's phase 8 keeps the CronJob ovn-backup-scheduled as the lab inventory says (daily, keep 2); each of
    its Jobs (here made from it by hand, as `kubectl create job --from` does) takes a real backup under its own id and
    removes the scheduled ones beyond the newest two, never one taken on demand."""
    cron = get_object(REGION_HOST, "-n", "ovn-system", "cronjob", "ovn-backup-scheduled", missing_ok=False)
    assert (cron["spec"]["schedule"], cron["spec"]["successfulJobsHistoryLimit"]) == ("0 3 * * *", 2)
    backup_dir = shell_pods.volume_dir("ovn-system", {"nfs": {"server": "backups.lab.invalid", "path": "/ovn"}})
    on_demand = backup_dir / "chg-on-demand"
    on_demand.mkdir(parents=True, exist_ok=True)
    runs = ["ovn-backup-scheduled-t%d" % n for n in (1, 2, 3)]
    try:
        for name in runs:
            lab_kubectl(REGION_HOST, "-n", "ovn-system", "create", "job", "--from=cronjob/ovn-backup-scheduled", name)
            wait_complete(name)
            time.sleep(1.1)  # each backup a newer modification time than the one before
        kept = sorted(p.name for p in backup_dir.iterdir())
        assert "scheduled-t1" not in kept and {"scheduled-t2", "scheduled-t3", "chg-on-demand"} <= set(kept), kept
        assert subprocess.run(["ovsdb-tool", "db-name", str(backup_dir / "scheduled-t3" / "nb.db")],
                              capture_output=True, text=True, check=True).stdout.strip() == "OVN_Northbound"
        # Its id is the Job's name without ovn-backup-: restore.yml takes it (planned only, in check mode).
        rc, out, unused = _play(RESTORE, "--check", "-e", json.dumps(
            {"cluster": "ovn-system", "backup": "scheduled-t3", "confirm": "ovn-system"}))
        assert rc == 0, failures(out)
        # site.yml's phase 8 again: the CronJob as declared.
        rc, out, unused = _play(BACKUP)
        assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    finally:
        forget("jobs", "ovn-system", *runs)
        for name in ("scheduled-t1", "scheduled-t2", "scheduled-t3", "chg-on-demand"):
            shutil.rmtree(backup_dir / name, ignore_errors=True)
