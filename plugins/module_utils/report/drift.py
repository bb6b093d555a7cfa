# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift report of playbooks/drift.yml (docs/drift.md): what differs between the inventory and the region.

Its input is what drift.yml collected: one record per task of the collection's modules in its check-mode run of
the phases (plugin_utils/drift.py: the task's cluster, the objects it declares, their drift), and per cluster the
objects that carry the collection's managed-by label, of every kind the run declared there. Per cluster:

- objects that drifted: missing, a declared field that differs, a field another manager added (k8s/drift.py);
- objects the collection made that nothing declares any more (found by its label, or that the run would delete);
- tasks that would change something they report no objects for (Keystone's, Redfish's), and tasks that failed.

Pure Python; values are as the modules returned them (Secret values redacted there).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming


def parse_records(texts):
    """The task records, from the text of each host's JSON-lines file; InputError naming every bad line."""
    records, problems = [], []
    for index, text in enumerate(texts):
        for number, line in enumerate(str(text or "").splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except ValueError as error:
                problems.append(problem("file %d, line %d" % (index, number), "not JSON: %s" % error))
    if problems:
        raise InputError(problems)
    return records


def kinds_to_read(records, cluster):
    """cluster_info's objects for what the collection made on a cluster: every kind the run declared there,
    selected by the collection's managed-by label, metadata only (so Secrets too: their data stays on the server)."""
    kinds = sorted(set((ref["apiVersion"], ref["kind"]) for record in records if record.get("cluster") == cluster
                       for ref in record.get("declared") or []))
    return [{"api_version": api_version, "kind": kind, "metadata_only": True,
             "label_selector": "%s=%s" % (naming.MANAGED_BY_LABEL, naming.MANAGED_BY)} for api_version, kind in kinds]


def managed_of(reads):
    """{cluster: the objects found} from each cluster's cluster_info result (a failed or skipped read: none)."""
    managed = {}
    for cluster, read in (reads or {}).items():
        ok = isinstance(read, dict) and not read.get("failed") and not read.get("skipped")
        managed[cluster] = [item for entry in (read.get("objects") or [] if ok else [])
                            if not entry.get("error") for item in entry.get("items") or []]
    return managed


def _key(ref):
    return (ref.get("apiVersion"), ref.get("kind"), ref.get("namespace") or None, ref.get("name"))


def describe(ref):
    where = "%s/" % ref["namespace"] if ref.get("namespace") else ""
    return "%s %s%s" % (ref.get("kind"), where, ref.get("name"))


def _validate(records, managed):
    problems = []
    if not isinstance(records, list):
        problems.append(problem("records", "must be a list of drift.yml's task records"))
    else:
        problems.extend(problem("records[%d]" % i, "must be a task record (a mapping with task and cluster)")
                        for i, r in enumerate(records) if not isinstance(r, dict) or "task" not in r or "cluster" not in r)
    if not isinstance(managed, dict):
        problems.append(problem("managed", "must map each cluster to the objects found by the managed-by label"))
    if problems:
        raise InputError(problems)


def _live_ref(obj):
    meta = obj.get("metadata") or {}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "namespace": meta.get("namespace"),
            "name": meta.get("name")}


def _cluster(name):
    return {"name": name, "objects": [], "undeclared": [], "changes": [], "failures": []}


def _merge(objects, entry, task):
    """One entry per object, the findings of every task that declares it."""
    key = _key(entry)
    found = objects.get(key)
    if found is None:
        found = objects[key] = dict((k, entry.get(k)) for k in ("apiVersion", "kind", "namespace", "name"))
        found.update(object=describe(entry), missing=False, undeclared=False, fields=[], foreign=[], conflicts=[],
                     tasks=[])
    found["missing"] = found["missing"] or bool(entry.get("missing"))
    found["undeclared"] = found["undeclared"] or bool(entry.get("undeclared"))
    for kind in ("fields", "foreign", "conflicts"):
        for item in entry.get(kind) or []:
            if item not in found[kind]:
                found[kind].append(item)
    if task not in found["tasks"]:
        found["tasks"].append(task)


def compose(region, records, managed, run_records=()):
    """{region, drift, summary, clusters: [{name, objects, undeclared, changes, failures}]}; InputError when the
    input is not what drift.yml collects.

    run_records: predicates of the live objects a run makes that no inventory declares (the run lock, an on-demand
    Backup): never reported as no longer declared. Each vendor's package names its own."""
    _validate(records, managed)
    clusters, objects, declared = {}, {}, {}
    for record in records:
        cluster = record["cluster"]
        entry = clusters.setdefault(cluster, _cluster(cluster))
        declared.setdefault(cluster, set()).update(_key(ref) for ref in record.get("declared") or [])
        for item in record.get("drift") or []:
            _merge(objects.setdefault(cluster, {}), item, record["task"])
        if record.get("failed"):
            entry["failures"].append({"task": record["task"], "msg": record.get("msg") or "failed"})
        elif record.get("changed") and not record.get("drift") and not record.get("declared"):
            entry["changes"].append({"task": record["task"]})
    for cluster, found in sorted(managed.items()):
        entry = clusters.setdefault(cluster, _cluster(cluster))
        known = declared.get(cluster, set()) | set(objects.get(cluster, {}))
        refs = [_live_ref(o) for o in found or [] if not any(is_record(o) for is_record in run_records)]
        entry["undeclared"] = sorted((dict(r, object=describe(r)) for r in refs if _key(r) not in known),
                                     key=lambda r: r["object"])
    for cluster, found in objects.items():
        clusters[cluster]["objects"] = sorted(found.values(), key=lambda o: o["object"])
    ordered = [clusters[name] for name in sorted(clusters)]
    summary = {
        "objects": sum(len(c["objects"]) for c in ordered),
        "missing": sum(1 for c in ordered for o in c["objects"] if o["missing"]),
        "fields": sum(len(o["fields"]) for c in ordered for o in c["objects"]),
        "foreign": sum(len(o["foreign"]) for c in ordered for o in c["objects"]),
        "undeclared": sum(len(c["undeclared"]) for c in ordered)
        + sum(1 for c in ordered for o in c["objects"] if o["undeclared"]),
        "changes": sum(len(c["changes"]) for c in ordered),
        "failures": sum(len(c["failures"]) for c in ordered),
    }
    drifted = any(summary[k] for k in ("objects", "undeclared", "changes"))
    return {"region": region, "drift": drifted, "summary": summary,
            "clusters": [c for c in ordered if c["objects"] or c["undeclared"] or c["changes"] or c["failures"]]}


def summary_line(report):
    s = report["summary"]
    if not report["drift"] and not s["failures"]:
        return "No drift: every object the inventory declares is as declared."
    return ("%d objects drifted (%d missing, %d fields differ, %d fields of other managers); %d objects no longer "
            "declared; %d tasks would change what they report no objects for; %d tasks failed"
            % (s["objects"], s["missing"], s["fields"], s["foreign"], s["undeclared"], s["changes"], s["failures"]))


def finding_lines(obj):
    """Each finding of one object as a line of text (the report's tables and drift.yml's output)."""
    lines = []
    if obj.get("missing"):
        lines.append("missing: the inventory declares it, the cluster does not have it")
    if obj.get("undeclared"):
        lines.append("no longer declared: the next run deletes it")
    lines.extend("%s: declared %s, live %s" % (f["field"], _value(f["declared"]), _value(f["live"]))
                 for f in obj.get("fields") or [])
    lines.extend("%s: set by %s (live %s), not declared" % (f["field"], ", ".join(f["managers"]), _value(f["live"]))
                 for f in obj.get("foreign") or [])
    lines.extend("%s (the next run fails on it: it does not take fields over)" % c for c in obj.get("conflicts") or [])
    return lines


def report_lines(report):
    """One line per finding, '<cluster>: <object or task>: <what>' (drift.yml's output)."""
    lines = ["%s: %s: %s" % (c["name"], o["object"], line) for c in report["clusters"] for o in c["objects"]
             for line in finding_lines(o)]
    lines += ["%s: %s: made by the collection, declared by nothing any more" % (c["name"], o["object"])
              for c in report["clusters"] for o in c["undeclared"]]
    lines += ["%s: %s: would change" % (c["name"], t["task"]) for c in report["clusters"] for t in c["changes"]]
    lines += ["%s: %s: could not be checked: %s" % (c["name"], f["task"], f["msg"])
              for c in report["clusters"] for f in c["failures"]]
    return lines


def _value(value):
    return json.dumps(value, sort_keys=True) if not isinstance(value, str) else value


def markdown(report, cell):
    """The drift report as a Markdown document (cell escapes a table cell)."""
    return "\n".join(["# CobaltCore region %s - drift" % cell(report["region"]), ""] + markdown_lines(report, cell)) + "\n"


def markdown_lines(report, cell):
    """The report's body as Markdown lines (cell escapes a table cell)."""
    lines = [summary_line(report), ""]
    for cluster in report["clusters"]:
        lines += ["### %s" % cell(cluster["name"]), ""]
        if cluster["objects"]:
            lines += ["| object | drift |", "|---|---|"]
            lines += ["| %s | %s |" % (cell(o["object"]), "<br>".join(cell(line) for line in finding_lines(o)))
                      for o in cluster["objects"]]
            lines.append("")
        if cluster["undeclared"]:
            lines += ["Made by the collection, declared by nothing any more:", ""]
            lines += ["- %s" % cell(o["object"]) for o in cluster["undeclared"]] + [""]
        if cluster["changes"]:
            lines += ["Would change (no objects to show):", ""]
            lines += ["- %s" % cell(c["task"]) for c in cluster["changes"]] + [""]
        if cluster["failures"]:
            lines += ["Could not be checked:", ""]
            lines += ["- %s: %s" % (cell(f["task"]), cell(f["msg"])) for f in cluster["failures"]] + [""]
    return lines
