# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""region_lock against a fake API server: create, renew, wait, break, release, check mode."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import os
import socket

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import run_lock
from ansible_collections.c5c3.cobaltcore.plugins.modules import region_lock

from module_harness import kube, run_module  # noqa: F401  # pylint: disable=unused-import

ARGS = {"kubeconfig": "/k.yaml", "region": "lab"}


def lease(kube):
    return kube.find("coordination.k8s.io/v1", "Lease", "cobaltcore-run-lab", "kube-system")


def held_elsewhere(kube, seconds_ago=10, duration=300,
                   other=run_lock.Holder("awx-job-7-xyz", 12, "300", "runner", "7", "0c3e0b44", "pid:[4026531836]")):
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=seconds_ago)
    body = run_lock.acquired(None, run_lock.Decision(run_lock.CREATE, ""), other, now, "cobaltcore-run-lab",
                             "kube-system", duration)
    kube.add(body)
    return other


def test_a_run_creates_renews_and_releases_its_lock(kube):
    result, _text = run_module(region_lock.main, dict(ARGS, job="88"), check_mode=True)
    assert result["acquired"] and result["action"] == "create" and lease(kube) is None
    result, _text = run_module(region_lock.main, dict(ARGS, job="88"))
    assert result["acquired"] and result["action"] == "create" and not result["changed"], result
    spec = lease(kube)["spec"]
    assert spec["holderIdentity"] == result["holder"] and result["holder"].endswith("(AWX job 88)")
    assert "@%s pid " % socket.gethostname() in result["holder"] and spec["leaseDurationSeconds"] == 300
    annotations = lease(kube)["metadata"]["annotations"]
    assert annotations["cobaltcore.c5c3.io/lock-boot-id"] == run_lock.proc_boot_id()
    assert annotations["cobaltcore.c5c3.io/lock-pid-namespace"] == os.readlink("/proc/self/ns/pid")
    result, _text = run_module(region_lock.main, dict(ARGS, job="88"))
    assert result["action"] == "renew" and lease(kube)["spec"]["acquireTime"] == spec["acquireTime"]
    result, _text = run_module(region_lock.main, dict(ARGS, state="released"))
    assert result["action"] == "release" and "holderIdentity" not in lease(kube)["spec"]
    result, _text = run_module(region_lock.main, dict(ARGS, state="released"))
    assert result["action"] == "none" and result["reason"] == "this run does not hold the lock"


def test_a_lock_held_elsewhere_fails_naming_the_holder_and_is_left_alone(kube):
    held_elsewhere(kube)
    before = lease(kube)
    result, _text = run_module(region_lock.main, ARGS)
    assert result["failed"] and not result["acquired"] and result["action"] == "wait"
    assert result["msg"].startswith("the run lock of region lab (Lease kube-system/cobaltcore-run-lab) is held by "
                                    "runner@awx-job-7-xyz pid 12 (AWX job 7) since ")
    assert "expires" in result["msg"] and "cobaltcore_break_lock=true" in result["msg"]
    result, _text = run_module(region_lock.main, dict(ARGS, state="released"))
    assert result["action"] == "none" and lease(kube) == before
    result, _text = run_module(region_lock.main, ARGS, check_mode=True)
    assert result["failed"] and result["waited"] == 0.0 and lease(kube) == before


def test_a_lock_of_a_run_with_this_host_name_in_another_pid_namespace_is_waited_for(kube):
    """Its pid 1 is not this namespace's pid 1: not gone, only not visible from here."""
    started = str(int(run_lock.proc_started(1)) + 1)  # what this namespace's pid 1 is not: a run it would take over
    other = run_lock.Holder(socket.gethostname(), 1, started, "runner", None, run_lock.proc_boot_id(), "pid:[1]")
    held_elsewhere(kube, other=other)
    before = lease(kube)
    result, _text = run_module(region_lock.main, ARGS)
    assert result["failed"] and not result["acquired"] and result["action"] == "wait"
    assert ("is held by runner@%s pid 1 since " % socket.gethostname()) in result["msg"]
    assert "in another PID namespace or boot" in result["msg"]
    assert lease(kube) == before


def test_break_lock_and_an_expired_lease_take_over_with_a_warning(kube):
    held_elsewhere(kube)
    result, _text = run_module(region_lock.main, dict(ARGS, break_lock=True))
    assert result["acquired"] and result["action"] == "take_over" and result["broken"]
    assert "was broken" in str(result["warnings"][0])
    assert lease(kube)["spec"]["leaseTransitions"] == 1 and lease(kube)["spec"]["holderIdentity"] == result["holder"]


def test_an_expired_lease_is_taken_over_without_breaking(kube):
    held_elsewhere(kube, seconds_ago=400)
    result, _text = run_module(region_lock.main, ARGS)
    assert result["acquired"] and result["action"] == "take_over" and not result["broken"]
    assert "expired at" in result["reason"]


def test_bad_settings_are_reported_together(kube):
    result, _text = run_module(region_lock.main, dict(ARGS, wait=-1, lease_duration=2, namespace="Bad NS"))
    assert result["failed"] and result["msg"] == (
        "invalid input, nothing was changed: namespace: 'Bad NS' is not a valid namespace name; "
        "wait: must be 0 or more seconds, got -1; lease_duration: must be at least 15 seconds, got 2")
    assert kube.calls == []
