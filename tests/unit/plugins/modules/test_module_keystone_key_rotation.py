# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""keystone_key_rotation: the plan in check mode, one Job per Keystone and kind, the same id rotates nothing,
refusals before any write, a refused rotation fails naming it, no key in the result."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import c5c3_api
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import key_rotation as kr
from ansible_collections.c5c3.cobaltcore.plugins.modules import keystone_key_rotation

from module_harness import assert_hidden, run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import
from test_module_control_plane_health import add_control_plane, add_owned
from test_module_control_plane_health import cluster  # noqa: F401  # pylint: disable=unused-import

ARGS = {"control_planes": [{"namespace": "openstack", "name": "lab"}], "rotation_id": "t1", "wait_timeout": 3,
        "wait_sleep": 1}
KEY = "c2VjcmV0LWtleS1tYXRlcmlhbC1uZXZlci1zaG93bg=="
EARLY = "2026-12-05T09:00:00Z"
LATER = "2026-12-05T10:00:05Z"


def add_keystone(kube, namespace="openstack", cp="lab"):  # noqa: F811
    add_control_plane(kube, name=cp, namespace=namespace, uid="uid-" + cp)
    add_owned(kube, "keystone", namespace=namespace, uid="uid-" + cp, cp=cp)
    for kind in kr.KINDS:
        kube.add({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {
            "name": kr.cronjob_name("keystone", kind), "namespace": namespace, "uid": "cj-" + kind},
            "spec": {"schedule": "0 0 * * 0", "jobTemplate": {"spec": {"template": {"spec": {}}}}}})
        kube.add({"apiVersion": "v1", "kind": "Secret", "metadata": {
            "name": kr.keys_secret("keystone", kind), "namespace": namespace,
            "labels": {"app.kubernetes.io/name": "keystone"}, "annotations": {kr.COMPLETED_AT: EARLY}},
            "data": {"0": KEY}})


@pytest.fixture
def region(cluster, monkeypatch):  # noqa: F811
    cluster.kinds[("batch/v1", "CronJob")] = ("cronjobs", True)
    cluster.kinds[("batch/v1", "Job")] = ("jobs", True)
    add_keystone(cluster)
    cluster.refuse = set()
    real = c5c3_api.rotation_states

    def operator(client, rotations):
        """The Job's pod and the keystone-operator: a created Job completes and its keys are applied, or refused."""
        for rotation in rotations:
            live = cluster.find("batch/v1", "Job", rotation["job"], rotation["namespace"])
            if live is None or live.get("status"):
                continue
            live["metadata"]["creationTimestamp"] = "2026-12-05T10:00:00Z"
            live["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
            if rotation["kind"] in cluster.refuse:
                cluster.add({"apiVersion": "v1", "kind": "Event", "metadata": {
                    "name": "ev-" + rotation["job"], "namespace": rotation["namespace"]},
                    "involvedObject": {"kind": "Keystone", "name": rotation["name"]}, "reason": "RotationRejected",
                    "lastTimestamp": LATER, "message": "staging secret %s rejected: duplicate keys detected"
                    % kr.staging_secret(rotation["name"], rotation["kind"])})
                continue
            secret = cluster.find("v1", "Secret", kr.keys_secret(rotation["name"], rotation["kind"]),
                                  rotation["namespace"])
            secret["metadata"]["annotations"][kr.COMPLETED_AT] = LATER
        return real(client, rotations)
    monkeypatch.setattr(c5c3_api, "rotation_states", operator)
    return cluster


def posts(kube):  # noqa: F811
    return [c for c in kube.calls if c[0] == "POST"]


def test_check_mode_plans_and_writes_nothing(region):
    result, _text = run_module(keystone_key_rotation.main, ARGS, check_mode=True)
    assert result["changed"] and not posts(region)
    assert [(r["job"], r["state"]) for r in result["rotations"]] == [
        ("keystone-fernet-rotate-t1", "absent"), ("keystone-credential-rotate-t1", "absent")]


def test_one_job_per_kind_then_the_same_id_rotates_nothing(region):
    result, text = run_module(keystone_key_rotation.main, ARGS)
    assert result["changed"] and result["started"] == ["keystone-fernet-rotate-t1", "keystone-credential-rotate-t1"]
    assert [r["state"] for r in result["rotations"]] == ["done", "done"]
    assert result["lines"][0] == "openstack/keystone fernet keys: done, applied %s (Job keystone-fernet-rotate-t1)" % LATER
    (post, unused) = posts(region)
    job = post[2]
    assert job["metadata"]["ownerReferences"][0]["uid"] == "cj-fernet"
    assert job["metadata"]["labels"][kr.ROTATION_ID_LABEL] == "t1"
    assert_hidden(text, KEY)
    region.calls[:] = []
    again, unused = run_module(keystone_key_rotation.main, ARGS)
    assert not again["changed"] and again["started"] == [] and not posts(region)


def test_only_the_kinds_asked_for(region):
    result, unused = run_module(keystone_key_rotation.main, dict(ARGS, keys=["credential"]))
    assert [r["kind"] for r in result["rotations"]] == ["credential"]
    assert region.find("batch/v1", "Job", "keystone-fernet-rotate-t1", "openstack") is None


def test_missing_control_plane_and_cronjob_are_named_before_any_write(region):
    del region.objects[("batch/v1", "CronJob", "openstack", "keystone-credential-rotate")]
    args = dict(ARGS, control_planes=ARGS["control_planes"] + [{"namespace": "openstack-x", "name": "x"}])
    result, unused = run_module(keystone_key_rotation.main, args)
    assert result["failed"] and not posts(region)
    assert "ControlPlane openstack-x/x does not exist" in result["msg"]
    assert "has no CronJob keystone-credential-rotate" in result["msg"]


def test_bad_rotation_id_is_refused(region):
    result, unused = run_module(keystone_key_rotation.main, dict(ARGS, rotation_id="Chg 1"))
    assert result["failed"] and "rotation_id" in result["msg"] and not posts(region)


def test_a_refused_rotation_fails_and_the_same_id_is_not_retried(region):
    region.refuse.add("credential")
    result, unused = run_module(keystone_key_rotation.main, ARGS)
    assert result["failed"] and "RotationRejected" in result["msg"] and "keystone-credential-rotate-t1" in result["msg"]
    region.calls[:] = []
    again, unused = run_module(keystone_key_rotation.main, ARGS)
    assert again["failed"] and "failed before, nothing was started" in again["msg"] and not posts(region)
    fresh, unused = run_module(keystone_key_rotation.main, dict(ARGS, rotation_id="t2", keys=["fernet"]))
    assert fresh["changed"] and [r["state"] for r in fresh["rotations"]] == ["done"]
