"""Benchmark: c5c3.cobaltcore.apply vs kubernetes.core.k8s (a task per object) vs kubectl apply --server-side.

On one lab API server, N objects (half ConfigMaps, half custom resources), each tool in a fresh
namespace per round: wall time of the first apply and of the no-op re-apply (for the Ansible modules
the task's wall time, for kubectl the process's), and the write requests of the no-op re-apply as
the API server counts them. Prints medians over ROUNDS rounds and the ratios.
"""

import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "lab"))
sys.path.insert(0, str(REPO / "tests" / "integration"))

import regionlab  # noqa: E402
from regionlab import config, processes  # noqa: E402
from conftest import apiserver_writes, run_playbook  # noqa: E402

N = int(os.environ.get("BENCH_OBJECTS", "200"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
HOST = "management-cluster"
# A custom resource no controller reconciles (Flux runs on the management cluster and would write to
# its own kinds during the measured runs).
CR = ("bench.lab.c5c3.io/v1", "BenchItem", "benchitems")
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "benchitems.bench.lab.c5c3.io"},
       "spec": {"group": "bench.lab.c5c3.io", "scope": "Namespaced",
                "names": {"plural": "benchitems", "singular": "benchitem", "kind": "BenchItem"},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object", "properties": {
                        "url": {"type": "string"}, "interval": {"type": "string"}}}}}}}]}}


def objects(namespace):
    items = []
    for i in range(N):
        if i % 2 == 0:
            items.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bench-%03d" % i, "namespace": namespace},
                          "data": {"index": str(i), "payload": "x" * 64}})
        else:
            items.append({"apiVersion": CR[0], "kind": CR[1], "metadata": {"name": "bench-%03d" % i, "namespace": namespace},
                          "spec": {"url": "https://charts.example.invalid/%d" % i, "interval": "10m"}})
    return items


def writes():
    return apiserver_writes(HOST, "configmaps") + apiserver_writes(HOST, CR[2])


def play(tasks, workdir):
    path = Path(workdir) / ("play-%s.yml" % uuid.uuid4().hex[:6])
    path.write_text(json.dumps([{"name": "bench", "hosts": HOST, "gather_facts": False, "tasks": tasks}]))
    rc, out = run_playbook(path)
    if rc != 0:
        raise SystemExit("bench play failed: %s" % json.dumps(out)[-2000:])
    # The task's own wall time: ansible-playbook's start-up (about a second, the same for any
    # playbook) is not part of what is compared.
    duration = out["plays"][0]["tasks"][0]["task"]["duration"]
    return (_timestamp(duration["end"]) - _timestamp(duration["start"])).total_seconds()


def _timestamp(text):
    # The JSON callback writes UTC with a Z, an AWX job's events (awx_job.json_output) with +00:00.
    return datetime.datetime.fromisoformat(text)


def run_engine(namespace, kubeconfig, workdir):
    task = {"name": "apply", "c5c3.cobaltcore.apply": {"kubeconfig": kubeconfig, "definition": objects(namespace)}}
    return play([task], workdir)


def run_k8s_loop(namespace, kubeconfig, workdir):
    task = {"name": "apply", "kubernetes.core.k8s": {"kubeconfig": kubeconfig, "definition": "{{ item }}",
                                                     "apply": True, "server_side_apply": {"field_manager": "bench"}},
            "loop": objects(namespace), "loop_control": {"label": "{{ item.metadata.name }}"}}
    return play([task], workdir)


def run_kubectl(namespace, kubeconfig, workdir):
    directory = Path(workdir) / ("kubectl-%s" % namespace)
    directory.mkdir(exist_ok=True)
    for obj in objects(namespace):
        (directory / ("%s-%s.json" % (obj["kind"], obj["metadata"]["name"]))).write_text(json.dumps(obj))
    started = time.monotonic()
    subprocess.run([str(config.BIN / "kubectl"), "--kubeconfig", kubeconfig, "apply", "--server-side",
                    "--field-manager", "bench-kubectl", "-f", str(directory)], check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


TOOLS = {"engine": run_engine, "k8s_loop": run_k8s_loop, "kubectl": run_kubectl}


def main():
    owned = not processes.running()
    if not regionlab.is_up():
        regionlab.up()
    kubeconfig = str(config.cluster(HOST).kubeconfig)
    kubectl = [str(config.BIN / "kubectl"), "--kubeconfig", kubeconfig]
    subprocess.run(kubectl + ["apply", "--server-side", "-f", "-"], input=json.dumps(CRD).encode(), check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(kubectl + ["wait", "--for=condition=Established", "crd/" + CRD["metadata"]["name"],
                              "--timeout=60s"], check=True, stdout=subprocess.DEVNULL)
    figures = dict((tool, {"first": [], "noop": [], "noop_writes": []}) for tool in TOOLS)
    namespaces = []
    try:
        with tempfile.TemporaryDirectory() as workdir:
            for round_ in range(ROUNDS):
                for tool, runner in TOOLS.items():
                    namespace = "bench-%s-%d-%s" % (tool.replace("_", "-"), round_, uuid.uuid4().hex[:4])
                    subprocess.run(kubectl + ["create", "namespace", namespace], check=True, stdout=subprocess.DEVNULL)
                    namespaces.append(namespace)
                    figures[tool]["first"].append(runner(namespace, kubeconfig, workdir))
                    before = writes()
                    figures[tool]["noop"].append(runner(namespace, kubeconfig, workdir))
                    figures[tool]["noop_writes"].append(writes() - before)
                    print("round %d %-8s first %.2fs noop %.2fs noop writes %d" % (
                        round_ + 1, tool, figures[tool]["first"][-1], figures[tool]["noop"][-1],
                        figures[tool]["noop_writes"][-1]), flush=True)
    finally:
        # Gone before the lab may stop: the HelmRepositories' finalizers need source-controller, and any left
        # behind (an unresolvable URL) keep it patching their status many times a second on later runs.
        for namespace in namespaces:
            subprocess.run(kubectl + ["delete", "namespace", namespace, "--wait=false"], stdout=subprocess.DEVNULL,
                           check=False)
        if namespaces:
            subprocess.run(kubectl + ["wait", "--for=delete", "--timeout=300s"]
                           + ["namespace/%s" % n for n in namespaces], stdout=subprocess.DEVNULL, check=False)
        if owned:
            regionlab.down()
    median = dict((tool, dict((k, statistics.median(v)) for k, v in f.items())) for tool, f in figures.items())
    print("objects=%d rounds=%d" % (N, ROUNDS))
    for tool, m in median.items():
        print("%s_first_seconds=%.2f %s_noop_seconds=%.2f %s_noop_writes=%d" % (
            tool, m["first"], tool, m["noop"], tool, m["noop_writes"]))
    print("first_ratio_vs_kubectl=%.2f" % (median["engine"]["first"] / median["kubectl"]["first"]))
    print("noop_ratio_vs_kubectl=%.2f" % (median["engine"]["noop"] / median["kubectl"]["noop"]))
    print("noop_speedup_vs_k8s_loop=%.1f" % (median["k8s_loop"]["noop"] / median["engine"]["noop"]))
    print("noop_writes=%d" % median["engine"]["noop_writes"])


if __name__ == "__main__":
    main()
