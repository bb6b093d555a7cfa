# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two runs with one host name, each in a PID namespace of its own, as in two containers with the host's network.

Real namespaces (unshare --pid --fork --mount-proc) and the collection's real /proc readers
(run_lock_probe.py): each run is pid 1 of its namespace, and neither is on the other's controller.
"""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import socket
import subprocess
import sys
import threading

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import run_lock

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_lock_probe.py")
# Root may create PID namespaces, anyone else only in a user namespace of their own. --kill-child: a probe
# whose unshare was killed (a hung test) ends with it.
UNSHARE = (["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"]
           + ([] if os.geteuid() == 0 else ["--map-root-user"]))
TIMEOUT = 60


def read(proc):
    line = proc.stdout.readline()
    if not line:
        raise AssertionError("the probe printed nothing (rc %s): %s" % (proc.wait(), proc.stderr.read()))
    return json.loads(line)


def start_run():
    """A probe in a new PID namespace, and what it printed first: its Holder and the Lease it would create."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.Popen(UNSHARE + [sys.executable, PROBE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    proc.deadline = threading.Timer(TIMEOUT, proc.kill)
    proc.deadline.start()
    return proc, read(proc)


def ask(proc, lease):
    """What the run decides about the Lease, from inside its namespace."""
    proc.stdin.write(json.dumps(lease) + "\n")
    proc.stdin.flush()
    return read(proc)


def test_two_runs_with_one_host_name_in_pid_namespaces_of_their_own_wait_for_each_other():
    first, holding = start_run()
    second, waiting = start_run()
    try:
        one, two = holding["holder"], waiting["holder"]
        assert one["host"] == two["host"] == socket.gethostname()
        assert one["pid"] == two["pid"] == 1, (one, two)
        assert one["boot_id"] == two["boot_id"] == run_lock.proc_boot_id()
        namespaces = [one["pid_namespace"], two["pid_namespace"], run_lock.proc_pid_namespace()]
        assert None not in namespaces and len(set(namespaces)) == 3, namespaces
        assert holding["lease"]["metadata"]["annotations"]["cobaltcore.c5c3.io/lock-pid-namespace"] == namespaces[0]

        # The first still runs, but its pid 1 is not its process in the second's /proc (the second's own is, with
        # another start time): it looks dead from there - the rule by host name alone took the lock over.
        verdict = ask(second, holding["lease"])
        assert verdict["alive"] is False
        assert verdict["action"] == run_lock.WAIT, verdict
        assert verdict["reason"].startswith("held by %s since " % holding["lease"]["spec"]["holderIdentity"])
        assert "in another PID namespace or boot" in verdict["reason"]
        assert ask(first, waiting["lease"])["action"] == run_lock.WAIT

        # In its own namespace a run still tells a gone holder from a live one: pid 2^22 + 7 exists nowhere
        # (the kernel's pid_max is at most 2^22).
        gone = run_lock.Holder(**dict(two, pid=2 ** 22 + 7))
        lease = run_lock.acquired(None, run_lock.Decision(run_lock.CREATE, ""), gone, timestamps.parse_datetime(
            waiting["lease"]["spec"]["renewTime"]), "cobaltcore-run-lab", "kube-system", 300)
        verdict = ask(second, lease)
        assert verdict["alive"] is False and verdict["action"] == run_lock.TAKE_OVER, verdict
        assert "no longer runs on this controller" in verdict["reason"]
        assert ask(second, waiting["lease"])["action"] == run_lock.RENEW
    finally:
        for proc in (first, second):
            proc.stdin.close()  # the probes end
        codes = [proc.wait(TIMEOUT) for proc in (first, second)]
        for proc in (first, second):
            proc.deadline.cancel()
    assert codes == [0, 0], [proc.stderr.read() for proc in (first, second)]
