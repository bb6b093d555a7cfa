# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region report as Markdown (GitHub tables): the same sections as the HTML page. Pure Python."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.report.data import quota_line
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.report import drift
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.report.render_html import NO_DRIFT_REPORT, SECTIONS


def cell(value):
    """Text for one table cell: pipes, backslashes and markup characters escaped, lines joined."""
    text = "" if value is None else str(value)
    for char in ("\\", "|", "*", "_", "`", "<", ">", "[", "]"):
        text = text.replace(char, "\\" + char)
    return " ".join(text.split())


def _table(head, rows):
    lines = ["| %s |" % " | ".join(cell(h) for h in head), "|%s|" % "|".join("---" for _h in head)]
    lines.extend("| %s |" % " | ".join(row) for row in rows)
    return lines + [""]


def _clusters(data):
    return _table(["cluster", "kind", "Kubernetes", "health", "details"], [
        [cell(c["name"]), cell(c["kind_label"]), cell(c["version"] or "-"), "**%s**" % cell(c["state"]),
         cell("; ".join(c["details"] + c["problems"]))] for c in data["clusters"]])


def _matrix(data):
    m = data["matrix"]
    if not m["rows"]:
        return ["No tenant claims a pool of this region.", ""]
    pools = m["hypervisor_pools"] + m["storage_pools"]
    head = ["OpenStack cluster (tenant)"] + ["%s (%s)" % (p, m["pools"][p]["kind"]) for p in pools] + ["Description"]
    rows = []
    for row in m["rows"]:
        marks = ["x (primary)" if c["primary"] else "x" if c["member"] else "" for c in row["cells"]]
        rows.append([cell(row["tenant"])] + marks + [cell(row["description"])])
    rows.append(["*used by*"] + [cell("%s (%d)" % (m["pools"][p]["sharing"], len(m["pools"][p]["tenants"])))
                                 for p in pools] + [""])
    return _table(head, rows) + ["x: the tenant's claim names the pool; primary: its first storage pool.", ""]


def _pools(data):
    return _table(["pool", "kind", "description", "Nodes", "labels", "tenants", "sharing", "health"], [
        [cell(p["name"]), cell(p["kind"]), cell(p["description"]), cell(p["workers"]),
         cell(", ".join("%s=%s" % item for item in sorted(p["labels"].items()))), cell(", ".join(p["tenants"]) or "-"),
         cell(p["sharing"]), cell(p["state"])] for p in data["pools"]])


def _tenants(data):
    rows = []
    for t in data["tenants"]:
        quotas = "; ".join(quota_line(q) for q in t["quotas"])
        health = ("invalid claim: " + "; ".join(t["problems"])) if t["problems"] else t["health"]
        rows.append([cell(t["name"]), cell(t["claim"]), cell(t["size"]), cell(t["control_plane_cluster"]),
                     cell(", ".join(t["hypervisor_pools"])), cell(", ".join(t["storage_pools"])),
                     cell(", ".join(t["services"])), cell(quotas), cell(health)])
    lines = _table(["tenant", "claim", "size", "control-plane cluster", "hypervisor pools", "storage pools",
                    "services", "Ceph pools and quotas", "health"], rows)
    return lines + ["- %s" % cell(p) for p in data["claim_problems"]] + ([""] if data["claim_problems"] else [])


def _operators(data):
    lines = []
    for o in data["operators"]:
        lines += ["### %s" % cell(o["cluster"]), ""]
        if o["error"]:
            lines += [cell(o["error"]), ""]
            continue
        lines += _table(["HelmRelease", "namespace", "chart", "version", "state"], [
            [cell(r["name"]), cell(r["namespace"]), cell(r["chart"]), cell(r["version"]),
             cell("ready" if r["ready"] else "not ready: " + r["text"])] for r in o["releases"]])
    return lines or ["No cluster was asked for its HelmReleases.", ""]


def _health(data):
    lines = []
    for h in data["health"]:
        state = "ready" if h["ready"] else "failed" if h["failed"] else "not ready"
        tenant = " - %s" % cell(h["tenant"]) if h["tenant"] else ""
        lines += ["### %s/%s%s: %s (on %s)" % (cell(h["namespace"]), cell(h["name"]), tenant, state, cell(h["cluster"])),
                  ""]
        if h["phases"]:
            rows = []
            for p in h["phases"]:
                mark = "**FAILING** " if p["failing"] else "waiting behind it: " if p["waiting"] else ""
                rows.append([cell(p["phase"]), cell(p["name"]), mark + cell(p["state"]), cell(p["components"])])
            lines += _table(["#", "phase", "state", "components"], rows)
        if not h["ready"]:
            lines += [cell(h["summary"]), ""]
    if not lines:
        lines = ["No ControlPlane was found.", ""]
    return lines + ["- %s" % cell(p) for p in data["health_problems"]] + ([""] if data["health_problems"] else [])


def _drift(data):
    if not data.get("drift"):
        return [NO_DRIFT_REPORT, ""]
    return drift.markdown_lines(data["drift"], cell)


def render(data):
    """The whole document."""
    s = data["summary"]
    lines = ["# CobaltCore region %s - report" % cell(data["region"]), "",
             "%d of %d clusters healthy; %d tenants; %d of %d ControlPlanes ready; %d of %d HelmReleases ready."
             % (s["clusters_healthy"], s["clusters"], s["tenants"], s["control_planes_ready"], s["control_planes"],
                s["releases_ready"], s["releases"]), ""]
    body = {"clusters": _clusters, "pool-sharing": _matrix, "pools": _pools, "tenants": _tenants,
            "operators": _operators, "health": _health, "drift": _drift}
    for key, title in SECTIONS:
        lines += ["## %s" % title, ""] + body[key](data)
    lines += ["Written by playbooks/report.yml of c5c3.cobaltcore from the inventory, the tenants' claims and "
              "read-only API requests. It holds no Secret data and no credentials."]
    return "\n".join(lines) + "\n"
