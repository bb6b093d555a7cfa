"""The real Flux source-controller and helm-controller, for the lab clusters the caller picks.

A cluster that has Flux looks as Flux's install leaves it: namespace flux-system, Flux's CRDs,
and both controllers with leader election on, so their Leases in flux-system (LEASES) show that
Flux runs. The controllers watch all namespaces, as Flux's own install does.
"""

from pathlib import Path

import requests

from . import build, config, kube, processes

NAMESPACE = "flux-system"
# controller-runtime's LeaderElectionID, "<controller>-leader-election" in both main.go files.
LEASES = ("source-controller-leader-election", "helm-controller-leader-election")
# lab/crds/upstream.json entry -> the Go module building its controller (same version, checked).
CRD_SETS = {"flux-source-controller": "flux-source", "flux-helm-controller": "flux-helm",
            "flux-kustomize-controller": None}
# Each controller's live heap measured 10-30 MiB (its ~70-90 MiB resident is mostly the binary);
# a soft limit keeps source-controller's peaks from becoming the resident high-water mark.
ENV = {"GOMEMLIMIT": "100MiB", "GOGC": "50", "RUNTIME_NAMESPACE": NAMESPACE}
# helm-controller's heap passes 100 MiB while it installs the charts with large CRDs (cert-manager,
# external-secrets, Rook; high-water marks 120-160 MiB resident), where that limit made it collect without
# pause: CPU, not memory, is what the lab runs short of.
HELM_ENV = dict(ENV, GOMEMLIMIT="512MiB", GOGC="100")
# helm-controller re-checks a dependsOn target that is not Ready (or a chart not ready yet) every
# --requeue-dependency, 30 s upstream; it does not watch the target. A dependent's first install
# then starts up to 30 s after its dependency is Ready, where an install takes about a second.
REQUEUE_DEPENDENCY = "5s"
# Ports of config.flux_port(cluster, k).
SOURCE_HEALTH, SOURCE_METRICS, SOURCE_STORAGE, HELM_HEALTH, HELM_METRICS = range(config.FLUX_PORTS)


def _names(cluster):
    return "source-controller-%s" % cluster.name, "helm-controller-%s" % cluster.name


def _addr(cluster, k):
    return "127.0.0.1:%d" % config.flux_port(cluster, k)


def crd_files():
    """All CRDs of Flux's controllers: not only upstream.json's subset, source-controller does not
    start without Bucket and ExternalArtifact."""
    files = []
    for entry in kube.upstream_entries():
        if entry["name"] not in CRD_SETS:
            continue
        go_module = CRD_SETS[entry["name"]]
        pin = "%s %s" % (entry["module"], entry["version"])
        if go_module and pin not in (config.GO_MODULES / go_module / "go.mod").read_text():
            raise RuntimeError("lab/go/%s/go.mod does not require %s (lab/crds/upstream.json)" % (go_module, pin))
        files += sorted((Path(build.module_dir(entry["module"], entry["version"])) / "config/crd/bases").glob("*.yaml"))
    if len(files) < len(CRD_SETS):
        raise RuntimeError("Flux's CRD sets %s: not all in lab/crds/upstream.json" % sorted(CRD_SETS))
    return files


def _install(cluster, home):
    namespace = home / "namespace.yaml"
    namespace.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n" % NAMESPACE)
    kube.apply_files(cluster, [namespace] + crd_files())
    processes.wait_until(lambda: not kube.crds_not_established(cluster), 120,
                         "Flux CRDs of %s Established" % cluster.name)


def start(cluster):
    """Namespace, CRDs and both controllers of one cluster; nothing when both run."""
    source, helm = _names(cluster)
    if processes.pid_of(source) and processes.pid_of(helm):
        return
    home = config.STATE / "flux" / cluster.name
    # Flux's managers take the leader election namespace from the pod's service-account mount;
    # the lab's build reads it relative to the working directory (build.PATCHES).
    sa_namespace = home / "var/run/secrets/kubernetes.io/serviceaccount/namespace"
    sa_namespace.parent.mkdir(parents=True, exist_ok=True)
    sa_namespace.write_text(NAMESPACE)
    (home / "artifacts").mkdir(exist_ok=True)
    _install(cluster, home)
    kubeconfig = {"KUBECONFIG": str(cluster.direct_kubeconfig)}  # neither has a --kubeconfig flag
    common = ["--enable-leader-election", "--watch-all-namespaces=true"]
    if not processes.pid_of(source):
        processes.start(source, [
            config.BIN / "source-controller", *common,
            "--health-addr", _addr(cluster, SOURCE_HEALTH), "--metrics-addr", _addr(cluster, SOURCE_METRICS),
            # helm-controller fetches the charts from here.
            "--storage-addr", _addr(cluster, SOURCE_STORAGE), "--storage-adv-addr", _addr(cluster, SOURCE_STORAGE),
            "--storage-path", home / "artifacts",
        ], env=dict(ENV, **kubeconfig), cwd=home)
    if not processes.pid_of(helm):
        processes.start(helm, [
            config.BIN / "helm-controller", *common,
            "--health-addr", _addr(cluster, HELM_HEALTH), "--metrics-addr", _addr(cluster, HELM_METRICS),
            "--requeue-dependency", REQUEUE_DEPENDENCY,
        ], env=dict(HELM_ENV, **kubeconfig), cwd=home)


def running(cluster):
    return any(processes.pid_of(name) for name in _names(cluster))


def _ok(url):
    try:
        return requests.get(url, timeout=2).ok
    except requests.RequestException:
        return False


def ready(cluster):
    return all(_ok("http://%s/readyz" % _addr(cluster, k)) for k in (SOURCE_HEALTH, HELM_HEALTH))


def up(clusters):
    """Flux on these clusters; waits until both controllers of each answer their health checks."""
    for cluster in clusters:
        start(cluster)
    for cluster in clusters:
        for name in _names(cluster):  # each name once: wait_until fails at once when it exited
            processes.wait_until(lambda c=cluster: ready(c), 60, "Flux on %s" % cluster.name, name)


def stop(cluster):
    for name in _names(cluster):
        processes.stop(name)
