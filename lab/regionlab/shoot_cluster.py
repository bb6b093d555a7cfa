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
    # Nothing runs that would remove their finalizers (the controllers are stopped, the cluster goes).
    # The custom resources go before their CRDs: the API server keeps a deleted CRD's objects in
    # etcd, and they would come back with the CRD when the next Shoot's phase 3 installs it.
    for crd in crds:
        spec = crd["spec"]
        url = "%s/apis/%s/%s/%s" % (base, spec["group"], _served_version(crd), spec["names"]["plural"])
        for item in _items(session, url):
            meta = item["metadata"]
            if meta.get("finalizers"):
                ns = "namespaces/%s/" % meta["namespace"] if meta.get("namespace") else ""
                session.patch("%s/apis/%s/%s/%s%s/%s" % (base, spec["group"], _served_version(crd), ns,
                                                         spec["names"]["plural"], meta["name"]),
                              json={"metadata": {"finalizers": None}},
                              headers={"Content-Type": "application/merge-patch+json"}, timeout=30)
        if crd["spec"]["scope"] == "Namespaced":
            for namespace in set(i["metadata"]["namespace"] for i in _items(session, url)):
                session.delete("%s/apis/%s/%s/namespaces/%s/%s" % (base, spec["group"], _served_version(crd),
                                                                    namespace, spec["names"]["plural"]), timeout=60)
        else:
            session.delete(url, timeout=60)
    _wait(lambda: not any(_items(session, "%s/apis/%s/%s/%s" % (base, c["spec"]["group"], _served_version(c),
                                                                 c["spec"]["names"]["plural"])) for c in crds),
          timeout, "custom resources of %s deleted" % cluster.name)
    session.delete(base + CRDS, timeout=60)
    for api_version, plural in HELM_CLUSTER_KINDS:
        session.delete("%s%s/%s" % (base, _api(api_version), plural),
                       params={"labelSelector": "app.kubernetes.io/managed-by=Helm"}, timeout=60)
    namespaces = [n["metadata"]["name"] for n in session.get(base + "/api/v1/namespaces", timeout=30).json()["items"]]
    # Secrets and ConfigMaps with finalizers (Rook's disaster protection of its mon Secret and endpoints
    # ConfigMap) would keep their namespace: their controller is gone with the cluster.
    for plural in ("secrets", "configmaps"):
        for item in _items(session, "%s/api/v1/%s" % (base, plural)):
            meta = item["metadata"]
            if meta.get("finalizers") and meta["namespace"] not in SYSTEM_NAMESPACES:
                session.patch("%s/api/v1/namespaces/%s/%s/%s" % (base, meta["namespace"], plural, meta["name"]),
                              json={"metadata": {"finalizers": None}},
                              headers={"Content-Type": "application/merge-patch+json"}, timeout=30)
    for name in namespaces:
        if name not in SYSTEM_NAMESPACES:
            session.delete("%s/api/v1/namespaces/%s" % (base, name), timeout=30)
    _wait(lambda: not session.get(base + CRDS, timeout=30).json().get("items") and not [
        n for n in session.get(base + "/api/v1/namespaces", timeout=30).json()["items"]
        if n["metadata"]["name"] not in SYSTEM_NAMESPACES], timeout, "lab cluster %s empty" % cluster.name)
    # The Shoot's machines go last: their kubelets (KWOK) end the namespaces' pods; pods left on a deleted
    # Node would wait for the pod garbage collector's quarantine.
    session.delete(base + "/api/v1/nodes", timeout=30)


def _items(session, url):
    resp = session.get(url, timeout=30)
    return resp.json().get("items", []) if resp.ok else []


def _wait(check, timeout, what):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError("%s: not after %ss" % (what, timeout))
        time.sleep(0.5)
