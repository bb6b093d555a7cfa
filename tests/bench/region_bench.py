"""Benchmark: the region on stock ansible-core, as ratios to this machine's own floor, measured in the same run.

The floor (`ping_floor_s`) is one ansible.builtin.ping task over the lab inventory's 8 local hosts (the
project's forks, the same interpreter): a whole ansible-playbook run of it, its median over the rounds,
each round right before the run it is compared with. Prints `name=value` lines:

  region_first_s             site.yml on an empty region (phases 1-7; BENCH_FIRST=0 leaves it out)
  region_first_waiting_s     of it, the seconds spent in waits whose objects were not ready (per task the
                             longest waited_seconds of its hosts, which wait side by side): the operators' time
  region_first_pings         (region_first_s - region_first_waiting_s) / ping_floor_s   (target <= 60)
  region_first_module_tasks  module runs of that run (a task on n hosts counts n)
  region_noop_s              median of ROUNDS no-op site.yml runs on the converged region
  region_noop_pings          region_noop_s / ping_floor_s                               (target <= 15)
  region_noop_module_tasks   module runs of a no-op run
  region_noop_tasks          tasks that ran on at least one host
  region_noop_cpu_s          CPU time of a no-op run (ansible-playbook and every process it starts)
  region_noop_awx_s          the same no-op run as an AWX job (ansible-runner transmit | worker | process)
  awx_vs_plain               the ratio of the two medians                               (target <= 1.1)

and where a no-op run's seconds go, by action. A no-op run that changes anything fails the bench. Phase 3
alone (playbooks/operators.yml): operators_first_s (every release uninstalled by the real helm-controller
first, then installed again) and operators_noop_s. Then, per module, what one more task costs in a play on
localhost (BENCH_TASKS=0 leaves it out).
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "lab"))
sys.path.insert(0, str(REPO / "tests" / "integration"))

import regionlab  # noqa: E402
from regionlab import config, processes  # noqa: E402
from conftest import empty_region, run_playbook  # noqa: E402
import awx_job  # noqa: E402
from apply_bench import _timestamp  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SITE = REPO / "playbooks" / "site.yml"
OPERATORS = REPO / "playbooks" / "operators.yml"
# The collection's label on what phase 3 applies (providers/flux.py).
MANAGED = "app.kubernetes.io/managed-by=c5c3.cobaltcore"
TASKS_PER_MODULE = int(os.environ.get("BENCH_TASKS", "10"))
# Actions Ansible runs in its own process: every other action runs a module.
CONTROLLER_ACTIONS = ("set_fact", "set_stats", "debug", "assert", "fail", "validate_argument_spec", "meta",
                      "include_tasks", "import_tasks", "include_role", "import_role", "include_vars", "add_host",
                      "group_by", "pause", "wait_for_connection")
PING = [{"name": "the floor: one ping task", "hosts": "all", "gather_facts": False,
         "tasks": [{"name": "ping", "ansible.builtin.ping": {}}]}]


def module_runs(out):
    """Module runs of a JSON-callback run: host results, not skipped, of actions that run a module."""
    count = 0
    for play in out["plays"]:
        for task in play["tasks"]:
            for result in task["hosts"].values():
                action = (result.get("action") or "").rsplit(".", 1)[-1]
                if not result.get("skipped") and action and action not in CONTROLLER_ACTIONS:
                    count += 1
    return count


def waiting_seconds(out):
    """Per task the longest waited_seconds of its hosts (they wait side by side), summed over the run."""
    total = 0.0
    for play in out["plays"]:
        for task in play["tasks"]:
            waits = [r.get("waited_seconds") or 0.0 for r in task["hosts"].values()]
            waits += [item.get("waited_seconds") or 0.0 for r in task["hosts"].values() for item in r.get("results") or []
                      if isinstance(item, dict)]
            total += max(waits or [0.0])
    return total


def ping_floor(workdir):
    path = Path(workdir) / "ping.yml"
    path.write_text(json.dumps(PING))
    return timed_playbook(path)[0]


def analyse(out):
    """(tasks run, [task seconds], {action: seconds}, changed count) of a JSON-callback run.

    Tasks skipped on every host count under the action "(skipped everywhere)".
    """
    durations, by_action, changed = [], {}, 0
    for play in out["plays"]:
        for task in play["tasks"]:
            span = task["task"]["duration"]
            seconds = (_timestamp(span["end"]) - _timestamp(span["start"])).total_seconds()
            ran = [r for r in task["hosts"].values() if not r.get("skipped")]
            if not ran:
                by_action["(skipped everywhere)"] = by_action.get("(skipped everywhere)", 0.0) + seconds
                continue
            changed += len([r for r in ran if r.get("changed")])
            durations.append(seconds)
            action = ran[0].get("action") or "?"
            by_action[action] = by_action.get(action, 0.0) + seconds
    return len(durations), durations, by_action, changed


def site_run():
    return timed_playbook(SITE)


def cpu_seconds():
    """User and system CPU time of this process's finished children (ansible-playbook, its forks, modules)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def machine_busy_seconds():
    """CPU seconds the whole machine has been busy (all cores, every process: /proc/stat, not idle or iowait)."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def process_cpu():
    """{pid: (name, CPU seconds)} of every process of the machine, with what its finished children used: the lab's
    operators, Keystones and API servers included."""
    tick, found = os.sysconf("SC_CLK_TCK"), {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        words = [Path(word.decode(errors="replace")).name for word in argv if word and not word.startswith(b"-")]
        name = " ".join(words[1:3] if words[:1] and words[0].startswith("python") else words[:1]) or stat.split()[1]
        found[entry.name] = (name, sum(int(value) for value in fields[11:15]) / tick)
    return found


def cpu_by_process(before, after, top=10):
    """The CPU seconds each process name used between two process_cpu() reads (processes started since count
    whole; those that ended since are lost unless their parent collected them), the busiest first."""
    used = {}
    for pid, (name, seconds) in after.items():
        used[name] = used.get(name, 0.0) + seconds - (before[pid][1] if pid in before else 0.0)
    return sorted(((round(seconds, 1), name) for name, seconds in used.items() if seconds > 0.05), reverse=True)[:top]


def timed_playbook(path, *args):
    wall, cpu = time.monotonic(), cpu_seconds()
    rc, out = run_playbook(path, *args)
    if rc != 0:
        raise SystemExit("%s failed (rc %d): %s" % (path.name, rc, json.dumps(out)[-2000:]))
    return time.monotonic() - wall, cpu_seconds() - cpu, out


def uninstall_operators():
    """Delete every HelmRelease phase 3 made, on every cluster with Flux, and wait until helm-controller
    has uninstalled them (the CRDs stay: Helm never deletes a chart's crds/, Rook's and cert-manager's
    are kept by policy)."""
    for cluster in config.clusters():
        if set(cluster.groups) & {"management", "control_plane", "hypervisor_pools", "storage_pools"}:
            subprocess.run([str(config.BIN / "kubectl"), "--kubeconfig", str(cluster.kubeconfig), "delete",
                            "helmreleases.helm.toolkit.fluxcd.io", "-A", "-l", MANAGED, "--wait=true",
                            "--timeout=600s"], check=True, capture_output=True)


def operators_runs():
    uninstall_operators()
    first, _cpu, out = timed_playbook(OPERATORS)
    if not analyse(out)[3]:
        raise SystemExit("operators.yml changed nothing after the uninstall")
    noop = []
    for _round in range(ROUNDS):
        wall, _cpu, out = timed_playbook(OPERATORS)
        if analyse(out)[3]:
            raise SystemExit("the no-op operators.yml changed %d task results" % analyse(out)[3])
        noop.append(wall)
    return first, statistics.median(noop)


def localhost_tasks():
    """{module: (wall ms, CPU ms)} that one more task of a module adds to a play on localhost.

    Per module, a play of 1 task and one of 1 + TASKS_PER_MODULE tasks; the difference over
    TASKS_PER_MODULE leaves ansible-playbook's start-up out. CPU time (of ansible-playbook and
    everything it starts, not of the API server) hardly depends on what else the machine runs.
    ansible.builtin.ping is the floor every module pays (fork, AnsiballZ, interpreter, AnsibleModule).
    """
    kubeconfig = str(config.cluster("management-cluster").kubeconfig)
    namespace = [{"api_version": "v1", "kind": "Namespace", "name": "default"}]
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bench-task", "namespace": "default"},
                 "data": {"a": "b"}}
    modules = {
        "ansible.builtin.ping": {},
        "c5c3.cobaltcore.wait": {"kubeconfig": kubeconfig, "resources": namespace},
        # The first apply creates the ConfigMap; the measured ones are no-ops.
        "c5c3.cobaltcore.apply": {"kubeconfig": kubeconfig, "definition": configmap},
        "kubernetes.core.k8s_info": {"kubeconfig": kubeconfig, "kind": "Namespace", "name": "default"},
    }
    costs = {}
    with tempfile.TemporaryDirectory() as workdir:
        for module, args in modules.items():
            measured = []
            for count in (1, 1 + TASKS_PER_MODULE):
                path = Path(workdir) / ("tasks-%d.yml" % count)
                tasks = [{"name": "%s %d" % (module, i), module: args} for i in range(count)]
                path.write_text(json.dumps([{"name": "per task", "hosts": "localhost", "gather_facts": False,
                                             "tasks": tasks}]))
                measured.append(timed_playbook(path)[:2])
            (wall_1, cpu_1), (wall_n, cpu_n) = measured
            costs[module] = (1000 * (wall_n - wall_1) / TASKS_PER_MODULE, 1000 * (cpu_n - cpu_1) / TASKS_PER_MODULE)
    return costs


def main():
    owned = not processes.running()
    if not regionlab.is_up():
        regionlab.up()
    runs, jobs, floors = [], [], []
    first = None
    try:
        with tempfile.TemporaryDirectory() as workdir:
            if os.environ.get("BENCH_FIRST", "1") != "0":
                empty_region()
                floors.append(ping_floor(workdir))
                wall, cpu, out = site_run()
                first = (wall, waiting_seconds(out), module_runs(out))
                print("region_first %.1fs, waiting %.1fs, module runs %d" % first, flush=True)
            elif os.environ.get("BENCH_NOOP_ONLY") != "1":
                print("converge %.1fs" % site_run()[0], flush=True)
            for round_ in range(ROUNDS):
                floors.append(ping_floor(workdir))
                wall, cpu, out = site_run()
                tasks, durations, by_action, changed = analyse(out)
                if changed:
                    raise SystemExit("the no-op run changed %d task results: site.yml is not idempotent" % changed)
                runs.append((wall, cpu, tasks, durations, by_action, module_runs(out)))
                with tempfile.TemporaryDirectory() as tmp:
                    job = awx_job.run(Path(tmp), "playbooks/site.yml")
                if job.status != "successful" or analyse(job.json_output())[3]:
                    raise SystemExit("the no-op run as an AWX job did not succeed unchanged (status %s)" % job.status)
                jobs.append(job.seconds)
                print("round %d ping floor %.1fs, region_noop %.1fs cpu %.1fs tasks %d, as an AWX job %.1fs" % (
                    round_ + 1, floors[-1], wall, cpu, tasks, job.seconds), flush=True)
        operators_first, operators_noop = operators_runs()
        per_module = localhost_tasks() if TASKS_PER_MODULE else {}
    finally:
        if owned:
            regionlab.down()
    floor = statistics.median(floors)
    wall, cpu, tasks, durations, by_action, modules = sorted(runs, key=lambda run: run[0])[len(runs) // 2]
    print("ping_floor_s=%.2f" % floor)
    if first:
        print("region_first_s=%.1f" % first[0])
        print("region_first_waiting_s=%.1f" % first[1])
        print("region_first_pings=%.1f" % ((first[0] - first[1]) / floor))
        print("region_first_module_tasks=%d" % first[2])
    print("region_noop_s=%.1f" % wall)
    print("region_noop_pings=%.1f" % (wall / floor))
    print("region_noop_module_tasks=%d" % modules)
    print("region_noop_tasks=%d" % tasks)
    print("region_noop_cpu_s=%.1f" % cpu)
    print("region_noop_awx_s=%.1f" % statistics.median(jobs))
    print("awx_vs_plain=%.2f" % (statistics.median(jobs) / statistics.median(run[0] for run in runs)))
    print("region_noop_outside_tasks_s=%.1f" % (wall - sum(by_action.values())))
    print("operators_first_s=%.1f" % operators_first)
    print("operators_noop_s=%.1f" % operators_noop)
    for action, seconds in sorted(by_action.items(), key=lambda item: -item[1]):
        print("region_noop_by_action %-45s %5.1fs" % (action, seconds))
    ping = per_module.get("ansible.builtin.ping")
    for module, (wall_ms, cpu_ms) in per_module.items():
        print("localhost_task_ms %-26s wall %4.0f cpu %4.0f (above ping: wall %4.0f cpu %4.0f)" % (
            module, wall_ms, cpu_ms, wall_ms - ping[0], cpu_ms - ping[1]))


if __name__ == "__main__":
    main()
