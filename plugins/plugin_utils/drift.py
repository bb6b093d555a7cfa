# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""drift.yml's collection: each task of the collection's modules records what it found, one JSON line per task.

With the variable ``cobaltcore_drift_dir`` set (drift.yml sets it for its check-mode run of the phases), the
action plugin asks the module for its objects' drift: it names a file in DRIFT_ENV, the module writes what it
declares and found there (k8s/connection.py), and the action appends the task's records, one per cluster, to
``<dir>/<inventory_hostname>.jsonl``: a host's tasks run one after another, so its file has one writer.
report/drift.py composes the records into the report.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.drift import REDACTED, map_values

DRIFT_DIR_VAR = "cobaltcore_drift_dir"


def read_found(path):
    """What the module wrote (k8s/connection.py write_drift): {declared, drift}; empty when it wrote nothing (a
    module that manages no Kubernetes objects, or one that failed before)."""
    try:
        with open(path) as handle:
            text = handle.read()
    except (IOError, OSError):
        text = ""
    found = json.loads(text) if text.strip() else {}
    return {"declared": found.get("declared") or [], "drift": found.get("drift") or []}


def options_of(found):
    """The kubeconfig options the module's objects came through (kubeconfig, or secret_copy's target_kubeconfig)."""
    return sorted(set(entry.get("via") or "kubeconfig" for key in ("declared", "drift") for entry in found[key])
                  | set(["kubeconfig"]))


def task_records(task, host, clusters, result, found, no_log):
    """The lines a task adds, one per cluster it declared objects on (the task's own first): the objects it
    declares, their drift, and whether it would change something (a module that reports no objects, such as
    Keystone's, says only that)."""
    records = []
    for option in ["kubeconfig"] + [o for o in sorted(clusters) if o != "kubeconfig"]:
        def mine(entry):
            return (entry.get("via") or "kubeconfig") == option
        declared = [_ref(e) for e in found["declared"] if mine(e)]
        drift = [dict((k, v) for k, v in e.items() if k != "via") for e in found["drift"] if mine(e)]
        if option != "kubeconfig" and not declared and not drift:
            continue
        records.append({
            "task": task,
            "host": host,
            "cluster": clusters[option],
            # A change the objects do not explain: a module that talks to something else (Keystone, Redfish).
            "changed": bool(result.get("changed")) and option == "kubeconfig" and not has_objects(found),
            "failed": bool(result.get("failed")) and option == "kubeconfig",
            "skipped": bool(result.get("skipped")),
            "msg": None if no_log or not result.get("failed") else result.get("msg"),
            "declared": declared,
            # A no_log task's entries say where they differ, never what.
            "drift": [map_values(e, lambda value: REDACTED) for e in drift] if no_log else drift,
        })
    return records


def has_objects(found):
    return bool(found["declared"] or found["drift"])


def _ref(entry):
    return dict((k, entry.get(k)) for k in ("apiVersion", "kind", "namespace", "name"))


def cluster_of(kubeconfig, host, host_kubeconfigs):
    """The inventory host whose cluster the module talked to: the task's own, or the one whose
    cobaltcore_kubeconfig the task passed (a task that reads the management cluster from another host)."""
    if kubeconfig is None or kubeconfig == host_kubeconfigs.get(host):
        return host
    for name, value in sorted(host_kubeconfigs.items()):
        if value == kubeconfig:
            return name
    return "%s (another kubeconfig)" % host


def append(directory, host, record):
    path = os.path.join(directory, "%s.jsonl" % host)
    with open(path, "a") as handle:
        handle.write(json.dumps(record, sort_keys=True, default=str) + "\n")
