# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase 5, pure logic: one message for a K-ORC import that found nothing in Keystone."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import KORC_IMPORT_NOT_FOUND

# A wait's failed_expression that ends an import wait once K-ORC reports the filter matches nothing.
IMPORT_NOT_FOUND_EXPRESSION = ("status.conditions[?type=='Progressing' && message=='%s'] | [0]"
                               % KORC_IMPORT_NOT_FOUND)


def _filter_text(spec):
    query = ((spec or {}).get("import") or {}).get("filter") or {}
    return json.dumps(query, sort_keys=True)


def import_failure_message(wait_result, manifests):
    """One message for a failed import wait: per object K-ORC's condition text and its import filter.

    wait_result is what c5c3.cobaltcore.wait returned (registered with failed_when false):
    ``objects`` (or ``resources``) with ``missing`` lines per object, and ``msg``. The
    readiness rule already names the filter of an import that matches nothing.
    """
    wait_result = wait_result or {}
    by_name = dict(((m["kind"], m["metadata"]["name"]), m) for m in manifests or [])
    lines = []
    for entry in wait_result.get("objects") or wait_result.get("resources") or []:
        if entry.get("ready"):
            continue
        manifest = by_name.get((entry.get("kind"), entry.get("name")))
        missing = [m for m in entry.get("missing") or [] if not m.startswith("failed_expression ")]
        where = "%s %s/%s" % (entry.get("kind"), entry.get("namespace"), entry.get("name"))
        if not entry.get("found", True):
            lines.append("%s: the object does not exist" % where)
            continue
        nothing = [m for m in missing if "matches nothing" in m]
        text = "; ".join(nothing or missing) or "not ready"
        spec = (manifest or {}).get("spec") or {}
        if spec.get("managementPolicy") == "unmanaged" and "import filter" not in text:
            text += " (import filter %s)" % _filter_text(spec)
        lines.append("%s: %s" % (where, text))
    if not lines:
        return "K-ORC import failed: %s" % wait_result.get("msg", "no details")
    return "K-ORC could not import what the Keystone bootstrap should have created:\n" + "\n".join(
        "- " + line for line in lines)
