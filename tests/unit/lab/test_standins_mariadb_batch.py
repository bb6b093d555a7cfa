# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mariadb-operator's Backup and Restore as the lab plays them: the condition Complete from the Job or CronJob, as
upstream's pkg/condition/complete.go writes it, judged by the collection's readiness rule."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import mariadb_batch  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import readiness  # noqa: E402


def job(**conditions):
    return {"status": {"conditions": [{"type": t, "status": s} for t, s in conditions.items()]}}


def backup(condition, schedule=None):
    spec = {"mariaDbRef": {"name": "mariadb"}, "storage": {"s3": {"bucket": "b", "endpoint": "e"}}}
    if schedule:
        spec["schedule"] = {"cron": schedule}
    status, reason, message = condition
    return {"apiVersion": mariadb_batch.GV, "kind": "Backup", "metadata": {"name": "b", "namespace": "n"},
            "spec": spec, "status": {"conditions": [
                {"type": "Complete", "status": status, "reason": reason, "message": message}]}}


@pytest.mark.parametrize("found, condition, ready, failed", [
    (job(), ("False", "JobRunning", "Running"), False, False),
    (job(Complete="True"), ("True", "JobComplete", "Success"), True, False),
    (job(Failed="True"), ("True", "JobFailed", "Failed"), False, True),
    (dict(job(), spec={"suspend": True}), ("False", "JobSuspended", "Suspended"), False, False),
])
def test_a_jobs_state_becomes_the_condition_the_readiness_rule_judges(found, condition, ready, failed):
    assert mariadb_batch.job_condition(found) == condition
    verdict = readiness.evaluate(backup(condition))
    assert (verdict.ready, verdict.terminal) == (ready, failed)


@pytest.mark.parametrize("status, condition", [
    ({}, ("False", "CronJobScheduled", "Scheduled")),
    ({"lastScheduleTime": "2026-12-06T02:00:00Z", "lastSuccessfulTime": "2026-12-05T02:00:10Z", "active": [{}]},
     ("False", "CronJobRunning", "Running")),
    ({"lastScheduleTime": "2026-12-06T02:00:00Z", "lastSuccessfulTime": "2026-12-05T02:00:10Z"},
     ("False", "CronJobScheduled", "Failed")),
    ({"lastScheduleTime": "2026-12-06T02:00:00Z", "lastSuccessfulTime": "2026-12-06T02:00:09Z"},
     ("True", "CronJobSucess", "Success")),
])
def test_a_cronjobs_last_runs_become_the_condition(status, condition):
    assert mariadb_batch.cronjob_condition({"status": status}) == condition
    verdict = readiness.evaluate(backup(condition, "0 2 * * *"))
    assert verdict.ready == (condition[2] != "Failed") and not verdict.terminal


def test_the_backup_job_dumps_into_its_storage_and_fails_when_told():
    obj = backup(("False", "JobRunning", "Running"))
    spec = mariadb_batch.job_spec(dict(obj, metadata={"name": "b", "namespace": "n"}), "mariadb")
    pod = spec["template"]["spec"]
    assert spec["backoffLimit"] == 5 and pod["restartPolicy"] == "OnFailure" and pod["serviceAccountName"] == "b"
    assert pod["initContainers"][0]["name"] == "mariadb" and "--host=mariadb.n.svc" in pod["initContainers"][0]["command"]
    assert pod["volumes"] == [{"name": "backup", "emptyDir": {}}]
    assert mariadb_batch.KWOK_FAIL not in spec["template"]["metadata"]["labels"]
    failing = mariadb_batch.job_spec(dict(obj, spec=dict(obj["spec"], backoffLimit=0)), "mariadb", fail=True)
    assert failing["backoffLimit"] == 0 and failing["template"]["metadata"]["labels"][mariadb_batch.KWOK_FAIL] == "true"
