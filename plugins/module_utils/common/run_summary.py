# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How many objects a phase changed, from the results its tasks registered (the phases' set_stats summary)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError

# The engine's per-object results (k8s/apply.py) that leave nothing changed.
UNCHANGED = frozenset(["unchanged", "absent"])


def _object_changes(items):
    return sum(1 for item in items if isinstance(item, dict) and item.get("result") not in UNCHANGED)


def changed_objects(registered):
    """The objects the registered task results changed: each result's per-object `results` (created,
    configured, deleted) count one each; a looped task counts its items; any other changed task counts one.
    Skipped or undefined (None) results count nothing."""
    if not isinstance(registered, (list, tuple)):
        raise InputError(["changed_objects: expects a list of registered results, got %s" % type(registered).__name__])
    total = 0
    for result in registered:
        if result is None or (isinstance(result, dict) and result.get("skipped")):
            continue
        if not isinstance(result, dict):
            raise InputError(["changed_objects: a registered result is a %s, not a dict" % type(result).__name__])
        items = result.get("results")
        if isinstance(items, list) and items and all(isinstance(i, dict) and "result" in i for i in items):
            total += _object_changes(items)
        elif isinstance(items, list) and any(isinstance(i, dict) and "ansible_loop_var" in i for i in items):
            total += changed_objects(items)  # a looped task: one result per item
        elif isinstance(items, list) and not result.get("changed"):
            continue
        elif result.get("changed"):
            total += 1
    return total
