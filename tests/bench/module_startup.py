"""What starting one module costs: the import time of every module, by package.

Each module is imported ROUNDS times in a fresh interpreter with `-X importtime`
(as AnsiballZ would: the collection's sources are compiled each time, no bytecode
cache); prints the fastest run (the one least disturbed on a shared machine) with
the packages that took at least 5 ms (the collection's own files count as `c5c3`).
COBALTCORE_COLLECTIONS points at another collections root (e.g. an older checkout)
to compare. Needs no lab.

    python tests/bench/module_startup.py [module ...]
"""

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
PREFIX = "ansible_collections.c5c3.cobaltcore."


def _package(name):
    if name.startswith(PREFIX):
        return "c5c3"
    if name.startswith("ansible_collections."):
        return ".".join(name.split(".")[:3])
    return name.split(".")[0]


def attribute(stderr):
    """(total µs, {package: µs}) from `-X importtime` output.

    The collection's own files count with their self time (`c5c3`); a package the
    collection imports counts with everything it imports in turn; `ansible` is
    AnsibleModule's own cost, the floor of every module.
    """
    lines = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, cumulative, name = line[len("import time:"):].split("|")
        depth = (len(name) - len(name.lstrip(" "))) // 2
        lines.append((depth, int(own), int(cumulative), name.strip()))
    by_package, ancestors, total = {}, [], 0
    # Lines come in post-order; reversed, each line follows its parent.
    for depth, own, cumulative, name in reversed(lines):
        del ancestors[depth:]
        package = _package(name)
        if depth == 0:
            total += cumulative
        if package == "c5c3":
            by_package[package] = by_package.get(package, 0) + own
        elif depth == 0 or _package(ancestors[-1]) == "c5c3":
            by_package[package] = by_package.get(package, 0) + cumulative
        ancestors.append(name)
    return total, by_package


def measure(module, collections):
    env = dict(os.environ, PYTHONPATH=str(collections), PYTHONDONTWRITEBYTECODE="1")
    runs = []
    for dummy in range(ROUNDS):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c",
                               "import ansible.module_utils.basic, %splugins.modules.%s" % (PREFIX, module)],
                              env=env, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
        runs.append(attribute(proc.stderr))
    return min(runs, key=lambda run: run[0])


def main(modules):
    collections = Path(os.environ.get("COBALTCORE_COLLECTIONS", REPO / ".cache" / "collections"))
    modules = modules or sorted(p.stem for p in (REPO / "plugins" / "modules").glob("*.py") if p.stem != "__init__")
    totals = []
    for module in modules:
        total, by_package = measure(module, collections)
        totals.append(total)
        heavy = sorted(((us, p) for p, us in by_package.items() if us >= 5000), reverse=True)
        packages = " ".join("%s=%.0f" % (p, us / 1000.0) for us, p in heavy)
        print("%-28s %5.0f ms  %s" % (module, total / 1000.0, packages), flush=True)
    print("module_import_ms_median=%.0f" % (statistics.median(totals) / 1000.0))


if __name__ == "__main__":
    main(sys.argv[1:])
