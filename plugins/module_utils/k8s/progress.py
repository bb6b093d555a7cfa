# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a waited-for object reports while it is not ready, and a wait's one line of progress.

Pure, beside the readiness rules: the operator's own words where the kind has them (Gardener's
lastOperation with its progress, Rook's phase and message, Flux's Ready condition), else the Ready
condition, a phase or state, else the first thing readiness says is missing. Only object refs and
status text; never spec or data.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import one_line
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import (
    deletion_blocked, group_of, last_operation_text)

REPORT_LIMIT = 200
NO_STATUS = "status is not reported yet"  # readiness's words for an object without status


def ref_text(ref):
    """'Kind namespace/name' (as apply.describe, which is a client-side file)."""
    where = "%s/" % ref["namespace"] if ref.get("namespace") else ""
    return "%s %s%s" % (ref["kind"], where, ref["name"])


def _status(obj):
    status = (obj or {}).get("status")
    return status if isinstance(status, dict) else {}


def _condition(status, ctype):
    for cond in status.get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == ctype:
            return cond
    return None


def condition_text(cond):
    """'Ready=False Reason: message' of a condition."""
    text = "%s=%s" % (cond.get("type"), cond.get("status"))
    if cond.get("reason"):
        text += " %s" % cond["reason"]
    if cond.get("message"):
        text += ": %s" % cond["message"]
    return text


def _is_shoot(obj):
    return group_of(obj.get("apiVersion")) == "core.gardener.cloud" and obj.get("kind") == "Shoot"


def percent(obj):
    """A Shoot's lastOperation.progress (0-100), else None: the only kind that reports how far it is."""
    if not obj or not _is_shoot(obj):
        return None
    value = (_status(obj).get("lastOperation") or {}).get("progress")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _rook(status):
    parts = []
    if status.get("phase"):
        parts.append("phase %s" % status["phase"])
    elif status.get("state"):
        parts.append("state %s" % status["state"])
    if not parts:
        return None
    text = parts[0]
    if status.get("message"):
        text += ": %s" % status["message"]
    health = (status.get("ceph") or {}).get("health") if isinstance(status.get("ceph"), dict) else None
    if health:
        text += "; %s" % health
    return text


def _flux(status):
    ready = _condition(status, "Ready")
    if ready is not None and ready.get("status") != "True":
        return condition_text(ready)
    reconciling = _condition(status, "Reconciling")
    if reconciling is not None and reconciling.get("status") == "True":
        return condition_text(reconciling)
    return None


def _generic(status):
    ready = _condition(status, "Ready")
    if ready is not None and ready.get("status") != "True":
        return condition_text(ready)
    for field in ("phase", "state"):
        value = status.get(field)
        if isinstance(value, str) and value:
            return "%s %s" % (field, value)
    return None


def reported(obj, state=None):
    """What obj reports while it is not ready: one short line. state: its Readiness, for the fallback."""
    if obj is None:
        return "not found"
    status = _status(obj)
    group = group_of(obj.get("apiVersion"))
    text = None
    if _is_shoot(obj):
        last = status.get("lastOperation")
        # A Succeeded operation says nothing about the condition that keeps the Shoot from being ready.
        if isinstance(last, dict) and last and last.get("state") != "Succeeded":
            text = last_operation_text(last)
    elif group == "ceph.rook.io":
        text = _rook(status)
    elif group.endswith(".toolkit.fluxcd.io"):
        text = _flux(status)
    else:
        text = _generic(status)
    if text is None and state is not None and state.missing:
        # "status is not reported yet" says least when the rule says more (a Shoot without a seed).
        text = next((m for m in state.missing if m != NO_STATUS), state.missing[0])
    if text is None:
        text = NO_STATUS if not status else "not ready"
    return one_line(text, REPORT_LIMIT)


def reported_while_deleted(obj):
    """What an object that should be gone reports: a Shoot's lastOperation, else its deletion, finalizers and what its
    operator says holds it."""
    if _is_shoot(obj):
        last = _status(obj).get("lastOperation")
        if isinstance(last, dict) and last:
            return one_line(last_operation_text(last), REPORT_LIMIT)
    meta = obj.get("metadata") or {}
    if not meta.get("deletionTimestamp"):
        return "not deleted yet"
    finalizers = meta.get("finalizers") or []
    blocked = deletion_blocked(obj)
    return one_line("being deleted%s%s" % (", finalizers %s" % ", ".join(finalizers) if finalizers else "",
                                           "; blocked: %s" % "; ".join(blocked) if blocked else ""), REPORT_LIMIT)


def slowest(entries):
    """Of [(index, ref, state, obj)] not ready: the one furthest behind.

    Not found first, then the lowest progress a kind reports (a Shoot's lastOperation.progress), then
    the first in the order waited for (a kind without progress counts as 0).
    """
    def rank(entry):
        index, _ref, _state, obj = entry
        if obj is None:
            return (-1, index)
        value = percent(obj)
        return (value if value is not None else 0, index)
    return min(entries, key=rank)


def waiting_line(states, absent=False):
    """One line for a round of a wait over [(ref, Readiness or None when absent, object or None)].

    '2/3 ready, slowest Shoot garden-x/a: lastOperation Reconcile Processing 40%: ...', or with absent
    '1/3 gone, slowest ...'; None when nothing is left to wait for.
    """
    total = len(states)
    if absent:
        left = [(i, ref, state, obj) for i, (ref, state, obj) in enumerate(states) if state is not None]
        if not left:
            return None
        index, ref, _state, obj = slowest(left)
        return "%d/%d gone, slowest %s: %s" % (total - len(left), total, ref_text(ref), reported_while_deleted(obj))
    left = [(i, ref, state, obj) for i, (ref, state, obj) in enumerate(states) if state is None or not state.ready]
    if not left:
        return None
    index, ref, state, obj = slowest(left)
    return "%d/%d ready, slowest %s: %s" % (total - len(left), total, ref_text(ref), reported(obj, state))


def problems_line(what, problems):
    """'<what> not yet: <first problem> (and N more)' for waits judged as a list of problems."""
    if not problems:
        return None
    more = " (and %d more)" % (len(problems) - 1) if len(problems) > 1 else ""
    return "%s not yet: %s%s" % (what, one_line(problems[0], REPORT_LIMIT), more)
