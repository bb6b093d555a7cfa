"""What happens to the lab cluster that plays a Shoot when the Shoot comes and goes.

A real Shoot's cluster is new when the Shoot is created and gone when it is deleted. The lab's
clusters outlive their Shoots, so a deleted Shoot's cluster is emptied (reset) and a new Shoot
starts from a cluster as Gardener hands it over: system namespaces only, no CRDs, no Flux until
its shoot-flux extension installs it (flux.py).
"""

import time

from . import flux, korc, kube, processes

SYSTEM_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease"}
# Cluster-scoped objects Helm made for the releases (label app.kubernetes.io/managed-by=Helm).
HELM_CLUSTER_KINDS = (
    ("rbac.authorization.k8s.io/v1", "clusterroles"), ("rbac.authorization.k8s.io/v1", "clusterrolebindings"),
    ("admissionregistration.k8s.io/v1", "validatingwebhookconfigurations"),
    ("admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations"),
    ("scheduling.k8s.io/v1", "priorityclasses"),
)
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _api(api_version):
    return "/api/v1" if api_version == "v1" else "/apis/" + api_version


def _served_version(crd):
    for version in crd["spec"]["versions"]:
        if version.get("served"):
            return version["name"]
    return crd["spec"]["versions"][0]["name"]


def reset(cluster, timeout=120):
    """Empty a Shoot's lab cluster: its workloads stopped, every CRD, namespace and Helm-made object gone."""
    flux.stop(cluster)
    if "control_plane" in cluster.groups:
        processes.stop(korc.NAME)
    session = kube._session(cluster)
    base = cluster.server
    crds = session.get(base + CRDS, timeout=30).json().get("items", [])
    # Nothing runs that would remove its finalizers (the controllers are stopped, the cluster goes).
    for crd in crds:
        spec = crd["spec"]
        url = "%s/apis/%s/%s/%s" % (base, spec["group"], _served_version(crd), spec["names"]["plural"])
        resp = session.get(url, timeout=30)
        for item in resp.json().get("items", []) if resp.ok else []:
            if item["metadata"].get("finalizers"):
                meta = item["metadata"]
                ns = "/namespaces/%s" % meta["namespace"] if meta.get("namespace") else ""
                session.patch("%s/apis/%s/%s%s/%s/%s" % (base, spec["group"], _served_version(crd), ns,
                                                         spec["names"]["plural"], meta["name"]),
                              json={"metadata": {"finalizers": None}},
                              headers={"Content-Type": "application/merge-patch+json"}, timeout=30)
    session.delete(base + CRDS, timeout=60)
    for api_version, plural in HELM_CLUSTER_KINDS:
        session.delete("%s%s/%s" % (base, _api(api_version), plural),
                       params={"labelSelector": "app.kubernetes.io/managed-by=Helm"}, timeout=60)
    namespaces = [n["metadata"]["name"] for n in session.get(base + "/api/v1/namespaces", timeout=30).json()["items"]]
    for name in namespaces:
        if name not in SYSTEM_NAMESPACES:
            session.delete("%s/api/v1/namespaces/%s" % (base, name), timeout=30)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left_crds = session.get(base + CRDS, timeout=30).json().get("items", [])
        left_ns = [n for n in session.get(base + "/api/v1/namespaces", timeout=30).json()["items"]
                   if n["metadata"]["name"] not in SYSTEM_NAMESPACES]
        if not left_crds and not left_ns:
            return
        time.sleep(0.5)
    raise RuntimeError("lab cluster %s not empty after %ss" % (cluster.name, timeout))
