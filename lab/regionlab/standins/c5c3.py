"""c5c3-operator stand-in: service CRs from ControlPlanes, and the ControlPlane's status.

Modelled on seed 003 ("C5C3 Operator": the ControlPlane creates the service CRs, deployment phases
1-7) and github.com/c5c3/cobaltcore operators/c5c3/internal/controller/reconcile_keystone.go
(projection under server-side apply, owner reference, the KeystoneReady condition and its
reasons) with internal/common/reconcile/status.go (the aggregate Ready). Minimal on purpose:
only the Keystone service is projected so far; a later service is one more Service entry in
SERVICES and its phase in PHASES.

For each ControlPlane (c5c3.io/v1alpha1) on the control-plane cluster:
- spec.services.keystone (or spec.openstack.keystone) present and not `enabled: false`: the
  Keystone CR `keystone` in the ControlPlane's namespace (as seed 003 names it; upstream names it
  <controlplane>-keystone), applied server-side as field manager lab-c5c3-operator with the
  ControlPlane as controller owner, with the spec seed 003 shows (replicas, image, database,
  cache, fernet, federation) -- without `bootstrap`, which the collection sets (field manager
  c5c3.cobaltcore). A Keystone CR of that name that someone else created is adopted unless
  another controller owns it.
- status: observedGeneration, conditions KeystoneReady (the Keystone CR's Ready mirrored),
  IdentityReady (deployment phase 2 of seed 003; names the unready child and its first unready
  condition), Ready (AllReady / NotAllReady); phase Provisioning|Ready|Degraded|Failed;
  services {keystone: <Ready|Provisioning|Failed>}; endpoints {keystone: <the Keystone's
  status.endpoint>}.

Left alone: ControlPlanes whose status another field manager writes, and every new ControlPlane
until the `control_plane` delay has passed since it was first seen (so a test playing the
operator writes its status first).
"""

import copy
import hashlib
import importlib.metadata
import json

from .. import config
from . import loop
from .client import ApiError, Kube, Waker, object_path, path

GV = "c5c3.io/v1alpha1"
MANAGER = "lab-c5c3-operator"
NAME = "c5c3-operator-standin"
ALLOW_KEYSTONE_DELETION = "c5c3.io/allow-keystone-deletion"


def _installed_keystone():
    try:
        return importlib.metadata.version("keystone")
    except importlib.metadata.PackageNotFoundError:
        return "28.0.0"


def _subset(want, have):
    """Every field of want has the same value in have (defaults the API server added may remain)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(_subset(v, have.get(k)) for k, v in want.items())
    return want == have


def _condition(obj, ctype):
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c.get("type") == ctype),
                None)


def _ready(child):
    """The child reports Ready=True for its current generation."""
    cond = _condition(child, "Ready")
    gen = child["metadata"].get("generation")
    return bool(cond and cond.get("status") == "True" and cond.get("observedGeneration", gen) == gen
                and (child.get("status") or {}).get("observedGeneration", gen) == gen)


def _first_unready(child):
    for cond in (child.get("status") or {}).get("conditions") or []:
        if cond.get("type") != "Ready" and cond.get("status") != "True":
            return "%s=%s %s: %s" % (cond["type"], cond.get("status"), cond.get("reason"), cond.get("message"))
    cond = _condition(child, "Ready")
    if cond is None:
        return "no status yet"
    return "Ready=%s %s" % (cond.get("status"), cond.get("reason"))


class Outcome:
    """What one service's projection found: its condition, state and endpoint."""

    def __init__(self, condition, state=None, endpoint=None, detail=None):
        self.condition = condition      # (status, reason, message)
        self.state = state              # for status.services; None: not managed
        self.endpoint = endpoint
        self.detail = detail            # why it is not ready, for the phase condition


class Service:
    """One service CR the c5c3-operator projects from the ControlPlane."""

    key = condition_type = api_version = kind = plural = child_name = None

    def section(self, cp):
        spec = cp.get("spec") or {}
        services = spec.get("services") or spec.get("openstack") or {}
        return services.get(self.key)

    def desired_spec(self, cp, section):
        raise NotImplementedError

    def reconcile(self, op, cp):
        meta = cp["metadata"]
        section = self.section(cp)
        child_path = path(self.api_version, self.plural, meta["namespace"], self.child_name)
        live = op.children.get((self.plural, meta["namespace"], self.child_name))
        if section is None or section.get("enabled") is False:
            message = "spec.services.%s is %s; no %s service is managed by this ControlPlane" % (
                self.key, "unset" if section is None else "disabled", self.kind)
            if live is not None and op.owned_by(live, cp):
                if (meta.get("annotations") or {}).get(ALLOW_KEYSTONE_DELETION) in ("true", "True", "1"):
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
        desired = {
            "apiVersion": self.api_version, "kind": self.kind,
            "metadata": {"name": self.child_name, "namespace": meta["namespace"], "ownerReferences": [{
                "apiVersion": GV, "kind": "ControlPlane", "name": meta["name"], "uid": meta["uid"],
                "controller": True, "blockOwnerDeletion": True}]},
            "spec": self.desired_spec(cp, section),
        }
        digest = hashlib.sha256(json.dumps(desired, sort_keys=True).encode()).hexdigest()
        if live is None or op.applied.get((meta["uid"], self.key)) != digest or not (
                owner and _subset(desired["spec"], live.get("spec"))):
            try:
                live = op.kube.apply(child_path, desired)
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
            op.log("ControlPlane %s/%s: %s %s applied"
                   % (meta["namespace"], meta["name"], self.kind, self.child_name))
        endpoint = (live.get("status") or {}).get("endpoint")
        if _ready(live):
            return Outcome(("True", "%sReady" % self.kind, "Projected %s CR is ready" % self.kind), "Ready", endpoint)
        detail = "%s %s: %s" % (self.kind, self.child_name, _first_unready(live))
        return Outcome(("False", "WaitingFor%s" % self.kind, '%s "%s" is not ready' % (self.kind, self.child_name)),
                       "Provisioning", endpoint, detail=detail)


class KeystoneService(Service):
    key, condition_type = "keystone", "KeystoneReady"
    api_version, kind, plural, child_name = "keystone.openstack.c5c3.io/v1alpha1", "Keystone", "keystones", "keystone"

    def desired_spec(self, cp, section):
        """The Keystone CR of seed 003, from the ControlPlane; no bootstrap (the collection sets it)."""
        memcached = ((cp.get("spec") or {}).get("infrastructure") or {}).get("memcached") or {}
        spec = {
            "image": section.get("image") or {"repository": "ghcr.io/c5c3/keystone", "tag": _installed_keystone()},
            "database": {"secretRef": {"name": "keystone-db-credentials"}, "database": "keystone"},
            "cache": {"backend": "dogpile.cache.pymemcache",
                      "servers": ["memcached-%d.memcached:11211" % i for i in range(memcached.get("replicas") or 3)]},
            "fernet": {"rotationSchedule": "0 0 * * 0", "maxActiveKeys": 3},
            "federation": {"enabled": False},
        }
        if section.get("replicas") is not None:
            spec["replicas"] = section["replicas"]
        return spec


SERVICES = [KeystoneService()]
# Seed 003's deployment phases, as far as the stand-in projects their services.
PHASES = [("IdentityReady", "Phase 2 (Identity)", ["keystone"])]


class C5C3Operator(loop.Controller):
    name = NAME

    def __init__(self, cluster):
        super().__init__()
        self.kube = Kube(cluster, MANAGER)
        self.applied = {}
        self.children = {}
        Waker(cluster, [path(GV, "controlplanes")] + [path(s.api_version, s.plural) for s in SERVICES],
              self.wake, loop.log)

    @staticmethod
    def controller_of(obj):
        return next((o for o in obj["metadata"].get("ownerReferences") or [] if o.get("controller")), None)

    @staticmethod
    def owned_by(obj, cp):
        return any(o.get("uid") == cp["metadata"]["uid"] for o in obj["metadata"].get("ownerReferences") or [])

    def reconcile(self):
        planes = self.kube.list(path(GV, "controlplanes"))
        self.children = {}
        for service in SERVICES:
            for child in self.kube.list(path(service.api_version, service.plural)):
                self.children[(service.plural, child["metadata"]["namespace"], child["metadata"]["name"])] = child
        uids = set()
        for cp in planes:
            uids.add(cp["metadata"]["uid"])
            self.reconcile_control_plane(cp)
        self.applied = {k: v for k, v in self.applied.items() if k[0] in uids}
        self.prune(uids)

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
        for service in SERVICES:
            outcome = outcomes[service.key] = service.reconcile(self, cp)
            loop.set_condition(conditions, service.condition_type, *outcome.condition, observed_generation=gen)
        for ctype, label, keys in PHASES:
            waiting = ["%s (%s)" % (k, outcomes[k].detail or outcomes[k].condition[2]) for k in keys
                       if outcomes[k].condition[0] != "True"]
            if waiting:
                loop.set_condition(conditions, ctype, "False", "ServicesNotReady",
                                   "%s: waiting for %s" % (label, "; ".join(waiting)), gen)
            else:
                loop.set_condition(conditions, ctype, "True", "ServicesReady",
                                   "%s: %s ready" % (label, ", ".join(keys)), gen)
        sub = [s.condition_type for s in SERVICES] + [p[0] for p in PHASES]
        ready = all(any(c["type"] == t and c["status"] == "True" for c in conditions) for t in sub)
        if ready:
            loop.set_condition(conditions, "Ready", "True", "AllReady", "All sub-conditions are ready", gen)
        else:
            loop.set_condition(conditions, "Ready", "False", "NotAllReady",
                               "One or more sub-conditions are not ready", gen)
        order = [s.condition_type for s in SERVICES] + [p[0] for p in PHASES] + ["Ready"]
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
