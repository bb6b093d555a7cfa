"""Benchmark: phase 7 (playbooks/tenants.yml) with N tenants (BENCH_TENANTS, default 50) against 1, side by side.

Converges the region once (skipped with BENCH_CONVERGED=1 when it is converged already), writes N claims
(bench-t01 ..., lab-tenant-a's claim renamed: shared pools st-pool-a and hv-pool-a) into one temporary tenants
directory and one more claim (bench-one) into another, then prints `name=value` lines:

  tenants_first_1_s      the first tenants.yml with the 1 fresh tenant (namespace, ControlPlane, Ceph pool and
                         client, keys, its Keystone bootstrap and K-ORC catalog)
  tenants_first_N_s      the same with the N fresh tenants
  tenants_first_*_waiting_s   of each, the seconds its tasks waited for what the operators had not made ready
  tenants_first_N_vs_1   their ratio (target <= 10: the cost grows with the work, not with tasks x tenants)
  tenants_first_N_vs_1_beyond_waiting   the same ratio of the seconds beyond the waiting
  tenants_first_*_cpu_s, tenants_first_N_vs_1_cpu   CPU seconds of each run's own processes (ansible-playbook, its
                         workers and modules; not the lab's operators and Keystones) and their ratio
  tenants_first_*_machine_cpu_s   CPU seconds the whole machine worked during each first run (the lab's operators,
                         Keystones and API servers included)
  idle_lab_cores         the cores the idle lab keeps busy, measured before the first runs
  tenants_first_N_floor_s, tenants_first_N_floor_vs_1   the N run's work beyond the idle lab's, spread over all cores
                         (no first run of N can be shorter on this machine), and its ratio to the first run of 1
  tenants_noop_N_s       median of ROUNDS no-op tenants.yml runs with the N claims
  tenants_noop_1_s       the same with the 1 claim, each round right after the N (same machine load)
  tenants_noop_N_vs_1    their ratio (target <= 1.5)
  tenants_noop_module_tasks_N, tenants_noop_module_tasks_1   module runs of a no-op run

and, per task, where the no-op seconds go with N and with 1 (median over the rounds). A no-op run that
changes anything fails the bench. The bench tenants are deleted afterwards (their namespaces on the
control plane, their Rook objects on st-pool-a), so the lab is as before; BENCH_KEEP=1 keeps them.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "lab"))
sys.path.insert(0, str(REPO / "tests" / "integration"))
sys.path.insert(0, str(REPO / "tests" / "bench"))

import regionlab  # noqa: E402
from regionlab import config, processes  # noqa: E402
from conftest import ansible_env, remove_openstack_clusters  # noqa: E402
from region_bench import (analyse, cpu_by_process, cpu_seconds, machine_busy_seconds, module_runs,  # noqa: E402
                          process_cpu, waiting_seconds)  # noqa: E402
from apply_bench import _timestamp  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
TENANTS = int(os.environ.get("BENCH_TENANTS", "50"))
SITE = REPO / "playbooks" / "site.yml"
PLAYBOOK = REPO / "playbooks" / "tenants.yml"
CLAIM = REPO / "inventories" / "lab" / "tenants" / "lab-tenant-a.yaml"
CONTROL_PLANE = "lab-control-plane"
POOL = "st-pool-a"
NAMES = ["bench-t%02d" % (index + 1) for index in range(TENANTS)]
ONE = "bench-one"


def playbook(path, *args):
    """(wall seconds, JSON output) of one ansible-playbook run; fails the bench when it fails."""
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(REPO / "inventories" / "lab"),
           str(path)] + list(args)
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=ansible_env(COBALTCORE_LAB_DIR=str(config.STATE)), capture_output=True,
                          text=True, timeout=3600, check=False)
    wall = time.monotonic() - started
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        raise SystemExit("%s printed no JSON (rc %d): %s" % (path.name, proc.returncode, proc.stderr[-2000:]))
    if proc.returncode != 0:
        raise SystemExit("%s failed (rc %d): %s" % (path.name, proc.returncode, json.dumps(out)[-3000:]))
    return wall, out


def write_claims(directory, names):
    text = CLAIM.read_text()
    for name in names:
        claim = text.replace("name: lab-tenant-a", "name: %s" % name)
        (directory / ("%s.yaml" % name)).write_text(claim.replace("namespace: tenant-lab-a", "namespace: tenant-bench"))


def per_task(out):
    """{task name: seconds} of a run (tasks of several plays with one name add up)."""
    found = {}
    for play in out["plays"]:
        for task in play["tasks"]:
            span = task["task"]["duration"]
            seconds = (_timestamp(span["end"]) - _timestamp(span["start"])).total_seconds()
            name = task["task"]["name"]
            found[name] = found.get(name, 0.0) + seconds
    return found


IDLE = {"cores": 0.0}
IDLE_SECONDS = 20


def idle_cores():
    """The cores the idle lab keeps busy (its leases, heartbeats and resyncs), over IDLE_SECONDS."""
    busy = machine_busy_seconds()
    time.sleep(IDLE_SECONDS)
    return (machine_busy_seconds() - busy) / IDLE_SECONDS


def first(directory, label):
    """(wall seconds, waited seconds, CPU seconds of the run's own processes, CPU seconds of the whole machine) of
    a first run; its slowest tasks and the machine's busiest processes are printed."""
    cpu, busy, machine = cpu_seconds(), machine_busy_seconds(), process_cpu()
    wall, out = playbook(PLAYBOOK, "-e", "cobaltcore_tenants_dir=%s" % directory)
    cpu, busy, machine = cpu_seconds() - cpu, machine_busy_seconds() - busy, cpu_by_process(machine, process_cpu())
    waited, by_task = waiting_seconds(out), per_task(out)
    print("first run with %s %.1fs, waiting %.1fs, CPU %.1fs, the machine's CPU %.1fs" % (label, wall, waited, cpu, busy),
          flush=True)
    print("  CPU of the machine's busiest processes: %s" % ", ".join("%s %.1fs" % (n, s) for s, n in machine),
          flush=True)
    for name in sorted(by_task, key=lambda n: -by_task[n])[:12]:
        print("  %6.1fs  %s" % (by_task[name], name), flush=True)
    return wall, waited, cpu, busy


def noop(directory):
    wall, out = playbook(PLAYBOOK, "-e", "cobaltcore_tenants_dir=%s" % directory)
    changed = analyse(out)[3]
    if changed:
        raise SystemExit("the no-op tenants.yml changed %d task results" % changed)
    return wall, per_task(out), module_runs(out)


def kubectl(cluster, *args):
    kubeconfig = config.STATE / "kubeconfig" / ("%s.yaml" % cluster)
    return subprocess.run([str(config.BIN / "kubectl"), "--kubeconfig", str(kubeconfig)] + list(args),
                          capture_output=True, text=True, check=False)


def remove_bench_tenants():
    """Their namespaces (ControlPlane, Keystone, K-ORC objects, Secrets) and their Rook objects."""
    selector = "c5c3.io/openstack-cluster-name in (%s)" % ",".join(NAMES + [ONE])
    kubectl(POOL, "-n", "rook-ceph", "delete", "cephclients.ceph.rook.io,cephblockpools.ceph.rook.io", "-l", selector,
            "--wait=true", "--timeout=300s")
    kubeconfig = config.STATE / "kubeconfig" / ("%s.yaml" % CONTROL_PLANE)
    # All namespaces are deleted first and then waited for together.
    if not remove_openstack_clusters(kubeconfig, ["openstack-" + name for name in NAMES + [ONE]]):
        print("bench tenants not all removed", file=sys.stderr)


def median_tasks(runs):
    names = set(name for run in runs for name in run)
    return dict((name, statistics.median(run.get(name, 0.0) for run in runs)) for name in names)


def report(first_one, first_many, walls, tasks, modules):
    count = len(NAMES)
    many, one = statistics.median(walls["many"]), statistics.median(walls["one"])
    (first_one, waited_one, cpu_one, busy_one), (first_many, waited_many, cpu_many, busy_many) = first_one, first_many
    cores = os.cpu_count() or 1
    # The idle lab's own work (leases, heartbeats, resyncs) goes on for as long as a run lasts, so it shrinks with it.
    floor = (busy_many - IDLE["cores"] * first_many) / (cores - IDLE["cores"])
    print("tenants_first_1_s=%.1f" % first_one)
    print("tenants_first_1_waiting_s=%.1f" % waited_one)
    print("tenants_first_%d_s=%.1f" % (count, first_many))
    print("tenants_first_%d_waiting_s=%.1f" % (count, waited_many))
    print("tenants_first_%d_vs_1=%.2f" % (count, first_many / first_one))
    print("tenants_first_%d_vs_1_beyond_waiting=%.2f" % (count, (first_many - waited_many) / (first_one - waited_one)))
    print("tenants_first_1_cpu_s=%.1f" % cpu_one)
    print("tenants_first_%d_cpu_s=%.1f" % (count, cpu_many))
    print("tenants_first_%d_vs_1_cpu=%.2f" % (count, cpu_many / cpu_one))
    print("tenants_first_1_machine_cpu_s=%.1f" % busy_one)
    print("tenants_first_%d_machine_cpu_s=%.1f" % (count, busy_many))
    print("idle_lab_cores=%.2f" % IDLE["cores"])
    # No run of N can be shorter than the machine's CPU work for it spread over all its cores, none ever idle.
    print("tenants_first_%d_floor_s=%.1f" % (count, floor))
    print("tenants_first_%d_floor_vs_1=%.2f" % (count, floor / first_one))
    print("tenants_noop_%d_s=%.1f" % (count, many))
    print("tenants_noop_1_s=%.1f" % one)
    print("tenants_noop_%d_vs_1=%.2f" % (count, many / one))
    print("tenants_noop_module_tasks_%d=%d" % (count, modules["many"]))
    print("tenants_noop_module_tasks_1=%d" % modules["one"])
    by_many, by_one = median_tasks(tasks["many"]), median_tasks(tasks["one"])
    for name in sorted(by_many, key=lambda n: -by_many[n]):
        print("tenants_noop_by_task %6.1fs %6.1fs  %s" % (by_many[name], by_one.get(name, 0.0), name))
    sys.stdout.flush()


def main():
    owned = not processes.running()
    if not regionlab.is_up():
        regionlab.up()
    try:
        if os.environ.get("BENCH_CONVERGED") != "1":
            print("converge %.1fs" % playbook(SITE)[0], flush=True)
        with tempfile.TemporaryDirectory() as many, tempfile.TemporaryDirectory() as one:
            write_claims(Path(many), NAMES)
            write_claims(Path(one), [ONE])
            remove_bench_tenants()  # left by an interrupted bench: the first runs start from none
            IDLE["cores"] = idle_cores()
            try:
                first_one = first(one, "1 tenant")
                first_many = first(many, "%d tenants" % len(NAMES))
                walls, tasks, modules = {"many": [], "one": []}, {"many": [], "one": []}, {}
                for round_ in range(ROUNDS):
                    for key, directory in (("many", many), ("one", one)):
                        wall, by_task, modules[key] = noop(directory)
                        walls[key].append(wall)
                        tasks[key].append(by_task)
                    print("round %d noop %d tenants %.1fs, 1 tenant %.1fs" % (
                        round_ + 1, len(NAMES), walls["many"][-1], walls["one"][-1]), flush=True)
                # Printed before the clean-up, which takes a while.
                report(first_one, first_many, walls, tasks, modules)
            finally:
                if os.environ.get("BENCH_KEEP") != "1":
                    remove_bench_tenants()
    finally:
        if owned:
            regionlab.down()


if __name__ == "__main__":
    main()
