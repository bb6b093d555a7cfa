# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ovn_database against a fake control-plane cluster with an OVNCluster, and the pure manifests of
providers/ovn_backup.py."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ovn_api, ovn_backup
from ansible_collections.c5c3.cobaltcore.plugins.modules import ovn_database

from module_harness import kube, kubeconfig, run_module  # noqa: F401  # pylint: disable=unused-import

NB, SB = "tcp:ovn-nb.ovn-system.svc.cluster.local:6641", "tcp:ovn-sb.ovn-system.svc.cluster.local:6642"
SETTINGS = {"image": "registry.example.com/ovn:23.03", "storage": {"persistentVolumeClaim": {
    "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}


@pytest.fixture
def cluster(kube):
    kube.kinds[(ovn_api.OVN_API_VERSION, "OVNCluster")] = ("ovnclusters", True)
    kube.kinds[("batch/v1", "Job")] = ("jobs", True)
    kube.kinds[("v1", "PersistentVolumeClaim")] = ("persistentvolumeclaims", True)
    kube.add({"apiVersion": ovn_api.OVN_API_VERSION, "kind": "OVNCluster",
              "metadata": {"name": "ovn", "namespace": "ovn-system"},
              "status": {"endpoints": {"northbound": NB, "southbound": SB}}})
    return kube


def run(check_mode=False, **args):
    """One module run; backup_id=None leaves the option out."""
    args = dict(dict(backup_id="chg-1", settings=SETTINGS, wait_timeout=1, wait_sleep=1), kubeconfig=kubeconfig(), **args)
    if args["backup_id"] is None:
        del args["backup_id"]
    return run_module(ovn_database.main, args, check_mode=check_mode)


def finish(kube, name, condition="Complete"):
    kube.find("batch/v1", "Job", name, "ovn-system")["status"] = {
        "conditions": [{"type": condition, "status": "True", "reason": "BackoffLimitExceeded" if condition == "Failed"
                        else "Completed", "message": "done"}]}


def test_a_backup_is_a_job_with_the_claim_and_the_same_id_again_writes_nothing(cluster):
    result, unused = run(action="backup", check_mode=True)
    assert result["changed"] and cluster.find("batch/v1", "Job", "ovn-backup-chg-1", "ovn-system") is None
    result, unused = run(action="backup")
    # Nothing runs the Job here: the wait times out, naming it.
    assert result["failed"] and "ovn-backup-chg-1" in result["msg"]
    job = cluster.find("batch/v1", "Job", "ovn-backup-chg-1", "ovn-system")
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == SETTINGS["image"] and container["command"][:2] == ["/bin/sh", "-ec"]
    assert {e["name"]: e["value"] for e in container["env"]} == {
        "BACKUP_ID": "chg-1", "BACKUP_DIR": "/backups", "OVN_NB_REMOTE": NB, "OVN_SB_REMOTE": SB}
    assert job["spec"]["template"]["spec"]["volumes"] == [
        {"name": "backups", "persistentVolumeClaim": {"claimName": ovn_backup.CLAIM}}]
    assert cluster.find("v1", "PersistentVolumeClaim", ovn_backup.CLAIM, "ovn-system")["spec"] == \
        SETTINGS["storage"]["persistentVolumeClaim"]
    finish(cluster, "ovn-backup-chg-1")
    result, unused = run(action="backup")
    assert not result["changed"] and not result.get("failed") and result["job"]["result"] == "exists"
    assert result["files"] == ["chg-1/nb.db", "chg-1/sb.db"]


def test_a_failed_job_fails_naming_it_until_it_is_deleted(cluster):
    run(action="backup", wait=False)
    finish(cluster, "ovn-backup-chg-1", "Failed")
    result, unused = run(action="backup")
    assert result["failed"] and result["msg"].startswith("Job ovn-system/ovn-backup-chg-1 failed:") and \
        "delete it to run the backup chg-1 again" in result["msg"], result["msg"]


def test_a_restore_needs_the_confirmation_and_a_complete_backup(cluster):
    result, unused = run(action="restore", confirm="ovn")
    assert result["failed"] and "confirm: must be ovn-system" in result["msg"]
    result, unused = run(action="restore", confirm="ovn-system")
    assert result["failed"] and "no OVN backup chg-1: no Job ovn-system/ovn-backup-chg-1" in result["msg"]
    run(action="backup", wait=False)
    result, unused = run(action="restore", confirm="ovn-system")
    assert result["failed"] and "OVN backup chg-1 is not complete" in result["msg"]
    assert cluster.find("batch/v1", "Job", "ovn-restore-chg-1", "ovn-system") is None
    finish(cluster, "ovn-backup-chg-1")
    run(action="restore", confirm="ovn-system", wait=False)
    container = cluster.find("batch/v1", "Job", "ovn-restore-chg-1", "ovn-system")["spec"]["template"]["spec"][
        "containers"][0]
    assert "ovsdb-client restore \"$OVN_NB_REMOTE\" OVN_Northbound" in container["command"][2]
    assert "OVN_SB_REMOTE" not in [e["name"] for e in container["env"]]


def test_every_bad_setting_is_named_before_anything_is_written(cluster):
    result, unused = run(action="backup", backup_id="Not_A_Label", settings={
        "image": "", "storage": {"s3": {}}, "pod_annotations": {"a": 1}, "backoff_limit": -1, "extra": 1})
    for field in ("backup_id", "cobaltcore_ovn_backup.image", "cobaltcore_ovn_backup.storage",
                  "cobaltcore_ovn_backup.pod_annotations", "cobaltcore_ovn_backup.backoff_limit",
                  "cobaltcore_ovn_backup: unknown keys extra"):
        assert field in result["msg"], (field, result["msg"])
    assert cluster.find("batch/v1", "Job", "ovn-backup-Not_A_Label", "ovn-system") is None


def test_a_schedule_is_a_cron_job_of_the_backup_and_none_deletes_it(cluster):
    cluster.kinds[("batch/v1", "CronJob")] = ("cronjobs", True)
    settings = dict(SETTINGS, schedule="0 3 * * *", keep=2)
    result, unused = run(action="schedule", settings=settings, backup_id=None, check_mode=True)
    assert result["changed"] and cluster.find("batch/v1", "CronJob", ovn_backup.CRON_JOB, "ovn-system") is None
    result, unused = run(action="schedule", settings=settings, backup_id=None)
    assert result["changed"] and result["cron_job"] == {"namespace": "ovn-system", "name": "ovn-backup-scheduled",
                                                        "result": "created"}
    cron = cluster.find("batch/v1", "CronJob", ovn_backup.CRON_JOB, "ovn-system")
    spec = cron["spec"]
    assert (spec["schedule"], spec["concurrencyPolicy"], spec["successfulJobsHistoryLimit"]) == ("0 3 * * *", "Forbid", 2)
    template = spec["jobTemplate"]["spec"]["template"]
    container = template["spec"]["containers"][0]
    env = dict((e["name"], e.get("value", e.get("valueFrom"))) for e in container["env"])
    # Each Job's backup id comes from its own name (ovn-backup-scheduled-<n>: scheduled-<n>).
    assert env["JOB_NAME"] == {"fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-name']"}}
    assert env["KEEP"] == "2" and "BACKUP_ID" not in env and (env["OVN_NB_REMOTE"], env["OVN_SB_REMOTE"]) == (NB, SB)
    script = container["command"][2]
    assert script.startswith('BACKUP_ID="${JOB_NAME#ovn-backup-}"') and 'tail -n +$((KEEP + 1))' in script
    assert ovn_backup.run_record({"kind": "Job", "metadata": {"labels": spec["jobTemplate"]["metadata"]["labels"]}})
    assert cluster.find("v1", "PersistentVolumeClaim", ovn_backup.CLAIM, "ovn-system") is not None
    result, unused = run(action="schedule", settings=settings, backup_id=None)
    assert not result["changed"], result
    result, unused = run(action="schedule", settings=SETTINGS, backup_id=None)
    assert result["changed"] and result["cron_job"]["result"] == "deleted"
    assert cluster.find("batch/v1", "CronJob", ovn_backup.CRON_JOB, "ovn-system") is None
    result, unused = run(action="schedule", settings=SETTINGS, backup_id=None)
    assert not result["changed"] and result["cron_job"]["result"] == "absent"
    # A backup or a restore needs its id.
    result, unused = run(action="backup", backup_id=None)
    assert result["failed"] and "backup_id" in result["msg"]


def test_a_schedule_and_keep_that_are_not_one_are_named():
    problems = ovn_backup.settings_problems(dict(SETTINGS, schedule="daily", keep=0))
    assert [p.split(":")[0] for p in problems] == ["cobaltcore_ovn_backup.schedule", "cobaltcore_ovn_backup.keep"]
    assert ovn_backup.settings_problems(dict(SETTINGS, schedule="@daily", keep=1)) == []


def test_the_ovn_cluster_must_publish_both_endpoints():
    with pytest.raises(InputError, match="does not exist"):
        ovn_backup.remotes(None, "OVNCluster ovn-system/ovn")
    with pytest.raises(InputError, match="publishes no southbound endpoint"):
        ovn_backup.remotes({"status": {"endpoints": {"northbound": NB}}}, "OVNCluster ovn-system/ovn")


def test_an_operators_volume_and_pod_annotations():
    settings = {"image": "i", "storage": {"volume": {"nfs": {"server": "nfs.example.com", "path": "/ovn"}}},
                "pod_annotations": {"sidecar.istio.io/inject": "false"}, "backoff_limit": 0}
    job = ovn_backup.job_manifest("backup", "ovn-system", "x", settings, {"nb": NB, "sb": SB})
    assert job["spec"]["template"]["spec"]["volumes"] == [
        {"name": "backups", "nfs": {"server": "nfs.example.com", "path": "/ovn"}}]
    assert job["spec"]["template"]["metadata"]["annotations"] == {"sidecar.istio.io/inject": "false"}
    assert job["spec"]["backoffLimit"] == 0 and ovn_backup.claim_manifest("ovn-system", settings) is None
    assert ovn_backup.run_record(job) and not ovn_backup.run_record({"kind": "Job", "metadata": {}})
