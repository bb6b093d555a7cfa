# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one table of readiness rules: when is a Kubernetes object ready, when has it failed for good.

Pure Python over object dicts (no Kubernetes client, no Ansible), so the wait
layer, the modules and the tests all share exactly these rules.

``evaluate(obj)`` looks the object's (group, kind) up in ``RULES`` and returns a
``Readiness``: ``ready``, ``terminal`` (waiting longer cannot help) and
``missing`` (what is still missing or what failed, human-readable).

Rules that hold for every kind:

* Generation: when ``status.observedGeneration`` is present, ready needs it to
  equal ``metadata.generation``; a kind known to report it that has none yet is
  not ready. A condition carrying its own ``observedGeneration`` (Flux, K-ORC,
  any ``metav1.Condition``) does not count when that is not the object's
  generation.
* A terminal verdict of a kind's rule counts only while the status is for the
  current generation (or carries no observedGeneration): a failure reported for
  an older spec may be about to be replaced.
* An object with ``metadata.deletionTimestamp`` is being deleted: never ready,
  terminal.
* An object with no status at all is not ready, unless its kind has none
  (``statusless`` in the table).
* Kinds not in the table: observedGeneration current (when reported) and, when
  the object has conditions, ``Ready=True``; ``Stalled=True`` (kstatus) is
  terminal.

``covered_kinds()`` lists the table as sorted ``group/Kind`` strings and
``rules_table()`` gives every rule's ready/terminal text and upstream source;
docs/readiness.md is written from it.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import time

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps

MESSAGE_LIMIT = 400

_JMESPATH_CACHE = {}


class Readiness(object):
    """The verdict on one object."""

    __slots__ = ("ready", "terminal", "missing")

    def __init__(self, ready, terminal=False, missing=None):
        self.ready = bool(ready)
        self.terminal = bool(terminal)
        self.missing = list(missing or [])

    def as_dict(self):
        return {"ready": self.ready, "terminal": self.terminal, "missing": list(self.missing)}

    def __eq__(self, other):
        return isinstance(other, Readiness) and self.as_dict() == other.as_dict()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((self.ready, self.terminal, tuple(self.missing)))

    def __repr__(self):
        return "Readiness(ready=%r, terminal=%r, missing=%r)" % (self.ready, self.terminal, self.missing)


# ---------------------------------------------------------------------------
# Small readers shared by every rule.

def _get(data, *path):
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _short(text):
    text = " ".join(str(text).split())
    if len(text) > MESSAGE_LIMIT:
        return text[:MESSAGE_LIMIT - 3] + "..."
    return text


def _because(cond):
    """' (reason R: message)' for a condition (or any dict with reason/message)."""
    reason = cond.get("reason")
    message = cond.get("message")
    if reason and message:
        return " (reason %s: %s)" % (reason, _short(message))
    if reason:
        return " (reason %s)" % reason
    if message:
        return " (%s)" % _short(message)
    return ""


def _condition_text(cond, want="True"):
    text = "condition %s is %s" % (cond.get("type"), cond.get("status"))
    if want != "True":
        text += ", want %s" % want
    return text + _because(cond)


def _flag(value, obj):
    return value(obj) if callable(value) else value


class _Evaluation(object):
    """One object under evaluation: readers for it and the list of what is missing."""

    def __init__(self, obj, lookup=None):
        self.obj = obj
        self.lookup = lookup
        self.missing = []
        self.failures = []

    @property
    def status(self):
        status = self.obj.get("status")
        return status if isinstance(status, dict) else {}

    @property
    def spec(self):
        spec = self.obj.get("spec")
        return spec if isinstance(spec, dict) else {}

    @property
    def generation(self):
        return _int(_get(self.obj, "metadata", "generation"))

    def need(self, message):
        self.missing.append(message)

    def fail(self, message):
        self.missing.append(message)
        self.failures.append(message)

    def conditions(self):
        conditions = self.status.get("conditions")
        if not isinstance(conditions, list):
            return []
        return [cond for cond in conditions if isinstance(cond, dict)]

    def stale(self, cond):
        """The condition carries an observedGeneration that is not the object's generation."""
        observed = _int(cond.get("observedGeneration"))
        generation = self.generation
        return observed is not None and generation is not None and observed != generation

    def condition(self, ctype):
        """The condition of this type if it is reported for the current generation, else None."""
        for cond in self.conditions():
            if cond.get("type") == ctype:
                return None if self.stale(cond) else cond
        return None

    def want_condition(self, ctype, want="True", reason=None):
        """Record what is missing unless condition ctype has status want (and reason); True if it has."""
        found = None
        for cond in self.conditions():
            if cond.get("type") == ctype:
                found = cond
                break
        if found is None:
            self.need("condition %s is not reported yet" % ctype)
            return False
        if self.stale(found):
            self.need("condition %s (%s) is for generation %s, metadata.generation is %s"
                      % (ctype, found.get("status"), found.get("observedGeneration"), self.generation))
            return False
        if found.get("status") != want:
            self.need(_condition_text(found, want))
            return False
        if reason is not None and found.get("reason") != reason:
            self.need("condition %s has reason %s, want %s" % (ctype, found.get("reason"), reason))
            return False
        return True

    def fail_if_true(self, *ctypes):
        """A current condition of one of these types with status True is terminal."""
        for ctype in ctypes:
            cond = self.condition(ctype)
            if cond is not None and cond.get("status") == "True":
                self.fail(_condition_text(cond))
                return True
        return False


# ---------------------------------------------------------------------------
# The generation check and rule factories.

def _check_generation(ev, required):
    observed = _int(ev.status.get("observedGeneration"))
    if observed is not None and observed < 0:
        observed = None  # Flux and Valkey CRDs default it to -1: nothing observed yet
    generation = ev.generation
    if observed is None:
        if required:
            ev.need("status.observedGeneration is not reported yet")
        return
    if generation is None or observed == generation:
        return
    relation = "<" if observed < generation else ">"
    ev.need("status.observedGeneration %d %s metadata.generation %d" % (observed, relation, generation))


def _status_is_stale(ev):
    observed = _int(ev.status.get("observedGeneration"))
    generation = ev.generation
    return observed is not None and generation is not None and observed != generation


def _status_message(ev):
    message = ev.status.get("message")
    return ["status.message: %s" % _short(message)] if message else []


def _condition_details(*ctypes):
    """Details for a non-ready state: the named conditions that are not True."""
    def details(ev):
        found = []
        for ctype in ctypes:
            cond = ev.condition(ctype)
            if cond is not None and cond.get("status") != "True":
                found.append(_condition_text(cond))
        return found
    return details


def _false_conditions(ev):
    """Details for a non-ready state: every current condition that is False."""
    return [_condition_text(cond) for cond in ev.conditions()
            if cond.get("status") == "False" and not ev.stale(cond)]


def _field_rule(path, ready, terminal=(), details=_status_message):
    """A rule on one status field: ready when it has one of the ready values, terminal for the others given."""
    name = ".".join(path)
    want = " or ".join(ready)

    def rule(ev):
        value = _get(ev.obj, *path)
        if value in ready:
            return
        if value in terminal:
            ev.fail("%s is %s" % (name, value))
        elif value in (None, ""):
            ev.need("%s is not reported yet, want %s" % (name, want))
        else:
            ev.need("%s is %s, want %s" % (name, value, want))
        for detail in details(ev):
            if value in terminal:
                ev.fail(detail)
            else:
                ev.need(detail)
    return rule


def _conditions_rule(*ctypes):
    """A rule: each named condition is True."""
    def rule(ev):
        for ctype in ctypes:
            ev.want_condition(ctype)
    return rule


def _mariadb_batch(ev):
    """mariadb-operator's Backup and Restore (pkg/condition/complete.go): their one condition, Complete, is True with
    reason JobComplete once the Job succeeded - and True as well, with reason JobFailed, once it failed for good. A
    scheduled Backup (a CronJob) is there once the condition is reported; a failed run says message Failed."""
    cond = ev.condition("Complete")
    if cond is not None and cond.get("reason") == "JobFailed":
        ev.fail(_condition_text(cond))
        return
    if ev.spec.get("schedule"):
        if cond is None:
            ev.need("condition Complete is not reported yet")
        elif cond.get("message") == "Failed":
            ev.need(_condition_text(cond, "True"))
        return
    ev.want_condition("Complete", "True", reason="JobComplete")


def _generic(ev):
    """Kinds not in the table: Ready=True when the object has conditions; Stalled=True is terminal."""
    if ev.fail_if_true("Stalled"):
        return
    if ev.conditions():
        ev.want_condition("Ready")


# ---------------------------------------------------------------------------
# Gardener.

SHOOT_CONDITION_TYPES = ("APIServerAvailable", "ControlPlaneHealthy", "ObservabilityComponentsHealthy",
                         "EveryNodeReady", "SystemComponentsHealthy")


def last_operation_text(last):
    progress = last.get("progress")
    text = "lastOperation %s %s" % (last.get("type"), last.get("state"))
    if progress is not None:
        text += " %s%%" % progress
    if last.get("description"):
        text += ": %s" % _short(last["description"])
    return text


# gardener-scheduler binds a Shoot to a Seed within seconds when one fits; gardenlet and the care
# controller skip a Shoot without one, so it never gets a status. Past this age it is reported as failed.
SCHEDULING_GRACE = 120


def _age(ev):
    return timestamps.seconds_since(_get(ev.obj, "metadata", "creationTimestamp"), time.time())


def _shoot_unscheduled(ev):
    """A Shoot no seed was assigned to: nothing in Gardener will ever write its status."""
    if _get(ev.obj, "spec", "seedName") or ev.status.get("seedName"):
        return False
    age = _age(ev)
    message = ("the Shoot has no seed (spec.seedName is empty%s): gardener-scheduler found none that fits, and "
               "gardenlet reconciles only scheduled Shoots" % (", %ds after its creation" % age if age is not None else ""))
    if age is not None and age >= SCHEDULING_GRACE:
        ev.fail(message)
    else:
        ev.need(message)
    return True


def _shoot(ev):
    conditions = ev.conditions()
    last = ev.status.get("lastOperation")
    last = last if isinstance(last, dict) else None
    if not conditions and last is None:
        ev.need("no conditions and no lastOperation reported yet")
        return
    hibernated = _get(ev.spec, "hibernation", "enabled") is True
    for cond in conditions:
        if cond.get("status") == "True":
            continue
        # Hibernated: only the Shoot's own condition types must be True (seed conditions may lag).
        if hibernated and cond.get("type") not in SHOOT_CONDITION_TYPES:
            continue
        ev.need(_condition_text(cond))
    if last is not None:
        op_type, state = last.get("type"), last.get("state")
        if state == "Failed":
            ev.fail(last_operation_text(last))
        elif op_type in ("Create", "Reconcile", "Restore"):
            if state != "Succeeded":
                ev.need(last_operation_text(last))
        elif op_type in ("Migrate", "LiveMigrate"):
            ev.need(last_operation_text(last) + " (migration not finished)")
        elif op_type == "Delete":
            ev.need(last_operation_text(last) + " (the Shoot is being deleted)")
    if ev.missing:
        report = ev.fail if ev.failures else ev.need
        for error in ev.status.get("lastErrors") or []:
            if isinstance(error, dict) and error.get("description"):
                codes = ", ".join(error.get("codes") or [])
                report("lastErrors: %s%s" % (_short(error["description"]), " (codes %s)" % codes if codes else ""))


# ---------------------------------------------------------------------------
# IronCore metal-operator.

# bmc_controller.go updateReadyConditionOnBMCFailure: a 401 from the BMC. The state stays what it
# was (an Enabled BMC whose password was rotated keeps Enabled), so Ready decides.
BMC_AUTH_FAILED = "AuthenticationFailed"


def _bmc(ev):
    state = ev.status.get("state")
    ready = ev.condition("Ready")
    if ready is not None and ready.get("status") == "False" and ready.get("reason") == BMC_AUTH_FAILED:
        # Retried only with backoff, and new credentials are a new BMCSecret: waiting cannot help.
        ev.fail(_condition_text(ready))
        return
    if state != "Enabled":
        ev.need("status.state is %s, want Enabled" % state if state else "status.state is not reported yet, want Enabled")
    ev.want_condition("Ready")


def _server_claim(ev):
    phase = ev.status.get("phase")
    if phase != "Bound":
        ev.need("status.phase is %s, want Bound" % phase if phase else "status.phase is not reported yet, want Bound")
        return
    name = _get(ev.spec, "serverRef", "name")
    if not name:
        ev.need("spec.serverRef is not set yet")
        return
    if ev.lookup is None:
        ev.need("bound Server %s not checked (no lookup given)" % name)
        return
    server = ev.lookup(ev.obj.get("apiVersion"), "Server", name, None)
    if not isinstance(server, dict):
        ev.need("bound Server %s not found" % name)
        return
    state = _get(server, "status", "state")
    if state == "Error":
        ev.fail("bound Server %s: status.state is Error" % name)
    elif state != "Reserved":
        ev.need("bound Server %s: status.state is %s, want Reserved" % (name, state or "not reported yet"))
    claim = _get(server, "spec", "serverClaimRef") or {}
    mine = (_get(ev.obj, "metadata", "namespace"), _get(ev.obj, "metadata", "name"))
    if claim.get("name") and (claim.get("namespace"), claim.get("name")) != mine:
        ev.need("bound Server %s: spec.serverClaimRef is %s/%s" % (name, claim.get("namespace"), claim.get("name")))
    if ev.spec.get("power") == "On":
        power = _get(server, "status", "powerState")
        if power != "On":
            ev.need("bound Server %s: status.powerState is %s, want On" % (name, power or "not reported yet"))


# ---------------------------------------------------------------------------
# Rook.

def _ceph_cluster(ev):
    phase = ev.status.get("phase")
    state = ev.status.get("state")
    if phase:
        if phase not in ("Ready", "Connected"):
            ev.need("status.phase is %s, want Ready (Connected for an external cluster)" % phase)
    elif state not in ("Created", "Connected"):
        ev.need("status.state is %s, want Created" % (state or "not reported yet"))
    health = _get(ev.status, "ceph", "health")
    if not health:
        ev.need("status.ceph.health is not reported yet")
    elif health == "HEALTH_ERR":
        details = _get(ev.status, "ceph", "details") or {}
        checks = ", ".join("%s: %s" % (name, _short(check["message"]))
                           if isinstance(check, dict) and check.get("message") else name
                           for name, check in sorted(details.items())) if isinstance(details, dict) else ""
        ev.need("status.ceph.health is HEALTH_ERR%s" % (" (%s)" % checks if checks else ""))
    if ev.missing:
        for detail in _status_message(ev):
            ev.need(detail)


_ceph_object_store_phase = _field_rule(("status", "phase"), ("Ready", "Connected"), ("Failure",))


def _ceph_object_store(ev):
    _ceph_object_store_phase(ev)
    # A Failure written by the RGW bucket health check is retried every interval: not terminal.
    if ev.failures and _get(ev.status, "bucketStatus", "health") == "Failure":
        details = _get(ev.status, "bucketStatus", "details")
        ev.failures = []
        if details:
            ev.need("status.bucketStatus.details: %s" % _short(details))


# ---------------------------------------------------------------------------
# K-ORC.

KORC_TERMINAL_REASONS = ("InvalidConfiguration", "UnrecoverableError")
# K-ORC's progress message while an import filter matches nothing (it polls again every 15 s).
KORC_IMPORT_NOT_FOUND = "Waiting for OpenStack resource to be created externally"


def _korc_import_filter(ev):
    import json
    query = (ev.spec.get("import") or {}).get("filter")
    return json.dumps(query, sort_keys=True) if query is not None else None


def _korc(ev):
    available = ev.want_condition("Available")
    progressing = ev.condition("Progressing")
    if progressing is None:
        if available:
            ev.need("condition Progressing is not reported yet")
        return
    query = _korc_import_filter(ev)
    if progressing.get("status") == "True" and query and progressing.get("message") == KORC_IMPORT_NOT_FOUND:
        # Not terminal: K-ORC keeps looking, and the resource may still be created.
        ev.need("import filter %s matches nothing in OpenStack (K-ORC: %s)" % (query, _condition_text(progressing)))
    elif progressing.get("status") == "True":
        ev.need(_condition_text(progressing))
    elif progressing.get("status") == "False" and not available:
        ev.fail(_condition_text(progressing))
    elif progressing.get("reason") in KORC_TERMINAL_REASONS:
        ev.fail(_condition_text(progressing))
    # A User's password changes when its passwordRef names another Secret (K-ORC v2.6.0 user actuator,
    # reconcilePassword): applied once status.resource.appliedPasswordRef names it.
    password_ref = (ev.spec.get("resource") or {}).get("passwordRef") if ev.obj.get("kind") == "User" else None
    applied = (ev.status.get("resource") or {}).get("appliedPasswordRef")
    if password_ref and applied != password_ref:
        ev.need("the password of Secret %s is not applied yet (status.resource.appliedPasswordRef: %s)"
                % (password_ref, applied))


# ---------------------------------------------------------------------------
# Flux.

def _is_oci_helm_repository(obj):
    return _get(obj, "spec", "type") == "oci"


def _not_oci_helm_repository(obj):
    return not _is_oci_helm_repository(obj)


def _flux(ev):
    ev.want_condition("Ready")
    reconciling = ev.condition("Reconciling")
    if reconciling is not None and reconciling.get("status") == "True":
        ev.need(_condition_text(reconciling))
    ev.fail_if_true("Stalled")
    if ev.missing and not ev.failures and ev.spec.get("suspend") is True:
        ev.fail("spec.suspend is true: reconciliation is suspended")


def _helm_repository(ev):
    if _is_oci_helm_repository(ev.obj):
        return  # type oci: a static object, source-controller writes no status
    _flux(ev)


# ---------------------------------------------------------------------------
# Infrastructure operators.

def _rabbitmq_cluster(ev):
    ev.want_condition("AllReplicasReady")
    ev.want_condition("ClusterAvailable")
    reconciled = ev.condition("ReconcileSuccess")
    if reconciled is not None and reconciled.get("status") == "False":
        ev.need(_condition_text(reconciled))


def _memcached(ev):
    ev.want_condition("Available")
    ev.want_condition("Progressing", "False")
    ev.want_condition("Degraded", "False")


# ---------------------------------------------------------------------------
# Kubernetes built-in kinds (the rollout rules are kubectl rollout status').

def _replicas(ev):
    replicas = _int(ev.spec.get("replicas"))
    return 1 if replicas is None else replicas


def _count(ev, name):
    return _int(ev.status.get(name)) or 0


def _deployment(ev):
    progressing = ev.condition("Progressing")
    if progressing is not None and progressing.get("reason") == "ProgressDeadlineExceeded":
        ev.fail(_condition_text(progressing))
        return
    replicas, updated = _replicas(ev), _count(ev, "updatedReplicas")
    total, available = _count(ev, "replicas"), _count(ev, "availableReplicas")
    if updated < replicas:
        ev.need("rollout: %d of %d new replicas updated" % (updated, replicas))
    elif total > updated:
        ev.need("rollout: %d old replicas pending termination" % (total - updated))
    elif available < updated:
        ev.need("rollout: %d of %d updated replicas available" % (available, updated))


def _stateful_set(ev):
    replicas, ready = _replicas(ev), _count(ev, "readyReplicas")
    if ready < replicas:
        ev.need("rollout: %d of %d pods ready" % (ready, replicas))
        return
    strategy = _get(ev.spec, "updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return  # OnDelete: pods are replaced by hand, there is no rollout to wait for
    partition = _int(_get(strategy, "rollingUpdate", "partition")) or 0
    updated = _count(ev, "updatedReplicas")
    if partition > 0:
        if updated < replicas - partition:
            ev.need("partitioned rollout: %d of %d new pods updated" % (updated, replicas - partition))
        return
    if ev.status.get("updateRevision") != ev.status.get("currentRevision"):
        ev.need("rolling update: %d of %d pods at revision %s"
                % (updated, replicas, ev.status.get("updateRevision")))


def _daemon_set(ev):
    desired = _count(ev, "desiredNumberScheduled")
    updated, available = _count(ev, "updatedNumberScheduled"), _count(ev, "numberAvailable")
    rolling = (_get(ev.spec, "updateStrategy", "type") or "RollingUpdate") == "RollingUpdate"
    if rolling and updated < desired:
        ev.need("rollout: %d of %d new pods updated" % (updated, desired))
    elif available < desired:
        ev.need("rollout: %d of %d pods available" % (available, desired))


def _job(ev):
    complete = ev.condition("Complete")
    if complete is not None and complete.get("status") == "True":
        return
    if ev.fail_if_true("Failed", "FailureTarget"):
        return
    ev.need("condition Complete is not True yet (%d active, %d succeeded, %d failed)"
            % (_count(ev, "active"), _count(ev, "succeeded"), _count(ev, "failed")))
    if ev.spec.get("suspend") is True:
        ev.need("spec.suspend is true")


def _pod(ev):
    phase = ev.status.get("phase")
    if phase == "Succeeded":
        return
    if phase == "Failed":
        ev.fail("status.phase is Failed" + _because(ev.status))
    elif phase == "Running":
        ev.want_condition("Ready")
    else:
        ev.need("status.phase is %s, want Running (and Ready) or Succeeded" % (phase or "not reported yet"))


def _custom_resource_definition(ev):
    names = ev.condition("NamesAccepted")
    if names is not None and names.get("status") == "False":
        ev.fail(_condition_text(names))
    else:
        ev.want_condition("NamesAccepted")
    ev.want_condition("Established")


def _service(ev):
    if ev.spec.get("type") != "LoadBalancer":
        return
    if not _get(ev.status, "loadBalancer", "ingress"):
        ev.need("status.loadBalancer.ingress is not assigned yet")


# ---------------------------------------------------------------------------
# The table.

class Rule(object):
    """One kind's readiness rule.

    check: function(evaluation) recording what is missing (need) or failed (fail); None: existing is enough.
    observed_generation: the kind reports status.observedGeneration (bool or function(obj)).
    statusless: the kind has no status; existing is enough for the check to run (bool or function(obj)).
    ready/terminal/source: the rule in words and where upstream defines it (docs/readiness.md).
    events: upstream puts its error into the object's Warning events only (not into status), so a
    failed or timed-out wait reports the latest one.
    deletion_blocked: function(obj) -> [why upstream holds the deleted object], for waits until it is gone.
    """

    __slots__ = ("check", "ready", "terminal", "source", "observed_generation", "statusless", "events", "no_status",
                 "deletion_blocked")

    def __init__(self, check, ready, terminal, source, observed_generation=False, statusless=False, events=False,
                 no_status=None, deletion_blocked=None):
        self.check = check
        self.deletion_blocked = deletion_blocked
        self.no_status = no_status
        self.ready = ready
        self.terminal = terminal
        self.source = source
        self.observed_generation = observed_generation
        self.statusless = statusless
        self.events = events


_METAL = "ironcore-dev/metal-operator api/v1alpha1/"
_ROOK = "rook/rook pkg/apis/ceph.rook.io/v1/types.go; "
_ROOK_FAILURE = "phase Failure (status for the current generation)"
# Rook's conditions that hold a deleted object (reporting.go, util/dependents): dependents, a non-empty pool or RADOS
# namespace.
_ROOK_BLOCKING = ("DeletionIsBlocked", "PoolDeletionIsBlocked", "RadosNamespaceDeletionIsBlocked")


def _rook_deletion_blocked(obj):
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    return [c.get("message") or c.get("reason") or c["type"] for c in conditions
            if isinstance(c, dict) and c.get("type") in _ROOK_BLOCKING and c.get("status") == "True"]


_FLUX_READY = "Ready=True and not Reconciling, condition and status observedGeneration current"
_FLUX_TERMINAL = "Stalled=True; not ready with spec.suspend true"
_NONE = "none"
_EXISTS = "exists (the kind has no status)"

RULES = {
    # Gardener
    ("core.gardener.cloud", "Shoot"): Rule(
        _shoot,
        "observedGeneration current; every condition True (when hibernated: the Shoot's own types); "
        "lastOperation Create/Reconcile/Restore Succeeded, not Migrate/Delete",
        "lastOperation.state Failed (Error is retried by Gardener: lastErrors are reported); no seed assigned "
        "(no spec.seedName nor status) %ds after creation (the scheduler's last Warning event is reported)"
        % SCHEDULING_GRACE,
        "gardener/gardener test/utils/shoots/operation/operation.go ReconciliationSuccessful; "
        "pkg/scheduler/controller/shoot/reconciler.go",
        observed_generation=True, events=True, no_status=_shoot_unscheduled),
    # IronCore metal-operator
    ("metal.ironcore.dev", "BMC"): Rule(
        _bmc,
        "status.state Enabled and condition Ready True (metal-operator keeps the state on a failed login)",
        "condition Ready False with reason AuthenticationFailed (the BMC refuses the credentials); "
        "Error/Pending mirror the BMC and are retried",
        _METAL + "bmc_types.go; internal/controller/bmc_controller.go"),
    ("metal.ironcore.dev", "BMCSecret"): Rule(
        None, _EXISTS, _NONE, _METAL + "bmcsecret_types.go", statusless=True),
    ("metal.ironcore.dev", "Server"): Rule(
        _field_rule(("status", "state"), ("Available", "Reserved"), ("Error",)),
        "status.state Available or Reserved", "status.state Error", _METAL + "server_types.go"),
    ("metal.ironcore.dev", "ServerClaim"): Rule(
        _server_claim,
        "status.phase Bound; the Server in spec.serverRef is Reserved, claimed by this claim, "
        "and powerState On when spec.power is On",
        "the bound Server's state is Error", _METAL + "serverclaim_types.go, server_types.go"),
    ("metal.ironcore.dev", "ServerBootConfiguration"): Rule(
        _field_rule(("status", "state"), ("Ready",), ("Error",), details=_false_conditions),
        "status.state Ready", "status.state Error (False conditions reported)",
        _METAL + "serverbootconfiguration_types.go; ironcore-dev/boot-operator"),
    # Rook
    ("ceph.rook.io", "CephCluster"): Rule(
        _ceph_cluster,
        "observedGeneration current; phase Ready (Connected when external), or state Created; "
        "status.ceph.health reported and not HEALTH_ERR",
        "none (the operator retries failed orchestrations)",
        _ROOK + "ClusterStatus, ClusterState, ConditionType", observed_generation=True,
        deletion_blocked=_rook_deletion_blocked),
    ("ceph.rook.io", "CephBlockPool"): Rule(
        _field_rule(("status", "phase"), ("Ready",), ("Failure",)),
        "observedGeneration current; phase Ready", _ROOK_FAILURE,
        _ROOK + "pkg/operator/ceph/pool/controller.go", observed_generation=True,
        deletion_blocked=_rook_deletion_blocked, events=True),
    ("ceph.rook.io", "CephClient"): Rule(
        _field_rule(("status", "phase"), ("Ready",), ("Failure",)),
        "observedGeneration current; phase Ready", _ROOK_FAILURE,
        _ROOK + "pkg/operator/ceph/client/controller.go", observed_generation=True,
        deletion_blocked=_rook_deletion_blocked, events=True),
    ("ceph.rook.io", "CephFilesystem"): Rule(
        _field_rule(("status", "phase"), ("Ready",), ("Failure",)),
        "observedGeneration current; phase Ready", _ROOK_FAILURE,
        _ROOK + "pkg/operator/ceph/file/controller.go", observed_generation=True,
        deletion_blocked=_rook_deletion_blocked, events=True),
    ("ceph.rook.io", "CephObjectStore"): Rule(
        _ceph_object_store,
        "observedGeneration current; phase Ready (Connected from older RGW health checks)",
        _ROOK_FAILURE + ", unless written by the RGW bucket health check (bucketStatus.health Failure)",
        _ROOK + "pkg/operator/ceph/object/status.go, health.go", observed_generation=True,
        deletion_blocked=_rook_deletion_blocked, events=True),
    ("ceph.rook.io", "CephObjectStoreUser"): Rule(
        _field_rule(("status", "phase"), ("Ready",)),
        "observedGeneration current; phase Ready",
        "none (ReconcileFailed is also written while the object store is not ready yet, and retried)",
        _ROOK + "pkg/operator/ceph/object/user/controller.go", observed_generation=True,
        deletion_blocked=_rook_deletion_blocked, events=True),
    ("ceph.rook.io", "CephRBDMirror"): Rule(
        _field_rule(("status", "phase"), ("Ready",), ("Failed",)),
        "observedGeneration current; phase Ready", "phase Failed (status for the current generation)",
        _ROOK + "pkg/operator/ceph/cluster/rbd/controller.go", observed_generation=True,
        deletion_blocked=_rook_deletion_blocked),
    # K-ORC
    ("openstack.k-orc.cloud", "*"): Rule(
        _korc,
        "Available=True and Progressing=False, both for the current generation; a User's "
        "status.resource.appliedPasswordRef is its spec.resource.passwordRef",
        "Progressing=False while Available is not True, or Progressing reason "
        "InvalidConfiguration/UnrecoverableError",
        "k-orc/openstack-resource-controller api/v1alpha1/conditions.go (IsConditionReasonTerminal); "
        "internal/controllers/user/actuator.go (reconcilePassword)"),
    # Flux
    ("source.toolkit.fluxcd.io", "HelmRepository"): Rule(
        _helm_repository, _FLUX_READY + "; type oci: exists (no status)", _FLUX_TERMINAL,
        "fluxcd/source-controller docs/spec/v1/helmrepositories.md",
        observed_generation=_not_oci_helm_repository, statusless=_is_oci_helm_repository),
    ("source.toolkit.fluxcd.io", "GitRepository"): Rule(
        _flux, _FLUX_READY, _FLUX_TERMINAL, "fluxcd/source-controller docs/spec/v1/gitrepositories.md",
        observed_generation=True),
    ("source.toolkit.fluxcd.io", "HelmChart"): Rule(
        _flux, _FLUX_READY, _FLUX_TERMINAL, "fluxcd/source-controller docs/spec/v1/helmcharts.md",
        observed_generation=True),
    ("source.toolkit.fluxcd.io", "OCIRepository"): Rule(
        _flux, _FLUX_READY, _FLUX_TERMINAL, "fluxcd/source-controller docs/spec/v1/ocirepositories.md",
        observed_generation=True),
    ("helm.toolkit.fluxcd.io", "HelmRelease"): Rule(
        _flux, _FLUX_READY, _FLUX_TERMINAL, "fluxcd/helm-controller docs/spec/v2/helmreleases.md (Conditions)",
        observed_generation=True),
    ("kustomize.toolkit.fluxcd.io", "Kustomization"): Rule(
        _flux, _FLUX_READY, _FLUX_TERMINAL, "fluxcd/kustomize-controller docs/spec/v1/kustomizations.md",
        observed_generation=True),
    # mariadb-operator
    ("k8s.mariadb.com", "MariaDB"): Rule(
        _conditions_rule("Ready"), "Ready=True", _NONE, "mariadb-operator/mariadb-operator api/v1alpha1"),
    ("k8s.mariadb.com", "Database"): Rule(
        _conditions_rule("Ready"), "Ready=True", _NONE, "mariadb-operator/mariadb-operator api/v1alpha1"),
    ("k8s.mariadb.com", "User"): Rule(
        _conditions_rule("Ready"), "Ready=True", _NONE, "mariadb-operator/mariadb-operator api/v1alpha1"),
    ("k8s.mariadb.com", "Grant"): Rule(
        _conditions_rule("Ready"), "Ready=True", _NONE, "mariadb-operator/mariadb-operator api/v1alpha1"),
    ("k8s.mariadb.com", "Backup"): Rule(
        _mariadb_batch, "Complete=True with reason JobComplete; scheduled: condition Complete reported, not Failed",
        "Complete with reason JobFailed", "mariadb-operator/mariadb-operator pkg/condition/complete.go"),
    ("k8s.mariadb.com", "Restore"): Rule(
        _mariadb_batch, "Complete=True with reason JobComplete", "Complete with reason JobFailed",
        "mariadb-operator/mariadb-operator pkg/condition/complete.go"),
    # RabbitMQ
    ("rabbitmq.com", "RabbitmqCluster"): Rule(
        _rabbitmq_cluster,
        "observedGeneration current; AllReplicasReady=True, ClusterAvailable=True, ReconcileSuccess not False",
        "none (ReconcileSuccess=False is retried)",
        "rabbitmq/cluster-operator internal/status/*.go, api/v1beta1/rabbitmqcluster_types.go",
        observed_generation=True),
    ("rabbitmq.com", "User"): Rule(
        _conditions_rule("Ready"), "observedGeneration current; Ready=True", _NONE,
        "rabbitmq/messaging-topology-operator api/v1beta1/user_types.go", observed_generation=True),
    ("rabbitmq.com", "Vhost"): Rule(
        _conditions_rule("Ready"), "observedGeneration current; Ready=True", _NONE,
        "rabbitmq/messaging-topology-operator api/v1beta1/vhost_types.go", observed_generation=True),
    ("rabbitmq.com", "Permission"): Rule(
        _conditions_rule("Ready"), "observedGeneration current; Ready=True", _NONE,
        "rabbitmq/messaging-topology-operator api/v1beta1/permission_types.go", observed_generation=True),
    # SAP valkey-operator (component-operator-runtime status)
    ("cache.cs.sap.com", "Valkey"): Rule(
        _field_rule(("status", "state"), ("Ready",), details=_condition_details("Ready")),
        "observedGeneration current; status.state Ready",
        "none (Error is retried by the runtime; condition Ready reported)",
        "SAP/valkey-operator; SAP/component-operator-runtime pkg/component/types.go (State)",
        observed_generation=True),
    # c5c3
    ("memcached.c5c3.io", "Memcached"): Rule(
        _memcached,
        "observedGeneration current; Available=True, Progressing=False, Degraded=False (no Ready condition)",
        _NONE, "C5C3/memcached-operator internal/controller/status.go", observed_generation=True),
    ("keystone.openstack.c5c3.io", "Keystone"): Rule(
        _conditions_rule("Ready"), "Ready=True (observedGeneration current where reported)", _NONE,
        "C5C3/forge operators/keystone"),
    ("c5c3.io", "*"): Rule(
        _conditions_rule("Ready"), "Ready=True (observedGeneration current where reported)", _NONE,
        "C5C3/forge operators/c5c3 api/v1alpha1/controlplane_types.go"),
    ("*.c5c3.io", "*"): Rule(
        _conditions_rule("Ready"), "Ready=True (observedGeneration current where reported)", _NONE,
        "C5C3/forge operators/ (one per service)"),
    # openstack-hypervisor-operator (no status.observedGeneration; its conditions carry none either)
    ("kvm.cloud.sap", "Hypervisor"): Rule(
        _conditions_rule("Ready"),
        "Ready=True (reason Ready: onboarding Succeeded, no maintenance, not terminating or offboarded)",
        "none (onboarding, maintenance and eviction are waited for; the Ready reason and message are reported)",
        "cobaltcore-dev/openstack-hypervisor-operator internal/controller/ready/controller.go "
        "(ComputeReadyCondition), api/v1/hypervisor_types.go"),
    # Kubernetes
    ("apps", "Deployment"): Rule(
        _deployment,
        "observedGeneration current; updatedReplicas = spec.replicas, no old replicas, "
        "availableReplicas = updatedReplicas",
        "condition Progressing reason ProgressDeadlineExceeded",
        "kubernetes/kubectl pkg/polymorphichelpers/rollout_status.go", observed_generation=True),
    ("apps", "StatefulSet"): Rule(
        _stateful_set,
        "observedGeneration current; readyReplicas = spec.replicas; RollingUpdate: updateRevision = "
        "currentRevision (with a partition: updatedReplicas >= replicas - partition)",
        _NONE, "kubernetes/kubectl pkg/polymorphichelpers/rollout_status.go", observed_generation=True),
    ("apps", "DaemonSet"): Rule(
        _daemon_set,
        "observedGeneration current; updatedNumberScheduled and numberAvailable = desiredNumberScheduled",
        _NONE, "kubernetes/kubectl pkg/polymorphichelpers/rollout_status.go", observed_generation=True),
    ("batch", "Job"): Rule(
        _job, "condition Complete=True", "condition Failed=True or FailureTarget=True",
        "kubernetes/api batch/v1 types.go (JobConditionType)"),
    ("", "Pod"): Rule(
        _pod, "phase Succeeded, or Running with condition Ready=True", "phase Failed",
        "kubernetes/api core/v1 types.go (PodPhase)"),
    ("", "PersistentVolumeClaim"): Rule(
        _field_rule(("status", "phase"), ("Bound",), ("Lost",)), "phase Bound", "phase Lost",
        "kubernetes/api core/v1 types.go (PersistentVolumeClaimPhase)"),
    ("", "Namespace"): Rule(
        _field_rule(("status", "phase"), ("Active",), ("Terminating",)), "phase Active", "phase Terminating",
        "kubernetes/api core/v1 types.go (NamespacePhase)"),
    ("", "Service"): Rule(
        _service, "exists; type LoadBalancer: status.loadBalancer.ingress assigned", _NONE,
        "kubernetes/api core/v1 types.go (ServiceStatus)", statusless=True),
    ("", "ConfigMap"): Rule(None, _EXISTS, _NONE, "kubernetes/api core/v1", statusless=True),
    ("", "Secret"): Rule(None, _EXISTS, _NONE, "kubernetes/api core/v1", statusless=True),
    ("", "ServiceAccount"): Rule(None, _EXISTS, _NONE, "kubernetes/api core/v1", statusless=True),
    ("rbac.authorization.k8s.io", "Role"): Rule(
        None, _EXISTS, _NONE, "kubernetes/api rbac/v1", statusless=True),
    ("rbac.authorization.k8s.io", "RoleBinding"): Rule(
        None, _EXISTS, _NONE, "kubernetes/api rbac/v1", statusless=True),
    ("rbac.authorization.k8s.io", "ClusterRole"): Rule(
        None, _EXISTS, _NONE, "kubernetes/api rbac/v1", statusless=True),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): Rule(
        None, _EXISTS, _NONE, "kubernetes/api rbac/v1", statusless=True),
    ("storage.k8s.io", "StorageClass"): Rule(
        None, _EXISTS, _NONE, "kubernetes/api storage/v1", statusless=True),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): Rule(
        _custom_resource_definition, "Established=True and NamesAccepted=True", "NamesAccepted=False",
        "kubernetes/apiextensions-apiserver pkg/apis/apiextensions/v1/types.go"),
}

GENERIC_RULE = Rule(
    _generic, "observedGeneration current where reported; Ready=True when the object has conditions",
    "Stalled=True (kstatus)", "Kubernetes API conventions; sigs.k8s.io/cli-utils pkg/kstatus")


def group_of(api_version):
    """The API group of an apiVersion ('' for the core group)."""
    api_version = api_version or ""
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def deletion_blocked(obj):
    """Why the operator of a deleted object holds it, as the object reports it ([] when it does not say)."""
    rule = rule_for(group_of((obj or {}).get("apiVersion")), (obj or {}).get("kind"))
    return rule.deletion_blocked(obj) if rule.deletion_blocked else []


def rule_for(group, kind):
    """The rule of a (group, kind): exact, then the group's '*', then '*.<domain>' groups, then generic."""
    for key in ((group, kind), (group, "*")):
        if key in RULES:
            return RULES[key]
    for (pattern, pattern_kind), rule in sorted(RULES.items()):
        if pattern.startswith("*.") and group.endswith(pattern[1:]) and pattern_kind in (kind, "*"):
            return rule
    return GENERIC_RULE


def covered_kinds():
    """Every kind in the table as a sorted 'group/Kind' string ('core' for the core group)."""
    return sorted("%s/%s" % (group or "core", kind) for group, kind in RULES)


def rules_table():
    """The table for documentation: dicts of kind, ready, terminal and source, sorted by kind."""
    rows = []
    for (group, kind), rule in RULES.items():
        rows.append({"kind": "%s/%s" % (group or "core", kind), "ready": rule.ready,
                     "terminal": rule.terminal, "source": rule.source})
    return sorted(rows, key=lambda row: row["kind"])


# ---------------------------------------------------------------------------
# JMESPath (only imported when an expression is given).

def _jmespath_search(expression, obj, what):
    try:
        import jmespath
        from jmespath.exceptions import JMESPathError
    except ImportError:
        raise InputError([problem(what, "needs the Python package jmespath on the host running the module "
                                        "(pip install jmespath)")])
    compiled = _JMESPATH_CACHE.get(expression)
    if compiled is None:
        try:
            compiled = jmespath.compile(expression)
        except JMESPathError as error:
            raise InputError([problem(what, "%r is not a valid JMESPath expression: %s" % (expression, error))])
        _JMESPATH_CACHE[expression] = compiled
    try:
        return compiled.search(obj)
    except JMESPathError as error:
        raise InputError([problem(what, "%r failed: %s" % (expression, error))])


def _jmespath_true(value):
    """JMESPath truthiness: false, null and empty strings, lists and objects are false (0 is true)."""
    if value is None or value is False:
        return False
    if isinstance(value, (str, list, dict)) and not value:
        return False
    return True


# ---------------------------------------------------------------------------
# The entry point.

def evaluate(obj, lookup=None, condition=None, expression=None, failed_expression=None):
    """The Readiness of one object (a dict as the API server returns it).

    lookup(api_version, kind, name, namespace) returns another object or None
    (ServerClaim uses it for its bound Server). condition ({type, status="True",
    reason}) and/or expression (JMESPath, true = ready) replace the kind's ready
    rule; the generation check still applies, and so does the kind's terminal
    verdict while the object is not ready. failed_expression (JMESPath) true is
    terminal.
    """
    if not isinstance(obj, dict):
        raise InputError([problem("object", "must be a Kubernetes object as a mapping, got %s" % type(obj).__name__)])
    if condition is not None and (not isinstance(condition, dict) or not condition.get("type")):
        raise InputError([problem("condition", "must be a mapping with a type, got %r" % (condition,))])

    rule = rule_for(group_of(obj.get("apiVersion")), obj.get("kind"))
    ev = _Evaluation(obj, lookup)
    deleting = bool(_get(obj, "metadata", "deletionTimestamp"))
    if deleting:
        ev.need("metadata.deletionTimestamp is set: the object is being deleted")
    overridden = condition is not None or expression is not None
    # With no status at all, "status is not reported yet" says it; the kind rule's own
    # check needs no second line about observedGeneration.
    # A kind without status for this object (an OCI HelmRepository) has no generation to observe.
    if not _flag(rule.statusless, obj):
        _check_generation(ev, _flag(rule.observed_generation, obj) and (bool(ev.status) or overridden))

    kind = _Evaluation(obj, lookup)
    if not ev.status and not _flag(rule.statusless, obj):
        kind.need("status is not reported yet")
        if rule.no_status is not None:
            rule.no_status(kind)
    elif rule.check is not None:
        rule.check(kind)

    if overridden:
        if condition is not None:
            ev.want_condition(condition["type"], condition.get("status") or "True", condition.get("reason"))
        if expression is not None:
            result = _jmespath_search(expression, obj, "expression")
            if not _jmespath_true(result):
                ev.need("expression %s is not true (result: %s)" % (expression, _short(repr(result))))
    else:
        ev.missing.extend(kind.missing)

    requested_failure = False
    if failed_expression is not None:
        result = _jmespath_search(failed_expression, obj, "failed_expression")
        if _jmespath_true(result):
            requested_failure = True
            ev.need("failed_expression %s is true (result: %s)" % (failed_expression, _short(repr(result))))

    ready = not ev.missing
    kind_failed = bool(kind.failures) and not _status_is_stale(ev)
    terminal = not ready and (deleting or requested_failure or kind_failed)
    if terminal and overridden and kind_failed:
        ev.missing.extend(message for message in kind.failures if message not in ev.missing)
    return Readiness(ready, terminal, [] if ready else ev.missing)
