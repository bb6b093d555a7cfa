"""Benchmark: Mitogen for Ansible (an accelerator users may choose, never required) against stock ansible-core.

Runs the no-op site.yml on the converged lab region, alternating within each round, ROUNDS (BENCH_ROUNDS,
default 2) rounds, and prints `name=value` lines (medians):

  mitogen_ping_floor_s          one ansible.builtin.ping task over 8 local hosts, stock
  mitogen_stock_noop_s          stock ansible-core, the collection's in-process module runs (the default)
  mitogen_noop_s                strategy mitogen_linear, the same collection defaults
  mitogen_without_in_process_s  strategy mitogen_linear, COBALTCORE_IN_PROCESS=false (Mitogen runs every module)
  mitogen_vs_stock, mitogen_without_in_process_vs_stock   the ratios

Mitogen is not a dependency of the collection: MITOGEN_PATH names a directory holding the `mitogen` and
`ansible_mitogen` packages (pip install --target DIR mitogen==0.3.54). A run that changes anything fails
the bench.
"""

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "lab"))
sys.path.insert(0, str(REPO / "tests" / "integration"))
sys.path.insert(0, str(REPO / "tests" / "bench"))

import regionlab  # noqa: E402
from conftest import run_playbook  # noqa: E402
from region_bench import analyse, ping_floor  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
SITE = REPO / "playbooks" / "site.yml"


def noop(converge=False, **env):
    started = time.monotonic()
    rc, out = run_playbook(SITE, **env)
    wall = time.monotonic() - started
    if rc != 0:
        raise SystemExit("site.yml failed (rc %d) with %s" % (rc, env))
    if not converge and analyse(out)[3]:
        raise SystemExit("the no-op site.yml changed %d task results with %s" % (analyse(out)[3], env))
    return wall


def main():
    mitogen = os.environ.get("MITOGEN_PATH")
    if not mitogen or not (Path(mitogen) / "ansible_mitogen").is_dir():
        raise SystemExit("MITOGEN_PATH must name a directory with ansible_mitogen (pip install --target DIR mitogen)")
    if not regionlab.is_up():
        raise SystemExit("the lab is not up: make lab-up, converge the region, then run this")
    accelerated = {"ANSIBLE_STRATEGY_PLUGINS": str(Path(mitogen) / "ansible_mitogen" / "plugins" / "strategy"),
                   "ANSIBLE_STRATEGY": "mitogen_linear",
                   "PYTHONPATH": os.pathsep.join([mitogen, os.environ.get("PYTHONPATH", "")])}
    variants = (("stock", {}), ("mitogen", accelerated),
                ("mitogen_without_in_process", dict(accelerated, COBALTCORE_IN_PROCESS="false")))
    noop(converge=True)  # converges what changed since, and warms the caches for every variant
    walls = dict((name, []) for name, dummy in variants)
    floors = []
    with tempfile.TemporaryDirectory() as workdir:
        for round_ in range(ROUNDS):
            floors.append(ping_floor(workdir))
            for name, env in variants:
                walls[name].append(noop(**env))
            print("round %d: %s" % (round_ + 1, ", ".join("%s %.1fs" % (n, walls[n][-1]) for n in walls)), flush=True)
    medians = dict((name, statistics.median(values)) for name, values in walls.items())
    print("mitogen_ping_floor_s=%.2f" % statistics.median(floors))
    print("mitogen_stock_noop_s=%.1f" % medians["stock"])
    print("mitogen_noop_s=%.1f" % medians["mitogen"])
    print("mitogen_without_in_process_s=%.1f" % medians["mitogen_without_in_process"])
    print("mitogen_vs_stock=%.2f" % (medians["mitogen"] / medians["stock"]))
    print("mitogen_without_in_process_vs_stock=%.2f" % (medians["mitogen_without_in_process"] / medians["stock"]))


if __name__ == "__main__":
    main()
