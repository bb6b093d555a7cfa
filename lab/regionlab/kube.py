"""etcd, one kube-apiserver (and controller manager) per lab cluster, kubeconfigs, CRDs."""

import base64
import hashlib
import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests
import yaml

from . import build, config, pki, processes

# The controllers the lab needs from kube-controller-manager: namespace deletion and owner-reference
# cascades everywhere; where pods run (kubelets.py), the workload controllers (CronJobs included), Node health (Leases, taints,
# evictions) and the collection of pods whose Node is gone.
CONTROLLERS = "garbagecollector,namespace"
WORKLOAD_CONTROLLERS = CONTROLLERS + ",deployment,replicaset,statefulset,daemonset,job,cronjob,nodelifecycle,podgc"
# The namespace controller empties a namespace with a delete-collection and a list per namespaced
# resource type (115 on the control plane with its operators' CRDs): at kube-controller-manager's default
# client rate (20 requests/s, burst 30) deleting an empty namespace took 7.7 s; its API server is on loopback.
CONTROLLER_MANAGER_QPS = ("--kube-api-qps", "400", "--kube-api-burst", "800")


# Eight API servers share two cores and the lab's memory (at most 6.5 GiB resident with the storage pools' Ceph and
# the control plane's OVN running). GOGC=50 keeps an API server's heap at 1.5 times its live heap (130-250 MiB on
# the clusters with large CRD sets); the control plane's, where the tests' work and the watch cache are, collects
# at twice its live heap. The soft limits only cap a peak.
APISERVER_ENV = {"GOMEMLIMIT": "1GiB", "GOGC": "50"}
CONTROL_PLANE_APISERVER_ENV = {"GOMEMLIMIT": "1536MiB", "GOGC": "100"}
# The watch cache (and the larger soft limit) only on the control plane, where the tests' work is: its
# per-resource timers cost an idle server about half its CPU (twin storage pools, swapped: 98 against 184
# ticks a minute), but on the control plane (the c5c3, Keystone
# and K-ORC kinds; the stand-ins', K-ORC's and the garbage collector's watches) it served a tenant's addition
# and removal with 31 % less CPU (1104-1118 against 1609-1610 ticks) and 12 % sooner (two rounds, alternating).
CONTROL_PLANE_GROUP = "control_plane"
# The controller managers' heaps are small; most of their resident memory is the binary itself.
CONTROLLER_MANAGER_ENV = {"GOGC": "50"}
# etcd serves every LIST and GET of the eight API servers (no watch cache) and collects a live heap of ~50 MiB:
# GOGC=100, between the lab's memory and etcd's CPU (200 against 50: 4-7 times fewer collections, 25 % less etcd CPU,
# ~70 MiB more resident).
ETCD_ENV = {"GOGC": "100"}


def start_etcd():
    if processes.pid_of("etcd"):
        return
    data = config.STATE / "etcd"
    data.mkdir(parents=True, exist_ok=True)
    client = "http://127.0.0.1:%d" % config.ETCD_CLIENT_PORT
    peer = "http://127.0.0.1:%d" % config.ETCD_PEER_PORT
    processes.start("etcd", [
        config.BIN / "etcd", "--name", "lab", "--data-dir", data,
        "--listen-client-urls", client, "--advertise-client-urls", client,
        "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
        "--initial-cluster", "lab=%s" % peer,
        "--listen-metrics-urls", "http://127.0.0.1:%d" % config.ETCD_METRICS_PORT,
        # Test data only: losing it on a host crash is fine, fsync latency is not.
        "--unsafe-no-fsync", "--log-level", "warn",
        "--quota-backend-bytes", str(4 * 1024 ** 3),
        # One member, no follower to catch up: keep few raft entries in memory (phase 3's CRDs are
        # megabytes each, and every entry of the default 10000 would stay resident).
        "--snapshot-count", "1000", "--snapshot-catchup-entries", "100",
    ], env=ETCD_ENV)


def etcd_ready():
    return processes.answers("http://127.0.0.1:%d/health" % config.ETCD_CLIENT_PORT)


def _apiserver_argv(cluster):
    pki_dir = cluster.pki
    return [
        config.BIN / "kube-apiserver",
        "--etcd-servers", "http://127.0.0.1:%d" % config.ETCD_CLIENT_PORT,
        "--etcd-prefix", "/registry/%s" % cluster.name,
        "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
        "--secure-port", str(cluster.port),
        "--tls-cert-file", pki_dir / "server.crt", "--tls-private-key-file", pki_dir / "server.key",
        "--client-ca-file", pki_dir / "ca.crt",
        "--authorization-mode", "RBAC",
        "--service-cluster-ip-range", "10.0.0.0/24",
        "--service-account-issuer", cluster.server,
        "--service-account-key-file", pki_dir / "sa.pub",
        "--service-account-signing-key-file", pki_dir / "sa.key",
        "--allow-privileged=true",
        "--disable-admission-plugins", "ServiceAccount",
        "--profiling=false",
        "--endpoint-reconciler-type", "none",
        # Background work a lab of eight API servers on two cores can do without: per-resource object counts
        # and etcd size polls (metrics only), and API Priority and Fairness (no tenant competes for a lab server).
        # Side by side on an idle converged region: 135 against 162 CPU ticks a minute for one server.
        "--etcd-count-metric-poll-period=0s", "--etcd-db-metric-poll-interval=0s",
        "--enable-priority-and-fairness=false",
        "--watch-cache=%s" % ("true" if CONTROL_PLANE_GROUP in cluster.groups else "false"),
    ]


def _controller_manager_argv(cluster):
    return [
        config.BIN / "kube-controller-manager",
        "--kubeconfig", cluster.direct_kubeconfig,
        "--controllers", WORKLOAD_CONTROLLERS if cluster.runs_workloads else CONTROLLERS,
        "--leader-elect=false", "--secure-port", "0",
        "--use-service-account-credentials=false",
    ] + list(CONTROLLER_MANAGER_QPS)


def kubeconfig_doc(name, server, ca_pem, cert_pem, key_pem, user=None):
    """A kubeconfig with one cluster, one client-certificate user and one context."""
    def b64(data):
        return base64.b64encode(data).decode()

    user = user or "%s-admin" % name
    return {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority-data": b64(ca_pem)}}],
        "users": [{"name": user, "user": {"client-certificate-data": b64(cert_pem), "client-key-data": b64(key_pem)}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": user}}],
        "current-context": name,
    }


def write_kubeconfig(cluster):
    """The public kubeconfig (the garden's goes through the Gardener front) and the direct one."""
    pki_dir = cluster.pki
    creds = [(pki_dir / f).read_bytes() for f in ("ca.crt", "admin.crt", "admin.key")]
    for path, server in ((cluster.kubeconfig, cluster.public_server), (cluster.direct_kubeconfig, cluster.server)):
        content = yaml.safe_dump(kubeconfig_doc(cluster.name, server, *creds), sort_keys=False).encode()
        if not path.exists() or path.read_bytes() != content:
            pki.write_private(path, content)


def _session(cluster):
    session = requests.Session()
    # Otherwise REQUESTS_CA_BUNDLE from the environment overrides the cluster's CA.
    session.trust_env = False
    session.verify = str(cluster.pki / "ca.crt")
    session.cert = (str(cluster.pki / "admin.crt"), str(cluster.pki / "admin.key"))
    return session


def apiserver_ready(cluster):
    try:
        return _session(cluster).get(cluster.server + "/readyz", timeout=2).ok
    except (requests.RequestException, OSError):  # OSError: no certificates yet
        return False


def server_version(cluster):
    return _session(cluster).get(cluster.server + "/version", timeout=5).json()["gitVersion"]


def start_cluster(cluster):
    pki.ensure_cluster_pki(cluster.pki, cluster.name)
    write_kubeconfig(cluster)
    name = "apiserver-%s" % cluster.name
    env = CONTROL_PLANE_APISERVER_ENV if CONTROL_PLANE_GROUP in cluster.groups else APISERVER_ENV
    processes.ensure(name, _apiserver_argv(cluster), env=env)


def start_controller_manager(cluster):
    processes.ensure("controller-manager-%s" % cluster.name, _controller_manager_argv(cluster),
                     env=CONTROLLER_MANAGER_ENV)


# CRDs ------------------------------------------------------------------------

def upstream_entries():
    path = config.CRDS / "upstream.json"
    return json.loads(path.read_text()) if path.exists() else []


def crd_files(cluster):
    """The CRD files a cluster carries, by its groups and name."""
    wanted = set(cluster.groups) | {cluster.name}
    files = [config.CRDS / ("%s.yaml" % name) for name, targets in config.LOCAL_CRD_CLUSTERS.items()
             if wanted & set(targets)]
    for entry in upstream_entries():
        if not wanted & set(entry["clusters"]):
            continue
        root = Path(build.module_dir(entry["module"], entry["version"]))
        for pattern in entry["files"]:
            matched = sorted(root.glob(pattern))
            if not matched:
                raise RuntimeError("CRD set %s: %s matches nothing in %s@%s"
                                   % (entry["name"], pattern, entry["module"], entry["version"]))
            files.extend(matched)
    return files


def install_crds(cluster, files):
    """Server-side apply the CRDs and wait until each is Established; skipped when unchanged."""
    if not files:
        return False  # a Shoot's cluster starts without CRDs: phase 3 brings them
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.read_bytes())
    marker = processes.RUN / ("crds-%s.sha256" % cluster.name)
    if marker.exists() and marker.read_text() == digest.hexdigest():
        return False
    apply_files(cluster, files)
    # Not `kubectl wait`: it fails at once on a CRD whose status has no conditions yet.
    processes.wait_until(lambda: not crds_not_established(cluster), 120,
                         "CRDs of %s Established" % cluster.name)
    marker.write_text(digest.hexdigest())
    return True


def apply_files(cluster, files):
    """kubectl apply --server-side of manifest files, straight to the cluster's API server."""
    args = [str(config.BIN / "kubectl"), "--kubeconfig", str(cluster.direct_kubeconfig),
            "apply", "--server-side", "--force-conflicts", "--field-manager", "cobaltcore-lab"]
    for path in files:
        args += ["-f", str(path)]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


def crds_not_established(cluster):
    url = cluster.server + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    items = _session(cluster).get(url, timeout=10).json().get("items", [])
    return [crd["metadata"]["name"] for crd in items
            if not any(c.get("type") == "Established" and c.get("status") == "True"
                       for c in (crd.get("status") or {}).get("conditions") or [])]


def up(clusters, log=print):
    start_etcd()
    processes.wait_until(etcd_ready, 60, "etcd", "etcd")
    for cluster in clusters:
        start_cluster(cluster)
    for cluster in clusters:
        processes.wait_until(lambda c=cluster: apiserver_ready(c), 180,
                             "kube-apiserver %s" % cluster.name, "apiserver-%s" % cluster.name)
    for cluster in clusters:
        start_controller_manager(cluster)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=4) as pool:
        changed = list(pool.map(lambda c: install_crds(c, crd_files(c)), clusters))
    if any(changed):
        log("CRDs installed in %.1fs" % (time.monotonic() - started))
