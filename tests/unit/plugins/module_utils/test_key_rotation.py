# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""region.key_rotation: the keystone-operator's names, the Job made from a CronJob, a rotation's verdict."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import key_rotation as kr

JOB_CREATED = "2026-12-05T10:00:00Z"


def job(conditions=(), **status):
    return {"metadata": {"name": "keystone-fernet-rotate-t1", "creationTimestamp": JOB_CREATED},
            "status": dict(status, conditions=[{"type": t, "status": "True", "reason": r, "message": m}
                                               for t, r, m in conditions])}


def keys(completed):
    return {"name": "keystone-fernet-keys", "annotations": {kr.COMPLETED_AT: completed} if completed else {}}


def event(reason, when, message="staging secret keystone-fernet-keys-rotation rejected: duplicate keys"):
    return {"reason": reason, "lastTimestamp": when, "message": message}


def test_names_follow_the_keystone_operator():
    assert kr.keys_secret("keystone", "fernet") == "keystone-fernet-keys"
    assert kr.staging_secret("keystone", "credential") == "keystone-credential-keys-rotation"
    assert kr.cronjob_name("keystone", "fernet") == "keystone-fernet-rotate"
    assert kr.job_name("keystone", "credential", "chg-1") == "keystone-credential-rotate-chg-1"


def test_input_problems_name_every_field():
    problems = kr.input_problems("Bad_ID", ["fernet", "tokens"], ["keystone"])
    assert [p.split(":")[0] for p in map(str, problems)] == ["rotation_id", "keys"]
    assert "tokens" in str(problems[1])
    assert kr.input_problems("chg-1", [], []) and "empty" in str(kr.input_problems("chg-1", [], [])[0])
    assert kr.input_problems("chg-1", ["fernet", "credential"], ["keystone"]) == []


def test_a_job_name_longer_than_a_label_is_refused():
    (found,) = kr.input_problems("a" * 40, ["credential"], ["keystone"])
    assert "at most 63" in str(found)


def test_the_job_is_the_cronjobs_template_owned_by_it():
    cronjob = {"metadata": {"name": "keystone-fernet-rotate", "namespace": "openstack", "uid": "u1"},
               "spec": {"schedule": "0 0 * * 0", "jobTemplate": {
                   "metadata": {"labels": {"app.kubernetes.io/component": "fernet-rotation"}},
                   "spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}}}}
    made = kr.job_from_cronjob(cronjob, "keystone-fernet-rotate-t1", "t1")
    assert made["metadata"]["labels"] == {"app.kubernetes.io/component": "fernet-rotation", kr.ROTATION_ID_LABEL: "t1"}
    assert made["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual"}
    assert made["metadata"]["ownerReferences"][0]["uid"] == "u1"
    assert made["spec"] == cronjob["spec"]["jobTemplate"]["spec"]


def test_states_of_a_rotation():
    staging = "keystone-fernet-keys-rotation"
    assert kr.rotation_state(None, keys(None), [], staging)[0] == kr.ABSENT
    assert kr.rotation_state(job(), keys(None), [], staging) == (kr.RUNNING, "Job running (0 active, 0 failed pods)")
    complete = job([("Complete", "", "")])
    # complete, but the keystone-operator has not applied the keys yet (the annotation is older than the Job)
    assert kr.rotation_state(complete, keys("2026-12-05T09:00:00Z"), [], staging)[0] == kr.RUNNING
    assert kr.rotation_state(complete, keys("2026-12-05T10:00:01Z"), [], staging) == (kr.DONE, "2026-12-05T10:00:01Z")
    assert kr.rotation_state(job(), keys("2026-12-05T10:00:01Z"), [], staging)[0] == kr.RUNNING


def test_a_failed_job_or_a_refusal_fails_the_rotation():
    staging = "keystone-fernet-keys-rotation"
    state, detail = kr.rotation_state(job([("Failed", "BackoffLimitExceeded", "Job has reached the specified "
                                            "backoff limit")]), keys(None), [], staging)
    assert state == kr.FAILED and "BackoffLimitExceeded" in detail
    state, detail = kr.rotation_state(job(), keys(None), [event("RotationRejected", "2026-12-05T10:00:02Z")], staging)
    assert state == kr.FAILED and "RotationRejected" in detail and "duplicate keys" in detail


def test_older_or_foreign_refusals_do_not_fail_the_rotation():
    staging = "keystone-fernet-keys-rotation"
    old = event("RotationRejected", "2026-12-05T09:59:59Z")
    other = event("RotationRejected", "2026-12-05T10:00:05Z", "staging secret keystone-credential-keys-rotation x")
    assert kr.rotation_state(job(), keys(None), [old, other], staging)[0] == kr.RUNNING
