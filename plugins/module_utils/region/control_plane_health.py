# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A ControlPlane's health by dependency phase (seed 003), pure logic.

``build_report(control_plane, objects, verdict)`` judges one ControlPlane:

* ``control_plane``: the ControlPlane (c5c3.io/v1alpha1) as read;
* ``objects``: the live objects of its namespace by (apiVersion, kind), each a
  list, or None when the API server does not serve the kind (its CRD is not
  installed); the CRs of ``COMPONENT_KINDS`` count when the ControlPlane is
  their controller (ownerReference), the K-ORC objects of the namespace count
  as they are (the collection's phase 5 creates them, not the c5c3-operator);
* ``verdict(obj)``: the engine's readiness verdict on one object (a
  ``k8s/readiness.evaluate`` Readiness, or its ``as_dict()``). This file is in
  ``region/`` and reaches no client: the caller hands the verdicts in.

The report has one entry per phase of ``dependency_graph.PHASES`` with its
components, each component's objects (ready, terminal, what is missing, the
condition that says why), and the phase's state: ``ready``, ``blocked`` (an
enabled component is missing or not ready), ``failed`` (a terminal verdict)
or ``not-enabled`` (none of its components is enabled). Then the first phase
not ready, the object that blocks it, and the phases waiting behind it.
``table(report)`` renders it one line per phase; ``failure_message`` is the
text a wait ends with.

No Kubernetes client, no Ansible: unit-tested on its own.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.dependency_graph import PHASES
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.services import DEFAULT_SERVICES

READY, BLOCKED, FAILED, NOT_ENABLED = "ready", "blocked", "failed", "not-enabled"
KORC = "k-orc"

# The CRs the c5c3-operator creates from a ControlPlane (seed 003), per component.
COMPONENT_KINDS = {
    "mariadb": (("k8s.mariadb.com/v1alpha1", "MariaDB"),),
    "rabbitmq": (("rabbitmq.com/v1beta1", "RabbitmqCluster"),),
    "valkey": (("cache.cs.sap.com/v1alpha1", "Valkey"),),
    "memcached": (("memcached.c5c3.io/v1beta1", "Memcached"),),
    "keystone": (("keystone.openstack.c5c3.io/v1alpha1", "Keystone"),),
    # The service catalog: the K-ORC objects of the namespace (phase 5, role keystone_bootstrap).
    KORC: tuple((naming.KORC_API_VERSION, kind) for kind in (
        "Domain", "Project", "Role", "Service", "Endpoint", "User", "ApplicationCredential")),
    "glance": (("glance.openstack.c5c3.io/v1alpha1", "Glance"),),
    "placement": (("placement.openstack.c5c3.io/v1alpha1", "Placement"),),
    "nova": (("nova.openstack.c5c3.io/v1alpha1", "Nova"),),
    "neutron": (("neutron.openstack.c5c3.io/v1alpha1", "Neutron"),),
    "cinder": (("cinder.openstack.c5c3.io/v1alpha1", "Cinder"),),
    "cortex": (("cortex.c5c3.io/v1alpha1", "Cortex"),),
    "tempest": (("tempest.openstack.c5c3.io/v1alpha1", "Tempest"),),
}
INFRASTRUCTURE = ("mariadb", "rabbitmq", "valkey", "memcached")
# Sections of the ControlPlane that switch an optional part on (seed 003: cortex, tempest, korc).
TOP_LEVEL = ("cortex", "tempest")
# Condition types whose True means trouble or work in progress: never "the condition that says why".
NEGATIVE_CONDITIONS = ("Progressing", "Degraded", "Reconciling", "Stalled")
TEXT_LIMIT = 160

PHASE_NAMES = tuple(phase["name"] for phase in PHASES)


def kinds_for(components=None):
    """The (apiVersion, kind) pairs to read for these components (all when None), in phase order."""
    names = [c for phase in PHASES for c in phase["components"] if components is None or c in components]
    found = []
    for name in names:
        for pair in COMPONENT_KINDS[name]:
            if pair not in found:
                found.append(pair)
    return found


def _section(spec, *path):
    for key in path:
        if not isinstance(spec, dict):
            return None
        spec = spec.get(key)
    return spec


def _switch(section, default):
    """A section's on/off: absent -> default; present -> its `enabled`, true when it has none."""
    if section is None:
        return default
    if isinstance(section, dict):
        return section.get("enabled") is not False
    return bool(section)


def enabled_components(control_plane):
    """Which components this ControlPlane enables: {component: bool}.

    Infrastructure: on unless spec.infrastructure.<x>.enabled is false. Services: spec.services.<x>
    (seed 003) or spec.openstack.<x> (the tenants' composition); a section without `enabled` is on,
    a missing one is the seed's default (keystone, glance, placement, nova, neutron, cinder on).
    K-ORC: on unless spec.korc.enabled is false. Cortex, Tempest: spec.cortex / spec.tempest (or a
    service section), off by default.
    """
    spec = control_plane.get("spec") if isinstance(control_plane.get("spec"), dict) else {}
    result = {}
    for phase in PHASES:
        for name in phase["components"]:
            if name in INFRASTRUCTURE:
                result[name] = _switch(_section(spec, "infrastructure", name), True)
            elif name == KORC:
                result[name] = _switch(_section(spec, "korc"), True)
            else:
                section = _section(spec, "services", name)
                if section is None:
                    section = _section(spec, "openstack", name)
                if section is None and name in TOP_LEVEL:
                    section = _section(spec, name)
                result[name] = _switch(section, name in DEFAULT_SERVICES)
    return result


def owned_by(obj, control_plane):
    """The ControlPlane is the object's controller (by uid; by kind and name when uids are missing)."""
    meta = control_plane.get("metadata") or {}
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if not ref.get("controller") or ref.get("kind") != naming.CONTROL_PLANE_KIND:
            continue
        if meta.get("uid") and ref.get("uid"):
            if ref["uid"] == meta["uid"]:
                return True
        elif ref.get("name") == meta.get("name"):
            return True
    return False


def _short(text, limit=TEXT_LIMIT):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _verdict_dict(value):
    if hasattr(value, "as_dict"):
        value = value.as_dict()
    return {"ready": bool(value.get("ready")), "terminal": bool(value.get("terminal")),
            "missing": list(value.get("missing") or [])}


def why_condition(obj):
    """The condition that says why an object is (not) ready: a Ready or positive condition not True, else Ready."""
    conditions = [c for c in ((obj.get("status") or {}).get("conditions") or []) if isinstance(c, dict)]
    chosen = None
    for cond in conditions:
        if cond.get("type") == "Ready" and cond.get("status") != "True":
            chosen = cond
            break
    if chosen is None:
        chosen = next((c for c in conditions if c.get("type") not in NEGATIVE_CONDITIONS
                       and c.get("status") != "True"), None)
    if chosen is None:
        chosen = next((c for c in conditions if c.get("type") in NEGATIVE_CONDITIONS and c.get("status") == "True"
                       and c.get("type") != "Progressing"), None)
    if chosen is None:
        chosen = next((c for c in conditions if c.get("type") == "Ready"), None)
    if chosen is None:
        return None
    return dict((key, chosen.get(key)) for key in ("type", "status", "reason", "message"))


def _object_entry(obj, verdict):
    meta = obj.get("metadata") or {}
    judged = _verdict_dict(verdict(obj))
    entry = {"api_version": obj.get("apiVersion"), "kind": obj.get("kind"), "name": meta.get("name"),
             "namespace": meta.get("namespace"), "found": True}
    entry.update(judged)
    entry["condition"] = why_condition(obj)
    return entry


def _missing_entry(api_version, kind, namespace, text):
    return {"api_version": api_version, "kind": kind, "name": None, "namespace": namespace, "found": False,
            "ready": False, "terminal": False, "missing": [text], "condition": None}


def _component(name, enabled, control_plane, objects, verdict):
    namespace = (control_plane.get("metadata") or {}).get("namespace")
    entry = {"name": name, "enabled": enabled, "kinds": [kind for _v, kind in COMPONENT_KINDS[name]],
             "objects": []}
    not_served = []
    for api_version, kind in COMPONENT_KINDS[name]:
        live = objects.get((api_version, kind))
        if live is None:
            not_served.append((api_version, kind))
            continue
        for obj in sorted(live, key=lambda o: (o.get("metadata") or {}).get("name") or ""):
            if (obj.get("metadata") or {}).get("namespace") not in (None, namespace):
                continue
            if name == KORC or owned_by(obj, control_plane):
                entry["objects"].append(_object_entry(dict(obj, apiVersion=api_version, kind=kind), verdict))
    if not enabled:
        entry["state"] = NOT_ENABLED
        return entry
    if not entry["objects"]:
        if name == KORC:
            text = ("no K-ORC objects in namespace %s yet (phase 5, the keystone_bootstrap role, creates the "
                    "service catalog)" % namespace)
            if len(not_served) == len(COMPONENT_KINDS[name]):
                text = "K-ORC is not installed (%s is not served)" % naming.KORC_API_VERSION
            entry["objects"].append(_missing_entry(naming.KORC_API_VERSION, "*", namespace, text))
        else:
            for api_version, kind in COMPONENT_KINDS[name]:
                if (api_version, kind) in not_served:
                    text = "%s %s is not served (its CRD is not installed)" % (api_version, kind)
                else:
                    text = "no %s owned by the ControlPlane yet" % kind
                    others = [(o.get("metadata") or {}).get("name") for o in objects.get((api_version, kind)) or []
                              if (o.get("metadata") or {}).get("namespace") in (None, namespace)]
                    if others:
                        text += " (not owned by it: %s)" % ", ".join(sorted(str(o) for o in others))
                entry["objects"].append(_missing_entry(api_version, kind, namespace, text))
    if any(o["terminal"] for o in entry["objects"]):
        entry["state"] = FAILED
    elif all(o["ready"] for o in entry["objects"]):
        entry["state"] = READY
    else:
        entry["state"] = BLOCKED
    return entry


def _blocking_object(component):
    objects = component["objects"]
    return (next((o for o in objects if o["terminal"]), None)
            or next((o for o in objects if not o["ready"]), None))


def describe_object(obj):
    """'Kind namespace/name' of an object entry, or what is missing when none exists."""
    if not obj["found"]:
        kind = "K-ORC objects" if obj["kind"] == "*" else obj["kind"]
        return "%s in %s" % (kind, obj["namespace"])
    return "%s %s/%s" % (obj["kind"], obj["namespace"], obj["name"])


def object_text(obj):
    """What keeps one object from being ready: the readiness rule's words (conditions, reasons, messages)."""
    if obj["ready"]:
        return "ready"
    return "; ".join(obj["missing"]) or "not ready"


def _check_through(through):
    if through is not None and through not in PHASE_NAMES:
        raise InputError([problem("through", "unknown phase %r (phases: %s)" % (through, ", ".join(PHASE_NAMES)))])


def build_report(control_plane, objects, verdict, through=None):
    """The health report of one ControlPlane (see the module docstring); through: the last phase that counts."""
    _check_through(through)
    meta = control_plane.get("metadata") or {}
    enabled = enabled_components(control_plane)
    phases = []
    counted = True
    for phase in PHASES:
        components = [_component(name, enabled[name], control_plane, objects, verdict)
                      for name in phase["components"]]
        on = [c for c in components if c["enabled"]]
        if not on:
            state = NOT_ENABLED
        elif any(c["state"] == FAILED for c in on):
            state = FAILED
        elif all(c["state"] == READY for c in on):
            state = READY
        else:
            state = BLOCKED
        phases.append({"phase": phase["phase"], "name": phase["name"], "optional": phase["optional"],
                       "state": state, "counted": counted, "components": components})
        if phase["name"] == through:
            counted = False
    first = next((p for p in phases if p["counted"] and p["state"] in (BLOCKED, FAILED)), None)
    blocking = None
    waiting = []
    if first is not None:
        on = [c for c in first["components"] if c["enabled"] and c["state"] != READY]
        component = next((c for c in on if c["state"] == FAILED), on[0])
        obj = _blocking_object(component)
        blocking = dict(obj, component=component["name"], phase=first["name"], text=object_text(obj))
        waiting = [p["name"] for p in phases if p["phase"] > first["phase"] and p["state"] in (BLOCKED, FAILED)]
    status = control_plane.get("status") if isinstance(control_plane.get("status"), dict) else {}
    ready_cond = next((c for c in status.get("conditions") or [] if isinstance(c, dict) and c.get("type") == "Ready"),
                      None)
    return {
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
        "through": through,
        "control_plane": {"phase": status.get("phase"),
                          "condition": dict((k, ready_cond.get(k)) for k in ("type", "status", "reason", "message"))
                          if ready_cond else None},
        "phases": phases,
        "ready": first is None,
        "failed": first is not None and first["state"] == FAILED,
        "first_not_ready": first["name"] if first else None,
        "blocking": blocking,
        "waiting": waiting,
    }


def missing_report(namespace, name, through=None):
    """The report of a ControlPlane that does not exist (yet)."""
    _check_through(through)
    return {"namespace": namespace, "name": name, "through": through, "control_plane": None, "phases": [],
            "ready": False, "failed": False, "first_not_ready": None, "blocking": None, "waiting": [],
            "missing": "ControlPlane %s/%s does not exist" % (namespace, name)}


def _component_cell(component, phase_ready):
    if component["state"] == READY:
        return component["name"] if phase_ready else "%s ready" % component["name"]
    obj = _blocking_object(component)
    where = "%s %s: " % (obj["kind"], obj["name"]) if obj["found"] else ""
    return "%s: %s%s" % (component["name"], where, _short(object_text(obj)))


def table(report):
    """The report as text lines: a header, one line per phase, and what blocks the first phase not ready."""
    title = "ControlPlane %s/%s" % (report["namespace"], report["name"])
    if report.get("missing"):
        return ["%s: does not exist" % title]
    cp = report["control_plane"] or {}
    cond = cp.get("condition")
    said = []
    if cp.get("phase"):
        said.append("status.phase %s" % cp["phase"])
    if cond:
        said.append("Ready=%s%s" % (cond.get("status"), " (%s)" % cond["reason"] if cond.get("reason") else ""))
    verdict = "ready" if report["ready"] else "not ready"
    if report["through"]:
        verdict += " through %s" % report["through"]
    lines = ["%s: %s%s" % (title, verdict, " [%s]" % ", ".join(said) if said else "")]
    width = max(len(p["name"]) for p in report["phases"]) if report["phases"] else 0
    for phase in report["phases"]:
        on = [c for c in phase["components"] if c["enabled"]]
        if phase["state"] == NOT_ENABLED:
            cells = "off: %s" % ", ".join(c["name"] for c in phase["components"])
        else:
            cells = "; ".join(_component_cell(c, phase["state"] == READY) for c in on)
            off = [c["name"] for c in phase["components"] if not c["enabled"]]
            if off:
                cells += " (off: %s)" % ", ".join(off)
        note = "" if phase["counted"] or phase["state"] == NOT_ENABLED else " (not waited for)"
        lines.append("%d %-*s  %-11s  %s%s" % (phase["phase"], width, phase["name"], phase["state"], cells, note))
    if report["blocking"]:
        lines.append(summary(report))
    return lines


def summary(report):
    """One sentence: the first phase not ready, the object that blocks it and why, the phases behind it."""
    if report.get("missing"):
        return report["missing"]
    blocking = report["blocking"]
    if blocking is None:
        return "ControlPlane %s/%s: every enabled phase is ready" % (report["namespace"], report["name"])
    phase = next(p for p in report["phases"] if p["name"] == report["first_not_ready"])
    text = "phase %d %s %s: %s (%s): %s" % (
        phase["phase"], phase["name"], "failed" if phase["state"] == FAILED else "is not ready",
        describe_object(blocking), blocking["component"], object_text(blocking))
    cond = blocking.get("condition")
    if cond and cond.get("status") != "True" and "condition %s is" % cond.get("type") not in text:
        text += " [condition %s=%s%s%s]" % (cond.get("type"), cond.get("status"),
                                            " reason %s" % cond["reason"] if cond.get("reason") else "",
                                            ": %s" % _short(cond["message"]) if cond.get("message") else "")
    if report["waiting"]:
        text += "; waiting behind it: %s" % ", ".join(report["waiting"])
    return text


def failure_message(reports, timeout=None):
    """The message a wait ends with: the summary of each ControlPlane that failed (timeout None) or is not ready."""
    after = ", after %ss" % timeout if timeout is not None else ""
    parts = []
    for report in reports:
        if report["ready"] or (timeout is None and not report["failed"]):
            continue
        if report.get("missing"):
            parts.append(report["missing"] + (" after %ss" % timeout if timeout is not None else ""))
        else:
            parts.append("ControlPlane %s/%s%s: %s" % (report["namespace"], report["name"], after, summary(report)))
    return " | ".join(parts)


def progress_line(reports):
    """A wait's line of progress: how many ControlPlanes are ready and what blocks the one furthest behind.

    '1/2 ControlPlane(s) ready through keystone, slowest ControlPlane ns/b: phase 2 infrastructure is not
    ready: ...'; None when every one is ready.
    """
    if not reports:
        return "no ControlPlane exists yet"
    left = [r for r in reports if not r["ready"]]
    if not left:
        return None

    def rank(report):
        phase = next((p["phase"] for p in report["phases"] if p["name"] == report["first_not_ready"]), -1)
        return phase

    slow = min(left, key=rank)
    through = reports[0].get("through")
    text = summary(slow)
    if not slow.get("missing"):
        text = "ControlPlane %s/%s: %s" % (slow["namespace"], slow["name"], text)
    return "%d/%d ControlPlane(s) ready%s, slowest %s" % (
        len(reports) - len(left), len(reports), " through %s" % through if through else "", text)
