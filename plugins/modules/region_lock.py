#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: region_lock
short_description: Take, renew or release a region's run lock (a Lease on the management cluster)
version_added: 0.6.0
description:
  - The run lock keeps two runs of the same region (an operator's command line, AWX schedules, two job templates)
    from changing it at the same time. It is a C(coordination.k8s.io/v1) C(Lease) per region on the management
    cluster, O(namespace)/C(cobaltcore-run-<region>).
  - The holder is the C(ansible-playbook) process the module runs under, found on the controller - so the module
    must run on the controller (C(delegate_to) C(localhost) or a host with C(ansible_connection=local)).
    C(spec.holderIdentity) reads C(<user>@<host> pid <pid>), with C((AWX job <id>)) when O(job) is set;
    annotations C(cobaltcore.c5c3.io/lock-*) hold the same, with the process's start time, the kernel's
    C(boot_id) and the process's PID namespace (C(pid:[<inode>])).
  - O(state=acquired) creates or takes the Lease, or renews it when this run holds it already. A Lease held by another
    run is waited for up to O(wait) seconds, then the module fails naming the holder, since when, and when its lease
    expires. It is taken over at once when its holder's process no longer runs on this controller, when its lease
    expired (C(renewTime) + C(leaseDurationSeconds)), or with O(break_lock); the result says so and warns.
  - A holder is on this controller only with the same host name, C(boot_id) and PID namespace as this run. Runs in
    two containers or C(hostNetwork) pods with one host name have their own pids, so each waits for the other's lease
    to expire; so does a run for a Lease whose annotations name no C(boot_id) or PID namespace (written by an
    earlier build of the collection).
  - Writes use the Lease's C(resourceVersion) (and C(create) conflicts), so of two runs only one wins; the other
    reads again and waits.
  - On taking the Lease the module leaves a small watcher process on the controller, which renews the Lease while
    the run's process lives and releases it when that process ends - also when the run failed or was killed.
  - O(state=released) clears the holder when this run holds the Lease and leaves anyone else's alone.
  - Reports C(changed=false) always - the lock is the run's bookkeeping, not the region's state.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
attributes:
  check_mode:
    description: Reads the Lease and reports what the run would do; never writes, never waits, leaves no watcher.
    support: full
  diff_mode:
    description: No diff.
    support: none
options:
  region:
    description: The region the lock guards (C(cobaltcore_region)).
    type: str
    required: true
  state:
    description: C(acquired) to take or renew the lock, C(released) to give it back.
    type: str
    choices: [acquired, released]
    default: acquired
  name:
    description: The Lease's name; C(cobaltcore-run-<region>) when omitted.
    type: str
  namespace:
    description: The Lease's namespace on the management cluster.
    type: str
    default: kube-system
  wait:
    description: Seconds to wait for a lock another run holds; C(0) fails at once.
    type: int
    default: 0
  lease_duration:
    description:
      - C(leaseDurationSeconds) - how long after its last renewal a lock of a run on another controller counts as
        abandoned. The watcher renews it every third of this time.
    type: int
    default: 300
  break_lock:
    description: Take over a lock that another run holds, at once. Reported as a warning.
    type: bool
    default: false
  job:
    description: The AWX job (or another scheduler's run) this run belongs to, shown in the holder identity.
    type: str
  watch:
    description: Leave the watcher process that renews and finally releases the Lease (O(state=acquired)).
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Take the region's run lock, waiting up to 30 minutes for another run
  c5c3.cobaltcore.region_lock:
    kubeconfig: "{{ hostvars['management-cluster'].cobaltcore_kubeconfig }}"
    region: eu-de-1
    wait: 1800
    job: "{{ awx_job_id | default(omit) }}"
  delegate_to: localhost
  run_once: true

- name: Release it
  c5c3.cobaltcore.region_lock:
    kubeconfig: "{{ hostvars['management-cluster'].cobaltcore_kubeconfig }}"
    region: eu-de-1
    state: released
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
acquired:
  description: Whether this run holds the lock now (O(state=acquired); in check mode whether it could take it).
  returned: always
  type: bool
action:
  description:
    - C(create), C(take) (a free Lease), C(renew) (this run held it), C(take_over) (its holder is gone, its lease
      expired, or O(break_lock)), C(wait) (held by another run), C(release), C(none) (nothing to release).
  returned: always
  type: str
reason:
  description: Why, in words - for a held lock who holds it, since when, and when its lease expires.
  returned: always
  type: str
  sample: "held by alice@ctl-1 pid 4711 (AWX job 88) since 2026-11-27T00:40:24.000000Z, expires 2026-11-27T00:45:24.000000Z"
holder:
  description: The holder identity of this run.
  returned: always
  type: str
held_by:
  description: The holder identity found in the Lease before this call (null when free or absent).
  returned: always
  type: str
broken:
  description: Whether this call took over the lock of a run that may still be running (O(break_lock)).
  returned: always
  type: bool
waited:
  description: Seconds this call waited for another run.
  returned: always
  type: float
lease:
  description: The Lease, C({name, namespace}).
  returned: always
  type: dict
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

import datetime
import getpass
import os
import signal
import socket
import time

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import run_lock
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeClient, ResourceType
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule

POLL = 2.0
LEASES = ResourceType(run_lock.API_VERSION, run_lock.KIND, "leases", True)


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def this_run(job):
    """The Holder of the ansible-playbook process this module runs under (the module's own pid without one)."""
    pid = run_lock.controller_process(os.getpid(), run_lock.proc_cmdline, run_lock.proc_parent)
    found = pid is not None
    pid = pid or os.getpid()
    try:
        user = getpass.getuser()
    except Exception:  # no user name in a container without passwd entry
        user = str(os.getuid())
    return run_lock.Holder(socket.gethostname(), pid, run_lock.proc_started(pid), user, job or None,
                           run_lock.proc_boot_id(), run_lock.proc_pid_namespace()), found


def write(client, lease_before, body):
    """POST or PUT with the read resourceVersion; False when another writer came first (409, or 404 on PUT)."""
    meta = body["metadata"]
    if lease_before is None:
        status, unused = client.request("POST", LEASES.path(meta["namespace"]), body=body, allow=(409,))
    else:
        status, unused = client.request("PUT", LEASES.path(meta["namespace"], meta["name"]), body=body,
                                        allow=(404, 409))
    return status < 400


def release_if_ours(client, name, namespace, me):
    """Clear the holder while it is this run; True when released, False when the Lease is not this run's."""
    while True:
        lease = client.get(LEASES, name, namespace)
        if not run_lock.same_run(run_lock.holder_of(lease), me):
            return False
        if write(client, lease, run_lock.released(lease, utcnow())):
            return True


def watcher(auth, name, namespace, me, duration):
    """Renew the Lease while the run's process lives, release it when it ends (or on SIGTERM). Never returns."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *unused: stop.append(True))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    every = max(5, duration // 3)
    renewed = time.time()
    try:
        while not stop and run_lock.proc_alive(me) is True:
            time.sleep(1)
            if time.time() - renewed < every:
                continue
            try:
                client = KubeClient(auth, retries=3, retry_budget=20)
                lease = client.get(LEASES, name, namespace)
                if not run_lock.same_run(run_lock.holder_of(lease), me):
                    return  # released by the run, or taken over: nothing left to watch
                decision = run_lock.Decision(run_lock.RENEW, "")
                write(client, lease, run_lock.acquired(lease, decision, me, utcnow(), name, namespace, duration))
                renewed = time.time()
            except Exception:  # an unreachable API server: try again at the next round
                renewed = time.time() - every + 5
        for unused in range(5):
            try:
                release_if_ours(KubeClient(auth, retries=3, retry_budget=20), name, namespace, me)
                return
            except Exception:
                time.sleep(2)
    finally:
        os._exit(0)


def start_watcher(auth, name, namespace, me, duration):
    """Double fork: the watcher outlives this module and holds none of its pipes (Ansible waits for their end)."""
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 65536)
        watcher(auth, name, namespace, me, duration)
    finally:
        os._exit(0)


class RegionLockModule(KubeModule):
    argument_spec = dict(
        region=dict(type="str", required=True),
        state=dict(type="str", default="acquired", choices=["acquired", "released"]),
        name=dict(type="str"),
        namespace=dict(type="str", default=run_lock.DEFAULT_NAMESPACE),
        wait=dict(type="int", default=0),
        lease_duration=dict(type="int", default=300),
        break_lock=dict(type="bool", default=False),
        job=dict(type="str"),
        watch=dict(type="bool", default=True),
    )

    def run(self):
        params = self.params
        name = run_lock.validate(params["region"], params["name"], params["namespace"], params["wait"],
                                 params["lease_duration"])
        namespace = params["namespace"]
        me, on_controller = this_run(params["job"])
        self.results.update(acquired=False, action="none", reason="", holder=run_lock.identity(me), held_by=None,
                            broken=False, waited=0.0, lease={"name": name, "namespace": namespace})
        if params["state"] == "released":
            self.release(name, namespace, me)
            return
        started = None  # when this call first found the lock held: the wait counts from there
        while True:
            lease = self.client.get(LEASES, name, namespace)
            now = utcnow()
            decision = run_lock.decide(lease, me, now, run_lock.proc_alive, params["break_lock"])
            self.results.update(action=decision.action, reason=decision.reason,
                                held_by=((lease or {}).get("spec") or {}).get("holderIdentity") or None)
            if decision.action == run_lock.WAIT:
                started = started or time.time()
                waited = time.time() - started
                self.results["waited"] = round(waited, 1)
                if self.check_mode or waited >= params["wait"]:
                    self.fail("the run lock of region %s (Lease %s/%s) is %s; waited %ds. Another run changes the "
                              "region: wait for it, or if it is gone, re-run on its controller (taken over at once), "
                              "wait for its lease to expire, or break the lock (cobaltcore_break_lock=true)"
                              % (params["region"], namespace, name, decision.reason, int(waited)))
                time.sleep(min(POLL, max(params["wait"] - waited, 0.1)))
                continue
            if self.check_mode:
                self.results["acquired"] = True
                return
            body = run_lock.acquired(lease, decision, me, now, name, namespace, params["lease_duration"])
            if write(self.client, lease, body):
                break
            # Another run wrote the Lease between our read and write: read again and decide again.
        self.results["acquired"] = True
        if decision.action == run_lock.TAKE_OVER:
            self.results["broken"] = "was broken" in decision.reason
            self.ansible.warn("took over the run lock of region %s: %s" % (params["region"], decision.reason))
        if decision.action != run_lock.RENEW and params["watch"] and on_controller:
            start_watcher(self.kube_auth(), name, namespace, me, params["lease_duration"])

    def release(self, name, namespace, me):
        lease = self.client.get(LEASES, name, namespace)
        self.results["held_by"] = ((lease or {}).get("spec") or {}).get("holderIdentity") or None
        if not run_lock.same_run(run_lock.holder_of(lease), me):
            self.results["reason"] = "this run does not hold the lock"
            return
        self.results.update(action="release", reason="released by its holder")
        if not self.check_mode and not release_if_ours(self.client, name, namespace, me):
            self.results.update(action="none", reason="the lock was taken over before the release")


def main():
    RegionLockModule()()


if __name__ == "__main__":
    main()
