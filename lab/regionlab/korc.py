"""The real K-ORC manager, watching the lab's control-plane API server.

It runs while the Deployment of its chart (openstack-resource-controller, phase 3) is Available:
the gardenlet stand-in starts the manager then and stops it when the Deployment is scaled to zero or
deleted, as the Deployment's pod would run and end.
"""

import requests

from . import config, kube, processes
from .standins import deployments

NAME = "korc-manager"


def control_plane(clusters):
    for cluster in clusters:
        if "control_plane" in cluster.groups:
            return cluster
    raise RuntimeError("inventories/lab has no host in group control_plane")


def _lab_argv(cluster):
    """What the lab decides: the binary, the cluster and the lab's ports (a pod gets these from its Deployment's
    environment and Service)."""
    return [str(a) for a in (config.BIN / NAME, "--kubeconfig", cluster.kubeconfig,
                             "--health-probe-bind-address", "127.0.0.1:%d" % config.KORC_HEALTH_PORT,
                             "--metrics-bind-address", "0", "--leader-elect=false")]


def start(cluster, args=()):
    """The manager with the lab's flags and the Deployment's container args (the chart's values.args)."""
    if processes.pid_of(NAME):
        return
    processes.start(NAME, _lab_argv(cluster) + list(args))


def running_args(cluster):
    """The Deployment args the running manager got, None when it does not run."""
    argv = processes.argv_of(NAME)
    if argv is None:
        return None
    return argv[len(_lab_argv(cluster)):]


def ready():
    return processes.answers("http://127.0.0.1:%d/readyz" % config.KORC_HEALTH_PORT)


# The Deployment of K-ORC's chart (phase 3): Helm creates it after the chart's CRDs are established,
# so the manager (which fails at start without all of them) starts when it is Available, as its pod runs.
DEPLOYMENTS = deployments.DEPLOYMENTS
CHART_LABEL = ("app.kubernetes.io/name", "openstack-resource-controller")
CHART_SELECTOR = "%s=%s" % CHART_LABEL


def args_of(listed):
    """The container args of K-ORC's Available Deployment among the `listed` Deployments (the chart's values.args),
    None when there is none (not installed, scaled to zero, no Ready pod, deleted)."""
    items = [d for d in listed if (d["metadata"].get("labels") or {}).get(CHART_LABEL[0]) == CHART_LABEL[1]
             and deployments.available(d)]
    if not items:
        return None
    containers = ((items[0].get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or [{}]
    return [str(a) for a in containers[0].get("args") or []]


def deployment_args(cluster):
    """args_of the cluster's Deployments; None also when the API server did not answer."""
    try:
        resp = kube._session(cluster).get(cluster.server + DEPLOYMENTS, params={"labelSelector": CHART_SELECTOR},
                                          timeout=5)
        items = resp.json().get("items") if resp.ok else None
    except (requests.RequestException, OSError, ValueError):
        return None
    return args_of(items or [])


def installed(cluster):
    """K-ORC's chart put its Deployment on the cluster, and it is Available."""
    return deployment_args(cluster) is not None


def wanted(clusters):
    return installed(control_plane(clusters))


def up(clusters):
    """Wait for the manager when its chart is installed (the gardenlet stand-in starts it, one starter
    only); else there is nothing to run yet."""
    if not wanted(clusters):
        return False
    processes.wait_until(ready, 90, "K-ORC manager (started by the gardenlet stand-in)")
    return True
