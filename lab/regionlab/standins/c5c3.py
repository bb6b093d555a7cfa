"""c5c3-operator stand-in: the ControlPlane's children phase by phase, and the ControlPlane's status.

Modelled on seed 003 ("C5C3 Operator": the ControlPlane creates the infrastructure and service
CRs, deployment phases 1-7 and their dependency graph) and github.com/c5c3/cobaltcore
operators/c5c3/internal/controller/reconcile_keystone.go (projection under server-side apply,
owner reference, the KeystoneReady condition and its reasons) with internal/common/reconcile/
status.go (the aggregate Ready).

For each ControlPlane (c5c3.io/v1alpha1) on the control-plane cluster, in the order of COMPONENTS:
- the infrastructure CRs (MariaDB, RabbitmqCluster, Valkey, Memcached, sized from
  spec.infrastructure), the Keystone CR (its `bootstrap` projected as upstream projects it:
  keystone_bootstrap), K-ORC (no CR: its API must be served), and the enabled service CRs
  (Glance ... Tempest), each applied server-side as upstream applies them (field manager
  cobaltcore-operator, forced: a field someone else changed is taken back on the next pass) with the
  ControlPlane as controller owner, and each created only once what it waits for (WAITS_FOR:
  its dependencies and the phase before its own) is ready. A child of that name that someone
  else created is adopted unless another controller owns it.
- status: observedGeneration; a condition per phase (InfrastructureReady ... OptionalReady,
  naming the unready children), one per child (<Kind>Ready), Ready (AllReady / NotAllReady);
  phase Provisioning|Ready|Degraded|Failed; services {<component>: Pending|Provisioning|Ready|Failed};
  endpoints {<service>: <its status.endpoint>}.
The children's operators are played in the same process (operators.py), mariadb-operator's Backups and
Restores (mariadb_batch.py), and the containers of the collection's OVN database Jobs in ovn-system (shell_pods.py).

Left alone: ControlPlanes whose status another field manager writes, and every new ControlPlane
until the `control_plane` delay has passed since it was first seen (so a test playing the
operator writes its status first).
"""

import copy
import hashlib
import json
import re

from .. import config
from . import deployments, loop, mariadb_batch, operators, ovn, shell_pods
from .client import ApiError, Kube, Waker, object_path, path

GV = "c5c3.io/v1alpha1"
MANAGER = "lab-c5c3-operator"  # the ControlPlane's status
OPERATOR = "c5c3-operator"   # its Deployment (deployments.py)
# Upstream's server-side apply field manager (internal/common/apply.FieldManager), for every object it
# projects; the apply is forced (client.ForceOwnership).
FIELD_MANAGER = "cobaltcore-operator"
NAME = "c5c3-operator-standin"
ALLOW_KEYSTONE_DELETION = "c5c3.io/allow-keystone-deletion"


def _subset(want, have):
    """Every field of want has the same value in have (defaults the API server added may remain)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(_subset(v, have.get(k)) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(have, list) and len(want) == len(have) and all(map(_subset, want, have))
    return want == have


class Outcome:
    """What one child's projection found: its condition, state and endpoint."""

    def __init__(self, condition, state=None, endpoint=None, detail=None):
        self.condition = condition      # (status, reason, message)
        self.state = state              # for status.services; None: not managed
        self.endpoint = endpoint
        self.detail = detail            # why it is not ready, for the phase condition


class Child:
    """One CR the c5c3-operator projects from the ControlPlane: an infrastructure or a service CR."""

    key = condition_type = api_version = kind = plural = child_name = None
    optional = False           # Cortex and Tempest: only with `enabled: true`
    keep_when_disabled = False  # Keystone: its keys are worth more than tidiness

    def section(self, cp):
        spec = cp.get("spec") or {}
        services = spec.get("services") or spec.get("openstack") or {}
        return services.get(self.key)

    def disabled(self, section):
        if section is None:  # seed 003's ControlPlane: the core services are on unless switched off
            return self.key not in DEFAULT_SERVICES
        return section.get("enabled") is False or (self.optional and not section.get("enabled"))

    def desired_spec(self, op, cp, section):
        raise NotImplementedError

    def reconcile(self, op, cp, waiting):
        """waiting: the components this one depends on that are not ready; its CR is created only without."""
        meta = cp["metadata"]
        section = self.section(cp)
        child_path = path(self.api_version, self.plural, meta["namespace"], self.child_name)
        live = op.children.get((self.kind, meta["namespace"], self.child_name))
        if self.disabled(section):
            message = "spec.services.%s is %s; no %s service is managed by this ControlPlane" % (
                self.key, "unset" if section is None else "disabled", self.kind)
            if live is not None and op.owned_by(live, cp):
                allowed = (meta.get("annotations") or {}).get(ALLOW_KEYSTONE_DELETION) in ("true", "True", "1")
                if not self.keep_when_disabled or allowed:
                    op.kube.delete(child_path)
                else:
                    message += ("; any previously-projected %s child is preserved to protect its "
                                "credential/fernet keys (set annotation %s=true to allow deletion)"
                                % (self.kind, ALLOW_KEYSTONE_DELETION))
            return Outcome(("True", "%sNotManaged" % self.kind, message))
        owner = op.controller_of(live) if live is not None else None
        if owner is not None and owner.get("uid") != meta["uid"]:
            return Outcome(("False", "%sError" % self.kind,
                            "create-or-update %s: %s %s/%s is controlled by %s %s" % (
                                self.kind, self.kind, meta["namespace"], self.child_name, owner.get("kind"),
                                owner.get("name"))), "Failed", detail="owned by another controller")
        if live is None and waiting:  # seed 003: a phase starts once what it depends on is Ready
            message = "%s waits for %s" % (self.kind, ", ".join(waiting))
            return Outcome(("False", "WaitingForDependencies", message), "Pending", detail=message)
        desired = {
            "apiVersion": self.api_version, "kind": self.kind,
            "metadata": {"name": self.child_name, "namespace": meta["namespace"], "ownerReferences": [{
                "apiVersion": GV, "kind": "ControlPlane", "name": meta["name"], "uid": meta["uid"],
                "controller": True, "blockOwnerDeletion": True}]},
            "spec": self.desired_spec(op, cp, section or {}),
        }
        digest = hashlib.sha256(json.dumps(desired, sort_keys=True).encode()).hexdigest()
        if live is None or op.applied.get((meta["uid"], self.key)) != digest or not (
                owner and _subset(desired["spec"], live.get("spec"))):
            try:
                live = op.projector.apply(child_path, desired)
            except ApiError as exc:
                if exc.code == 422:
                    return Outcome(("False", "%sProjectionRejected" % self.kind, (
                        "%s API server rejected the projected spec (likely an immutable db/bootstrap field diverged "
                        "from the frozen %s child); reconcile the ControlPlane spec back to the child's values or "
                        "recreate the %s child to recover: %s" % (self.kind, self.kind, self.kind, exc))),
                        "Failed", detail=str(exc))
                return Outcome(("False", "%sError" % self.kind, "create-or-update %s: %s" % (self.kind, exc)),
                               "Failed", detail=str(exc))
            op.applied[(meta["uid"], self.key)] = digest
            op.children[(self.kind, meta["namespace"], self.child_name)] = live
            op.log("ControlPlane %s/%s: %s %s applied"
                   % (meta["namespace"], meta["name"], self.kind, self.child_name))
        endpoint = (live.get("status") or {}).get("endpoint")
        if operators.is_ready(live):
            return Outcome(("True", "%sReady" % self.kind, "Projected %s CR is ready" % self.kind), "Ready", endpoint)
        detail = "%s %s: %s" % (self.kind, self.child_name, operators.unready_detail(live))
        return Outcome(("False", "WaitingFor%s" % self.kind, '%s "%s" is not ready' % (self.kind, self.child_name)),
                       "Provisioning", endpoint, detail=detail)


class Infrastructure(Child):
    """Phase 1: the CRs of the infrastructure operators, always there, sized from spec.infrastructure."""

    def __init__(self, key, kind, condition_type, build):
        self.key, self.kind, self.condition_type, self.child_name = key, kind, condition_type, key
        self.api_version, self.plural = operators.KINDS[kind].api_version, operators.KINDS[kind].plural
        self.build = build

    def section(self, cp):
        return ((cp.get("spec") or {}).get("infrastructure") or {}).get(self.key) or {}

    def disabled(self, section):
        return False

    def desired_spec(self, op, cp, section):
        return self.build(section, section.get("replicas") or 3)


def _mariadb_spec(section, replicas):
    """seed 003's MariaDB: Galera when clustered; an even count needs upstream's explicit consent."""
    spec = {"replicas": replicas, "galera": {"enabled": replicas > 1},
            "storage": {"size": str(section.get("storageSize") or "10Gi")}}
    if replicas % 2 == 0:
        spec["replicasAllowEvenNumber"] = True
    if section.get("storageClass"):
        spec["storage"]["storageClassName"] = section["storageClass"]
    return spec


def _rabbitmq_spec(section, replicas):
    spec = {"replicas": replicas}
    if section.get("storageSize") or section.get("storageClass"):
        spec["persistence"] = {k: v for k, v in (("storage", section.get("storageSize")),
                                                 ("storageClassName", section.get("storageClass"))) if v}
    return spec


def _valkey_spec(section, replicas):
    return {"replicas": replicas, "sentinel": {"enabled": bool((section.get("sentinel") or {}).get("enabled", True))}}


def _memcached_spec(section, replicas):
    spec = {"replicas": replicas}
    memory = str(section.get("memory") or "")
    units = {"Mi": 1, "Gi": 1024, "M": 1, "G": 1000}
    for unit, factor in sorted(units.items(), key=lambda u: -len(u[0])):
        if memory.endswith(unit) and memory[:-len(unit)].isdigit():
            spec["memcached"] = {"maxMemoryMB": int(memory[:-len(unit)]) * factor}
            break
    return spec


def keystone_bootstrap(cp, section, keystone_name):
    """The Keystone CR's `bootstrap` as upstream's reconcileKeystone projects it from the ControlPlane.

    Managed mode (the operator runs the MariaDB): the admin password Secret is <keystone>-admin-credentials,
    key password (effectiveAdminPasswordSecretRef); the region is the ControlPlane's (seed 003's
    global.region; upstream's spec.region, default RegionOne); the public endpoint is the keystone service's
    publicEndpoint, left out when unset (upstream's omitempty: then no manager of the operator owns it).
    adminUser is not projected (the CRD's default, admin).
    """
    bootstrap = {"adminPasswordSecretRef": {"name": "%s-admin-credentials" % keystone_name, "key": "password"},
                 "region": ((cp.get("spec") or {}).get("global") or {}).get("region") or "RegionOne"}
    if section.get("publicEndpoint"):
        bootstrap["publicEndpoint"] = section["publicEndpoint"]
    return bootstrap


def interval_to_cron(interval):
    """intervalToCron of services.keystone.rotationInterval (a Go duration): weekly for 168h, else daily for a
    whole number of days (the CRD refuses any other); None when unset."""
    if not interval:
        return None
    units = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    seconds = sum(float(number) * units[unit] for number, unit in re.findall(r"([0-9.]+)(ns|us|µs|ms|s|m|h)", interval))
    return "0 0 * * 0" if seconds == 7 * 86400 else "0 0 * * *"


class KeystoneService(Child):
    key, condition_type = "keystone", "KeystoneReady"
    api_version, kind, plural, child_name = "keystone.openstack.c5c3.io/v1alpha1", "Keystone", "keystones", "keystone"
    keep_when_disabled = True

    def desired_spec(self, op, cp, section):
        """The Keystone CR of seed 003, from the ControlPlane, bootstrap included (the operator owns it)."""
        memcached = ((cp.get("spec") or {}).get("infrastructure") or {}).get("memcached") or {}
        schedule = interval_to_cron(section.get("rotationInterval")) or "0 0 * * 0"
        spec = {
            "image": section.get("image") or {"repository": "ghcr.io/c5c3/keystone", "tag": IMAGE_TAGS["keystone"]},
            "database": {"secretRef": {"name": "%s-db-credentials" % self.child_name}, "database": "keystone"},
            "cache": {"backend": "dogpile.cache.pymemcache",
                      "servers": ["memcached-%d.memcached:11211" % i for i in range(memcached.get("replicas") or 3)]},
            "fernet": {"rotationSchedule": schedule, "maxActiveKeys": 3},
            "credentialKeys": {"rotationSchedule": schedule},
            "federation": {"enabled": False},
            "bootstrap": keystone_bootstrap(cp, section, self.child_name),
        }
        if section.get("replicas") is not None:
            spec["replicas"] = section["replicas"]
        return spec


class ServiceCatalog(Child):
    """Phase 3, K-ORC: no CR of its own here. Upstream's operator imports Keystone's bootstrap
    resources into K-ORC and registers the services; in the lab the collection does that (phase 5),
    so the stand-in only requires K-ORC's API to be served (phase 3 of the region installs it)."""

    key, condition_type, kind = "k-orc", "KORCReady", "K-ORC"
    KORC_API = "/apis/openstack.k-orc.cloud/v1alpha1"

    def section(self, cp):
        return (cp.get("spec") or {}).get("korc") or {}

    def disabled(self, section):
        return section.get("enabled") is False

    def reconcile(self, op, cp, waiting):
        if self.disabled(self.section(cp)):
            return Outcome(("True", "KORCNotManaged", "spec.korc.enabled is false; no service catalog is managed"))
        if waiting:
            message = "K-ORC waits for %s" % ", ".join(waiting)
            return Outcome(("False", "WaitingForDependencies", message), "Pending", detail=message)
        if not op.korc_served():
            message = "K-ORC does not serve openstack.k-orc.cloud/v1alpha1 (its chart is not installed)"
            return Outcome(("False", "KORCNotInstalled", message), "Provisioning", detail=message)
        return Outcome(("True", "KORCReady", "K-ORC serves openstack.k-orc.cloud/v1alpha1"), "Ready")


# The image tags of seed 003's service CRs.
IMAGE_TAGS = {"keystone": "28.0.0", "glance": "31.0.0", "placement": "14.0.0", "nova": "32.1.0", "neutron": "27.0.1",
              "cinder": "27.0.0", "cortex": "0.5.0", "tempest": "41.0.0"}
MESSAGING = ("nova", "neutron", "cinder")


class OpenStackService(Child):
    """Phases 4-7: a service CR as seed 003 shows it, with dependsOn from the dependency graph."""

    def __init__(self, key, kind, optional=False, extra=None):
        self.key, self.kind, self.child_name, self.condition_type = key, kind, key, "%sReady" % kind
        self.api_version, self.plural = operators.KINDS[kind].api_version, operators.KINDS[kind].plural
        self.optional, self.extra = optional, extra

    def section(self, cp):
        spec = cp.get("spec") or {}
        if self.optional:  # seed 003 puts cortex and tempest beside services, not in it
            return spec.get(self.key) or super().section(cp)
        return super().section(cp)

    def desired_spec(self, op, cp, section):
        namespace = cp["metadata"]["namespace"]
        keystone = op.children.get(("Keystone", namespace, "keystone")) or {}
        auth_url = (keystone.get("status") or {}).get("endpoint") or "http://keystone.%s.svc:5000/v3" % namespace
        credentials = "%s-keystone-credentials" % self.key
        ref = {"name": credentials} if self.optional else {"secretName": credentials}
        spec = {"image": section.get("image") or {"repository": "ghcr.io/c5c3/%s" % self.key,
                                                  "tag": IMAGE_TAGS[self.key]},
                "keystone": {"authUrl": auth_url, "appCredentialRef": ref},
                "dependsOn": [{"kind": COMPONENTS_BY_KEY[d].kind, "name": COMPONENTS_BY_KEY[d].child_name,
                               "condition": "Ready"} for d in DEPENDS[self.key] if d != "k-orc"]}
        if not self.optional:
            spec["database"] = {"secretRef": {"name": "%s-db-credentials" % self.key}, "database": self.key}
        if self.key in MESSAGING:
            spec["messaging"] = {"secretRef": {"name": "%s-rabbitmq-credentials" % self.key}}
        if section.get("replicas") is not None:
            spec["replicas"] = section["replicas"]
        for part in ("api", "scheduler", "conductor", "server", "volume"):
            if isinstance(section.get(part), dict) and section[part].get("replicas") is not None:
                spec[part] = {"replicas": section[part]["replicas"]}
        if self.extra:
            spec.update(self.extra(section, cp))
        return spec


class NeutronService(OpenStackService):
    """Neutron's ovn section from the OVNCluster's status endpoints (seed 003: "Uses nbConnection from
    OVNCluster Status"); while the OVN API is served but publishes none, Neutron waits for it."""

    def ovn_endpoints(self, op):
        if op.ovn_cluster is None:
            return None
        return ((op.ovn_cluster.get("status") or {}).get("endpoints")) or {}

    def reconcile(self, op, cp, waiting):
        endpoints = self.ovn_endpoints(op)
        if endpoints is not None and not (endpoints.get("northbound") and endpoints.get("southbound")):
            waiting = list(waiting) + ["OVNCluster %s/%s endpoints" % (ovn.NAMESPACE, ovn.NAME)]
        return super().reconcile(op, cp, waiting)

    def desired_spec(self, op, cp, section):
        spec = super().desired_spec(op, cp, section)
        endpoints = self.ovn_endpoints(op)
        if endpoints and endpoints.get("northbound") and endpoints.get("southbound"):
            spec["ovn"] = {"enabled": True, "nbConnection": endpoints["northbound"],
                           "sbConnection": endpoints["southbound"]}
        return spec


def _rbd(pool, secret, user):
    """Seed 003's rbd section: the pool, the Secret with the Ceph key (cephSecretRef) and the CephClient it belongs to
    (cephClientRef, which Rook makes the Ceph user client.<name>)."""
    rbd = {"pool": pool}
    if secret:
        rbd["cephSecretRef"] = {"name": secret}
    if user:
        rbd["cephClientRef"] = {"name": user, "namespace": "rook-ceph"}
    return rbd


def _glance_extra(section, cp):
    backend = section.get("backend") or {}
    if backend.get("type") == "rbd" and backend.get("pool"):
        ceph = ((cp.get("spec") or {}).get("storage") or {}).get("ceph") or {}
        return {"storage": {"backend": "rbd", "rbd": _rbd(backend["pool"], (ceph.get("secretRef") or {}).get("name"),
                                                          ceph.get("user"))}}
    return {"storage": {"backend": backend["type"]}} if backend.get("type") in ("file", "swift", "s3") else {}


def _cinder_extra(section, cp):
    backends = [{"name": b["name"], "driver": "cinder.volume.drivers.rbd.RBDDriver",
                 "rbd": _rbd(b["pool"], b.get("secretRef"), b.get("user"))}
                for b in section.get("backends") or [] if b.get("type") == "rbd" and b.get("pool")]
    return {"backends": backends} if backends else {}


def _tempest_extra(section, cp):
    return {"schedule": section.get("schedule") or "0 2 * * *"}


# Seed 003's dependency graph (plugins/module_utils/region/dependency_graph.py holds the same data
# for the collection; the lab does not import the collection).
DEPENDS = {
    "mariadb": (), "rabbitmq": (), "valkey": (), "memcached": (),
    "keystone": ("mariadb", "memcached"),
    "k-orc": ("keystone",),
    "glance": ("keystone", "k-orc", "mariadb"),
    "placement": ("keystone", "k-orc", "mariadb"),
    "nova": ("keystone", "k-orc", "placement", "rabbitmq", "glance", "mariadb"),
    "neutron": ("keystone", "k-orc", "rabbitmq", "mariadb"),
    "cinder": ("keystone", "k-orc", "rabbitmq", "mariadb"),
    "cortex": ("nova", "cinder"),
    "tempest": ("nova", "neutron", "cinder", "glance", "keystone"),
}
# The services a ControlPlane runs when its spec has no section for them (seed 003 enables these;
# the collection's region/services.py DEFAULT_SERVICES is the same list).
DEFAULT_SERVICES = ("keystone", "glance", "placement", "nova", "neutron", "cinder")
# In the seed's phase order, which is a topological order of DEPENDS.
COMPONENTS = [
    Infrastructure("mariadb", "MariaDB", "MariaDBReady", _mariadb_spec),
    Infrastructure("rabbitmq", "RabbitmqCluster", "RabbitMQReady", _rabbitmq_spec),
    Infrastructure("valkey", "Valkey", "ValkeyReady", _valkey_spec),
    Infrastructure("memcached", "Memcached", "MemcachedReady", _memcached_spec),
    KeystoneService(),
    ServiceCatalog(),
    OpenStackService("glance", "Glance", extra=_glance_extra),
    OpenStackService("placement", "Placement"),
    OpenStackService("nova", "Nova"),
    NeutronService("neutron", "Neutron"),
    OpenStackService("cinder", "Cinder", extra=_cinder_extra),
    OpenStackService("cortex", "Cortex", optional=True),
    OpenStackService("tempest", "Tempest", optional=True, extra=_tempest_extra),
]
COMPONENTS_BY_KEY = {c.key: c for c in COMPONENTS}
# Seed 003's deployment phases as the ControlPlane's conditions (the CRD's status description
# names them); phases 6 and 7 are both optional and share OptionalReady.
PHASES = [
    ("InfrastructureReady", "Phase 1 (Infrastructure)", ["mariadb", "rabbitmq", "valkey", "memcached"]),
    ("IdentityReady", "Phase 2 (Identity)", ["keystone"]),
    ("CatalogReady", "Phase 3 (Service Catalog)", ["k-orc"]),
    ("CoreReady", "Phase 4 (Core)", ["glance", "placement"]),
    ("ComputeReady", "Phase 5 (Compute)", ["nova", "neutron", "cinder"]),
    ("OptionalReady", "Phases 6-7 (Scheduler, Testing)", ["cortex", "tempest"]),
]
CHILD_KINDS = [c for c in COMPONENTS if c.api_version]
# What a component waits for: its own dependencies and, as seed 003's graph draws the phases one
# after the other, every component of the phase before its own (Neutron waits for Glance too).
WAITS_FOR = {key: tuple(DEPENDS[key]) + tuple(k for k in (PHASES[i - 1][2] if i else []) if k not in DEPENDS[key])
             for i, (_, _, keys) in enumerate(PHASES) for key in keys}
# Phases 6 and 7 share a condition, but Tempest (phase 7) still comes after Cortex (phase 6).
WAITS_FOR["tempest"] += ("cortex",)


class C5C3Operator(loop.Controller):
    name = NAME

    def __init__(self, cluster):
        super().__init__()
        self.kube = Kube(cluster, MANAGER)
        self.projector = Kube(cluster, FIELD_MANAGER)
        self.applied = {}
        self.children = {}
        self._korc = None
        self.ovn_cluster = None
        self.ovn_applied = None
        self.operators = operators.Operators(self, cluster)
        self.mariadb_batch = mariadb_batch.MariaDBBatch(self, Kube(cluster, mariadb_batch.MANAGER))
        self.ovn = ovn.OVNOperator(self, cluster)
        self.shell_pods = shell_pods.ShellPods(self, Kube(cluster, "lab-" + shell_pods.PLAYER),
                                               [path("v1", "pods", ovn.NAMESPACE)])
        # This operator, the children's and the ovn-operator act while their Deployments are Available.
        self.running = deployments.Operators(self.kube, self.log)
        Waker(cluster, [path(GV, "controlplanes"), path(ovn.GV, "ovnclusters"), deployments.DEPLOYMENTS]
              + [path(c.api_version, c.plural) for c in CHILD_KINDS] + mariadb_batch.urls() + self.shell_pods.urls,
              self.wake, loop.log)

    @staticmethod
    def controller_of(obj):
        return next((o for o in obj["metadata"].get("ownerReferences") or [] if o.get("controller")), None)

    @staticmethod
    def owned_by(obj, cp):
        return any(o.get("uid") == cp["metadata"]["uid"] for o in obj["metadata"].get("ownerReferences") or [])

    def korc_served(self):
        if self._korc is None:
            self._korc = self.kube.get(ServiceCatalog.KORC_API) is not None
        return self._korc

    def reconcile(self):
        planes = self.kube.list(path(GV, "controlplanes"))
        self.children = {}
        self._korc = None
        self.running.refresh()
        for child in CHILD_KINDS:
            for obj in self.kube.list(path(child.api_version, child.plural)):
                obj.setdefault("kind", child.kind)
                self.children[(child.kind, obj["metadata"]["namespace"], obj["metadata"]["name"])] = obj
        if self.running.runs(OPERATOR):
            self.ovn_cluster = self.reconcile_ovn_cluster(planes)
        else:
            self.ovn_cluster = self.kube.get(path(ovn.GV, "ovnclusters", ovn.NAMESPACE, ovn.NAME)) \
                if self.kube.get(ovn.API) is not None else None
        uids = set()
        for cp in planes:
            uids.add(cp["metadata"]["uid"])
            if self.running.runs(OPERATOR):
                self.reconcile_control_plane(cp)
        self.applied = {k: v for k, v in self.applied.items() if k[0] in uids}
        # The children's operators act on what this pass applied, in the same pass.
        self.operators.reconcile(self.children)
        batch_uids = self.mariadb_batch.reconcile()
        if self.running.runs(ovn.OPERATOR):
            self.ovn.reconcile(self.ovn_cluster)
        self.shell_pods.reconcile()
        ovn_uids = {self.ovn_cluster["metadata"]["uid"]} if self.ovn_cluster else set()
        self.prune(uids | ovn_uids | batch_uids | {o["metadata"]["uid"] for o in self.children.values()})

    def reconcile_ovn_cluster(self, planes):
        """Seed 003: the c5c3-operator creates the OVNCluster ovn-system/ovn, Neutron's SDN backend, once
        a ControlPlane enables Neutron and the ovn-operator's API is served. One per control-plane cluster,
        shared by its ControlPlanes; no owner (a namespaced owner cannot own across namespaces) and never
        deleted with a ControlPlane: the OVN databases hold every tenant's logical network."""
        neutron = COMPONENTS_BY_KEY["neutron"]
        if not any(not cp["metadata"].get("deletionTimestamp") and not neutron.disabled(neutron.section(cp))
                   for cp in planes):
            return None
        if self.kube.get(ovn.API) is None:
            return None
        url = path(ovn.GV, "ovnclusters", ovn.NAMESPACE, ovn.NAME)
        live = self.kube.get(url)
        desired = {"apiVersion": ovn.GV, "kind": "OVNCluster",
                   "metadata": {"name": ovn.NAME, "namespace": ovn.NAMESPACE,
                                "labels": {"app.kubernetes.io/managed-by": "c5c3-operator"}},
                   "spec": ovn.cluster_spec()}
        if live is None or self.ovn_applied is None or not _subset(desired["spec"], live.get("spec")):
            if self.kube.get(path("v1", "namespaces", name=ovn.NAMESPACE)) is None:
                return None  # the ovn-operator's chart makes its namespace
            live = self.projector.apply(url, desired)
            self.ovn_applied = True
            self.log("OVNCluster %s/%s applied" % (ovn.NAMESPACE, ovn.NAME))
        return live

    def reconcile_control_plane(self, cp):
        meta = cp["metadata"]
        if meta.get("deletionTimestamp") or loop.foreign(cp, MANAGER):
            return
        new = MANAGER not in loop.status_writers(cp)  # one whose status we wrote before was ours already
        if new and not self.after((meta["uid"], "seen"), self.delay("control_plane")):
            return
        gen = meta.get("generation")
        status = cp.get("status") or {}
        conditions = copy.deepcopy(status.get("conditions") or [])
        outcomes = {}
        for child in COMPONENTS:
            waiting = [k for k in WAITS_FOR[child.key] if outcomes[k].condition[0] != "True"]
            outcome = outcomes[child.key] = child.reconcile(self, cp, waiting)
            loop.set_condition(conditions, child.condition_type, *outcome.condition, observed_generation=gen)
        for ctype, label, keys in PHASES:
            waiting = ["%s (%s)" % (k, outcomes[k].detail or outcomes[k].condition[2]) for k in keys
                       if outcomes[k].condition[0] != "True"]
            if waiting:
                loop.set_condition(conditions, ctype, "False", "ServicesNotReady",
                                   "%s: waiting for %s" % (label, "; ".join(waiting)), gen)
            else:
                managed = [k for k in keys if outcomes[k].state] or ["nothing managed"]
                loop.set_condition(conditions, ctype, "True", "ServicesReady",
                                   "%s: %s ready" % (label, ", ".join(managed)), gen)
        sub = [c.condition_type for c in COMPONENTS] + [p[0] for p in PHASES]
        ready = all(any(c["type"] == t and c["status"] == "True" for c in conditions) for t in sub)
        if ready:
            loop.set_condition(conditions, "Ready", "True", "AllReady", "All sub-conditions are ready", gen)
        else:
            loop.set_condition(conditions, "Ready", "False", "NotAllReady",
                               "One or more sub-conditions are not ready", gen)
        order = [p[0] for p in PHASES] + [c.condition_type for c in COMPONENTS] + ["Ready"]
        conditions.sort(key=lambda c: order.index(c["type"]) if c["type"] in order else len(order))
        if ready:
            phase = "Ready"
        elif any(o.state == "Failed" for o in outcomes.values()):
            phase = "Failed"
        elif status.get("phase") in ("Ready", "Degraded"):
            phase = "Degraded"
        else:
            phase = "Provisioning"
        wanted = {"observedGeneration": gen, "phase": phase, "conditions": conditions}
        patch = {k: v for k, v in wanted.items() if status.get(k) != v}
        for field, values in (("services", {k: o.state for k, o in outcomes.items() if o.state}),
                              ("endpoints", {k: o.endpoint for k, o in outcomes.items() if o.endpoint})):
            have = status.get(field) or {}
            if values != have:  # a merge patch: keys that went away are set to null
                patch[field] = dict({k: None for k in have if k not in values}, **values) if values else None
        if patch and self.kube.patch(object_path(GV, "controlplanes", cp), cp, {"status": patch}, "status"):
            self.log("ControlPlane %s/%s: %s" % (meta["namespace"], meta["name"], phase))


def main():
    clusters = config.clusters()
    planes = [c for c in clusters if config.CONTROL_PLANE_GROUP in c.groups]
    if not planes:
        raise SystemExit("inventories/lab has no host in group %s" % config.CONTROL_PLANE_GROUP)
    C5C3Operator(planes[0]).run()
