"""The real K-ORC manager, watching the lab's control-plane API server."""

import requests

from . import config, processes

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


def up(clusters):
    start(control_plane(clusters))
    processes.wait_until(ready, 60, "K-ORC manager", NAME)
