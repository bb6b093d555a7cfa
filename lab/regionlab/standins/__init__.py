"""The operator stand-ins and the Gardener front, as ordinary lab processes.

- garden-front (front.py): the garden's API for clients, answering shoots/adminkubeconfig; also
  gardener-apiserver's rule for the Shoot operation annotation, a mutating webhook (shoot_admission.py).
- boot-operator-standin (boot.py): boot-operator's ServerBootConfiguration Ready, and the probe agent of a
  machine booted for discovery (the real metal-operator runs beside, metal.py of the lab).
- gardenlet-standin (gardenlet.py): Shoot status, plus the Project controller.
- c5c3-operator-standin (c5c3.py): the infrastructure and service CRs of each ControlPlane,
  ControlPlane status; in the same process (operators.py) the status of those CRs as mariadb-,
  RabbitMQ cluster-, valkey-, memcached- and the service operators write it.
- keystone-operator-standin (keystone_operator.py): a real Keystone per Keystone CR (keystones.py),
  Keystone status.

Started by `regionlab up` once the API servers serve their CRDs, after the seed objects of
lab/seed/ (what the garden's administrator put there: Project cobaltcore, the deletion
confirmation policy) are applied. The keystone-operator stand-in's first pass brings back the
Keystones of existing Keystone CRs (their data is kept under keystones/), and `regionlab up`
waits for it.
"""

import hashlib
import sys

import requests
import yaml

from .. import config, kube, processes
from . import keystones
from .loop import is_ready

# process name -> argument of `python -m regionlab.standins`
PROCESSES = {
    "garden-front": "garden-front",
    "boot-operator-standin": "boot-operator",
    "gardenlet-standin": "gardenlet",
    "c5c3-operator-standin": "c5c3-operator",
    "keystone-operator-standin": "keystone-operator",
}
# How long `regionlab up` waits for a stand-in's first pass (the keystone-operator's brings back
# the Keystones of existing CRs).
FIRST_PASS_TIMEOUT = {"keystone-operator-standin": 120}


def garden(clusters):
    for cluster in clusters:
        if config.GARDEN_GROUP in cluster.groups:
            return cluster
    raise RuntimeError("inventories/lab has no host in group %s" % config.GARDEN_GROUP)


def seed_files(cluster):
    """lab/seed/<inventory group or host>.yaml for a cluster."""
    return [config.SEEDS / ("%s.yaml" % name) for name in cluster.groups + [cluster.name]
            if (config.SEEDS / ("%s.yaml" % name)).exists()]


def apply_seeds(clusters):
    """Server-side apply the seed objects; skipped while unchanged."""
    for cluster in clusters:
        files = seed_files(cluster)
        if not files:
            continue
        digest = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()
        marker = processes.RUN / ("seed-%s.sha256" % cluster.name)
        if marker.exists() and marker.read_text() == digest:
            continue
        kube.apply_files(cluster, files)
        marker.write_text(digest)


def seeded_projects(cluster):
    names = []
    for path in seed_files(cluster):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "Project":
                names.append(doc["metadata"]["name"])
    return names


def _projects_ready(cluster):
    session = kube._session(cluster)
    for name in seeded_projects(cluster):
        resp = session.get(cluster.server + "/apis/core.gardener.cloud/v1beta1/projects/%s" % name, timeout=5)
        if not resp.ok or (resp.json().get("status") or {}).get("phase") != "Ready":
            return False
        namespace = resp.json()["spec"]["namespace"]
        if not session.get(cluster.server + "/api/v1/namespaces/%s" % namespace, timeout=5).ok:
            return False
    return True


def front_url():
    return "https://127.0.0.1:%d" % config.GARDEN_FRONT_PORT


def front_ready(garden_cluster):
    """The front answers /readyz (passed through to the garden's API server)."""
    if not processes.pid_of("garden-front"):
        return False
    session = requests.Session()
    session.trust_env = False
    session.verify = str(garden_cluster.pki / "ca.crt")
    session.cert = (str(garden_cluster.pki / "admin.crt"), str(garden_cluster.pki / "admin.key"))
    try:
        return session.get(front_url() + "/readyz", timeout=3).ok
    except (requests.RequestException, OSError):
        return False


def start():
    for name, arg in PROCESSES.items():
        if processes.pid_of(name):
            continue
        processes.start(name, [sys.executable, "-m", "regionlab.standins", arg], cwd=config.REPO / "lab", env={
            "COBALTCORE_LAB_DIR": str(config.STATE), "COBALTCORE_LAB_PORT_BASE": str(config.PORT_BASE),
            "COBALTCORE_LAB_BIN": str(config.BIN), "PYTHONUNBUFFERED": "1"}, marker=arg)


def up(clusters):
    apply_seeds(clusters)
    start()
    garden_cluster = garden(clusters)
    processes.wait_until(lambda: front_ready(garden_cluster), 30, "Gardener front", "garden-front")
    for name in PROCESSES:
        if name != "garden-front":
            processes.wait_until(lambda n=name: is_ready(n), FIRST_PASS_TIMEOUT.get(name, 30), name, name)
    processes.wait_until(lambda: _projects_ready(garden_cluster), 30, "seeded Projects Ready", "gardenlet-standin")


def status(clusters):
    garden_cluster = garden(clusters)
    info = {"garden-front": {"url": front_url(), "ready": front_ready(garden_cluster)}}
    for name in PROCESSES:
        if name != "garden-front":
            info[name] = {"ready": is_ready(name)}
    return info


def keystone_instances():
    """The Keystones the keystone-operator stand-in runs: namespace, name, url, process, ready."""
    return keystones.status()
