# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A hypervisor pool's operating system update, a bounded number of Nodes at a time (pure).

The hypervisor operator (cobaltcore-dev/openstack-hypervisor-operator) and kvm-node-agent act on the Hypervisor
(kvm.cloud.sap/v1, cluster-scoped, named after its Node):

- spec.maintenance manual (with spec.maintenanceReason) disables the compute service and evicts its instances:
  condition Evicting True Running, then False Succeeded and status.evicted; Ready False Evicted;
- spec.version (with spec.reboot) makes kvm-node-agent install that operating system version with
  systemd-sysupdate (condition OperatingSystemUpdate True Running, then False Completed and
  status.updateStatus.installed; Stopped when it failed) and reboot into it: status.operatingSystem.version;
- spec.maintenance "" enables the service again: Ready True.

The eviction itself is an Eviction (kvm.cloud.sap/v1, cluster-scoped, named after the Hypervisor) the operator
creates and deletes with the maintenance: condition Evicting, PreflightChecksSucceeded (the service disabled),
status.outstandingInstances (the instances still on the hypervisor) and MigratingInstance (the last migration; an
instance in ERROR stays outstanding, Failed, and the eviction never ends on its own).

A Node's update is those steps in order; the rollout takes at most max_unavailable Nodes out at once (in
maintenance, whoever put them there), in name order, and stops at the first Node that does not come back.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import math
import re

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.conditions import condition, is_true
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import problem

API_VERSION = "kvm.cloud.sap/v1"
KIND = "Hypervisor"
FIELD_MANAGER = "c5c3.cobaltcore-hypervisor-rollout"
REASON_PREFIX = "cobaltcore - operating system update to "
_PERCENT = re.compile(r"^([0-9]+)%$")

# A Node's stages, in order.
CURRENT, ENTERING, EVICTED, UPDATING, UPDATED, FOREIGN = (
    "current", "entering maintenance", "evicted", "updating", "updated", "in maintenance by others")


def os_version(hv):
    return (((hv.get("status") or {}).get("operatingSystem") or {}).get("version")) or None


def reason(version):
    return REASON_PREFIX + version


def max_unavailable_problems(value):
    text = str(value if value is not None else "")
    if text.isdigit() and int(text) >= 1:
        return []
    match = _PERCENT.match(text)
    if match and 1 <= int(match.group(1)) <= 100:
        return []
    return [problem("max_unavailable", "%r is neither a count of at least 1 nor a percentage of 1%% to 100%%"
                    % (value,))]


def max_unavailable_count(value, total):
    """The Nodes that may be out at once: a count, or a percentage of the pool rounded down (at least 1)."""
    match = _PERCENT.match(str(value))
    if match:
        return max(1, int(math.floor(total * int(match.group(1)) / 100.0)))
    return max(1, int(value))


def stage(hv, version):
    """Where a Hypervisor is on its way to the version."""
    spec = hv.get("spec") or {}
    ours = spec.get("maintenanceReason") == reason(version)
    maintenance = spec.get("maintenance") or ""
    if maintenance and not ours:
        return FOREIGN
    if not maintenance:
        return CURRENT if os_version(hv) == version else None
    if os_version(hv) == version:
        return UPDATED
    if spec.get("version") == version:
        return UPDATING
    return EVICTED if evicted(hv) else ENTERING


def evicted(hv):
    """The hypervisor operator evicted the Node's instances: status.evicted with Evicting False (Succeeded)."""
    return bool((hv.get("status") or {}).get("evicted")) and (condition(hv, "Evicting") or {}).get("status") == "False"


def eviction_holds(eviction):
    """What keeps an Eviction from ending, in words; None when it ended."""
    if eviction is None:
        return "the hypervisor operator has not created its Eviction"
    if (condition(eviction, "Evicting") or {}).get("status") == "False":
        return None
    preflight = condition(eviction, "PreflightChecksSucceeded") or {}
    if preflight.get("status") != "True":
        return "the Eviction's preflight: %s" % (preflight.get("message") or "not run yet")
    instances = (eviction.get("status") or {}).get("outstandingInstances") or []
    migrating = condition(eviction, "MigratingInstance") or {}
    failed = "; %s" % migrating.get("message") if migrating.get("reason") == "Failed" else ""
    return "instances still on it: %s%s" % (", ".join(instances) or "none", failed)


# A Node's maintenance by hand (playbooks/maintenance.yml), under a field manager of its own.
MAINTENANCE_FIELD_MANAGER = "c5c3.cobaltcore-maintenance"
MAINTENANCE_REASON = "cobaltcore - maintenance"


def maintenance_manifest(name, on, why=MAINTENANCE_REASON):
    """The fields maintenance.yml owns on a Hypervisor: manual maintenance with its reason, or none (the reason, no
    longer sent, goes)."""
    spec = {"maintenance": "manual", "maintenanceReason": why} if on else {"maintenance": ""}
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name}, "spec": spec}


def maintenance_owner(hv, why=MAINTENANCE_REASON):
    """Who holds the Node in maintenance: None (no maintenance), "ours" (maintenance.yml's reason), or the other
    holder's reason."""
    spec = hv.get("spec") or {}
    if not spec.get("maintenance"):
        return None
    if spec.get("maintenanceReason") == why:
        return "ours"
    return spec.get("maintenanceReason") or "maintenance %s" % spec["maintenance"]


def plan(hypervisors, version, max_unavailable):
    """{"todo": [names to update, those under way first], "out": [names in maintenance by others], "batch": n}."""
    stages = dict((hv["metadata"]["name"], stage(hv, version)) for hv in hypervisors)
    under_way = sorted(n for n, s in stages.items() if s not in (None, CURRENT, FOREIGN))
    waiting = sorted(n for n, s in stages.items() if s is None)
    return {"todo": under_way + waiting, "out": sorted(n for n, s in stages.items() if s == FOREIGN),
            "batch": max_unavailable_count(max_unavailable, len(hypervisors)), "stages": stages}


def failure(hv, version, since):
    """Why a Node's update failed, or None: kvm-node-agent stopped the update at or after since (RFC 3339; a
    Stopped from before is an attempt the agent retries)."""
    update = condition(hv, "OperatingSystemUpdate")
    if (hv.get("spec") or {}).get("version") == version and os_version(hv) != version and update \
            and update.get("reason") == "Stopped" and (update.get("lastTransitionTime") or since) >= since:
        return "OperatingSystemUpdate %s: %s" % (update.get("reason"), update.get("message"))
    return None


def is_ready(hv):
    return is_true(hv, "Ready")


def manifest(name, version, step):
    """The fields the rollout owns on a Hypervisor at a step (server-side apply; what it no longer sends goes)."""
    spec = {}
    if step in ("enter", "update"):
        spec.update(maintenance="manual", maintenanceReason=reason(version))
    if step == "update":
        spec.update(version=version, reboot=True)
    if step == "leave":  # the maintenance lifted; maintenanceReason, no longer sent, goes
        spec.update(maintenance="", version=version, reboot=True)
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name}, "spec": spec}
