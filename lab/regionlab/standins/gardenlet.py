"""gardenlet stand-in: Shoot status as gardenlet v1.146.3 writes it, plus the Project controller.

Modelled on github.com/gardener/gardener v1.146.3: pkg/gardenlet/controller/shoot/shoot/
reconciler.go (finalizer, operation start/success/error patches, deletion), reconciler_reconcile.go
and reconciler_delete.go (task names, flow errors), pkg/gardenlet/controller/shoot/care/ (the care
controller: a loop of its own that initializes and checks the conditions -- health.go -- and
status.constraints -- constraints.go -- when a Shoot is picked up, after each successful reconcile and
every `care` seconds, reconciler.go and add.go), pkg/api/core/v1beta1/helper (conditions, error codes)
and pkg/controllermanager/controller/project/project/reconciler.go (Project phase, namespace).

A Shoot is played by the lab cluster named by its label c5c3.io/cluster, else by the lab cluster
named like the Shoot; its status.advertisedAddresses carry that cluster's URL (name
`unmanaged`: the lab has no DNS domain). The flow is a few timed steps (delay `shoot_step`)
with real task names; failures come from standins.yaml. Shoots outside Project namespaces are
left alone (gardener-apiserver admits none there), and so is a Shoot whose status another field
manager writes.

The same loop registers the worker Nodes of every reconciled Shoot (nodes.py: one per bound
ServerClaim of its pool, as kubelet and the machine controller would), plays the hypervisor
operator on the hypervisor pools (hypervisor_operator.py) and Rook on the storage pools (rook.py).
"""

import copy
import hashlib
import threading
import time
import traceback

import requests

from .. import config, flux, korc, processes, shoot_cluster
from . import deployments, hypervisor_operator, loop, nodes, rook, settings, shell_pods
from .client import ApiError, Kube, Waker, object_path, path

GV = "core.gardener.cloud/v1beta1"
SHOOT_MANAGER = "lab-gardenlet"
PROJECT_MANAGER = "lab-gardener-controller-manager"
NAME = "gardenlet-standin"
GARDENER_VERSION = "v1.146.3"
IDENTITY = {"id": "lab-gardenlet", "name": "gardenlet", "version": GARDENER_VERSION}

FINALIZER = "gardener"
CLUSTER_LABEL = "c5c3.io/cluster"
SHOOT_GROUPS = ("control_plane", "hypervisor_pools", "storage_pools")
HYPERVISOR_GROUP = "hypervisor_pools"
STORAGE_GROUP = "storage_pools"
# Gardener's extension that installs Flux in the Shoot (stackitcloud/gardener-extension-shoot-flux).
SHOOT_FLUX = "shoot-flux"
GARDEN_ROLE = "gardener.cloud/role"
PROJECT_NAME = "project.gardener.cloud/name"
NAMESPACE_PROJECT = "namespace.gardener.cloud/project"
CREATED_BY_PROJECT = "namespace.gardener.cloud/created-by-project-controller"
KEEP_AFTER_PROJECT = "namespace.gardener.cloud/keep-after-project-deletion"

NON_RETRYABLE = {"ERR_INFRA_UNAUTHENTICATED", "ERR_INFRA_UNAUTHORIZED", "ERR_INFRA_DEPENDENCIES",
                 "ERR_INFRA_QUOTA_EXCEEDED", "ERR_INFRA_RATE_LIMITS_EXCEEDED", "ERR_CONFIGURATION_PROBLEM",
                 "ERR_PROBLEMATIC_WEBHOOK"}

# (progress, running tasks) of the lab's flows; the failing step is the infrastructure wait.
RECONCILE_STEPS = [
    (9, "Deploying Shoot namespace in Seed, Ensuring Shoot cluster identity"),
    (27, "Waiting until shoot infrastructure has been reconciled"),
    (54, "Waiting until Kubernetes API server rolled out"),
    (81, "Waiting until shoot worker nodes have been reconciled"),
]
WORKERLESS_LAST_STEP = (81, "Deploying shoot system resources")
DELETE_STEPS = [
    (14, "Cleaning extended API groups, Cleaning Kubernetes resources"),
    (43, "Waiting until shoot worker nodes have been terminated"),
    (71, "Waiting until Kubernetes API server has been deleted"),
    (86, "Destroying Kubernetes API server service"),
]
FAIL_STEP = 1
# The Delete flow's step after "Waiting until Kubernetes API server has been deleted".
DELETE_API_SERVER_GONE = 3
ADDRESS_STEP = 2
WORKER_STEP = 3   # "Waiting until shoot worker nodes have been reconciled"
DEFAULT_TASK = "Waiting until shoot infrastructure has been reconciled"
NO_CLUSTER_TASK = "Ensuring advertised addresses for the Shoot"
FLOW_NAMES = {"Create": "Shoot cluster reconciliation", "Reconcile": "Shoot cluster reconciliation",
              "Delete": "Shoot cluster deletion"}
START_DESCRIPTIONS = {"Create": "Reconciliation of Shoot cluster initialized.",
                      "Reconcile": "Reconciliation of Shoot cluster initialized.",
                      "Delete": "Deletion of Shoot cluster in progress."}
SUCCESS_DESCRIPTIONS = {"Create": "Shoot cluster has been successfully reconciled.",
                        "Reconcile": "Shoot cluster has been successfully reconciled.",
                        "Delete": "Shoot cluster has been successfully deleted."}

CONDITION_TYPES = ["APIServerAvailable", "ControlPlaneHealthy", "ObservabilityComponentsHealthy",
                   "EveryNodeReady", "SystemComponentsHealthy"]
HEALTHY = {
    "APIServerAvailable": ("HealthzRequestSucceeded",
                           "API server /healthz endpoint responded with success status code."),
    "ControlPlaneHealthy": ("ControlPlaneRunning", "All control plane components are healthy."),
    "ObservabilityComponentsHealthy": ("ObservabilityComponentsRunning",
                                       "All observability components are healthy."),
    "EveryNodeReady": ("EveryNodeReady", "All nodes are ready."),
    "SystemComponentsHealthy": ("SystemComponentsRunning", "All system components are healthy."),
}
INITIALIZED = ("Unknown", "ConditionInitialized",
               "The condition has been initialized but its semantic check has not been performed yet.")
NOT_CREATED = "Shoot control plane has not been fully created yet."
NOT_RUNNING = "Shoot control plane is not running at the moment."
BEING_DELETED = "Shoot control plane has already been or is about to be deleted."
HIBERNATED = "Shoot cluster has been hibernated."
# care/constraints.go: the two required constraints, and the optional ones written only when not True.
REQUIRED_CONSTRAINTS = ["HibernationPossible", "MaintenancePreconditionsSatisfied"]
OPTIONAL_CONSTRAINTS = ["CACertificateValiditiesAcceptable", "CRDsWithProblematicConversionWebhooks",
                        "ManualInPlaceWorkersUpdated", "HasIgnoredManagedResources"]
CONSTRAINT_TYPES = REQUIRED_CONSTRAINTS + OPTIONAL_CONSTRAINTS
# What the lab's Shoots pass (no problematic webhooks, CAs fresh, no manual in-place updates, no ignored
# ManagedResources): True, so only the required two are written.
CONSTRAINTS_HEALTHY = {
    "HibernationPossible": ("True", "NoProblematicWebhooks", "All webhooks are properly configured."),
    "MaintenancePreconditionsSatisfied": ("True", "NoProblematicWebhooks", "All webhooks are properly configured."),
}
NOT_RUNNING_CONSTRAINT = ("False", "ConstraintNotChecked", NOT_RUNNING)
# shootHibernatedConstraints: ManualInPlaceWorkersUpdated skipped, HasIgnoredManagedResources only when not True.
HIBERNATED_CONSTRAINTS = {t: ("True", "ConstraintNotChecked", HIBERNATED) for t in [
    "HibernationPossible", "MaintenancePreconditionsSatisfied", "CACertificateValiditiesAcceptable",
    "CRDsWithProblematicConversionWebhooks"]}
# Types whose non-False status patchShootStatusOperationSuccess turns Progressing.
PROGRESSING_CONSTRAINTS = set(REQUIRED_CONSTRAINTS)


def _has_flux(shoot):
    return any(e.get("type") == SHOOT_FLUX and not e.get("disabled")
               for e in (shoot.get("spec") or {}).get("extensions") or [])


def _failed_and_up_to_date(shoot):
    """IsShootFailedAndUpToDate (CalculateControllerInfos): a Failed Shoot waits for a new generation, a
    spec change or gardener-apiserver's bump for `gardener.cloud/operation: retry`."""
    status = shoot.get("status") or {}
    return ((status.get("lastOperation") or {}).get("state") == "Failed"
            and shoot["metadata"].get("generation") == status.get("observedGeneration"))


def _has_workers(shoot):
    return bool(((shoot.get("spec") or {}).get("provider") or {}).get("workers"))


def _condition_types(shoot):
    return [t for t in CONDITION_TYPES if t != "EveryNodeReady" or _has_workers(shoot)]


def _hibernated(shoot):
    return bool(((shoot.get("spec") or {}).get("hibernation") or {}).get("enabled")
                or (shoot.get("status") or {}).get("hibernated"))


def _not_running_conditions(shoot, message):
    """What the care controller reports while the control plane does not run (before PardonConditions)."""
    deployments = ["gardener-resource-manager", "kube-apiserver", "kube-controller-manager"]
    if _has_workers(shoot):
        deployments += ["kube-scheduler", "machine-controller-manager"]
    values = {
        "APIServerAvailable": ("False", "APIServerDown", "Could not reach API server during client initialization."),
        "ControlPlaneHealthy": ("False", "DeploymentMissing",
                                "Missing required deployments: [%s]" % " ".join(sorted(deployments))),
        "ObservabilityComponentsHealthy": ("False", "DeploymentMissing",
                                           "Missing required deployments: [kube-state-metrics]"),
        "EveryNodeReady": ("Unknown", "ConditionCheckError", message),
        "SystemComponentsHealthy": ("Unknown", "ConditionCheckError", message),
    }
    return {t: values[t] for t in _condition_types(shoot)}


def _healthy_conditions(shoot):
    return {t: ("True",) + HEALTHY[t] for t in _condition_types(shoot)}


def _pardoned(values, last, last_errors):
    """PardonConditions: False turns Progressing while a Create/Delete has not succeeded (or any operation
    is Processing without lastErrors)."""
    unstable = (not last or (last.get("type") in ("Create", "Delete") and last.get("state") != "Succeeded")
                or (last.get("state") == "Processing" and not last_errors))
    if not unstable:
        return values
    return {t: ("Progressing",) + v[1:] if v[0] == "False" else v for t, v in values.items()}


def care_values(shoot, api_running):
    """({condition type: (status, reason, message)}, {constraint type: ...}) of one care run
    (care/health.go Health.Check, care/constraints.go Constraint.Check), in upstream's order."""
    status = shoot.get("status") or {}
    last, errors = status.get("lastOperation") or {}, status.get("lastErrors")
    if _hibernated(shoot):
        return ({t: ("True", "ConditionNotChecked", HIBERNATED) for t in _condition_types(shoot)},
                dict(HIBERNATED_CONSTRAINTS))
    if api_running:
        conditions, constraints = _healthy_conditions(shoot), dict(CONSTRAINTS_HEALTHY)
    else:
        message = BEING_DELETED if last.get("type") == "Delete" else (
            NOT_CREATED if not last or last.get("type") == "Create" else NOT_RUNNING)
        conditions = _not_running_conditions(shoot, message)
        constraints = {t: NOT_RUNNING_CONSTRAINT for t in REQUIRED_CONSTRAINTS}
    return _pardoned(conditions, last, errors), _pardoned(constraints, last, errors)


def _with_conditions(shoot, wanted, now, field="conditions", owned=None):
    """The shoot's conditions (or constraints) set to `wanted` ({type: (status, reason, message)}).

    BuildConditions: the types in `owned` (default: wanted's) are replaced by wanted's, in wanted's order;
    others stay. A type missing from the status starts as upstream initializes it (Unknown,
    ConditionInitialized, now) before the check's value is applied.
    """
    owned = set(wanted) if owned is None else set(owned)
    existing = copy.deepcopy((shoot.get("status") or {}).get(field) or [])
    current = {c["type"]: c for c in existing}
    out = [c for c in existing if c["type"] not in owned]
    changed = {c["type"] for c in existing if c["type"] in owned} != set(wanted)
    for ctype, (status, reason, message) in wanted.items():
        cond = current.get(ctype) or {"type": ctype, "status": INITIALIZED[0], "reason": INITIALIZED[1],
                                      "message": INITIALIZED[2], "lastTransitionTime": now, "lastUpdateTime": now}
        conds = [cond]
        changed |= loop.set_condition(conds, ctype, status, reason, message, now=now, update_time=True)
        changed |= ctype not in current
        out.append(conds[0])
    return out, changed


class Gardenlet(loop.Controller):
    name = NAME

    def __init__(self, garden, clusters):
        super().__init__()
        self.kube = Kube(garden, SHOOT_MANAGER)
        self.projects_kube = Kube(garden, PROJECT_MANAGER)
        self.clusters = {c.name: c for c in clusters}
        self.flows = {}
        # The care controller runs beside the reconciles, as upstream's (its own thread and client).
        self.care = CareController(self, garden)
        Waker(garden, [path(GV, "shoots"), path(GV, "projects"), path(GV, "seeds"), path("v1", "namespaces")],
              self.wake, loop.log)
        # K-ORC runs while its chart's Deployment on the control plane is Available.
        self.control_plane = korc.control_plane(clusters)
        self.deployments = Kube(self.control_plane, SHOOT_MANAGER)  # only reads K-ORC's Deployment
        Waker(self.control_plane, [korc.DEPLOYMENTS], self.wake, loop.log)
        # The Shoots' worker Nodes (nodes.py) and the hypervisor operator (hypervisor_operator.py)
        # run in this process: the lab's memory budget has no room for another one.
        ironcore = next(c for c in clusters if config.IRONCORE_GROUP in c.groups)
        shoot_clusters = [c for c in clusters if set(c.groups) & set(SHOOT_GROUPS)]
        self.nodes = nodes.ShootNodes(self, Kube(ironcore, nodes.MCM_MANAGER), {
            c.name: (Kube(c, nodes.NODE_MANAGER), Kube(c, nodes.MCM_MANAGER)) for c in shoot_clusters})
        Waker(ironcore, [nodes.CLAIMS, nodes.SERVERS], self.wake, loop.log)
        # Every pass reads each Shoot cluster's Nodes: watched, they come from the API server only when changed
        # (the pools' Wakers below watch theirs).
        for cluster in shoot_clusters:
            if not {HYPERVISOR_GROUP, STORAGE_GROUP} & set(cluster.groups):
                Waker(cluster, [nodes.NODES], self.wake, loop.log)
        pools = [c for c in clusters if HYPERVISOR_GROUP in c.groups]
        self.hypervisors = hypervisor_operator.HypervisorOperator(self, pools, self.control_plane)
        for pool in pools:
            Waker(pool, [nodes.NODES, hypervisor_operator.HYPERVISORS, hypervisor_operator.EVICTIONS], self.wake,
                  loop.log)
        Waker(self.control_plane, [hypervisor_operator.NOVAS], self.wake, loop.log)
        # Rook on the storage pools (rook.py), once phase 3 installed the rook-ceph chart's CRDs.
        storage = [c for c in clusters if STORAGE_GROUP in c.groups]
        self.rook = rook.RookOperator(self, {c.name: Kube(c, rook.MANAGER) for c in storage})
        # The collection's Ceph Jobs in rook-ceph (storage_maintenance), their container run here (shell_pods.py).
        self.ceph_jobs = [shell_pods.ShellPods(self, Kube(c, "lab-" + shell_pods.PLAYER), [rook.PODS])
                          for c in storage]
        for pool in storage:
            Waker(pool, [rook.url(kind) for kind in rook.KINDS] + [rook.SECRETS, rook.CONFIG_MAPS, rook.NODES,
                                                                   rook.PODS], self.wake, loop.log)
        # Rook and the hypervisor operator act while their Deployments are Available (deployments.py).
        self.operators = {c.name: deployments.Operators(Kube(c, SHOOT_MANAGER), self.log) for c in pools + storage}
        for cluster in pools + storage:
            Waker(cluster, [deployments.DEPLOYMENTS], self.wake, loop.log)

    def reconcile(self):
        for seed in self.kube.list(path(GV, "seeds")):
            self.reconcile_seed(seed)
        projects = self.projects_kube.list(path(GV, "projects"))
        self.namespaces = {o["metadata"]["name"]: o for o in self.kube.list(path("v1", "namespaces"))}
        shoots = self.kube.list(path(GV, "shoots"))
        self.shoots = shoots
        self.shoots_by_namespace = {}
        for shoot in shoots:
            self.shoots_by_namespace.setdefault(shoot["metadata"]["namespace"], []).append(shoot)
        project_of = {}
        for project in projects:
            self.reconcile_project(project)
            namespace = (project.get("spec") or {}).get("namespace")
            if namespace:
                project_of[namespace] = project["metadata"]["name"]
        live = set()
        for shoot in shoots:
            live.add(shoot["metadata"]["uid"])
            project = project_of.get(shoot["metadata"]["namespace"])
            if project:
                self.reconcile_shoot(shoot, project)
        for uid in [u for u in self.flows if u not in live]:
            del self.flows[uid]
        self.run_workloads(shoots)
        self.nodes.reconcile(shoots)
        for operators in self.operators.values():
            operators.refresh()
        live |= self.hypervisors.reconcile()
        live |= self.rook.reconcile()
        for pods in self.ceph_jobs:
            pods.reconcile()
        self.prune(live)

    # What runs in the Shoots for real ---------------------------------------------

    def run_workloads(self, shoots):
        """Flux in every reconciled Shoot that declares shoot-flux (again after a lab restart), and
        the K-ORC manager while its chart's Deployment is Available (as the Deployment's pod runs)."""
        for shoot in shoots:
            last = (shoot.get("status") or {}).get("lastOperation") or {}
            cluster = self.lab_cluster(shoot)
            if (cluster is not None and _has_flux(shoot) and not shoot["metadata"].get("deletionTimestamp")
                    and last.get("type") in ("Create", "Reconcile", "Restore") and last.get("state") == "Succeeded"):
                flux.start(cluster)
        try:
            args = korc.args_of(self.deployments.list(korc.DEPLOYMENTS))
        except (ApiError, requests.RequestException):
            return  # the API server did not answer: again on the next pass
        running = korc.running_args(self.control_plane)
        if args is None:
            if running is not None:
                self.log("K-ORC's Deployment has no available replica: stopping the K-ORC manager")
                processes.stop(korc.NAME)
            return
        if running is not None and running != args:
            # A changed Deployment rolls its pod: the manager restarts with the new args.
            self.log("K-ORC's Deployment args changed (%s): restarting the K-ORC manager" % " ".join(args))
            processes.stop(korc.NAME)
            running = None
        if running is None:
            self.log("K-ORC's chart is installed: starting the K-ORC manager%s"
                     % (" with %s" % " ".join(args) if args else ""))
            korc.start(self.control_plane, args)

    # Seed (the gardenlet of the seed) ---------------------------------------------

    def reconcile_seed(self, seed):
        """pkg/gardenlet/controller/seed: once it reconciled its seed, gardenlet reports a Succeeded
        lastOperation and GardenletReady (gardener-scheduler takes only such seeds). The lab's gardenlet
        plays every Seed whose status no one else writes, and only while it is not being deleted."""
        meta, status = seed["metadata"], seed.get("status") or {}
        if loop.foreign(seed, SHOOT_MANAGER) or meta.get("deletionTimestamp"):
            return
        generation = meta.get("generation")
        last = status.get("lastOperation") or {}
        conditions = copy.deepcopy(status.get("conditions") or [])
        now = loop.now_rfc3339()
        changed = loop.set_condition(conditions, "GardenletReady", "True", "GardenletReady",
                                     "Gardenlet is posting ready status.", now=now, update_time=True)
        if not changed and status.get("observedGeneration") == generation and last.get("state") == "Succeeded":
            return
        wanted = {"observedGeneration": generation, "conditions": conditions, "gardener": IDENTITY,
                  "lastOperation": {"type": "Reconcile" if last else "Create", "state": "Succeeded", "progress": 100,
                                    "description": "Seed cluster has been successfully reconciled.",
                                    "lastUpdateTime": now}}
        self.kube.patch(object_path(GV, "seeds", seed), seed, {"status": wanted}, "status")
        self.log("Seed %s: reconciled, GardenletReady" % meta["name"])

    # Project (gardener-controller-manager) -------------------------------------

    def _project_phase(self, project, phase):
        status = project.get("status") or {}
        generation = project["metadata"].get("generation")
        if status.get("phase") != phase or status.get("observedGeneration") != generation:
            self.projects_kube.patch(object_path(GV, "projects", project), project,
                                     {"status": {"phase": phase, "observedGeneration": generation}}, "status")
            self.log("Project %s: %s" % (project["metadata"]["name"], phase))

    def reconcile_project(self, project):
        meta, spec = project["metadata"], project.get("spec") or {}
        finalizers = list(meta.get("finalizers") or [])
        url = object_path(GV, "projects", project)
        if loop.foreign(project, PROJECT_MANAGER):
            return
        namespace = spec.get("namespace")
        ns = self.namespaces.get(namespace) if namespace else None
        if meta.get("deletionTimestamp"):
            if FINALIZER not in finalizers:
                return
            if self.shoots_by_namespace.get(namespace):
                self._project_phase(project, "Terminating")
                return
            if ns is not None:
                if ns["metadata"].get("deletionTimestamp"):
                    self._project_phase(project, "Terminating")
                    return
                annotations = ns["metadata"].get("annotations") or {}
                if annotations.get(KEEP_AFTER_PROJECT) or not annotations.get(CREATED_BY_PROJECT):
                    owners = [o for o in ns["metadata"].get("ownerReferences") or [] if o.get("uid") != meta["uid"]]
                    self.projects_kube.patch(object_path("v1", "namespaces", ns), ns, {"metadata": {
                        "labels": {GARDEN_ROLE: None, PROJECT_NAME: None},
                        "annotations": {NAMESPACE_PROJECT: None, KEEP_AFTER_PROJECT: None, CREATED_BY_PROJECT: None},
                        "ownerReferences": owners or None}})
                else:
                    self.projects_kube.delete(object_path("v1", "namespaces", ns))
                    return
            self.projects_kube.patch(url, project, {"metadata": {
                "finalizers": [f for f in finalizers if f != FINALIZER] or None}})
            return
        if FINALIZER not in finalizers:
            self.projects_kube.patch(url, project, {"metadata": {"finalizers": finalizers + [FINALIZER]}})
            return
        if not (project.get("status") or {}).get("phase"):
            self._project_phase(project, "Pending")
            return
        if not namespace:
            namespace = "garden-%s-%s" % (meta["name"], hashlib.sha256(meta["uid"].encode()).hexdigest()[:5])
            self.projects_kube.patch(url, project, {"spec": {"namespace": namespace}})
            return
        labels = {GARDEN_ROLE: "project", PROJECT_NAME: meta["name"]}
        annotations = {NAMESPACE_PROJECT: meta["uid"]}
        owner = {"apiVersion": GV, "kind": "Project", "name": meta["name"], "uid": meta["uid"],
                 "controller": True, "blockOwnerDeletion": True}
        if ns is None:
            self.projects_kube.create(path("v1", "namespaces"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {
                "name": namespace, "labels": labels, "annotations": dict(annotations, **{CREATED_BY_PROJECT: "true"}),
                "ownerReferences": [owner]}})
            self.log("Project %s: namespace %s created" % (meta["name"], namespace))
            return
        have_labels = ns["metadata"].get("labels") or {}
        have_annotations = ns["metadata"].get("annotations") or {}
        if any(have_labels.get(k) != v for k, v in labels.items()):
            # "namespace cannot be used as it needs the project labels"
            self._project_phase(project, "Failed")
            return
        patch = {}
        missing = {k: v for k, v in annotations.items() if have_annotations.get(k) != v}
        if not have_annotations.get(CREATED_BY_PROJECT) and not have_annotations.get(KEEP_AFTER_PROJECT):
            missing[KEEP_AFTER_PROJECT] = "true"
        if missing:
            patch["annotations"] = missing
        owners = ns["metadata"].get("ownerReferences") or []
        if not any(o.get("uid") == meta["uid"] for o in owners):
            patch["ownerReferences"] = owners + [dict(owner, controller=not any(o.get("controller") for o in owners))]
        if patch:
            self.projects_kube.patch(object_path("v1", "namespaces", ns), ns, {"metadata": patch})
            return
        self._project_phase(project, "Ready")

    # Shoot (gardenlet) -----------------------------------------------------------

    def lab_cluster(self, shoot):
        meta = shoot["metadata"]
        label = (meta.get("labels") or {}).get(CLUSTER_LABEL)
        return self.clusters.get(label) if label else self.clusters.get(meta["name"])

    def others_played_by(self, cluster, shoot):
        """Other Shoots (not being deleted) that the same lab cluster plays: it stays as it is for them."""
        return [o for o in getattr(self, "shoots", []) if o["metadata"]["uid"] != shoot["metadata"]["uid"]
                and not o["metadata"].get("deletionTimestamp") and self.lab_cluster(o) is cluster]

    def _patch_status(self, shoot, status):
        url = object_path(GV, "shoots", shoot)
        out = self.kube.patch(url, shoot, {"status": status}, "status")
        if out is None:
            # Most likely the care controller wrote in between; gardenlet's own status patches carry no
            # optimistic lock, so the same patch goes again on the fresh object.
            fresh = self.kube.get(url)
            if fresh is not None and fresh["metadata"]["uid"] == shoot["metadata"]["uid"]:
                out = self.kube.patch(url, fresh, {"status": status}, "status")
        return out

    def _patch_meta(self, shoot, metadata):
        return self.kube.patch(object_path(GV, "shoots", shoot), shoot, {"metadata": metadata})

    def reconcile_shoot(self, shoot, project):
        meta, status = shoot["metadata"], shoot.get("status") or {}
        uid, generation = meta["uid"], meta.get("generation")
        finalizers = list(meta.get("finalizers") or [])
        last = status.get("lastOperation") or {}
        if meta.get("deletionTimestamp"):
            if FINALIZER not in finalizers:
                return
            deleted = last.get("type") == "Delete" and last.get("state") == "Succeeded"
            if not status.get("uid") or deleted or loop.foreign(shoot, SHOOT_MANAGER):
                self._patch_meta(shoot, {"finalizers": [f for f in finalizers if f != FINALIZER] or None})
                self.flows.pop(uid, None)
                self.log("Shoot %s/%s: finalizer removed" % (meta["namespace"], meta["name"]))
                return
            flow = self.flows.get(uid)
            if flow is None or flow["type"] != "Delete":
                if _failed_and_up_to_date(shoot):
                    # A failed Delete waits for a new generation (gardener-apiserver's for `retry`).
                    return
                self.start(shoot, project, "Delete")
            else:
                self.advance(shoot, project)
            return
        if loop.foreign(shoot, SHOOT_MANAGER):
            return
        reason = self.settings.get().shoot(meta["namespace"], meta["name"]).get("unschedulable")
        if reason and not (shoot.get("spec") or {}).get("seedName") and not status:
            # gardener-scheduler found no seed: it reports why, and gardenlet never sees the Shoot.
            self.report_unschedulable(shoot, str(reason))
            return
        if FINALIZER not in finalizers:
            self._patch_meta(shoot, {"finalizers": finalizers + [FINALIZER]})
            return
        op_type = "Create" if not last or (last.get("type") == "Create" and last.get("state") != "Succeeded") \
            else "Reconcile"
        flow = self.flows.get(uid)
        if flow and flow["generation"] == generation and flow["type"] != "Delete":
            self.advance(shoot, project)
        elif not last or generation != status.get("observedGeneration") or last.get("state") == "Processing":
            self.start(shoot, project, op_type)
        elif last.get("state") == "Error":
            if self.after((uid, "retry", last.get("lastUpdateTime")), 5 * self.delay("shoot_step")):
                self.start(shoot, project, op_type)
        elif last.get("state") == "Succeeded":
            every = self.settings.get().shoot(meta["namespace"], meta["name"]).get("reconcile_every")
            # gardenlet's periodic reconcile (--sync-period, 1 h upstream) at the same generation, on request.
            if every and self.after((uid, "periodic", last.get("lastUpdateTime")), float(every)):
                self.done((uid, "periodic", last.get("lastUpdateTime")))
                self.start(shoot, project, "Reconcile")

    def report_unschedulable(self, shoot, reason):
        """pkg/scheduler/controller/shoot/reconciler.go reportFailedScheduling: a Warning event, once."""
        meta = shoot["metadata"]
        key = (meta["uid"], "unschedulable")
        if key in self.timers:
            return
        self.timers[key] = 0.0  # remembered as a timer so it is pruned with the Shoot
        loop.event(self.kube, dict(shoot, apiVersion=GV, kind="Shoot"), "SchedulingFailed",
                   "Failed to schedule shoot '%s' : %s" % (meta["name"], reason), "Warning", "gardener-scheduler")
        self.log("Shoot %s/%s: not scheduled (%s)" % (meta["namespace"], meta["name"], reason))

    def start(self, shoot, project, op_type):
        """updateShootStatusOperationStart (plus the status.uid of initializeOperation)."""
        meta, status = shoot["metadata"], copy.deepcopy(shoot.get("status") or {})
        now = loop.now_rfc3339()
        last = status.get("lastOperation") or {}
        switched = op_type == "Delete" and last.get("type") not in (None, "Delete")
        patch = {
            "lastOperation": {"type": op_type, "state": "Processing", "progress": 0,
                              "description": START_DESCRIPTIONS[op_type], "lastUpdateTime": now},
            "observedGeneration": meta.get("generation"),
            "gardener": IDENTITY,
        }
        if (not status.get("retryCycleStartTime") or meta.get("generation") != status.get("observedGeneration")
                or (status.get("gardener") or {}).get("version") != GARDENER_VERSION or switched):
            patch["retryCycleStartTime"] = now
        if not status.get("technicalID"):
            patch["technicalID"] = "shoot--%s--%s" % (project, meta["name"])
        seed = (shoot.get("spec") or {}).get("seedName")
        if op_type != "Delete":
            if seed and status.get("seedName") != seed:
                patch["seedName"] = seed
            if not status.get("uid"):
                patch["uid"] = meta["uid"]
        if self._patch_status(shoot, patch):
            self.flows[meta["uid"]] = {"type": op_type, "generation": meta.get("generation"), "step": 0}
            if not last:
                # The Shoot is picked up (upstream: status.seedName set, seedGotAssigned): care checks it now.
                self.care.trigger(meta["uid"], 0.0)
            self.log("Shoot %s/%s: %s started" % (meta["namespace"], meta["name"], op_type))

    def _failure(self, shoot, op_type):
        """(task, error, codes) when this operation is configured to fail (or no lab cluster plays the Shoot)."""
        meta = shoot["metadata"]
        cfg = self.settings.get().shoot(meta["namespace"], meta["name"])
        error = cfg.get("fail_delete") if op_type == "Delete" else cfg.get("fail")
        if error:
            codes = cfg.get("codes")
            codes = ["ERR_CONFIGURATION_PROBLEM"] if codes is None else codes
            return cfg.get("task") or DEFAULT_TASK, str(error), codes
        if op_type != "Delete" and self.lab_cluster(shoot) is None:
            return NO_CLUSTER_TASK, ("no lab cluster plays Shoot %s/%s: label it %s=<one of %s> or name it like one"
                                     % (meta["namespace"], meta["name"], CLUSTER_LABEL,
                                        ", ".join(sorted(self.clusters)))), ["ERR_CONFIGURATION_PROBLEM"]
        return None

    def advance(self, shoot, project):
        meta, status = shoot["metadata"], shoot.get("status") or {}
        uid = meta["uid"]
        flow = self.flows[uid]
        op_type, step = flow["type"], flow["step"]
        steps = DELETE_STEPS if op_type == "Delete" else list(RECONCILE_STEPS)
        if op_type != "Delete" and not _has_workers(shoot):
            steps[-1] = WORKERLESS_LAST_STEP
        if not self.after((uid, "flow", op_type, flow["generation"], step), self.delay("shoot_step")):
            return
        now = loop.now_rfc3339()
        last = dict(status.get("lastOperation") or {})
        failure = self._failure(shoot, op_type) if step == FAIL_STEP else None
        if failure:
            self.fail(shoot, op_type, *failure)
            del self.flows[uid]
            return
        if step < len(steps):
            progress, description = steps[step]
            last.update(type=op_type, state="Processing", progress=progress, description=description,
                        lastUpdateTime=now)
            patch = {"lastOperation": last}
            cluster = self.lab_cluster(shoot)
            if op_type != "Delete" and step == ADDRESS_STEP and cluster is not None:
                patch["advertisedAddresses"] = [{"name": "unmanaged", "url": cluster.server}]
            if op_type == "Reconcile" and step == WORKER_STEP and _has_workers(shoot):
                self.nodes.roll_shoot(shoot)  # the worker pools after the control plane
            if self._patch_status(shoot, patch):
                flow["step"] = step + 1
            return
        cluster = self.lab_cluster(shoot)
        if cluster is not None and op_type != "Delete" and _has_flux(shoot):
            flux.start(cluster)  # the shoot-flux extension, before the Shoot counts as reconciled
        if cluster is not None and op_type == "Delete" and not self.others_played_by(cluster, shoot):
            shoot_cluster.reset(cluster)  # the Shoot's cluster is gone
        self.succeed(shoot, op_type, now)
        del self.flows[uid]

    def fail(self, shoot, op_type, task, error, codes):
        """patchShootStatusOperationError with the flow's WrappedLastErrors."""
        meta, status = shoot["metadata"], shoot.get("status") or {}
        now = loop.now_rfc3339()
        task_error = 'task "%s" failed: %s' % (task, error)
        flow_error = 'flow "%s" encountered task errors: [%s]' % (FLOW_NAMES[op_type], task_error)
        description = flow_error[0].upper() + flow_error[1:]
        last_error = {"description": task_error, "taskID": task, "lastUpdateTime": now}
        if codes:
            last_error["codes"] = list(codes)
        state = "Failed" if NON_RETRYABLE & set(codes or []) else "Error"
        patch = {"gardener": IDENTITY, "lastErrors": [last_error],
                 "lastOperation": dict(status.get("lastOperation") or {}, type=op_type, state=state,
                                       description=description if state == "Failed"
                                       else description + " Operation will be retried.", lastUpdateTime=now)}
        if state == "Failed":
            patch["retryCycleStartTime"] = None
        self._patch_status(shoot, patch)
        self.log("Shoot %s/%s: %s %s: %s" % (meta["namespace"], meta["name"], op_type, state, task_error))

    def succeed(self, shoot, op_type, now):
        """patchShootStatusOperationSuccess: conditions and the required constraints that are not False turn
        Progressing (lastUpdateTime only) until care, triggered by the success, runs."""
        meta, status = shoot["metadata"], shoot.get("status") or {}
        patch = {"lastOperation": {"type": op_type, "state": "Succeeded", "progress": 100,
                                   "description": SUCCESS_DESCRIPTIONS[op_type], "lastUpdateTime": now},
                 "lastErrors": None, "retryCycleStartTime": None}
        if op_type != "Delete":
            for field, types in (("conditions", CONDITION_TYPES), ("constraints", PROGRESSING_CONSTRAINTS)):
                conditions = copy.deepcopy(status.get(field) or [])
                for cond in conditions:
                    if cond["type"] in types and cond.get("status") != "False":
                        cond["status"], cond["lastUpdateTime"] = "Progressing", now
                if conditions:
                    patch[field] = conditions
            patch["hibernated"] = bool(((shoot.get("spec") or {}).get("hibernation") or {}).get("enabled"))
            seed = (shoot.get("spec") or {}).get("seedName")
            if seed:
                patch["seedName"] = seed
            cluster = self.lab_cluster(shoot)
            if cluster is not None:
                patch["advertisedAddresses"] = [{"name": "unmanaged", "url": cluster.server}]
        if self._patch_status(shoot, patch):
            self.log("Shoot %s/%s: %s Succeeded" % (meta["namespace"], meta["name"], op_type))
            if op_type != "Delete":
                # ShootPredicate: ReconciliationFinishedSuccessfully enqueues care (here one shoot_step later,
                # so the Progressing conditions are seen).
                self.care.trigger(meta["uid"], self.delay("shoot_step"))


class CareController:
    """The care controller (care/reconciler.go, add.go): beside gardenlet's reconciles, a loop of its own
    over the Shoots gardenlet has picked up (a lastOperation: the lab's stand-in for status.seedName)."""

    def __init__(self, gardenlet, garden):
        self.gardenlet = gardenlet
        self.kube = Kube(garden, SHOOT_MANAGER)
        # Its own reading of standins.yaml: a shared one would swallow the change the reconciles wait for.
        self.settings = settings.standins(loop.log)
        # No watch: upstream's predicates let only a picked-up Shoot and a finished reconcile through
        # (trigger(), from the reconciles); other runs are care's own period.
        self.wake = threading.Event()
        self.due = {}  # uid -> time.monotonic() of the Shoot's next periodic care run
        self.triggered = {}  # uid -> time.monotonic() of a run the reconciles asked for
        threading.Thread(target=self.run, daemon=True).start()

    def trigger(self, uid, delay):
        """A run `delay` seconds from now (the predicates: picked up, reconciliation finished successfully)."""
        self.triggered[uid] = min(self.triggered.get(uid, float("inf")), time.monotonic() + delay)
        self.wake.set()

    def run(self):
        while True:
            self.wake.clear()
            try:
                self.settings.refresh()
                wait = self.reconcile()
            except Exception:  # noqa: BLE001 -- keeps running, as the stand-ins' loop
                loop.log("care: pass failed:\n%s" % traceback.format_exc())
                wait = 1.0
            self.wake.wait(wait)
            time.sleep(0.02)

    def reconcile(self):
        namespaces = {(p.get("spec") or {}).get("namespace") for p in self.kube.list(path(GV, "projects"))}
        wait, live = loop.RESYNC, set()
        for shoot in self.kube.list(path(GV, "shoots")):
            live.add(shoot["metadata"]["uid"])
            if shoot["metadata"]["namespace"] in namespaces:
                wait = min(wait, self.care(shoot))
        for uid in [u for u in list(self.due) + list(self.triggered) if u not in live]:
            self.due.pop(uid, None)
            self.triggered.pop(uid, None)
        return max(wait, 0.0)

    def api_running(self, shoot):
        """Whether the Shoot's kube-apiserver runs (operation.IsAPIServerRunning), as the lab plays it: from
        the first success on (a Create that has not succeeded has none yet) until a Delete deleted it."""
        last = (shoot.get("status") or {}).get("lastOperation") or {}
        if self.gardenlet.lab_cluster(shoot) is None or (last.get("type") == "Create"
                                                          and last.get("state") != "Succeeded"):
            return False
        if last.get("type") == "Delete":
            flow = self.gardenlet.flows.get(shoot["metadata"]["uid"])
            return flow is not None and flow["step"] < DELETE_API_SERVER_GONE
        return True

    def care(self, shoot):
        """One Shoot's care run when due, then again every `care` seconds (--sync-period, 1 min upstream).
        Conditions and constraints are written only when something changed (patchStatus). Returns the
        seconds until its next run."""
        meta, status = shoot["metadata"], shoot.get("status") or {}
        if not status.get("lastOperation") or loop.foreign(shoot, SHOOT_MANAGER):
            return loop.RESYNC  # not picked up yet (upstream: no status.seedName, requeued)
        uid, now, period = meta["uid"], time.monotonic(), self.settings.get().delay("care")
        due = self.due.setdefault(uid, now)  # also after a stand-in restart, as at gardenlet's start
        triggered = self.triggered.get(uid)
        if triggered is not None:
            due = min(due, triggered)
        if due > now:
            return due - now
        if triggered is not None and triggered <= now and self.triggered.get(uid) == triggered:
            del self.triggered[uid]  # a trigger arriving during this run stays for the next
        stamp = loop.now_rfc3339()
        wanted_conditions, wanted_constraints = care_values(shoot, self.api_running(shoot))
        conditions, changed = _with_conditions(shoot, wanted_conditions, stamp, "conditions", CONDITION_TYPES)
        constraints, changed_too = _with_conditions(shoot, wanted_constraints, stamp, "constraints", CONSTRAINT_TYPES)
        if (changed or changed_too) and self.kube.patch(object_path(GV, "shoots", shoot), shoot, {"status": {
                "conditions": conditions, "constraints": constraints}}, "status") is None:
            return 0.2  # a conflict with a reconcile's write: again on the fresh object
        self.due[uid] = now + period
        return period


def main():
    clusters = config.clusters()
    gardens = [c for c in clusters if config.GARDEN_GROUP in c.groups]
    if not gardens:
        raise SystemExit("inventories/lab has no host in group %s" % config.GARDEN_GROUP)
    Gardenlet(gardens[0], clusters).run()
