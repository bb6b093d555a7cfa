# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region report as one self-contained HTML page: inline CSS, no script, nothing fetched.

Every text of the data goes through ``escape`` (also into attributes), so a name or a message with
markup cannot change the page. States are CSS classes (``state-<state>``) and visible words; the first
phase of a ControlPlane that is not ready carries ``failing`` and the text "FAILING". Pure Python.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.report import drift
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.report import matrix as pool_matrix
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.report.data import quota_line

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 78rem;
       padding: 1rem 1.5rem; color: #1c2430; background: #fff; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2rem; border-bottom: 2px solid #d8dee6; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; }
nav a { margin-right: 1rem; } .muted { color: #5d6b7b; }
table { border-collapse: collapse; margin: .4rem 0 1rem; width: 100%; font-size: .9rem; }
th, td { border: 1px solid #d8dee6; padding: .3rem .5rem; text-align: left; vertical-align: top; }
thead th { background: #f1f4f8; }
ul.plain { margin: 0; padding-left: 1.1rem; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: .6rem; font-weight: 600; font-size: .8rem;
         border: 1px solid transparent; white-space: nowrap; }
.state-healthy .badge, .badge.state-healthy, .badge.state-ready { background: #e3f6e8; color: #1b6b35; }
.badge.state-degraded, .badge.state-blocked, .badge.state-not-ready { background: #fff4d6; color: #7a5200; }
.badge.state-unreachable, .badge.state-failed { background: #fde2e1; color: #9b1c1c; }
.badge.state-not-created, .badge.state-not-enabled { background: #eef1f5; color: #5d6b7b; }
tr.failing td { background: #fde2e1; }
.failing-mark { color: #9b1c1c; font-weight: 700; }
.waiting-mark { color: #7a5200; font-style: italic; }
#pool-matrix td.cell { text-align: center; width: 6rem; }
#pool-matrix td.member { background: #e3ecfb; color: #1d4ed8; font-weight: 700; }
#pool-matrix th.group-hypervisor { background: #e9f0fb; } #pool-matrix th.group-storage { background: #f3ecfb; }
.sharing-shared { color: #1d4ed8; } .sharing-dedicated { color: #6b21a8; } .sharing-unused { color: #5d6b7b; }
.problems { color: #9b1c1c; }
footer { margin-top: 2rem; font-size: .8rem; color: #5d6b7b; }
"""

SECTIONS = (("clusters", "Clusters"), ("pool-sharing", "Pool sharing"), ("pools", "Pools"), ("tenants", "Tenants"),
            ("operators", "Operators"), ("health", "ControlPlane health"), ("drift", "Drift"))
NO_DRIFT_REPORT = "No drift report: playbooks/drift.yml writes one beside this page."


def escape(value):
    """Text for HTML, also inside a quoted attribute."""
    text = "" if value is None else str(value)
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("'", "&#x27;"))


def _attrs(**attrs):
    return "".join(' %s="%s"' % (key.rstrip("_").replace("_", "-"), escape(value))
                   for key, value in sorted(attrs.items()) if value is not None)


def _tag(name, content="", **attrs):
    """<name attrs>content</name>; content is HTML already (escape text first)."""
    return "<%s%s>%s</%s>" % (name, _attrs(**attrs), content, name)


def _badge(state, text=None):
    return _tag("span", escape(text or state), class_="badge state-%s" % state)


def _list(items, class_="plain"):
    if not items:
        return ""
    return _tag("ul", "".join(_tag("li", escape(item)) for item in items), class_=class_)


def _table(head, rows, **attrs):
    thead = _tag("thead", _tag("tr", "".join(_tag("th", escape(h)) for h in head)))
    return _tag("table", thead + _tag("tbody", "".join(rows)), **attrs)


def _clusters(data):
    rows = []
    for c in data["clusters"]:
        cells = [_tag("th", escape(c["name"]), scope="row"),
                 _tag("td", escape(c["kind_label"]) + ("<br>" + _tag("span", escape(c["description"]), class_="muted")
                                                       if c["description"] else "")),
                 _tag("td", escape(c["version"] or "-"), class_="version"),
                 _tag("td", _badge(c["state"]), class_="state"),
                 _tag("td", _list(c["details"]) + _list(c["problems"], "plain problems"))]
        rows.append(_tag("tr", "".join(cells), class_="cluster state-%s" % c["state"], data_cluster=c["name"]))
    return _table(["cluster", "kind", "Kubernetes", "health", "details"], rows, id="cluster-table")


def _matrix(data):
    m = data["matrix"]
    if not m["rows"]:
        return _tag("p", "No tenant claims a pool of this region.", class_="muted")
    hv, st = m["hypervisor_pools"], m["storage_pools"]
    head = (_tag("tr", _tag("th", "OpenStack cluster (tenant)", rowspan="2")
                 + (_tag("th", "Hypervisor pools", colspan=str(len(hv)), class_="group-hypervisor") if hv else "")
                 + (_tag("th", "Storage pools", colspan=str(len(st)), class_="group-storage") if st else "")
                 + _tag("th", "Description", rowspan="2"))
            + _tag("tr", "".join(_tag("th", escape(p), data_pool=p, class_="pool group-%s" % (
                pool_matrix.HYPERVISOR if p in hv else pool_matrix.STORAGE)) for p in hv + st)))
    rows = []
    for row in m["rows"]:
        cells = []
        for cell in row["cells"]:
            if cell["member"]:
                text, class_ = ("&#9679; primary" if cell["primary"] else "&#9679;"), "cell member"
            else:
                text, class_ = "&middot;", "cell none"
            cells.append(_tag("td", text, class_="%s %s" % (class_, cell["kind"]), data_pool=cell["pool"],
                              data_tenant=row["tenant"], title="%s on %s" % (row["tenant"], cell["pool"])
                              if cell["member"] else None))
        rows.append(_tag("tr", _tag("th", escape(row["tenant"]), scope="row") + "".join(cells)
                         + _tag("td", escape(row["description"]), class_="description"), data_tenant=row["tenant"]))
    foot = _tag("tr", _tag("th", "used by", scope="row") + "".join(
        _tag("td", escape("%s (%d)" % (m["pools"][p]["sharing"], len(m["pools"][p]["tenants"]))),
             class_="sharing-%s" % m["pools"][p]["sharing"], data_pool=p) for p in hv + st) + _tag("td", ""))
    legend = _tag("p", "&#9679; the tenant's claim names the pool; <em>primary</em>: its first storage pool (images, "
                       "ephemeral disks, file system and object store); a pool used by one tenant is dedicated to it, "
                       "by several shared.", class_="muted")
    return _tag("table", _tag("thead", head) + _tag("tbody", "".join(rows)) + _tag("tfoot", foot),
                id="pool-matrix") + legend


def _pools(data):
    rows = []
    for p in data["pools"]:
        size = "%s Nodes" % p["workers"] if p["workers"] is not None else ""
        if p["capacity"] or p["media"]:
            size += (", " if size else "") + " ".join(x for x in (p["capacity"], p["media"]) if x)
        labels = ", ".join("%s=%s" % item for item in sorted(p["labels"].items()))
        rows.append(_tag("tr", "".join([
            _tag("th", escape(p["name"]), scope="row"), _tag("td", escape(p["kind"])),
            _tag("td", escape(p["description"])), _tag("td", escape(size)), _tag("td", escape(labels)),
            _tag("td", escape(", ".join(p["tenants"]) or "-"), class_="tenants"),
            _tag("td", escape(p["sharing"]), class_="sharing-%s" % p["sharing"]),
            _tag("td", _badge(p["state"]))]), data_pool=p["name"]))
    return _table(["pool", "kind", "description", "size", "labels", "tenants", "sharing", "health"], rows,
                  id="pool-table")


def _quotas(tenant):
    return _list([quota_line(q) for q in tenant["quotas"]])


def _tenants(data):
    rows = []
    for t in data["tenants"]:
        health = (_badge("failed", "invalid claim") + _list(t["problems"], "plain problems")) if t["problems"] else \
            (_badge("ready") if t["ready"] else _badge("not-ready", "not ready") + _list([t["health"]]))
        rows.append(_tag("tr", "".join([
            _tag("th", escape(t["name"]), scope="row"), _tag("td", escape(t["claim"])), _tag("td", escape(t["size"])),
            _tag("td", escape(t["control_plane_cluster"])),
            _tag("td", escape(", ".join(t["hypervisor_pools"])), class_="hypervisor-pools"),
            _tag("td", escape(", ".join(t["storage_pools"])), class_="storage-pools"),
            _tag("td", escape(", ".join(t["services"]))), _tag("td", _quotas(t), class_="quotas"),
            _tag("td", health)]), data_tenant=t["name"]))
    table = _table(["tenant", "claim", "size", "control-plane cluster", "hypervisor pools", "storage pools",
                    "services", "Ceph pools and quotas", "health"], rows, id="tenant-table")
    return table + _list(data["claim_problems"], "plain problems")


def _operators(data):
    if not data["operators"]:
        return _tag("p", "No cluster was asked for its HelmReleases.", class_="muted")
    out = []
    for o in data["operators"]:
        out.append(_tag("h3", escape(o["cluster"])))
        if o["error"]:
            out.append(_tag("p", escape(o["error"]), class_="problems"))
            continue
        rows = [_tag("tr", "".join([
            _tag("th", escape(r["name"]), scope="row"), _tag("td", escape(r["namespace"])),
            _tag("td", escape(r["chart"])), _tag("td", escape(r["version"]), class_="chart-version"),
            _tag("td", _badge("ready") if r["ready"] else _badge("not-ready", "not ready") + " " + escape(r["text"]))]),
            data_release=r["name"]) for r in o["releases"]]
        out.append(_table(["HelmRelease", "namespace", "chart", "version", "state"], rows,
                          class_="releases", data_cluster=o["cluster"]))
    return "".join(out)


def _phase_row(phase):
    state = phase["state"]
    mark = ""
    if phase["failing"]:
        mark = _tag("span", "&#10007; FAILING", class_="failing-mark") + " "
    elif phase["waiting"]:
        mark = _tag("span", "waiting behind it", class_="waiting-mark") + " "
    note = "" if phase["counted"] or state == "not-enabled" else " (not counted)"
    classes = "phase state-%s%s%s" % (state, " failing" if phase["failing"] else "", " waiting" if phase["waiting"] else "")
    return _tag("tr", "".join([
        _tag("td", escape(phase["phase"])), _tag("th", escape(phase["name"]), scope="row"),
        _tag("td", mark + _badge(state) + escape(note), class_="phase-state"),
        _tag("td", escape(phase["components"]))]), class_=classes, data_phase=phase["name"])


def _health(data):
    out = []
    for h in data["health"]:
        title = "%s/%s" % (h["namespace"], h["name"])
        if h["tenant"]:
            title += " - %s" % h["tenant"]
        badge = _badge("ready") if h["ready"] else _badge("failed" if h["failed"] else "not-ready",
                                                          "failed" if h["failed"] else "not ready")
        where = _tag("span", escape("on %s" % h["cluster"]), class_="muted")
        body = _tag("h3", escape(title) + " " + badge + " " + where)
        if h["phases"]:
            body += _table(["#", "phase", "state", "components"], [_phase_row(p) for p in h["phases"]],
                           class_="phases")
        if not h["ready"]:
            body += _tag("p", escape(h["summary"]), class_="summary problems")
        out.append(_tag("article", body, class_="control-plane %s" % ("ready" if h["ready"] else "not-ready"),
                        data_namespace=h["namespace"], data_name=h["name"], data_cluster=h["cluster"]))
    if not out:
        out.append(_tag("p", "No ControlPlane was found.", class_="muted"))
    return "".join(out) + _list(data["health_problems"], "plain problems")


def _drift(data):
    report = data.get("drift")
    if not report:
        return _tag("p", escape(NO_DRIFT_REPORT), class_="muted")
    out = [_tag("p", escape(drift.summary_line(report)), id="drift-summary")]
    for cluster in report["clusters"]:
        rows = [_tag("tr", _tag("th", escape(o["object"]), scope="row") + _tag("td", _list(drift.finding_lines(o))))
                for o in cluster["objects"]]
        rows += [_tag("tr", _tag("th", escape(o["object"]), scope="row")
                      + _tag("td", escape("made by the collection, declared by nothing any more")))
                 for o in cluster["undeclared"]]
        rows += [_tag("tr", _tag("th", escape(c["task"]), scope="row") + _tag("td", escape("would change")))
                 for c in cluster["changes"]]
        rows += [_tag("tr", _tag("th", escape(f["task"]), scope="row")
                      + _tag("td", escape("could not be checked: %s" % f["msg"]), class_="problems"))
                 for f in cluster["failures"]]
        table = _table(["object or task", "drift"], rows, class_="drift", data_cluster=cluster["name"])
        out.append(_tag("h3", escape(cluster["name"])) + table)
    return "".join(out)


def render(data):
    """The whole page."""
    s = data["summary"]
    summary = ("%d of %d clusters healthy; %d tenants; %d of %d ControlPlanes ready; %d of %d HelmReleases ready"
               % (s["clusters_healthy"], s["clusters"], s["tenants"], s["control_planes_ready"], s["control_planes"],
                  s["releases_ready"], s["releases"]))
    body = {"clusters": _clusters, "pool-sharing": _matrix, "pools": _pools, "tenants": _tenants,
            "operators": _operators, "health": _health, "drift": _drift}
    sections = "".join(_tag("section", _tag("h2", escape(title)) + body[key](data), id=key) for key, title in SECTIONS)
    nav = _tag("nav", "".join(_tag("a", escape(title), href="#" + key) for key, title in SECTIONS))
    title = "CobaltCore region %s - report" % data["region"]
    head = ('<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
            + _tag("title", escape(title)) + _tag("style", STYLE))
    footer = _tag("footer", "Written by playbooks/report.yml of c5c3.cobaltcore from the inventory, the tenants' "
                            "claims and read-only API requests. It holds no Secret data and no credentials.")
    page = _tag("header", _tag("h1", escape(title)) + _tag("p", escape(summary), id="summary")) + nav + sections + footer
    return "<!DOCTYPE html>\n" + _tag("html", _tag("head", head) + _tag("body", page), lang="en") + "\n"
