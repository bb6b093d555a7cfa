"""Whether an operator runs in a lab cluster: its chart's Deployment is Available.

An operator acts only while its pod runs. The lab's pods are KWOK's (regionlab/kubelets.py), so a
stand-in plays an operator while the operator's Deployment (phase 3 installs it with the chart) has
an available replica: not before the chart is installed, not while the Deployment is scaled to zero,
rolled out without a Ready pod, or deleted. What the operator started (a Keystone's API, a Ceph
daemon) keeps running without it, as pods do.
"""

from .client import ApiError, path

DEPLOYMENTS = path("apps/v1", "deployments")
NAME_LABEL = "app.kubernetes.io/name"
# Operators whose Deployment does not carry app.kubernetes.io/name=<operator>: their chart's label.
LABELS = {"rook-ceph-operator": ("operator", "rook")}


def label_of(operator):
    return LABELS.get(operator, (NAME_LABEL, operator))


def available(deployment):
    """At least one Ready replica of the Deployment's current generation is wanted and available."""
    meta, spec, status = deployment["metadata"], deployment.get("spec") or {}, deployment.get("status") or {}
    if meta.get("deletionTimestamp") or spec.get("replicas", 1) < 1 or spec.get("paused"):
        return False
    if (status.get("observedGeneration") or 0) < (meta.get("generation") or 0):
        return False
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    return conditions.get("Available") == "True" and (status.get("availableReplicas") or 0) >= 1


def running(deployments, operator):
    key, value = label_of(operator)
    return any((d["metadata"].get("labels") or {}).get(key) == value and available(d) for d in deployments)


class Operators:
    """The operators that run in one cluster, read once per pass (refresh) from its Deployments.
    A change is logged: the stand-in starts or stops playing that operator."""

    def __init__(self, kube, log):
        self.kube, self.log = kube, log
        self.where = getattr(getattr(kube, "cluster", None), "name", "")
        self.deployments = []
        self.seen = {}

    def refresh(self):
        try:
            self.deployments = self.kube.list(DEPLOYMENTS)
        except ApiError:
            pass  # the last answer stands: an API server's hiccup is no pod's end

    def runs(self, operator):
        now = running(self.deployments, operator)
        if self.seen.get(operator) != now:
            self.seen[operator] = now
            self.log("%s: %s's Deployment %s" % (
                self.where, operator,
                "is Available: playing the operator" if now else "has no available replica: the operator does not run"))
        return now
