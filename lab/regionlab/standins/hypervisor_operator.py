"""openstack-hypervisor-operator stand-in: a Hypervisor per labelled Node, onboarded to Ready.

Run from the gardenlet stand-in's loop over the hypervisor-pool clusters (no process of its own),
once the operator's chart has installed the Hypervisor CRD (kvm.cloud.sap/v1, cluster-scoped).
Modelled on github.com/cobaltcore-dev/openstack-hypervisor-operator v1.2.3 (internal/controller/,
unchanged in what is played here up to the newest commit read, 8ee7e08):

- constants.go: Nodes with the label nova.openstack.cloud.sap/virt-driver (any value: the
  hypervisor controller's predicate is Exists) get a Hypervisor.
- hypervisor_controller.go: the Hypervisor is named after the Node, owned by it (owner reference,
  blockOwnerDeletion; the garbage collector deletes it with the Node), spec highAvailability and
  installCertificate true. On every reconcile (syncLabelsAndAnnotations) the Node's transferred
  labels are copied (added or changed, never removed), lifecycleEnabled set true (never false) while
  the Node carries cobaltcore.cloud.sap/node-hypervisor-lifecycle (skipTests: its value is
  skip-tests), spec.aggregates from the annotation nova.openstack.cloud.sap/aggregates plus the
  Node's zone, spec.customTraits from nova.openstack.cloud.sap/custom-traits; status.internalIp from
  the Node's InternalIP. spec.highAvailability is never synced: a region turns it off on the
  Hypervisor itself.
- onboarding_controller.go: lifecycle off or maintenance termination abort an onboarding that
  started (Onboarding False Aborted). hypervisorId/serviceId once nova-compute has registered the
  host in Nova - the lab plays that once a Nova CR serving the pool is Ready on the control-plane
  cluster (the Nova of a ControlPlane whose spec.compute.hypervisorClusters names the pool) and the
  delay has passed; without such a Nova the Hypervisor waits, as upstream's does. Then Onboarding
  True Initial "Initial onboarding"; Initial moves on only when the Hypervisor carries
  topology.kubernetes.io/zone (else upstream's reconcile fails with "cannot find availability-zone
  label ...", the condition stays) and status.aggregates are exactly [<zone>, tenant_filter_tests]
  -> Testing "Running onboarding tests" -> Handover "Waiting for other controllers to take over",
  which completes only with AggregatesUpdated and TraitsUpdated True and, under
  spec.highAvailability, HaEnabled True -> False Succeeded "Onboarding completed".
- aggregates_controller.go (lifecycle enabled, after registration): the Hypervisor's aggregates in
  Nova and status.aggregates ({name, uuid}) - [<zone>, tenant_filter_tests] with AggregatesUpdated
  False TestAggregates during Initial/Testing, and at Handover until TraitsUpdated (WaitingForTraits);
  then spec.aggregates, True Succeeded. Upstream's ApplyAggregates refuses aggregates that do not
  exist in Nova; the lab has no Nova API and takes every named aggregate as existing, except the one
  named "" that a Hypervisor without a zone label asks for: AggregatesUpdated False Failed "failed to
  apply aggregates: aggregates not found: []", as upstream reports it.
- traits_controller.go (at Handover and after): status.traits and TraitsUpdated True "Traits
  successfully updated". Differs from upstream: upstream writes nothing when spec.customTraits equal
  the CUSTOM_ traits applied, so a Hypervisor without custom traits never gets TraitsUpdated and never
  leaves Handover; the lab writes the condition anyway (docs/lab.md).
- HaEnabled: only kvm-ha-service writes it (since v1.2.3), and the lab runs none: under
  spec.highAvailability onboarding stays at Handover. A status write of field manager
  `kvm-ha-service` (a test playing it) does not make the Hypervisor foreign.
- hypervisor_maintenance_controller.go (not while Onboarding is True): spec.maintenance manual, auto
  or termination disable the compute service (HypervisorDisabled True "Hypervisor is disabled") and
  create the Eviction named after the Hypervisor (owned by it, spec.reason "openstack-hypervisor-operator
  maintenance", the transferred labels); the Hypervisor's Evicting mirrors it: True Running "Evicting"
  until the Eviction's Evicting is False, then False Succeeded "Evicted" and status.evicted. ha is left
  to kvm-ha-service (nothing); back to "" the service is enabled again (HypervisorDisabled False
  "Hypervisor is enabled") and the Eviction deleted.
- eviction_controller.go, on the Eviction: Evicting True Running "Running"; the preflight waits for the
  disabled service (PreflightChecksSucceeded False Failed "hypervisor not disabled") and lists the
  instances on the hypervisor (status.outstandingInstances; a Hypervisor never registered in Nova
  ends at once, Succeeded). The lab's hypervisors hold no instances, except one in ERROR under a
  failure `evict: <fault>` from standins.yaml: it stays outstanding, MigratingInstance False Failed
  "Migration of instance <id> failed: <fault>", and the eviction never ends, as upstream's does not.
  Once the failure is gone, the instance is gone (deleted by its owner): MigratingInstance False
  Succeeded "Instance <id> is gone", then Evicting False Succeeded "eviction completed successfully".
- ready/controller.go (ComputeReadyCondition): Ready False Offboarded / Terminating / Onboarding
  "Onboarding in progress: <message>" / Evicting / Evicted / Maintenance "Hypervisor is in
  maintenance mode" / Onboarding "Onboarding not started..." / "Onboarding was aborted" / "Onboarding
  not yet completed", else True Ready "Hypervisor is ready".

- kvm-node-agent (internal/controller/hypervisor_controller.go, internal/systemd): status.operatingSystem (the lab's
  machines run Garden Linux 1592.6); a spec.version other than the running and the installed one is installed
  (updateStatus.inProgress, OperatingSystemUpdate True Running "Running systemd-sysupdate@<v>.service", then False
  Completed and updateStatus.installed) and, under spec.reboot, booted into (status.operatingSystem.version). A
  failure with `update: <message>` stops it: OperatingSystemUpdate False Stopped <message>. Upstream's agent
  retries three times and then clears spec.version; the lab's stops at once and waits for the failure to go.

Each step waits the `hypervisor` delay. Not played: Nova itself, the smoke test VM (it succeeds),
offboarding and the Node's Terminating condition. A failure from standins.yaml `failures` (key
Hypervisor, Hypervisor/<pool cluster> or Hypervisor/<pool cluster>/<name>) keeps onboarding at
Testing with its message, as a failed smoke test does (terminal: sticks to the generation); its keys `update`
and `evict` are kvm-node-agent's and the eviction's.
Hypervisors whose status another field manager writes are left alone.
"""

import uuid

from . import loop, operators
from .client import Kube, path

GV = "kvm.cloud.sap/v1"
MANAGER = "lab-hypervisor-operator"
OPERATOR = "openstack-hypervisor-operator"   # its Deployment (deployments.py)
# The field manager of the one other status writer played by tests: kvm-ha-service (HaEnabled).
HA_SERVICE = "kvm-ha-service"
VIRT_DRIVER = "nova.openstack.cloud.sap/virt-driver"
LIFECYCLE = "cobaltcore.cloud.sap/node-hypervisor-lifecycle"
AGGREGATES = "nova.openstack.cloud.sap/aggregates"
CUSTOM_TRAITS = "nova.openstack.cloud.sap/custom-traits"
ZONE = "topology.kubernetes.io/zone"
TEST_AGGREGATE = "tenant_filter_tests"
TRANSFER_LABELS = ["kubernetes.io/hostname", "kubernetes.metal.cloud.sap/bb", "kubernetes.metal.cloud.sap/cluster",
                   "kubernetes.metal.cloud.sap/name", "kubernetes.metal.cloud.sap/type",
                   "worker.garden.sapcloud.io/group", "worker.gardener.cloud/pool",
                   "topology.kubernetes.io/region", ZONE]
# spec.maintenance values that disable the compute service and evict it (ha is kvm-ha-service's).
EVICTING_MAINTENANCE = ("manual", "auto", "termination")
HYPERVISORS = path(GV, "hypervisors")
EVICTIONS = path(GV, "evictions")
EVICTION_REASON = "openstack-hypervisor-operator maintenance"
# The failure keys of controllers other than onboarding's.
OTHER_FAILURES = ("update", "evict")
NODES = path("v1", "nodes")
CONTROL_PLANES = path("c5c3.io/v1alpha1", "controlplanes")
NOVAS = path(operators.KINDS["Nova"].api_version, operators.KINDS["Nova"].plural)
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_DNS, "hypervisors.lab.c5c3.io")
INSTANCE_RAM_MB = 4096
# What kvm-node-agent reports of a lab machine's operating system before any update.
LAB_OPERATING_SYSTEM = {"version": "1592.6", "prettyVersion": "Garden Linux 1592.6",
                        "kernelRelease": "6.6.62-cloud-amd64"}

# Onboarding steps after nova-compute registered: (status, reason, message).
STEPS = [("True", "Initial", "Initial onboarding"),
         ("True", "Testing", "Running onboarding tests"),
         ("True", "Handover", "Waiting for other controllers to take over"),
         ("False", "Succeeded", "Onboarding completed")]
NOT_REGISTERED = ("Onboarding not started: waiting for nova-compute to register the hypervisor in Nova "
                  "(HypervisorID/ServiceID not yet available)")
NO_ZONE = "cannot find availability-zone label %s on node" % ZONE


def _split(value):
    return [v.strip() for v in value.split(",") if v.strip()]


def condition(obj, ctype):
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == ctype), None)


def is_true(obj, ctype):
    return (condition(obj, ctype) or {}).get("status") == "True"


def transferred_labels(node):
    labels = node["metadata"].get("labels") or {}
    return {k: labels[k] for k in TRANSFER_LABELS if k in labels}


def node_spec(node):
    """The spec fields syncLabelsAndAnnotations sets from a Node (it sets them, it never clears one)."""
    meta = node["metadata"]
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    spec = {}
    if LIFECYCLE in labels:
        spec.update(lifecycleEnabled=True, skipTests=labels[LIFECYCLE] == "skip-tests")
    if AGGREGATES in annotations:
        # One aggregate per zone, named as the zone, by convention: added to the annotation's.
        spec["aggregates"] = _split(annotations[AGGREGATES]) + ([labels[ZONE]] if ZONE in labels else [])
    if CUSTOM_TRAITS in annotations:
        spec["customTraits"] = _split(annotations[CUSTOM_TRAITS])
    return spec


def desired_hypervisor(node):
    """The Hypervisor the hypervisor controller creates for a Node (Go zero values sent as they are)."""
    meta = node["metadata"]
    spec = {"reboot": False, "evacuateOnReboot": False, "lifecycleEnabled": False, "skipTests": False,
            "highAvailability": True, "createCertManagerCertificate": False, "installCertificate": True}
    spec.update(node_spec(node))
    return {"apiVersion": GV, "kind": "Hypervisor",
            "metadata": {"name": meta["name"], "labels": transferred_labels(node),
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": meta["name"],
                                              "uid": meta["uid"], "blockOwnerDeletion": True}]},
            "spec": spec}


def sync_patch(hv, node):
    """The metadata.labels and spec an existing Hypervisor lacks from its Node; {} when in sync."""
    have, spec = hv["metadata"].get("labels") or {}, hv.get("spec") or {}
    patch = {}
    labels = {k: v for k, v in transferred_labels(node).items() if have.get(k) != v}
    if labels:
        patch["metadata"] = {"labels": labels}
    fields = {k: v for k, v in node_spec(node).items() if spec.get(k) != v}
    if fields:
        patch["spec"] = fields
    return patch


def aggregate_names(hv):
    return [a.get("name") for a in (hv.get("status") or {}).get("aggregates") or []]


def same_names(a, b):
    """slicesEqualUnordered."""
    return sorted(a) == sorted(b)


def wanted_aggregates(hv):
    """determineDesiredState: (aggregate names, AggregatesUpdated (status, reason, message))."""
    spec = hv.get("spec") or {}
    zone = (hv["metadata"].get("labels") or {}).get(ZONE, "")
    if spec.get("maintenance") == "termination":
        evicting = condition(hv, "Evicting")
        if evicting is not None and evicting.get("status") == "False":
            return [], ("False", "Terminating", "Aggregates cleared due to termination after eviction")
        return aggregate_names(hv), ("False", "EvictionInProgress",
                                     "Aggregates unchanged while terminating and eviction in progress")
    onboarding = condition(hv, "Onboarding")
    if onboarding is not None and onboarding.get("status") == "True":
        if onboarding.get("reason") in ("Initial", "Testing"):
            return [zone, TEST_AGGREGATE], ("False", "TestAggregates",
                                            "Test aggregate applied during onboarding instead of spec aggregates")
        if onboarding.get("reason") == "Handover" and not is_true(hv, "TraitsUpdated"):
            return [zone, TEST_AGGREGATE], ("False", "WaitingForTraits",
                                            "Waiting for traits to be applied before switching to spec aggregates")
    return list(spec.get("aggregates") or []), ("True", "Succeeded", "Aggregates from spec applied successfully")


def missing_aggregates(names):
    """The aggregates Nova lacks: the lab takes every named one as existing, none is named "" in Nova."""
    return [n for n in names if not n]


def go_list(values):
    """A []string as Go's %v prints it."""
    return "[%s]" % " ".join(values)


def onboarding_can_complete(hv):
    """completeOnboarding at Handover: the aggregates and traits controllers are done, and HA is on when asked for."""
    spec = hv.get("spec") or {}
    return (is_true(hv, "AggregatesUpdated") and is_true(hv, "TraitsUpdated")
            and (not spec.get("highAvailability") or is_true(hv, "HaEnabled")))


def ready_condition(hv):
    """ComputeReadyCondition: (status, reason, message)."""
    status, spec = hv.get("status") or {}, hv.get("spec") or {}
    if is_true(hv, "Offboarded"):
        return "False", "Offboarded", "Hypervisor has been offboarded"
    if is_true(hv, "Terminating"):
        return "False", "Terminating", "Hypervisor is terminating"
    onboarding = condition(hv, "Onboarding")
    if onboarding is not None and onboarding.get("status") == "True":
        return "False", "Onboarding", "Onboarding in progress: " + (onboarding.get("message") or "")
    if spec.get("maintenance"):
        evicting = condition(hv, "Evicting")
        if evicting is not None and evicting.get("status") == "True":
            return "False", "Evicting", "Hypervisor is disabled and evicting"
        if evicting is not None and evicting.get("status") == "False":
            return "False", "Evicted", "Hypervisor is disabled and evicted"
        return "False", "Maintenance", "Hypervisor is in maintenance mode"
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


def desired_eviction(hv):
    """The Eviction the maintenance controller creates for a Hypervisor in maintenance (ensureEviction)."""
    meta = hv["metadata"]
    labels = dict((k, v) for k, v in (meta.get("labels") or {}).items() if k in TRANSFER_LABELS)
    return {"apiVersion": GV, "kind": "Eviction",
            "metadata": {"name": meta["name"], "labels": labels, "ownerReferences": [loop.owner_reference(hv)]},
            "spec": {"hypervisor": meta["name"], "reason": EVICTION_REASON}}


def instance_id(cluster, hv):
    """The lab's one instance on a hypervisor (played only under an `evict` failure)."""
    return str(uuid.uuid5(ID_NAMESPACE, "%s/%s/instance" % (cluster, hv["metadata"]["name"])))


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
        self.told = set()   # Hypervisors whose missing zone label was logged

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
        self.told &= live
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
        if meta.get("deletionTimestamp") or (loop.status_writers(hv) - {MANAGER, HA_SERVICE}):
            return
        url = path(GV, "hypervisors", name=meta["name"])
        # The hypervisor controller: the Node's labels and annotations first, on every reconcile.
        patch = sync_patch(hv, node)
        if patch:
            kube.patch(url, hv, patch)
            return
        status = hv.get("status") or {}
        wanted = {"conditions": [dict(c) for c in status.get("conditions") or []]}
        for key in ("hypervisorId", "serviceId", "aggregates", "traits", "evicted", "operatingSystem", "updateStatus"):
            if key in status:
                wanted[key] = status[key]
        address = internal_ip(node)
        if address and status.get("internalIp") != address:
            wanted["internalIp"] = address
        # The other controllers, each on what the ones before it left (upstream: each on its own watch).
        for step in (self.onboard, self.apply_aggregates, self.apply_traits, self.maintain, self.update_os):
            step(cluster, hv, dict(hv, status=dict(status, **wanted)), wanted)
        view = dict(hv, status=dict(status, **wanted))
        loop.set_condition(wanted["conditions"], "Ready", *ready_condition(view))
        changed = {k: v for k, v in wanted.items() if status.get(k) != v}
        # Fields Go omits when empty go from the status (a merge patch's null).
        changed.update((k, None) for k in ("aggregates", "traits", "evicted") if k in status and k not in wanted)
        ready, before = condition(view, "Ready"), condition(hv, "Ready") or {}
        if changed and kube.patch(url, hv, {"status": changed}, "status") and \
                (ready["status"], ready["message"]) != (before.get("status"), before.get("message")):
            self.ctl.log("Hypervisor %s/%s: Ready=%s %s" % (cluster, meta["name"], ready["status"], ready["message"]))

    def abort(self, view, conditions, message):
        """abortOnboarding: an onboarding that started ends Aborted (nothing when it never started)."""
        current = condition(view, "Onboarding")
        if current is not None:
            loop.set_condition(conditions, "Onboarding", "False", "Aborted", message)

    def onboard(self, cluster, hv, view, wanted):
        """One step of the onboarding controller, once the step's delay has passed."""
        meta, spec, status = hv["metadata"], hv.get("spec") or {}, view["status"]
        uid, delay = meta["uid"], self.ctl.delay("hypervisor")
        conditions = wanted["conditions"]
        if not spec.get("lifecycleEnabled"):
            return self.abort(view, conditions, "Aborted due to LifecycleEnabled being false")
        if spec.get("maintenance") == "termination":
            return self.abort(view, conditions, "Aborted due to MaintenanceTermination")
        if not status.get("hypervisorId") or not status.get("serviceId"):
            if self.nova_ready(cluster) and self.ctl.after((uid, "registered"), delay):
                wanted["hypervisorId"] = str(uuid.uuid5(ID_NAMESPACE, "%s/%s/hypervisor" % (cluster, meta["name"])))
                wanted["serviceId"] = str(uuid.uuid5(ID_NAMESPACE, "%s/%s/service" % (cluster, meta["name"])))
            return None
        current = condition(view, "Onboarding")
        reason = (current or {}).get("reason")
        if reason == "Aborted":
            return None  # upstream: nothing to be done
        reasons = [s[1] for s in STEPS]
        # A reason of an injected failure that is gone again: the smoke test runs once more.
        step = 0 if current is None else (reasons.index(reason) + 1 if reason in reasons else 1)
        if step >= len(STEPS):
            return None
        if reason == "Initial":  # initialOnboarding
            zone = (meta.get("labels") or {}).get(ZONE)
            if not zone:
                if uid not in self.told:
                    self.told.add(uid)
                    self.ctl.log("Hypervisor %s/%s: %s" % (cluster, meta["name"], NO_ZONE))
                return None
            if not same_names(aggregate_names(view), [zone, TEST_AGGREGATE]):
                return None  # the aggregates controller has not applied them yet
        if reason == "Handover" and not onboarding_can_complete(view):
            return None
        failure = self.failure(cluster, hv) if STEPS[step][1] in ("Handover", "Succeeded") else {}
        failure = {k: v for k, v in failure.items() if k not in OTHER_FAILURES}
        if failure:  # the smoke test failed: onboarding stays at Testing
            loop.set_condition(conditions, "Onboarding", "True", failure.get("reason") or "Testing",
                               failure.get("message") or "Server ended up in error state: lab failure")
            return None
        if self.ctl.after((uid, "onboarding", step), delay):
            loop.set_condition(conditions, "Onboarding", *STEPS[step])
        return None

    def apply_aggregates(self, cluster, hv, view, wanted):
        """The aggregates controller: the Hypervisor's aggregates in Nova, after the delay."""
        spec, status = hv.get("spec") or {}, view["status"]
        if not spec.get("lifecycleEnabled") or not status.get("hypervisorId") or not status.get("serviceId"):
            return
        names, cond = wanted_aggregates(view)
        if not same_names(names, aggregate_names(view)):
            if not self.ctl.after((hv["metadata"]["uid"], "aggregates", tuple(sorted(names))), self.ctl.delay("hypervisor")):
                return
            missing = missing_aggregates(names)
            if missing:
                cond = ("False", "Failed", "failed to apply aggregates: aggregates not found: %s" % go_list(missing))
            elif names:
                wanted["aggregates"] = [{"name": n, "uuid": str(uuid.uuid5(ID_NAMESPACE, "aggregate/" + n))}
                                        for n in names]
            else:
                wanted.pop("aggregates", None)
        loop.set_condition(wanted["conditions"], "AggregatesUpdated", *cond)

    def apply_traits(self, cluster, hv, view, wanted):
        """The traits controller, at Handover and after; it also writes TraitsUpdated without custom traits."""
        spec, status = hv.get("spec") or {}, view["status"]
        onboarding = condition(view, "Onboarding")
        if (not spec.get("lifecycleEnabled") or not status.get("hypervisorId") or spec.get("maintenance") == "termination"
                or onboarding is None or (onboarding.get("status") == "True" and onboarding.get("reason") != "Handover")):
            return
        applied = [t for t in status.get("traits") or [] if t.startswith("CUSTOM_")]
        traits = sorted(set(t for t in status.get("traits") or [] if not t.startswith("CUSTOM_"))
                        | set(spec.get("customTraits") or []))
        if applied == list(spec.get("customTraits") or []) and is_true(view, "TraitsUpdated"):
            return
        if self.ctl.after((hv["metadata"]["uid"], "traits", tuple(traits)), self.ctl.delay("hypervisor")):
            if traits:
                wanted["traits"] = traits
            else:
                wanted.pop("traits", None)
            loop.set_condition(wanted["conditions"], "TraitsUpdated", "True", "Succeeded", "Traits successfully updated")

    def maintain(self, cluster, hv, view, wanted):
        """The maintenance controller: the compute service and the eviction under spec.maintenance."""
        spec, status = hv.get("spec") or {}, view["status"]
        if is_true(view, "Onboarding"):
            return  # an onboarding in progress is aborted first
        maintenance, conditions = spec.get("maintenance") or "", wanted["conditions"]
        if status.get("serviceId"):
            if maintenance == "":
                loop.set_condition(conditions, "HypervisorDisabled", "False", "Succeeded", "Hypervisor is enabled")
            elif maintenance in EVICTING_MAINTENANCE:
                loop.set_condition(conditions, "HypervisorDisabled", "True", "Succeeded", "Hypervisor is disabled")
        evicting = condition(view, "Evicting")
        uid, kube = hv["metadata"]["uid"], self.kubes[cluster]
        url = path(GV, "evictions", name=hv["metadata"]["name"])
        if maintenance == "":
            if status.get("evicted") or evicting is not None:
                conditions[:] = [c for c in conditions if c.get("type") != "Evicting"]
                wanted.pop("evicted", None)
                kube.delete(url)
            for key in [k for k in self.ctl.timers if k[:2] == (uid, "eviction")]:
                self.ctl.done(key)
            return
        if maintenance not in EVICTING_MAINTENANCE or (evicting or {}).get("reason") == "Succeeded":
            return
        eviction = kube.get(url) or kube.create(EVICTIONS, desired_eviction(hv))
        if eviction is not None and not eviction["metadata"].get("deletionTimestamp"):
            self.evict(cluster, view, eviction)
        if eviction is not None and (condition(eviction, "Evicting") or {}).get("status") == "False":
            loop.set_condition(conditions, "Evicting", "False", "Succeeded", "Evicted")
            wanted["evicted"] = True
        else:
            loop.set_condition(conditions, "Evicting", "True", "Running", "Evicting")
            wanted.pop("evicted", None)

    def evict(self, cluster, hv_view, eviction):
        """One step of the eviction controller on the Hypervisor's Eviction (its status, patched in place so that
        the maintenance controller reads it in the same pass)."""
        status = eviction.get("status") or {}
        wanted = dict(status, conditions=[dict(c) for c in status.get("conditions") or []])
        conditions, hv_status = wanted["conditions"], hv_view["status"]
        key = (hv_view["metadata"]["uid"], "eviction", eviction["metadata"]["uid"])
        fault = self.failure(cluster, hv_view).get("evict")
        outstanding = list(status.get("outstandingInstances") or [])
        evicting = condition(eviction, "Evicting")
        if evicting is None:
            loop.set_condition(conditions, "Evicting", "True", "Running", "Running")
        elif evicting.get("status") != "True":
            return
        elif not is_true(eviction, "PreflightChecksSucceeded"):
            registered = hv_status.get("hypervisorId") and hv_status.get("serviceId")
            if registered and not is_true(hv_view, "HypervisorDisabled"):
                loop.set_condition(conditions, "PreflightChecksSucceeded", "False", "Failed", "hypervisor not disabled")
            elif not registered:
                loop.set_condition(conditions, "Evicting", "False", "Succeeded",
                                   "eviction completed successfully due to expected case of no hypervisor")
                wanted["outstandingRamMb"] = 0
            elif self.ctl.after(key + ("preflight",), self.ctl.delay("hypervisor")):
                wanted.update(hypervisorServiceId=hv_status["hypervisorId"],
                              outstandingInstances=[instance_id(cluster, hv_view)] if fault else [],
                              outstandingRamMb=INSTANCE_RAM_MB if fault else 0)
                loop.set_condition(conditions, "PreflightChecksSucceeded", "True", "Succeeded",
                                   "Preflight checks passed, hypervisor is disabled and ready for eviction")
        elif outstanding and fault:
            instance = outstanding[-1]   # in ERROR: moved to the back, the eviction goes on with the next
            wanted["outstandingInstances"] = [instance] + outstanding[:-1]
            loop.set_condition(conditions, "MigratingInstance", "False", "Failed",
                               "Migration of instance %s failed: %s" % (instance, fault))
        elif outstanding:
            if not self.ctl.after(key + ("gone", outstanding[-1]), self.ctl.delay("hypervisor")):
                return
            wanted["outstandingInstances"] = outstanding[:-1]
            loop.set_condition(conditions, "MigratingInstance", "False", "Succeeded",
                               "Instance %s is gone" % outstanding[-1])
        else:
            loop.set_condition(conditions, "Evicting", "False", "Succeeded", "eviction completed successfully")
            wanted["outstandingRamMb"] = 0
        if wanted != status:
            written = self.kubes[cluster].patch(path(GV, "evictions", name=eviction["metadata"]["name"]), eviction,
                                                {"status": wanted}, "status")
            if written is not None:
                eviction["status"] = written.get("status") or {}

    def update_os(self, cluster, hv, view, wanted):
        """kvm-node-agent: the host's operating system (status.operatingSystem), and spec.version installed with
        systemd-sysupdate (OperatingSystemUpdate True Running, then False Completed and updateStatus.installed) and
        booted into under spec.reboot; a failure from standins.yaml (failures: Hypervisor/... {update: <message>})
        stops it (OperatingSystemUpdate False Stopped)."""
        spec, status, conditions = hv.get("spec") or {}, view["status"], wanted["conditions"]
        system = dict(status.get("operatingSystem") or LAB_OPERATING_SYSTEM)
        wanted["operatingSystem"] = system
        update = dict(status.get("updateStatus") or {"inProgress": False, "retry": 3})
        version, uid, delay = spec.get("version"), hv["metadata"]["uid"], self.ctl.delay("hypervisor")
        if not version or version == system.get("version"):
            wanted["updateStatus"] = update
            return
        if update.get("installed") != version:
            stop = self.failure(cluster, hv).get("update")
            if stop:
                update["inProgress"] = False
                loop.set_condition(conditions, "OperatingSystemUpdate", "False", "Stopped", stop)
            elif not update.get("inProgress"):
                update["inProgress"] = True
                loop.set_condition(conditions, "OperatingSystemUpdate", "True", "Running",
                                   "Running systemd-sysupdate@%s.service" % version)
            elif self.ctl.after((uid, "sysupdate", version), delay):
                update.update(inProgress=False, installed=version)
                loop.set_condition(conditions, "OperatingSystemUpdate", "False", "Completed",
                                   "Update to %s installed" % version)
        elif spec.get("reboot") and self.ctl.after((uid, "reboot", version), delay):
            system.update(version=version, prettyVersion="Garden Linux %s" % version)
            self.ctl.log("Hypervisor %s/%s: rebooted into %s" % (cluster, hv["metadata"]["name"], version))
        wanted["updateStatus"] = update
