# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region run lock's decisions and Leases, without an API server."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import os

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import run_lock

NOW = datetime.datetime(2026, 11, 27, 1, 0, 0, tzinfo=datetime.timezone.utc)
BOOT = "5f6d246f-4841-47e8-8fae-bad472929002"
HOST_PIDS = "pid:[4026531836]"
ME = run_lock.Holder("ctl-1", 4711, "1000", "alice", None, BOOT, HOST_PIDS)
OTHER_HERE = run_lock.Holder("ctl-1", 815, "2000", "bob", None, BOOT, HOST_PIDS)
# Host-network podman, AWX execution environments on one node: the host name of the node, pids of their own.
OTHER_CONTAINER = OTHER_HERE._replace(pid_namespace="pid:[4026532179]")
ELSEWHERE = run_lock.Holder("awx-job-88-abcde", 12, "300", "runner", "88", "0c3e0b44-9d0e-4b8e-a3f3-4f1f0b6c0f7e",
                            HOST_PIDS)


def lease_of(holder, renewed=NOW - datetime.timedelta(seconds=10), duration=300, transitions=2):
    body = run_lock.acquired(None, run_lock.Decision(run_lock.CREATE, ""), holder, renewed, "cobaltcore-run-lab",
                             "kube-system", duration)
    body["metadata"]["resourceVersion"] = "41"
    body["spec"]["leaseTransitions"] = transitions
    return body


def never(holder):
    raise AssertionError("liveness asked about %r" % (holder,))


def test_no_lease_is_created_and_a_released_one_is_taken():
    assert run_lock.decide(None, ME, NOW, never).action == run_lock.CREATE
    free = run_lock.released(lease_of(OTHER_HERE), NOW)
    assert "holderIdentity" not in free["spec"]
    assert run_lock.decide(free, ME, NOW, never).action == run_lock.TAKE


def test_the_same_run_renews_keeping_acquire_time_and_transitions():
    lease = lease_of(ME, renewed=NOW - datetime.timedelta(seconds=100))
    decision = run_lock.decide(lease, ME, NOW, never)
    assert decision.action == run_lock.RENEW
    body = run_lock.acquired(lease, decision, ME, NOW, "cobaltcore-run-lab", "kube-system", 300)
    assert body["spec"]["acquireTime"] == lease["spec"]["acquireTime"]
    assert body["spec"]["renewTime"] == run_lock.format_time(NOW)
    assert body["spec"]["leaseTransitions"] == 2
    assert body["metadata"]["resourceVersion"] == "41"


def test_a_reused_pid_is_another_run():
    reused = ME._replace(started="999")
    assert run_lock.decide(lease_of(reused), ME, NOW, lambda h: False).action == run_lock.TAKE_OVER


def test_a_live_run_on_this_controller_is_waited_for_even_when_its_lease_expired():
    stale = lease_of(OTHER_HERE, renewed=NOW - datetime.timedelta(hours=2))
    decision = run_lock.decide(stale, ME, NOW, lambda h: h == OTHER_HERE)
    assert decision.action == run_lock.WAIT
    assert "bob@ctl-1 pid 815" in decision.reason and "expired" in decision.reason


def test_a_dead_run_on_this_controller_is_taken_over_at_once():
    """This controller: the same host name, boot_id and PID namespace; the holder's pid is gone."""
    decision = run_lock.decide(lease_of(OTHER_HERE), ME, NOW, lambda h: False)
    assert decision.action == run_lock.TAKE_OVER
    assert "no longer runs on this controller" in decision.reason
    body = run_lock.acquired(lease_of(OTHER_HERE), decision, ME, NOW, "cobaltcore-run-lab", "kube-system", 300)
    assert body["spec"]["holderIdentity"] == "alice@ctl-1 pid 4711"
    assert body["spec"]["leaseTransitions"] == 3
    assert body["spec"]["acquireTime"] == body["spec"]["renewTime"] == run_lock.format_time(NOW)
    assert body["metadata"]["annotations"] == {
        "cobaltcore.c5c3.io/lock-host": "ctl-1", "cobaltcore.c5c3.io/lock-pid": "4711",
        "cobaltcore.c5c3.io/lock-started": "1000", "cobaltcore.c5c3.io/lock-user": "alice",
        "cobaltcore.c5c3.io/lock-job": "", "cobaltcore.c5c3.io/lock-boot-id": BOOT,
        "cobaltcore.c5c3.io/lock-pid-namespace": HOST_PIDS}


def test_a_run_with_this_host_name_in_another_pid_namespace_is_waited_for_never_taken_over():
    """Its pid means another process here (or none): whether it runs cannot be told, only its lease's expiry."""
    decision = run_lock.decide(lease_of(OTHER_CONTAINER), ME, NOW, never)
    assert decision.action == run_lock.WAIT
    assert decision.reason.startswith("held by bob@ctl-1 pid 815 since ")
    assert decision.reason.endswith(" (a run with this host name in another PID namespace or boot: its process "
                                    "cannot be seen from here)")
    other_boot = OTHER_HERE._replace(boot_id="0c3e0b44-9d0e-4b8e-a3f3-4f1f0b6c0f7e")  # another machine, or rebooted
    assert run_lock.decide(lease_of(other_boot), ME, NOW, never).action == run_lock.WAIT
    expired = lease_of(OTHER_CONTAINER, renewed=NOW - datetime.timedelta(seconds=301))
    decision = run_lock.decide(expired, ME, NOW, never)
    assert decision.action == run_lock.TAKE_OVER and "expired at" in decision.reason
    decision = run_lock.decide(lease_of(OTHER_CONTAINER), ME, NOW, never, break_lock=True)
    assert decision.action == run_lock.TAKE_OVER and "was broken" in decision.reason


def test_the_same_pid_and_start_time_in_another_pid_namespace_is_another_run():
    """Two containers' ansible-playbook, each pid 1, started in one clock tick."""
    twin = ME._replace(pid_namespace="pid:[4026532179]")
    assert not run_lock.same_run(twin, ME)
    assert run_lock.decide(lease_of(twin), ME, NOW, never).action == run_lock.WAIT


def test_a_lease_of_an_earlier_build_without_boot_id_and_pid_namespace_is_waited_for_until_it_expires():
    """Conservative: without them the holder's pid may be of another container's, so its process is not looked at."""
    lease = lease_of(OTHER_HERE)
    for field in ("boot-id", "pid-namespace"):
        del lease["metadata"]["annotations"]["cobaltcore.c5c3.io/lock-" + field]
    assert run_lock.holder_of(lease) == OTHER_HERE._replace(boot_id=None, pid_namespace=None)
    decision = run_lock.decide(lease, ME, NOW, never)
    assert decision.action == run_lock.WAIT
    assert decision.reason.endswith(" (its Lease names no boot_id or PID namespace, as an earlier build of the "
                                    "collection wrote it: its process is not looked at)")
    lease["spec"]["renewTime"] = run_lock.format_time(NOW - datetime.timedelta(seconds=301))
    assert run_lock.decide(lease, ME, NOW, never).action == run_lock.TAKE_OVER


def test_a_run_that_does_not_know_its_own_pid_namespace_looks_at_no_holder():
    me = ME._replace(pid_namespace=None)
    decision = run_lock.decide(lease_of(OTHER_HERE), me, NOW, never)
    assert decision.action == run_lock.WAIT
    assert decision.reason.endswith(" (this run does not know its own boot_id or PID namespace: the holder's "
                                    "process is not looked at)")
    assert run_lock.decide(lease_of(me), me, NOW, never).action == run_lock.RENEW


def test_another_controller_waits_until_expiry_or_breaks_the_lock():
    live = lease_of(ELSEWHERE)
    decision = run_lock.decide(live, ME, NOW, never)
    assert decision.action == run_lock.WAIT
    assert decision.reason == ("held by runner@awx-job-88-abcde pid 12 (AWX job 88) since 2026-11-27T00:59:50.000000Z, "
                               "renewed 2026-11-27T00:59:50.000000Z, expires 2026-11-27T01:04:50.000000Z")
    expired = lease_of(ELSEWHERE, renewed=NOW - datetime.timedelta(seconds=301))
    decision = run_lock.decide(expired, ME, NOW, never)
    assert decision.action == run_lock.TAKE_OVER and "expired at 2026-11-27T00:59:59" in decision.reason
    decision = run_lock.decide(live, ME, NOW, never, break_lock=True)
    assert decision.action == run_lock.TAKE_OVER and "was broken" in decision.reason


def test_break_lock_also_takes_a_live_run_on_this_controller():
    decision = run_lock.decide(lease_of(OTHER_HERE), ME, NOW, lambda h: True, break_lock=True)
    assert decision.action == run_lock.TAKE_OVER and "was broken" in decision.reason


def test_unknown_liveness_falls_back_to_expiry():
    assert run_lock.decide(lease_of(OTHER_HERE), ME, NOW, lambda h: None).action == run_lock.WAIT


def test_a_lease_held_by_someone_without_our_annotations_counts_by_expiry():
    foreign = {"metadata": {"name": "x", "resourceVersion": "3"},
               "spec": {"holderIdentity": "someone", "leaseDurationSeconds": 60,
                        "renewTime": run_lock.format_time(NOW - datetime.timedelta(seconds=30))}}
    assert run_lock.decide(foreign, ME, NOW, never).action == run_lock.WAIT
    foreign["spec"]["renewTime"] = run_lock.format_time(NOW - datetime.timedelta(seconds=61))
    assert run_lock.decide(foreign, ME, NOW, never).action == run_lock.TAKE_OVER


def test_release_clears_the_holder_and_keeps_other_annotations():
    lease = lease_of(ME)
    lease["metadata"]["annotations"]["note"] = "kept"
    body = run_lock.released(lease, NOW)
    assert body["metadata"]["annotations"] == {"note": "kept"}
    assert body["metadata"]["resourceVersion"] == "41"
    assert body["spec"]["leaseDurationSeconds"] == 1 and body["spec"]["leaseTransitions"] == 2
    assert run_lock.holder_of(body) is None


def test_identity_names_user_host_pid_and_awx_job():
    assert run_lock.identity(ELSEWHERE) == "runner@awx-job-88-abcde pid 12 (AWX job 88)"
    assert run_lock.holder_of(lease_of(ELSEWHERE)) == ELSEWHERE._replace(pid=12)


def test_times_round_trip():
    assert timestamps.parse_datetime(run_lock.format_time(NOW)) == NOW
    assert timestamps.parse_datetime("2026-11-27T01:00:00Z") == NOW
    assert timestamps.parse_datetime("garbage") is None


def test_validate_names_every_bad_setting():
    with pytest.raises(InputError) as error:
        run_lock.validate("Lab_1", None, "Kube System", -1, 5)
    assert error.value.problems == [
        "name: 'cobaltcore-run-Lab_1' is not a valid Lease name (DNS-1123 subdomain)",
        "namespace: 'Kube System' is not a valid namespace name",
        "wait: must be 0 or more seconds, got -1",
        "lease_duration: must be at least 15 seconds, got 5"]
    assert run_lock.validate("lab", None, "kube-system", 0, 300) == "cobaltcore-run-lab"


def test_controller_process_is_the_topmost_ansible_playbook():
    playbook = ["/venv/bin/python", "/venv/bin/ansible-playbook", "site.yml"]
    table = {900: (["sh", "-c", "python"], 800), 800: (playbook, 700), 700: (playbook, 600),
             600: (["bash"], 1), 1: (["/sbin/init"], 0), 50: (["python", "module.py"], 900)}
    found = run_lock.controller_process(50, lambda p: table[p][0], lambda p: table[p][1])
    assert found == 700
    assert run_lock.controller_process(600, lambda p: table[p][0], lambda p: table[p][1]) is None


def test_controller_process_may_be_pid_1():
    """A container's command, or unshare --pid --fork's: ansible-playbook is the PID namespace's init."""
    playbook = ["/venv/bin/python", "/venv/bin/ansible-playbook", "site.yml"]
    table = {900: (["sh", "-c", "python"], 800), 800: (playbook, 1), 1: (playbook, 0),
             50: (["python", "module.py"], 900)}
    assert run_lock.controller_process(50, lambda p: table[p][0], lambda p: table[p][1]) == 1


def test_proc_readers_see_this_process(tmp_path):
    me = run_lock.Holder("h", os.getpid(), run_lock.proc_started(os.getpid()), "u", None, None, None)
    assert run_lock.proc_parent(os.getpid()) == os.getppid()
    assert run_lock.proc_alive(me) is True
    assert run_lock.proc_alive(me._replace(started="1")) is False
    assert run_lock.proc_alive(me._replace(pid=2 ** 22 + 7)) is False
    assert run_lock.proc_alive(me, proc=str(tmp_path)) is None


def test_proc_readers_name_this_boot_and_pid_namespace(tmp_path):
    with open("/proc/sys/kernel/random/boot_id") as handle:
        assert run_lock.proc_boot_id() == handle.read().strip()
    assert run_lock.proc_pid_namespace() == os.readlink("/proc/self/ns/pid")
    assert run_lock.proc_pid_namespace().startswith("pid:[")
    assert run_lock.proc_boot_id(proc=str(tmp_path)) is None
    assert run_lock.proc_pid_namespace(proc=str(tmp_path)) is None
    # A /proc of another PID namespace: its "self" is another pid, and its pids are not the ones this process sees.
    (tmp_path / "self").symlink_to(str(os.getpid() + 1))
    assert run_lock.proc_pid_namespace(proc=str(tmp_path)) is None
