"""The real K-ORC manager, watching the lab's control-plane API server.

It runs once its CRDs are there: phase 3 installs them with the openstack-resource-controller chart,
and the gardenlet stand-in then starts the manager, as the chart's Deployment would start its pod.
"""

import requests

from . import config, kube, processes

NAME = "korc-manager"


def control_plane(clusters):
    for cluster in clusters:
        if "control_plane" in cluster.groups:
            return cluster
    raise RuntimeError("inventories/lab has no host in group control_plane")


def start(cluster):
    if processes.pid_of(NAME):
        return
    processes.start(NAME, [
        config.BIN / NAME, "--kubeconfig", cluster.kubeconfig,
        "--health-probe-bind-address", "127.0.0.1:%d" % config.KORC_HEALTH_PORT,
        "--metrics-bind-address", "0", "--leader-elect=false",
    ])


def ready():
    try:
        return requests.get("http://127.0.0.1:%d/readyz" % config.KORC_HEALTH_PORT, timeout=2).ok
    except requests.RequestException:
        return False


API_GROUP_PATH = "/apis/openstack.k-orc.cloud/v1alpha1"


def installed(cluster):
    """K-ORC's CRDs are served (the manager fails at start without them)."""
    try:
        return kube._session(cluster).get(cluster.server + API_GROUP_PATH, timeout=5).ok
    except (requests.RequestException, OSError):
        return False


def wanted(clusters):
    return installed(control_plane(clusters))


def up(clusters):
    """Start the manager when its CRDs are installed, and wait for it; else nothing to run yet."""
    if not wanted(clusters):
        return False
    start(control_plane(clusters))
    processes.wait_until(ready, 60, "K-ORC manager", NAME)
    return True
