# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A hypervisor pool's Nodes and their Hypervisors: the labels they need and the verdict on them.

Pure Python (no Kubernetes client, no Ansible): the module hypervisor_nodes lists the objects,
applies the labels this computes and waits until judge() finds the pool complete.

The seeds select hypervisor nodes with node-role.kubernetes.io/hypervisor (ovn-controller, OVS);
the hypervisor operator (cobaltcore-dev/openstack-hypervisor-operator, internal/controller/
constants.go, hypervisor_controller.go) creates a kvm.cloud.sap/v1 Hypervisor named after every
Node carrying nova.openstack.cloud.sap/virt-driver, with lifecycle management (onboarding) only
when the Node carries cobaltcore.cloud.sap/node-hypervisor-lifecycle ("skip-tests" skips the
onboarding smoke test). Gardener puts worker.gardener.cloud/pool on every Node of a worker pool.

Onboarding (onboarding_controller.go, v1.2.3) needs the Node label topology.kubernetes.io/zone (the
cloud-controller-manager copies it from the claimed Server; it is the Hypervisor's Nova availability
zone), and completes only with AggregatesUpdated and TraitsUpdated and - under spec.highAvailability,
which the operator sets true and never syncs - HaEnabled, which only the separate kvm-ha-service sets.
The pool's high_availability is written to each Hypervisor's spec.highAvailability.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.conditions import condition, is_true
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming

HYPERVISOR_API_VERSION = "kvm.cloud.sap/v1"
HYPERVISOR_KIND = "Hypervisor"
# The eviction of a Hypervisor in maintenance (named after it; hypervisor_rollout.eviction_holds).
EVICTION_KIND = "Eviction"
ROLE_LABEL = "node-role.kubernetes.io/hypervisor"
VIRT_DRIVER_LABEL = "nova.openstack.cloud.sap/virt-driver"
VIRT_DRIVER = "kvm"
LIFECYCLE_LABEL = "cobaltcore.cloud.sap/node-hypervisor-lifecycle"
LIFECYCLES = ("skip-tests", "enabled", "disabled")
WORKER_POOL_LABEL = "worker.gardener.cloud/pool"
ZONE_LABEL = naming.ZONE_LABEL
FIELD_MANAGER = "c5c3.cobaltcore-hypervisor-nodes"


def validate(params):
    """Every problem of the module's input, before anything is read or written (InputError)."""
    problems = []
    workers = params.get("workers")
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 0:
        problems.append(problem("workers", "must be an integer >= 0, got %r" % (workers,)))
    if not kube_names.is_label_value(params.get("worker_pool") or "") or not params.get("worker_pool"):
        problems.append(problem("worker_pool", "%r is not a Gardener worker pool name (a label value)"
                                % (params.get("worker_pool"),)))
    if not kube_names.is_label_value(params.get("virt_driver") or "") or not params.get("virt_driver"):
        problems.append(problem("virt_driver", "%r is not a label value" % (params.get("virt_driver"),)))
    zone = params.get("zone")
    if not isinstance(zone, str) or not zone or not kube_names.is_label_value(zone):
        problems.append(problem("zone", "%r is not a zone name: the pool's zone (cobaltcore_pool.zone) is required, the "
                                "hypervisor operator onboards a Node only with the label %s" % (zone, ZONE_LABEL)))
    if not isinstance(params.get("high_availability"), bool):
        problems.append(problem("high_availability", "must be a boolean, got %r" % (params.get("high_availability"),)))
    if params.get("lifecycle") not in LIFECYCLES:
        problems.append(problem("lifecycle", "must be one of %s, got %r"
                                % (", ".join(LIFECYCLES), params.get("lifecycle"))))
    labels = params.get("labels") or {}
    if not isinstance(labels, dict):
        problems.append(problem("labels", "must be a mapping of label keys to values"))
        labels = {}
    for key, value in sorted(labels.items(), key=lambda kv: str(kv[0])):
        if not kube_names.is_label_key(str(key)):
            problems.append(problem("labels", "%r is not a valid label key" % (key,)))
        if not isinstance(value, str) or not kube_names.is_label_value(value):
            problems.append(problem("labels.%s" % key, "%r is not a valid label value" % (value,)))
        if key in (ROLE_LABEL, VIRT_DRIVER_LABEL, LIFECYCLE_LABEL, WORKER_POOL_LABEL):
            problems.append(problem("labels.%s" % key, "is set by the module itself"))
        if key == ZONE_LABEL:
            problems.append(problem("labels.%s" % key, "is the cloud-controller-manager's (from the Server): set the "
                                    "pool's zone, which selects its servers"))
    for key in ("timeout", "sleep"):
        value = params.get(key)
        if value is not None and (not isinstance(value, int) or value < (0 if key == "timeout" else 1)):
            problems.append(problem(key, "must be an integer >= %d, got %r" % (0 if key == "timeout" else 1, value)))
    if problems:
        raise InputError(problems)


def wanted_labels(labels, virt_driver=VIRT_DRIVER, lifecycle="skip-tests"):
    """The labels every Node of a hypervisor pool carries (the pool's own included)."""
    wanted = dict(labels or {})
    wanted[ROLE_LABEL] = ""
    wanted[VIRT_DRIVER_LABEL] = virt_driver
    if lifecycle != "disabled":
        wanted[LIFECYCLE_LABEL] = "skip-tests" if lifecycle == "skip-tests" else "true"
    return wanted


def label_changes(node, wanted):
    """{key: {"from": old or None, "to": new}} for the labels the Node lacks or has otherwise."""
    have = (node.get("metadata") or {}).get("labels") or {}
    return dict((k, {"from": have.get(k), "to": v}) for k, v in sorted(wanted.items()) if have.get(k) != v)


def node_manifest(name, wanted):
    """What the module applies: metadata.labels only, so it owns nothing else of the Node."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(wanted)}}


def high_availability_manifest(name, enabled):
    """What the module applies to a Hypervisor: spec.highAvailability only (the operator never syncs it)."""
    return {"apiVersion": HYPERVISOR_API_VERSION, "kind": HYPERVISOR_KIND, "metadata": {"name": name},
            "spec": {"highAvailability": bool(enabled)}}


def high_availability_changes(hypervisors, names, enabled):
    """The pool's Hypervisors (by Node name) whose spec.highAvailability is not the pool's."""
    # The CRD defaults the field to true.
    return sorted(h["metadata"]["name"] for h in hypervisors if h["metadata"]["name"] in names
                  and (h.get("spec") or {}).get("highAvailability", True) is not bool(enabled))


def zone_problems(nodes, zone):
    """Nodes whose topology.kubernetes.io/zone is not the pool's: without it their Hypervisors never onboard."""
    problems = []
    for node in nodes:
        have = ((node.get("metadata") or {}).get("labels") or {}).get(ZONE_LABEL)
        if have != zone:
            problems.append("Node %s %s, not the pool's zone %s (the cloud-controller-manager copies it from the "
                            "Server's label; the hypervisor operator onboards a Node only with it)" % (
                                node["metadata"]["name"], "is in zone %s" % have if have else "has no label " + ZONE_LABEL,
                                zone))
    return problems


def waiting_for(hv):
    """What a Hypervisor's onboarding waits for, when the operator's conditions tell (None otherwise)."""
    spec = hv.get("spec") or {}
    onboarding = condition(hv, "Onboarding") or {}
    if onboarding.get("status") != "True":
        return None
    aggregates = condition(hv, "AggregatesUpdated") or {}
    if onboarding.get("reason") == "Initial":
        if not ((hv.get("metadata") or {}).get("labels") or {}).get(ZONE_LABEL):
            return "the label %s (its Node has none)" % ZONE_LABEL
        if aggregates.get("reason") == "Failed":
            return "its aggregates in Nova (%s)" % aggregates.get("message")
        return "its aggregates in Nova (zone and tenant_filter_tests)"
    if onboarding.get("reason") == "Handover":
        missing = [c for c in ("TraitsUpdated", "AggregatesUpdated") if not is_true(hv, c)]
        if spec.get("highAvailability") and not is_true(hv, "HaEnabled"):
            missing.append("HaEnabled (set by kvm-ha-service under spec.highAvailability)")
        return ", ".join(missing) or None
    return None


def pool_nodes(nodes, worker_pool):
    """The Nodes of the pool's Gardener worker pool, by name."""
    return sorted((n for n in nodes if ((n.get("metadata") or {}).get("labels") or {}).get(WORKER_POOL_LABEL)
                   == worker_pool), key=lambda n: n["metadata"]["name"])


def internal_ip(node):
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return address.get("address")
    return None


def judge(nodes, hypervisors, workers, readiness, zone=None):
    """The verdict on a pool: at least `workers` Nodes, each in the pool's zone, one Ready Hypervisor per Node and no
    other. More Nodes than workers are no problem (extra_nodes): phase 2 holds the Shoot's worker until
    playbooks/scale_in.yml evacuated and released the surplus ones.

    nodes: the pool's Nodes; hypervisors: every Hypervisor of the cluster (one cluster per pool, so
    one without a pool Node is extra); readiness(obj) ->
    {ready, terminal, missing} (the engine's readiness table); zone: the pool's (None: not checked).
    Returns {ready, terminal, missing_nodes, extra_nodes, missing, extra, not_ready, hypervisors, problems}.
    """
    names = [n["metadata"]["name"] for n in nodes]
    by_name = dict((h["metadata"]["name"], h) for h in hypervisors)
    report = {"missing_nodes": max(0, workers - len(names)), "extra_nodes": max(0, len(names) - workers),
              "missing": [n for n in names if n not in by_name],
              "extra": sorted(n for n in by_name if n not in names),
              "not_ready": [], "hypervisors": [], "terminal": False}
    for name in names:
        hv = by_name.get(name)
        if hv is None:
            continue
        verdict = readiness(hv)
        cond = condition(hv, "Ready") or {}
        entry = {"name": name, "ready": bool(verdict["ready"]), "reason": cond.get("reason"),
                 "message": cond.get("message"), "internal_ip": (hv.get("status") or {}).get("internalIp"),
                 "high_availability": (hv.get("spec") or {}).get("highAvailability"),
                 "waiting_for": None if verdict["ready"] else waiting_for(hv)}
        report["hypervisors"].append(entry)
        if not entry["ready"]:
            report["not_ready"].append(dict(entry, missing=verdict.get("missing")))
            report["terminal"] = report["terminal"] or bool(verdict.get("terminal"))
    problems = []
    if report["missing_nodes"]:
        problems.append("%d of %d Nodes missing (worker pool has %d)" % (report["missing_nodes"], workers, len(names)))
    if report["missing"]:
        problems.append("no Hypervisor for Node %s" % ", ".join(report["missing"]))
    if report["extra"]:
        problems.append("Hypervisor without a Node of the pool: %s" % ", ".join(report["extra"]))
    if zone is not None:
        problems += zone_problems(nodes, zone)
    for entry in report["not_ready"]:
        problems.append("Hypervisor %s not ready: %s %s%s" % (
            entry["name"], entry["reason"] or "no Ready condition", entry["message"] or entry.get("missing") or "",
            " (waiting for %s)" % entry["waiting_for"] if entry["waiting_for"] else ""))
    report["problems"] = problems
    report["ready"] = not problems
    return report
