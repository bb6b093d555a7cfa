"""Pods in the lab: a kube-scheduler and KWOK per cluster that runs workloads.

The lab has no kubelet and no container runtime. KWOK (sigs.k8s.io/kwok, lab/go/kwok) plays the
kubelets of a cluster's Nodes: it renews their Leases and moves the pods the scheduler bound to them
through KWOK's upstream Stages (node initialize and heartbeat, pod ready, complete and delete), so
Deployments, StatefulSets, DaemonSets and Jobs become Ready, or do not, as in a region: a pod nothing
can schedule stays Pending. kube-controller-manager runs the workload controllers there (kube.py).

A Shoot's Nodes are registered by the gardenlet stand-in (standins/nodes.py); a cluster that is not
a Shoot (the management cluster) gets its STATIC_NODES Nodes here, as its own machines would join it.
"""

import copy
import re
from pathlib import Path

import yaml

from . import build, config, kube, processes

SHOOTS_GROUP = "shoots"
STATIC_NODES = 2
KWOK_MODULE = "sigs.k8s.io/kwok"
# KWOK's upstream Stages, read from its module (no copy in the repository): a --config file holding
# only Stage documents keeps KWOK's other defaults.
STAGES = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
    "kustomize/stage/pod/chaos/pod-container-running-failed.yaml",
)
# A pod whose container a stand-in plays (key_rotation.py) and the exit code it wrote.
PLAYED_BY = "lab.c5c3.io/played-by"
EXIT_CODE = "lab.c5c3.io/exit-code"
# KWOK's chaos label: its Stage pod-container-running-failed fails the pod's container.
KWOK_FAILED = "pod-container-running-failed.stage.kwok.x-k8s.io"
# kubelet's default Lease duration; KWOK renews a quarter of it (every 10 s), as kubelet does.
NODE_LEASE_SECONDS = 40
# The scheduler's and KWOK's heaps are small; most of their resident memory is the binary.
ENV = {"GOGC": "50"}


def _lab_stages(documents):
    """KWOK's Stages with the lab's one change: pods whose container a stand-in plays (annotation PLAYED_BY)
    are not completed by pod-complete, but by a copy of it (pod-exit) once the stand-in wrote their exit code
    0 (annotation EXIT_CODE); a failed one gets KWOK's own chaos label and Stage pod-container-running-failed."""
    out = []
    for doc in documents:
        out.append(doc)
        if doc["metadata"]["name"] != "pod-complete":
            continue
        played = '.metadata.annotations["%s"]' % PLAYED_BY
        exited = copy.deepcopy(doc)
        doc["spec"]["selector"]["matchExpressions"].append({"key": played, "operator": "DoesNotExist"})
        exited["metadata"]["name"] = "pod-exit"
        exited["spec"]["selector"]["matchExpressions"] += [
            {"key": played, "operator": "Exists"},
            {"key": '.metadata.annotations["%s"]' % EXIT_CODE, "operator": "In", "values": ["0"]}]
        out.append(exited)
    return out


def exit_patch(exit_code, message):
    """The merge patch of a played pod whose container exited: exit code 0 completes it (the lab's Stage pod-exit),
    any other fails it (KWOK's Stage pod-container-running-failed, with the code and message)."""
    if exit_code == 0:
        return {"metadata": {"annotations": {EXIT_CODE: "0"}}}
    return {"metadata": {"labels": {KWOK_FAILED: "true"}, "annotations": {
        KWOK_FAILED + "/exit-code": str(exit_code), KWOK_FAILED + "/reason": "Error",
        # KWOK's Stage puts the message into YAML unquoted: only words survive
        KWOK_FAILED + "/message": re.sub(r"[^A-Za-z0-9 ._/()=-]+", " ", message)[-2048:].strip()}}}


def stages_file():
    """STATE/kwok/stages.yaml: KWOK's Stages of the pinned version, with the lab's change (_lab_stages)."""
    root = Path(build.module_dir(KWOK_MODULE, build.required_version("kwok", KWOK_MODULE), "kwok"))
    documents = _lab_stages([yaml.safe_load((root / name).read_text()) for name in STAGES])
    content = "".join("---\n" + yaml.safe_dump(doc, sort_keys=False) for doc in documents)
    path = config.STATE / "kwok" / "stages.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != content:
        path.write_text(content)
    return path


def pod_cidr(cluster):
    """The addresses KWOK gives the cluster's pods (one /16 per cluster)."""
    return "10.%d.0.0/16" % (64 + cluster.index)


def _scheduler_argv(cluster):
    return [config.BIN / "kube-scheduler", "--kubeconfig", cluster.direct_kubeconfig,
            "--authentication-kubeconfig", cluster.direct_kubeconfig,
            "--authorization-kubeconfig", cluster.direct_kubeconfig,
            "--leader-elect=false", "--secure-port", "0"]


def _kwok_argv(cluster, stages):
    return [config.BIN / "kwok", "--kubeconfig", cluster.direct_kubeconfig, "--config", stages,
            "--manage-all-nodes=true", "--node-lease-duration-seconds", str(NODE_LEASE_SECONDS),
            "--cidr", pod_cidr(cluster)]


def static_nodes(cluster):
    if SHOOTS_GROUP in cluster.groups:
        return []
    return ["%s-%d" % (cluster.name, i) for i in range(1, STATIC_NODES + 1)]


def register_static_nodes(cluster):
    """Create the Nodes of a cluster that is not a Shoot (KWOK writes their status); one that exists stays."""
    session = kube._session(cluster)
    for name in static_nodes(cluster):
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}}}
        resp = session.post(cluster.server + "/api/v1/nodes", json=node, timeout=10)
        if resp.status_code not in (201, 409):
            raise RuntimeError("Node %s/%s: %s %s" % (cluster.name, name, resp.status_code, resp.text[:300]))


def up(clusters):
    stages = stages_file()
    for cluster in clusters:
        if not cluster.runs_workloads:
            continue
        processes.ensure("scheduler-%s" % cluster.name, _scheduler_argv(cluster), env=ENV)
        processes.ensure("kwok-%s" % cluster.name, _kwok_argv(cluster, stages), env=ENV)
    for cluster in clusters:
        if cluster.runs_workloads:
            register_static_nodes(cluster)

