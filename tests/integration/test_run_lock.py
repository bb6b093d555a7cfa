"""The region run lock on the lab (docs/run-lock.md), on the session's converged region.

Phase 5 alone (playbooks/keystone.yml) is the run that races: with K-ORC's credential revoked in Keystone, every run
that reaches phase 5 mints a new one, as two runs of a fresh region do. Two runs at once, a run killed with SIGKILL,
a lock left by another controller, two runs with one host name in PID namespaces of their own, check mode, and the
credential module run twice at once without the lock.
"""

import datetime
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from conftest import (REGION_HOST, REGION_NAMESPACE, REPO, RUN_LOCK, ansible_env, failures, keystone_admin,
                      keystone_endpoint, kill_run, kubectl, lab_kubectl, run_lock, run_lock_holder, run_tasks, secret_data,
                      task_results, token_status, wait_truthy)
from regionlab import config
from regionlab import keystone as lab_keystone

PHASE5 = REPO / "playbooks" / "keystone.yml"
MINT = "Mint K-ORC's application credentials and write their clouds.yaml Secrets"
VERIFY = "Verify the catalogs, the service users and every credential in Keystone"
SHOW_HOLDER = "Show who holds the region's run lock while this run waits for it"
WAIT_INCLUDE = "Wait for the region's run lock another run holds"  # includes SHOW_HOLDER and the wait
TAKE = "Take the region's run lock, or renew it for this run"
DESCRIPTION = "K-ORC credentials of namespace openstack (c5c3.cobaltcore)"
# A PID namespace of its own, as a container has, with this host's name and network. Root may create one, anyone
# else only in a user namespace of their own. --kill-child: the namespace ends with unshare.
UNSHARE = (["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"]
           + ([] if os.geteuid() == 0 else ["--map-root-user"]))


def _control_plane():
    return config.STATE / "kubeconfig" / ("%s.yaml" % REGION_HOST)


def _start(*args, new_session=False, playbook=PHASE5, pid_namespace=False):
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(REPO / "inventories" / "lab"),
           str(playbook)] + list(args)
    if pid_namespace:
        cmd = UNSHARE + cmd
    return subprocess.Popen(cmd, cwd=REPO, env=ansible_env(COBALTCORE_LAB_DIR=str(config.STATE)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=new_session)


def _finish(proc):
    stdout, stderr = proc.communicate(timeout=600)
    try:
        return proc.returncode, json.loads(stdout)
    except ValueError:
        raise AssertionError("ansible-playbook printed no JSON (rc %d):\n%s\n%s"
                             % (proc.returncode, stdout[-3000:], stderr[-3000:]))


def _changed(out):
    return sum(stats.get("changed", 0) for stats in out["stats"].values())


def _korc_credential():
    return yaml.safe_load(secret_data(_control_plane(), "k-orc-clouds-yaml")["clouds.yaml"])["clouds"]["openstack"]


def _revoke_korc_credential():
    """What a fresh region looks like to phase 5: K-ORC's Secret names no working credential, so a run mints one."""
    admin = keystone_admin(_control_plane())
    admin.identity.delete_application_credential(admin.current_user_id, _korc_credential()["auth"]["application_credential_id"])
    return admin


def _korc_works(admin):
    """K-ORC's Secret names a credential that issues a token, and it is the only one of its kind in Keystone."""
    cloud = _korc_credential()
    status = token_status(keystone_endpoint(_control_plane()), yaml.safe_dump({"clouds": {"openstack": cloud}}),
                          "openstack")
    ours = [c.id for c in admin.identity.application_credentials(user=admin.current_user_id)
            if c.description == DESCRIPTION]
    return status, ours, cloud["auth"]["application_credential_id"]


def _minted(out):
    result = task_results(out, MINT)[REGION_HOST]
    return [c["minted"] for c in result["clusters"]]


def test_two_runs_at_once_one_waits_for_the_other_and_the_region_converges(region):
    assert region.first.rc == 0
    admin = _revoke_korc_credential()
    first = _start()
    # The second starts once the first holds the lock: deterministic, as the lock makes it.
    wait_truthy(run_lock_holder, "the first run to take the lock", timeout=60, interval=0.2)
    second = _start("-e", "cobaltcore_lock_wait=300")
    (rc1, out1), (rc2, out2) = _finish(first), _finish(second)
    assert rc1 == 0 and rc2 == 0, (failures(out1), failures(out2))
    # The first minted K-ORC a credential; the second waited (and said for whom), then found it working.
    assert _minted(out1) == [True] and _minted(out2) == [False]
    shown = task_results(out2, SHOW_HOLDER)[REGION_HOST]
    assert not shown.get("skipped") and "the run lock is held by" in shown["msg"] and " pid " in shown["msg"]
    assert task_results(out1, WAIT_INCLUDE)[REGION_HOST].get("skipped")
    status, ours, current = _korc_works(admin)
    assert status == 201 and ours == [current]
    verified = task_results(out2, VERIFY)[REGION_HOST]
    assert not verified.get("failed") and not verified.get("skipped")
    assert run_lock_holder() is None  # released at the end of each run


HOLD = REPO / "tests" / "integration" / "playbooks" / "region_lock_hold.yml"


def _hold_interval(out):
    def noted(task, fact):
        return float(next(iter(task_results(out, task).values()))["ansible_facts"][fact])
    return (noted("Note when this run holds the lock", "held_from"),
            noted("Note until when this run held the lock", "held_until"))


def test_runs_started_at_the_same_instant_never_hold_the_lock_together(lab):
    """The lock's own race, repeated: two runs that try to take it at the same moment (a create against a create,
    an update against an update of the same resourceVersion). One holds it, the other waits and says for whom."""
    for offset in (0.0, 0.0, 0.2):  # the race is timing dependent
        barrier = threading.Barrier(2)
        procs = [None, None]

        def start(index):
            barrier.wait()
            if index:
                time.sleep(offset)
            procs[index] = _start("-e", "cobaltcore_lock_wait=120", playbook=HOLD)

        threads = [threading.Thread(target=start, args=(i,)) for i in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        (rc1, out1), (rc2, out2) = _finish(procs[0]), _finish(procs[1])
        assert rc1 == 0 and rc2 == 0, (offset, failures(out1), failures(out2))
        (from1, until1), (from2, until2) = _hold_interval(out1), _hold_interval(out2)
        assert until1 <= from2 or until2 <= from1, (offset, (from1, until1), (from2, until2))
        waited = [not next(iter(task_results(out, WAIT_INCLUDE).values())).get("skipped") for out in (out1, out2)]
        assert sorted(waited) == [False, True], (offset, waited)
        assert run_lock_holder() is None


def test_a_run_with_the_same_host_name_in_another_pid_namespace_waits_and_never_takes_over(lab, tmp_path):
    """Two runs on this host, each in a PID namespace of its own (as two containers with the host's network, or AWX
    execution environments on one node): each ansible-playbook is pid 1 there, so the first's pid names another
    process in the second's /proc. The second waits for the first, fails naming it when its wait ends, and the lock
    stays the first's until the first releases it."""
    release = tmp_path / "release"
    first = _start("-e", json.dumps({"hold_seconds": 120, "release_file": str(release)}), playbook=HOLD,
                   pid_namespace=True)
    try:
        holder = wait_truthy(run_lock_holder, "the first run to take the lock", timeout=60, interval=0.2)
        held = run_lock()
        annotations = held["metadata"]["annotations"]
        assert annotations["cobaltcore.c5c3.io/lock-pid"] == "1", annotations
        assert annotations["cobaltcore.c5c3.io/lock-pid-namespace"].startswith("pid:["), annotations
        started = time.monotonic()
        rc, out = _finish(_start("-e", "cobaltcore_lock_wait=5", playbook=HOLD, pid_namespace=True))
        (failed,) = failures(out)
        assert rc != 0 and failed[0] == "Wait for the region's run lock"
        assert ("is held by %s since %s" % (holder, held["spec"]["acquireTime"])) in failed[2]
        assert "in another PID namespace or boot" in failed[2]
        assert time.monotonic() - started >= 5
        # The hold playbook's one host is the management cluster's.
        shown = next(iter(task_results(out, SHOW_HOLDER).values()))
        assert "the run lock is held by %s" % holder in shown["msg"]
        taking = next(iter(task_results(out, TAKE).values()))  # its "action" is the JSON callback's: the module's name
        assert taking["acquired"] is False and "in another PID namespace or boot" in taking["reason"]
        # Never taken over: the same holder (its annotations), acquired at the same time, no transition.
        now = run_lock()
        assert now["metadata"]["annotations"] == annotations
        assert now["spec"]["acquireTime"] == held["spec"]["acquireTime"]
        assert now["spec"]["leaseTransitions"] == held["spec"]["leaseTransitions"]
    finally:
        release.touch()
        rc, out = _finish(first)  # also after a failed check: the next test finds the lock free
    assert rc == 0, failures(out)
    assert next(iter(task_results(out, WAIT_INCLUDE).values())).get("skipped")
    assert run_lock_holder() is None


def test_the_credential_module_twice_at_once_without_the_lock_leaves_k_orc_a_working_credential(region, tmp_path):
    """A role or module run on its own is not under the lock: the Secret's writes are what make it safe."""
    task = {"name": "korc", "c5c3.cobaltcore.korc_credentials": {
        "secret_auth": {"auth_url": keystone_endpoint(_control_plane()), "secret_namespace": REGION_NAMESPACE,
                        "secret_name": "keystone-admin-credentials", "interface": "internal"},
        "kubeconfig": str(_control_plane()), "namespace": REGION_NAMESPACE, "region": lab_keystone.REGION,
        "auth_url": _korc_credential()["auth"]["auth_url"],
        "labels": {"c5c3.io/openstack-cluster-name": lab_keystone.REGION}}}
    for attempt in range(3):  # the race is timing dependent
        admin = _revoke_korc_credential()
        results = [None, None]

        def run(index):
            path = tmp_path / str(attempt) / str(index)
            path.mkdir(parents=True)
            results[index] = run_tasks([task], path, hosts=REGION_HOST)

        threads = [threading.Thread(target=run, args=(i,)) for i in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        outcomes = [r[1]["korc"][REGION_HOST] for r in results]
        assert all(rc == 0 for rc, _r in results), [o.get("msg") for o in outcomes]
        status, ours, current = _korc_works(admin)
        assert status == 201 and ours == [current], (attempt, outcomes)
        assert current in [o["application_credential_id"] for o in outcomes]


def test_a_run_killed_with_sigkill_does_not_block_the_next_one(region):
    _revoke_korc_credential()
    killed = _start(new_session=True)
    wait_truthy(run_lock_holder, "the run to take the lock", timeout=60, interval=0.2)
    time.sleep(3)  # into phase 5
    kill_run(killed)
    # The next run on this controller goes ahead at once (its holder is gone), and converges.
    started = time.monotonic()
    rc, out = _finish(_start("-e", "cobaltcore_lock_wait=0"))
    assert rc == 0, failures(out)
    assert task_results(out, TAKE)[REGION_HOST]["acquired"] is True
    assert time.monotonic() - started < 120
    assert _korc_works(keystone_admin(_control_plane()))[0] == 201


def test_a_lock_of_another_controller_is_reported_and_broken_on_request_and_check_mode_ignores_it(region):
    now = datetime.datetime.now(datetime.timezone.utc)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": RUN_LOCK, "namespace": "kube-system", "annotations": {
                 "cobaltcore.c5c3.io/lock-host": "other-controller", "cobaltcore.c5c3.io/lock-pid": "4242",
                 "cobaltcore.c5c3.io/lock-started": "1", "cobaltcore.c5c3.io/lock-user": "ops",
                 "cobaltcore.c5c3.io/lock-job": ""}},
             "spec": {"holderIdentity": "ops@other-controller pid 4242", "leaseDurationSeconds": 300,
                      "acquireTime": stamp, "renewTime": stamp, "leaseTransitions": 0}}
    kubectl(config.STATE / "kubeconfig" / "management-cluster.yaml", "apply", "-f", "-", stdin=json.dumps(lease))
    try:
        # Check mode neither takes nor waits for the lock.
        rc, out = _finish(_start("--check"))
        assert rc == 0, failures(out)
        assert task_results(out, TAKE)[REGION_HOST].get("skipped")
        assert run_lock_holder() == "ops@other-controller pid 4242"
        # -e cobaltcore_lock_wait=0: fails at once, naming the holder, since when and the expiry.
        rc, out = _finish(_start("-e", "cobaltcore_lock_wait=0"))
        (failed,) = failures(out)
        assert rc != 0 and failed[0] == "Wait for the region's run lock"
        assert ("is held by ops@other-controller pid 4242 since %s" % stamp) in failed[2]
        assert "expires" in failed[2] and "cobaltcore_break_lock=true" in failed[2]
        assert run_lock_holder() == "ops@other-controller pid 4242"
        # Broken on request, and reported; the region is as the runs before left it.
        rc, out = _finish(_start("-e", "cobaltcore_break_lock=true"))
        assert rc == 0, failures(out)
        taken = task_results(out, TAKE)[REGION_HOST]
        assert taken["broken"] is True and "was broken" in taken["reason"]
        assert _changed(out) == 0, [(t["task"]["name"], h) for p in out["plays"] for t in p["tasks"]
                                    for h, r in t["hosts"].items() if r.get("changed")]
        verified = task_results(out, VERIFY)[REGION_HOST]
        assert not verified.get("failed") and not verified.get("skipped")
        assert run_lock_holder() is None
    finally:
        lab_kubectl("management-cluster", "-n", "kube-system", "delete", "lease", RUN_LOCK, "--ignore-not-found")
