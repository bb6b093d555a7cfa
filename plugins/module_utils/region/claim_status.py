# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The status phase 7 writes back to OpenStackCluster claims read from the management cluster.

A claim gets the two conditions Crossplane writes on a claim (crossplane-runtime's condition
types and reasons): Synced (ReconcileSuccess when the claim validated and its objects were
applied, ReconcileError with every problem otherwise) and Ready (Available when the tenant's
Ceph objects and ControlPlane are ready, Creating or Unavailable naming what blocks).

statuses() decides the conditions from what phase 7 found; merge_conditions() puts them into
what a claim has, keeping lastTransitionTime while a condition's status stays the same (the
Kubernetes API conventions), so that writing the same verdict twice changes nothing.
Nothing here talks to a cluster.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
from collections.abc import Mapping

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health as health
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import claim_list, claim_ref

SYNCED = "Synced"
READY = "Ready"
RECONCILE_SUCCESS = "ReconcileSuccess"
RECONCILE_ERROR = "ReconcileError"
AVAILABLE = "Available"
UNAVAILABLE = "Unavailable"
CREATING = "Creating"
# A condition message stays readable with kubectl; longer text is cut (the run's output has all of it).
MESSAGE_LIMIT = 4000


def condition(type_, status, reason, message=None):
    found = {"type": type_, "status": status, "reason": reason}
    if message:
        found["message"] = message if len(message) <= MESSAGE_LIMIT else message[:MESSAGE_LIMIT - 3] + "..."
    return found


def problems_by_claim(claims, problems):
    """({claim ref: [its problems, without the ref]}, [problems of no claim]) for validate_claims() output."""
    refs = [claim_ref(claim, index) for index, claim in enumerate(claim_list(claims) or [])]
    # The longest ref first, so that 'ns/a-b x' is never taken for a problem of 'ns/a'.
    ordered = sorted(set(refs), key=len, reverse=True)
    found = dict((ref, []) for ref in refs)
    other = []
    for text in problems or []:
        ref = next((r for r in ordered if text.startswith(r + " ")), None)
        if ref is None:
            other.append(text)
        else:
            found[ref].append(text[len(ref) + 1:])
    return found, other


def valid_claims(claims, problems):
    """The claims with no problem of their own (in their order)."""
    claims = claim_list(claims) or []
    found, _other = problems_by_claim(claims, problems)
    return [claim for index, claim in enumerate(claims) if not found[claim_ref(claim, index)]]


def synced_condition(problems, blocked=None):
    """Synced: the claim's own problems, else what kept it from being applied, else success."""
    if problems:
        return condition(SYNCED, "False", RECONCILE_ERROR,
                         "invalid claim, nothing of it is applied: " + "; ".join(problems))
    if blocked:
        return condition(SYNCED, "False", RECONCILE_ERROR, "not applied: " + blocked)
    return condition(SYNCED, "True", RECONCILE_SUCCESS)


def ready_condition(report, ceph_ready=True, ceph_message=None):
    """Ready from the control_plane_health report of the tenant's ControlPlane (None: none exists)
    and whether its Ceph objects are ready."""
    if report is None:
        return condition(READY, "False", CREATING, "the ControlPlane does not exist yet")
    if report.get("missing"):
        return condition(READY, "False", CREATING, report["missing"])
    if not report.get("ready"):
        reason = UNAVAILABLE if report.get("failed") else CREATING
        return condition(READY, "False", reason, health.summary(report))
    if not ceph_ready:
        return condition(READY, "False", CREATING, ceph_message or "the Ceph objects are not ready")
    through = report.get("through")
    return condition(READY, "True", AVAILABLE, "Ceph objects ready; ControlPlane ready%s" % (
        " through phase %s" % through if through else ""))


def _meta(claim):
    metadata = claim.get("metadata") if isinstance(claim, Mapping) else None
    metadata = metadata if isinstance(metadata, Mapping) else {}
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if isinstance(name, str) and name and isinstance(namespace, str) and namespace:
        return namespace, name
    return None


def statuses(claims, problems, region, generations=None, reports=None, ceph_ready=True, ceph_message=None,
             apply_valid=False):
    """The status of each claim: [{namespace, name, observed_generation, conditions, initial_conditions}].

    problems: validate_claims() of all claims; region: its name (for messages). generations:
    {'<namespace>/<name>': metadata.generation} as read. reports: the control_plane_health reports
    of the control-plane clusters after applying (None before anything was applied).
    apply_valid: the valid claims are applied even when others are invalid; otherwise one invalid
    claim (or a problem of the region) keeps all from being applied.

    conditions are set; initial_conditions only where the claim has none of that type yet (before
    applying, Ready is not known, and a Ready of objects applied earlier stays). Before applying
    (reports None), claims that will be applied get no status: it follows the apply.
    """
    claims = claim_list(claims) or []
    own, other = problems_by_claim(claims, problems)
    any_invalid = any(own.values())
    blocked = None
    if other:
        blocked = "region %s has problems outside the claims; no claim is applied (see the phase 7 run)" % region
    elif any_invalid and not apply_valid:
        blocked = ("another claim of region %s is invalid, and no claim is applied while one is "
                   "(each claim's owner sees its problems in its own status)" % region)
    by_control_plane = {}
    for report in reports or []:
        by_control_plane[(report.get("namespace"), report.get("name"))] = report
    result = []
    for index, claim in enumerate(claims):
        meta = _meta(claim)
        if meta is None:
            continue  # cannot be addressed; a claim read from the cluster always has both
        namespace, name = meta
        mine = own[claim_ref(claim, index)]
        applied = not mine and not blocked
        if reports is None and applied:
            continue
        conditions = [synced_condition(mine, None if mine else blocked)]
        initial = []
        report = by_control_plane.get((naming.tenant_namespace(name), naming.control_plane_name(name)))
        if reports is not None and (applied or report is not None):
            conditions.append(ready_condition(report, ceph_ready, ceph_message))
        else:
            initial.append(condition(READY, "False", CREATING, "nothing applied yet: see condition Synced"))
        result.append({"namespace": namespace, "name": name,
                       "observed_generation": (generations or {}).get("%s/%s" % (namespace, name)),
                       "conditions": conditions, "initial_conditions": initial})
    return result


def merge_conditions(live, conditions, initial=None, generation=None, now=None):
    """The claim's conditions with these set (and the initial ones where the type is missing).

    A condition whose status is unchanged keeps its lastTransitionTime; a changed status (or a new
    condition) takes now. Conditions of other types stay as they are, in their order.
    """
    merged = [copy.deepcopy(c) for c in live or [] if isinstance(c, Mapping)]
    index = dict((c.get("type"), i) for i, c in enumerate(merged))
    wanted = list(conditions or [])
    wanted.extend(c for c in initial or [] if c["type"] not in index)
    for cond in wanted:
        new = dict((k, cond[k]) for k in ("type", "status", "reason", "message") if cond.get(k))
        where = index.get(cond["type"])
        old = merged[where] if where is not None else None
        if old is not None and old.get("status") == new["status"] and old.get("lastTransitionTime"):
            new["lastTransitionTime"] = old["lastTransitionTime"]
        else:
            new["lastTransitionTime"] = now
        if generation is not None:
            new["observedGeneration"] = generation
        elif old is not None and "observedGeneration" in old:
            new["observedGeneration"] = old["observedGeneration"]
        if where is None:
            index[cond["type"]] = len(merged)
            merged.append(new)
        else:
            merged[where] = new
    return merged


def status_patch(live_status, conditions):
    """The merge patch of the status subresource that sets these conditions; None when they are already set."""
    live_status = live_status if isinstance(live_status, Mapping) else {}
    if live_status.get("conditions") == conditions:
        return None
    return {"status": {"conditions": conditions}}
