"""openstack-hypervisor-operator stand-in: a Hypervisor per labelled Node, onboarded to Ready.

Run from the gardenlet stand-in's loop over the hypervisor-pool clusters (no process of its own),
once the operator's chart has installed the Hypervisor CRD (kvm.cloud.sap/v1, cluster-scoped).
Modelled on github.com/cobaltcore-dev/openstack-hypervisor-operator:

- internal/controller/constants.go: Nodes with the label nova.openstack.cloud.sap/virt-driver
  (any value: the hypervisor controller's predicate is Exists) get a Hypervisor.
- hypervisor_controller.go: the Hypervisor is named after the Node, owned by it (owner reference,
  blockOwnerDeletion; the garbage collector deletes it with the Node), spec highAvailability and
  installCertificate true, lifecycleEnabled true only when the Node carries
  cobaltcore.cloud.sap/node-hypervisor-lifecycle (skipTests when its value is skip-tests), the
  aggregates and custom-traits annotations, the transferred labels; later status.internalIp from
  the Node's InternalIP and the transferred labels kept in sync.
- onboarding_controller.go: with lifecycle enabled, hypervisorId/serviceId once nova-compute has
  registered the host in Nova - the lab plays that once a Nova CR serving the pool is Ready on the
  control-plane cluster (the Nova of a ControlPlane whose spec.compute.hypervisorClusters names the
  pool) and the delay has passed; without such a Nova the Hypervisor waits, as upstream's does -
  then condition Onboarding True
  Initial "Initial onboarding" -> Testing "Running onboarding tests" -> Handover "Waiting for other
  controllers to take over" -> False Succeeded "Onboarding completed".
- ready/controller.go (ComputeReadyCondition): Ready False Onboarding "Onboarding not started: ..."
  / "Onboarding in progress: <Onboarding message>", True Ready "Hypervisor is ready".

Each step waits the `hypervisor` delay. Not played: Nova itself (aggregates, traits, HA, the smoke
test VM: those steps succeed), maintenance, eviction and offboarding. A failure from standins.yaml
`failures` (key Hypervisor, Hypervisor/<pool cluster> or Hypervisor/<pool cluster>/<name>) keeps
onboarding at Testing with its message, as a failed smoke test does (terminal: sticks to the
generation). Hypervisors whose status another field manager writes are left alone.
"""

import uuid

from . import loop, operators
from .client import Kube, path

GV = "kvm.cloud.sap/v1"
MANAGER = "lab-hypervisor-operator"
OPERATOR = "openstack-hypervisor-operator"   # its Deployment (deployments.py)
VIRT_DRIVER = "nova.openstack.cloud.sap/virt-driver"
LIFECYCLE = "cobaltcore.cloud.sap/node-hypervisor-lifecycle"
AGGREGATES = "nova.openstack.cloud.sap/aggregates"
CUSTOM_TRAITS = "nova.openstack.cloud.sap/custom-traits"
TRANSFER_LABELS = ["kubernetes.io/hostname", "kubernetes.metal.cloud.sap/bb", "kubernetes.metal.cloud.sap/cluster",
                   "kubernetes.metal.cloud.sap/name", "kubernetes.metal.cloud.sap/type",
                   "worker.garden.sapcloud.io/group", "worker.gardener.cloud/pool",
                   "topology.kubernetes.io/region", "topology.kubernetes.io/zone"]
HYPERVISORS = path(GV, "hypervisors")
NODES = path("v1", "nodes")
CONTROL_PLANES = path("c5c3.io/v1alpha1", "controlplanes")
NOVAS = path(operators.KINDS["Nova"].api_version, operators.KINDS["Nova"].plural)
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_DNS, "hypervisors.lab.c5c3.io")

# Onboarding steps after nova-compute registered: (status, reason, message).
STEPS = [("True", "Initial", "Initial onboarding"),
         ("True", "Testing", "Running onboarding tests"),
         ("True", "Handover", "Waiting for other controllers to take over"),
         ("False", "Succeeded", "Onboarding completed")]
NOT_REGISTERED = ("Onboarding not started: waiting for nova-compute to register the hypervisor in Nova "
                  "(HypervisorID/ServiceID not yet available)")


def _split(value):
    return [v.strip() for v in value.split(",") if v.strip()]


def transferred_labels(node):
    labels = node["metadata"].get("labels") or {}
    return {k: labels[k] for k in TRANSFER_LABELS if k in labels}


def desired_hypervisor(node):
    """The Hypervisor the hypervisor controller creates for a Node (Go zero values sent as they are)."""
    meta = node["metadata"]
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    spec = {"reboot": False, "evacuateOnReboot": False, "lifecycleEnabled": LIFECYCLE in labels,
            "skipTests": labels.get(LIFECYCLE) == "skip-tests", "highAvailability": True,
            "createCertManagerCertificate": False, "installCertificate": True}
    if AGGREGATES in annotations:
        spec["aggregates"] = _split(annotations[AGGREGATES])
    if CUSTOM_TRAITS in annotations:
        spec["customTraits"] = _split(annotations[CUSTOM_TRAITS])
    return {"apiVersion": GV, "kind": "Hypervisor",
            "metadata": {"name": meta["name"], "labels": transferred_labels(node),
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": meta["name"],
                                              "uid": meta["uid"], "blockOwnerDeletion": True}]},
            "spec": spec}


def ready_condition(hv):
    """ComputeReadyCondition for the conditions the lab writes (no maintenance, eviction, offboarding)."""
    status, spec = hv.get("status") or {}, hv.get("spec") or {}
    onboarding = next((c for c in status.get("conditions") or [] if c.get("type") == "Onboarding"), None)
    if onboarding is not None and onboarding.get("status") == "True":
        return "False", "Onboarding", "Onboarding in progress: " + (onboarding.get("message") or "")
    if onboarding is None:
        if not spec.get("lifecycleEnabled"):
            return "False", "Onboarding", "Onboarding not started: lifecycle management is disabled"
        if not status.get("hypervisorId") or not status.get("serviceId"):
            return "False", "Onboarding", NOT_REGISTERED
        return "False", "Onboarding", "Onboarding not started"
    if onboarding.get("reason") == "Aborted":
        return "False", "Onboarding", "Onboarding was aborted"
    if onboarding.get("reason") != "Succeeded":
        return "False", "Onboarding", "Onboarding not yet completed"
    return "True", "Ready", "Hypervisor is ready"


def internal_ip(node):
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return address.get("address")
    return None


class HypervisorOperator:
    """One pass over the hypervisor-pool clusters, driven by the gardenlet stand-in's loop."""

    def __init__(self, ctl, clusters, control_plane):
        self.ctl = ctl
        self.kubes = {c.name: Kube(c, MANAGER) for c in clusters}
        self.control_plane = Kube(control_plane, MANAGER) if control_plane is not None else None
        self.stuck = {}
        self.novas = None

    def nova_ready(self, pool):
        """A Ready Nova serves the pool: nova-compute on its Nodes can register (read once per pass)."""
        if self.novas is None:
            self.novas = set()
            planes = (self.control_plane.list(CONTROL_PLANES) or []) if self.control_plane else []
            for cp in planes:
                pools = ((cp.get("spec") or {}).get("compute") or {}).get("hypervisorClusters") or []
                kind = operators.KINDS["Nova"]
                nova = self.control_plane.get(path(kind.api_version, kind.plural, cp["metadata"]["namespace"], "nova"))
                if nova is not None and operators.is_ready(nova):
                    self.novas.update(pools)
        return pool in self.novas

    def reconcile(self):
        self.novas = None
        live = set()
        for name, kube in self.kubes.items():
            if not self.ctl.operators[name].runs(OPERATOR):
                continue  # before phase 3 installed the operator's chart, or scaled to zero
            live |= self.reconcile_cluster(name, kube)
        self.stuck = {u: v for u, v in self.stuck.items() if u in live}
        return live

    def reconcile_cluster(self, cluster, kube):
        nodes = {n["metadata"]["name"]: n for n in kube.list(NODES)}
        hypervisors = {h["metadata"]["name"]: h for h in kube.list(HYPERVISORS)}
        live = set()
        for name, node in sorted(nodes.items()):
            if VIRT_DRIVER not in (node["metadata"].get("labels") or {}) or node["metadata"].get("deletionTimestamp"):
                continue
            hv = hypervisors.get(name)
            if hv is None:
                if self.ctl.after((node["metadata"]["uid"], "hypervisor"), min(1.0, self.ctl.delay("hypervisor"))):
                    if kube.create(HYPERVISORS, desired_hypervisor(node)) is not None:
                        self.ctl.log("Hypervisor %s/%s created" % (cluster, name))
                    self.ctl.done((node["metadata"]["uid"], "hypervisor"))
                continue
            live.add(hv["metadata"]["uid"])
            self.reconcile_hypervisor(cluster, kube, node, hv)
        return live | {n["metadata"]["uid"] for n in nodes.values()}

    def failure(self, cluster, hv):
        meta = hv["metadata"]
        configured = self.ctl.settings.get().failure("Hypervisor", cluster, meta["name"])
        if configured.get("terminal"):
            self.stuck[meta["uid"]] = (meta.get("generation"), configured)
        stuck = self.stuck.get(meta["uid"])
        return stuck[1] if stuck and stuck[0] == meta.get("generation") else configured

    def reconcile_hypervisor(self, cluster, kube, node, hv):
        meta = hv["metadata"]
        if meta.get("deletionTimestamp") or loop.foreign(hv, MANAGER):
            return
        url = path(GV, "hypervisors", name=meta["name"])
        labels = transferred_labels(node)
        have = meta.get("labels") or {}
        if any(have.get(k) != v for k, v in labels.items()):
            kube.patch(url, hv, {"metadata": {"labels": labels}})
            return
        status = hv.get("status") or {}
        wanted = {"conditions": [dict(c) for c in status.get("conditions") or []]}
        address = internal_ip(node)
        if address and status.get("internalIp") != address:
            wanted["internalIp"] = address
        self.onboard(cluster, hv, status, wanted)
        view = dict(hv, status=dict(status, **wanted))
        loop.set_condition(wanted["conditions"], "Ready", *ready_condition(view))
        patch = {k: v for k, v in wanted.items() if status.get(k) != v}
        if patch and kube.patch(url, hv, {"status": patch}, "status"):
            ready = next(c for c in wanted["conditions"] if c["type"] == "Ready")
            self.ctl.log("Hypervisor %s/%s: Ready=%s %s" % (cluster, meta["name"], ready["status"], ready["message"]))

    def onboard(self, cluster, hv, status, wanted):
        """One step of the onboarding controller, once the step's delay has passed."""
        meta, spec = hv["metadata"], hv.get("spec") or {}
        uid, delay = meta["uid"], self.ctl.delay("hypervisor")
        if not spec.get("lifecycleEnabled") or spec.get("maintenance") == "termination":
            return
        conditions = wanted["conditions"]
        if not status.get("hypervisorId") or not status.get("serviceId"):
            if self.nova_ready(cluster) and self.ctl.after((uid, "registered"), delay):
                wanted["hypervisorId"] = str(uuid.uuid5(ID_NAMESPACE, "%s/%s/hypervisor" % (cluster, meta["name"])))
                wanted["serviceId"] = str(uuid.uuid5(ID_NAMESPACE, "%s/%s/service" % (cluster, meta["name"])))
            return
        current = next((c for c in conditions if c.get("type") == "Onboarding"), None)
        reasons = [s[1] for s in STEPS]
        # A reason of an injected failure that is gone again: the smoke test runs once more.
        step = 0 if current is None else (reasons.index(current["reason"]) + 1 if current.get("reason") in reasons
                                          else 1)
        if step >= len(STEPS):
            return
        failure = self.failure(cluster, hv) if STEPS[step][1] in ("Handover", "Succeeded") else {}
        if failure:  # the smoke test failed: onboarding stays at Testing
            loop.set_condition(conditions, "Onboarding", "True", failure.get("reason") or "Testing",
                               failure.get("message") or "Server ended up in error state: lab failure")
            return
        if self.ctl.after((uid, "onboarding", step), delay):
            loop.set_condition(conditions, "Onboarding", *STEPS[step])
