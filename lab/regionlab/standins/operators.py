"""Stand-ins for the operators of a ControlPlane's children, in the c5c3-operator stand-in's process.

The lab's memory budget is tight, so mariadb-operator, the RabbitMQ cluster-operator, SAP's
valkey-operator, the c5c3 memcached-operator and the c5c3 service operators (glance ... tempest)
share the c5c3-operator stand-in's process and loop: C5C3Operator.reconcile() calls
Operators.reconcile() after its own pass. Each writes the status shape of its upstream operator
as its own field manager (lab-<operator>), so the readiness rules of the collection
(plugins/module_utils/k8s/readiness.py) judge them as they judge the real ones:

  MariaDB          mariadb-operator v0.38.1 (pkg/condition/ready.go): Ready False StatefulSetNotReady
                   "Not ready" -> True StatefulSetReady "Running"; currentPrimary, replicas. No
                   observedGeneration (upstream reports none).
  RabbitmqCluster  cluster-operator v2.11.0 (internal/status): AllReplicasReady (NotAllPodsReady /
                   AllPodsAreReady), ClusterAvailable (NoEndpointsAvailable /
                   AtLeastOneEndpointAvailable), NoWarnings, ReconcileSuccess (Success / the
                   failure); observedGeneration, defaultUser, binding. Its conditions carry no
                   observedGeneration (upstream's type has none).
  Valkey           component-operator-runtime: state Processing -> Ready (Error on failure),
                   condition Ready with reasons Processing / Ready / Error, observedGeneration,
                   appliedGeneration.
  Memcached        memcached-operator v1beta1 (internal/controller/status.go): Available,
                   Progressing, Degraded with their reasons and messages, readyReplicas,
                   observedGeneration.
  Glance ... Tempest  Ready (with observedGeneration) once every spec.dependsOn entry is ready and
                   every Secret an rbd section names (cephSecretRef) exists, then the kind's delay;
                   endpoint http://<name>.<namespace>.svc:<port> (seed 003).

Delays (standins.yaml `delays`, seconds from the first sight of a generation): mariadb, rabbitmq,
valkey, memcached, service. A new object is left alone for up to a second first, and objects
whose status another field manager writes always, so that a test playing the operator writes
first. Failures (standins.yaml `failures`, keyed `<Kind>`, `<Kind>/<namespace>` or
`<Kind>/<namespace>/<name>`): {reason, message, terminal}. A failure shows while it is configured;
a terminal one sticks to the object's generation even after it is taken out of standins.yaml, as a
Galera cluster that lost quorum waits for someone to change the MariaDB.
"""

import copy

from . import loop
from .client import Kube, object_path, path


class Kind:
    def __init__(self, api_version, kind, plural, manager, delay, status, endpoint_port=None):
        self.api_version, self.kind, self.plural = api_version, kind, plural
        self.manager, self.delay, self.status, self.endpoint_port = manager, delay, status, endpoint_port

    @property
    def operator(self):
        """The operator's Deployment (deployments.py): its field manager without the lab- prefix."""
        return self.manager[len("lab-"):]


def _replicas(obj, default=1):
    replicas = (obj.get("spec") or {}).get("replicas")
    return default if replicas is None else replicas


# Status builders: (obj, state, failure, detail) -> status fields; state is "progressing",
# "ready" or "failed". Conditions go through loop.set_condition, so lastTransitionTime is kept.

def _mariadb(obj, state, failure, detail):
    conditions = copy.deepcopy((obj.get("status") or {}).get("conditions") or [])
    status = {"conditions": conditions, "replicas": _replicas(obj)}
    if state == "ready":
        loop.set_condition(conditions, "Ready", "True", "StatefulSetReady", "Running")
        status.update(currentPrimary="%s-0" % obj["metadata"]["name"], currentPrimaryPodIndex=0)
    elif state == "failed":
        loop.set_condition(conditions, "Ready", "False", failure.get("reason") or "Failed",
                           failure.get("message") or "Failed")
    else:
        loop.set_condition(conditions, "Ready", "False", "StatefulSetNotReady", "Not ready")
    return status


def _rabbitmq(obj, state, failure, detail):
    meta = obj["metadata"]
    conditions = copy.deepcopy((obj.get("status") or {}).get("conditions") or [])
    replicas = _replicas(obj)
    put = lambda *args: loop.set_condition(conditions, *args)  # noqa: E731
    if state == "ready":
        put("AllReplicasReady", "True", "AllPodsAreReady", "")
        put("ClusterAvailable", "True", "AtLeastOneEndpointAvailable", "")
    else:
        put("AllReplicasReady", "False", "NotAllPodsReady", "0/%d Pods ready" % replicas)
        put("ClusterAvailable", "False", "NoEndpointsAvailable", "The ingress service has no endpoints available")
    put("NoWarnings", "True", "NoWarnings", "")
    if state == "failed":
        put("ReconcileSuccess", "False", failure.get("reason") or "Error", failure.get("message") or "Error")
    else:
        put("ReconcileSuccess", "True", "Success", "Finish reconciling")
    status = {"conditions": conditions, "observedGeneration": meta.get("generation")}
    if state == "ready":
        status["defaultUser"] = {
            "secretReference": {"name": "%s-default-user" % meta["name"], "namespace": meta["namespace"],
                                "keys": {"username": "username", "password": "password"}},
            "serviceReference": {"name": meta["name"], "namespace": meta["namespace"]}}
        status["binding"] = {"name": "%s-default-user" % meta["name"]}
    return status


def _valkey(obj, state, failure, detail):
    gen = obj["metadata"].get("generation")
    conditions = copy.deepcopy((obj.get("status") or {}).get("conditions") or [])
    status = {"conditions": conditions, "observedGeneration": gen}
    if state == "ready":
        status.update(state="Ready", appliedGeneration=gen)
        loop.set_condition(conditions, "Ready", "True", "Ready", "Dependent resources successfully reconciled")
    elif state == "failed":
        status["state"] = "Error"
        loop.set_condition(conditions, "Ready", "False", failure.get("reason") or "Error",
                           failure.get("message") or "Error")
    else:
        status["state"] = "Processing"
        loop.set_condition(conditions, "Ready", "False", "Processing",
                           "Reconcilation of dependent resources triggered; waiting until all dependent "
                           "resources are ready")  # sic, upstream's spelling
    return status


def _memcached(obj, state, failure, detail):
    gen = obj["metadata"].get("generation")
    conditions = copy.deepcopy((obj.get("status") or {}).get("conditions") or [])
    want = _replicas(obj)
    ready = want if state == "ready" else 0
    put = lambda *args: loop.set_condition(conditions, *args, observed_generation=gen)  # noqa: E731
    if ready > 0:
        put("Available", "True", "Available", "%d/%d replicas are ready" % (ready, want))
        put("Progressing", "False", "ProgressingComplete", "All %d replicas are updated" % want)
        put("Degraded", "False", "NotDegraded", "All %d desired replicas are ready" % want)
    else:
        put("Available", "False", "Unavailable", "0/%d replicas are ready" % want)
        put("Progressing", "True", "Progressing", "Rollout in progress: 0/%d replicas updated" % want)
        if state == "failed":
            put("Degraded", "True", failure.get("reason") or "Degraded", failure.get("message") or "Degraded")
        else:
            put("Degraded", "True", "Degraded", "Only 0/%d replicas are ready" % want)
    return {"conditions": conditions, "readyReplicas": ready, "observedGeneration": gen}


def _major(tag):
    """The major version of a project-version tag (28.0.0 -> 28), None for another tag."""
    head = str(tag or "").split(".", 1)[0]
    return int(head) if head.isdigit() else None


def is_downgrade(installed, tag):
    """A lower major version than the installed one: upstream's operators refuse it (DowngradeNotSupported)."""
    return None not in (_major(installed), _major(tag)) and _major(tag) < _major(installed)


def upgrade_of(obj):
    """(installed tag, new tag) while a service CR's spec.image.tag differs from the release it runs
    (status.installedRelease), else None: upstream's database upgrade flow runs then."""
    tag = ((obj.get("spec") or {}).get("image") or {}).get("tag")
    installed = (obj.get("status") or {}).get("installedRelease")
    return (installed, tag) if installed and tag and installed != tag else None


def _service(obj, state, failure, detail):
    """Upstream's service operators (keystone-operator's shared status, internal/common/database/upgrade.go):
    Ready AllReady / NotAllReady, installedRelease = spec.image.tag once the database and Deployment run it.
    A tag change of a running service is an upgrade: targetRelease and DatabaseReady (MigrateInProgress)
    report it until the kind's delay has passed; a lower major version is refused as upstream refuses a
    downgrade. These kinds have no upgradePhase upstream (only the Keystone has)."""
    gen = obj["metadata"].get("generation")
    conditions = copy.deepcopy((obj.get("status") or {}).get("conditions") or [])
    tag = ((obj.get("spec") or {}).get("image") or {}).get("tag")
    upgrade = upgrade_of(obj)
    status = {"conditions": conditions, "observedGeneration": gen}
    put = lambda *args: loop.set_condition(conditions, *args, observed_generation=gen)  # noqa: E731
    if upgrade and is_downgrade(*upgrade):
        put("DatabaseReady", "False", "DowngradeNotSupported",
            "downgrade from %s to %s is not supported: database migrations are not reversible" % upgrade)
        put("Ready", "False", "NotAllReady", "DatabaseReady: downgrade from %s to %s is not supported" % upgrade)
        status.update(targetRelease=upgrade[1])
    elif state == "ready":
        put("DatabaseReady", "True", "DatabaseSynced", "Database schema is up to date")
        put("Ready", "True", "AllReady", "All sub-conditions are ready")
        status.update(installedRelease=tag, targetRelease=None)  # upstream's omitempty: a null removes it
    elif state == "failed" and upgrade:
        # standins.yaml failures during an upgrade: the database step's reason (e.g. MigrateFailed)
        reason, message = failure.get("reason") or "MigrateFailed", failure.get("message") or "Failed"
        put("DatabaseReady", "False", reason, message)
        put("Ready", "False", "NotAllReady", "DatabaseReady: %s" % message)
        status.update(targetRelease=upgrade[1])
    elif state == "failed":
        put("Ready", "False", failure.get("reason") or "Failed", failure.get("message") or "Failed")
    elif detail:
        put("Ready", "False", "WaitingForDependencies", detail)
    elif upgrade:
        put("DatabaseReady", "False", "MigrateInProgress", "Migrate phase running: %s -> %s" % upgrade)
        put("Ready", "False", "NotAllReady", "DatabaseReady: Migrate phase running: %s -> %s" % upgrade)
        status.update(targetRelease=upgrade[1])
    else:
        put("Ready", "False", "DeploymentProgressing", "%s deployment is not yet available" % obj["kind"])
    return status


def _svc(group, kind, plural, port=None, version="v1alpha1"):
    return Kind("%s/%s" % (group, version), kind, plural, "lab-%s-operator" % kind.lower(), "service", _service, port)


KINDS = {k.kind: k for k in [
    Kind("k8s.mariadb.com/v1alpha1", "MariaDB", "mariadbs", "lab-mariadb-operator", "mariadb", _mariadb),
    Kind("rabbitmq.com/v1beta1", "RabbitmqCluster", "rabbitmqclusters", "lab-rabbitmq-cluster-operator",
         "rabbitmq", _rabbitmq),
    Kind("cache.cs.sap.com/v1alpha1", "Valkey", "valkeys", "lab-valkey-operator", "valkey", _valkey),
    Kind("memcached.c5c3.io/v1beta1", "Memcached", "memcacheds", "lab-memcached-operator", "memcached", _memcached),
    _svc("glance.openstack.c5c3.io", "Glance", "glances", 9292),
    _svc("placement.openstack.c5c3.io", "Placement", "placements", 8778),
    _svc("nova.openstack.c5c3.io", "Nova", "novas", 8774),
    _svc("neutron.openstack.c5c3.io", "Neutron", "neutrons", 9696),
    _svc("cinder.openstack.c5c3.io", "Cinder", "cinders", 8776),
    _svc("cortex.c5c3.io", "Cortex", "cortexes", 8080),
    _svc("tempest.openstack.c5c3.io", "Tempest", "tempests"),
]}


def _current(obj, cond):
    gen = obj["metadata"].get("generation")
    return cond.get("observedGeneration", gen) == gen


def is_ready(obj):
    """The readiness rules of the collection (readiness.py) for the kinds the lab plays, in short."""
    status = obj.get("status") or {}
    gen = obj["metadata"].get("generation")
    observed = status.get("observedGeneration")
    if observed is not None and observed >= 0 and observed != gen:
        return False
    conds = {c.get("type"): c for c in status.get("conditions") or [] if _current(obj, c)}

    def true(ctype, want="True"):
        return (conds.get(ctype) or {}).get("status") == want

    kind = obj.get("kind")
    if kind == "RabbitmqCluster":
        return (observed is not None and true("AllReplicasReady") and true("ClusterAvailable")
                and not true("ReconcileSuccess", "False"))
    if kind == "Valkey":
        return observed is not None and observed >= 0 and status.get("state") == "Ready"
    if kind == "Memcached":
        return (observed is not None and true("Available") and true("Progressing", "False")
                and true("Degraded", "False"))
    return true("Ready")


def unready_detail(obj):
    """The first condition that is not as it should be, for messages."""
    if obj.get("kind") == "Valkey" and (obj.get("status") or {}).get("state"):
        cond = next((c for c in obj["status"].get("conditions") or [] if c.get("type") == "Ready"), {})
        return "state %s: %s" % (obj["status"]["state"], cond.get("message"))
    good = {"Progressing": "False", "Degraded": "False"}
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") != "Ready" and cond.get("status") != good.get(cond.get("type"), "True"):
            return "%s=%s %s: %s" % (cond["type"], cond.get("status"), cond.get("reason"), cond.get("message"))
    cond = next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None)
    if cond is None:
        return "no status yet"
    return "Ready=%s %s: %s" % (cond.get("status"), cond.get("reason"), cond.get("message"))


class Operators:
    """One pass over every object of KINDS on the cluster, driven by the c5c3-operator's loop."""

    def __init__(self, controller, cluster):
        self.ctl = controller
        self.kubes = {k.kind: Kube(cluster, k.manager) for k in KINDS.values()}
        self.stuck = {}   # uid -> (generation, failure): terminal failures

    @staticmethod
    def urls():
        return [path(k.api_version, k.plural) for k in KINDS.values()]

    def reconcile(self, objects):
        """objects: (kind, namespace, name) -> object, every object of KINDS (and Keystones)."""
        uids = set()
        for (kind, _, _), obj in sorted(objects.items()):
            if kind in KINDS:
                uids.add(obj["metadata"]["uid"])
                self.reconcile_object(KINDS[kind], obj, objects)
        self.stuck = {u: v for u, v in self.stuck.items() if u in uids}

    def failure(self, spec, obj):
        meta = obj["metadata"]
        gen = meta.get("generation")
        configured = self.ctl.settings.get().failure(spec.kind, meta["namespace"], meta["name"])
        if configured.get("terminal"):
            self.stuck[meta["uid"]] = (gen, configured)
        stuck = self.stuck.get(meta["uid"])
        if stuck and stuck[0] == gen:
            return stuck[1]
        return configured

    def waiting_for(self, obj, objects):
        """spec.dependsOn entries (same namespace) that are not ready: a message, or None."""
        waiting = []
        for dep in (obj.get("spec") or {}).get("dependsOn") or []:
            other = objects.get((dep.get("kind"), obj["metadata"]["namespace"], dep.get("name")))
            if other is None or not is_ready(other):
                waiting.append('%s "%s" (condition %s)' % (dep.get("kind"), dep.get("name"),
                                                          dep.get("condition") or "Ready"))
        return "Waiting for %s" % ", ".join(waiting) if waiting else None

    def missing_ceph_secrets(self, spec, obj):
        """The Secrets the rbd sections name (Glance's storage, Cinder's backends) that do not exist: a message, or
        None. Only read while the generation is not ready yet: the pods mount the Secret when they start."""
        spec_ = obj.get("spec") or {}
        sections = [(spec_.get("storage") or {}).get("rbd")] + [b.get("rbd") for b in spec_.get("backends") or []]
        names = sorted({(s.get("cephSecretRef") or {}).get("name") for s in sections if s} - {None})
        namespace = obj["metadata"]["namespace"]
        missing = [n for n in names if self.kubes[spec.kind].get(path("v1", "secrets", namespace, n)) is None]
        return "Waiting for the Ceph key Secret %s" % ", ".join(missing) if missing else None

    def reconcile_object(self, spec, obj, objects):
        meta = obj["metadata"]
        if meta.get("deletionTimestamp") or loop.foreign(obj, spec.manager) or not self.ctl.running.runs(spec.operator):
            return
        uid, gen = meta["uid"], meta.get("generation")
        delay = self.ctl.delay(spec.delay)
        if spec.manager not in loop.status_writers(obj) and not self.ctl.after((uid, "seen"), min(1.0, delay)):
            return
        failure = self.failure(spec, obj)
        detail = self.waiting_for(obj, objects)
        if not detail and not is_ready(obj):
            detail = self.missing_ceph_secrets(spec, obj)
        if failure:
            state = "failed"
        elif detail:
            state = "progressing"
            self.ctl.done((uid, gen, "ready"))  # the delay counts from when the dependencies are ready
        else:
            state = "ready" if self.ctl.after((uid, gen, "ready"), delay) else "progressing"
        wanted = spec.status(obj, state, failure, detail)
        if spec.endpoint_port and state == "ready":
            wanted["endpoint"] = "http://%s.%s.svc:%d" % (meta["name"], meta["namespace"], spec.endpoint_port)
        current = obj.get("status") or {}
        patch = {k: v for k, v in wanted.items() if current.get(k) != v}
        if patch and self.kubes[spec.kind].patch(object_path(spec.api_version, spec.plural, obj), obj,
                                                 {"status": patch}, "status"):
            self.ctl.log("%s %s/%s: %s" % (spec.kind, meta["namespace"], meta["name"], state))
