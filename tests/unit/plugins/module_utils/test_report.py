# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""report/: the region report's data, seed 001's pool-sharing matrix, the HTML page and the Markdown document."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import re
from html.parser import HTMLParser

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health as cph
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import load_claim_files
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.composition import region_control_plane
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.report import data, matrix, render_html, render_markdown

SECRET = "s3cr3t-never-shown"


def tenant(name, hv, st):
    return {"name": name, "hypervisor_pools": hv, "storage_pools": st}


# ---------------------------------------------------------------------------
# The matrix

def test_matrix_of_seed_001_first_example_dedicated_and_shared():
    # Seed 001: customer-a-prod (hv-pool-a, hv-pool-b, st-pool-a) "Dedicated + shared pools",
    # customer-b-staging (hv-pool-a, st-pool-a) "Only shared pools".
    m = matrix.build([tenant("customer-a-prod", ["hv-pool-a", "hv-pool-b"], ["st-pool-a"]),
                      tenant("customer-b-staging", ["hv-pool-a"], ["st-pool-a"])],
                     ["hv-pool-a", "hv-pool-b"], ["st-pool-a", "st-pool-b"])
    assert [r["tenant"] for r in m["rows"]] == ["customer-a-prod", "customer-b-staging"]
    assert [c["member"] for c in m["rows"][0]["cells"]] == [True, True, True, False]
    assert [c["member"] for c in m["rows"][1]["cells"]] == [True, False, True, False]
    assert [c["primary"] for c in m["rows"][0]["cells"]] == [False, False, True, False]
    assert m["rows"][0]["description"] == "dedicated + shared pools"
    assert m["rows"][1]["description"] == "only shared pools"
    assert m["pools"]["hv-pool-a"] == {"kind": "hypervisor", "tenants": ["customer-a-prod", "customer-b-staging"],
                                       "sharing": "shared"}
    assert m["pools"]["hv-pool-b"]["sharing"] == "dedicated"
    assert m["pools"]["st-pool-b"] == {"kind": "storage", "tenants": [], "sharing": "unused"}


def test_matrix_multi_storage_and_pools_the_region_lacks():
    m = matrix.build([tenant("internal-prod", ["hv-pool-b", "hv-pool-x"], ["st-pool-a", "st-pool-b"])],
                     ["hv-pool-a", "hv-pool-b"], ["st-pool-a", "st-pool-b"])
    assert m["rows"][0]["description"] == "only dedicated pools, multi-storage"
    assert "hv-pool-x" not in m["pools"]
    assert [c["pool"] for c in m["rows"][0]["cells"] if c["member"]] == ["hv-pool-b", "st-pool-a", "st-pool-b"]
    assert matrix.build([], ["hv"], [])["rows"] == []


# ---------------------------------------------------------------------------
# Results as the read modules return them

def cond(ctype, status="True", reason=None, message=None):
    found = {"type": ctype, "status": status}
    found.update((k, v) for k, v in (("reason", reason), ("message", message)) if v)
    return found


def _owned(api_version, kind, name, namespace, status):
    return {"apiVersion": api_version, "kind": kind, "status": status, "metadata": {
        "name": name, "namespace": namespace, "generation": 1, "ownerReferences": [
            {"apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane", "name": "cp", "uid": "uid-" + namespace,
             "controller": True}]}}


def _ready(kind):
    if kind == "RabbitmqCluster":
        return {"observedGeneration": 1, "conditions": [cond("AllReplicasReady"), cond("ClusterAvailable")]}
    if kind == "Valkey":
        return {"observedGeneration": 1, "state": "Ready"}
    if kind == "Memcached":
        return {"observedGeneration": 1, "conditions": [cond("Available"), cond("Progressing", "False"),
                                                        cond("Degraded", "False")]}
    return {"observedGeneration": 1, "conditions": [cond("Ready")]}


def health_report(namespace, mariadb=None):
    """control_plane_health's report of a ControlPlane whose every enabled CR is ready (MariaDB: given status)."""
    cp = region_control_plane({"name": "lab"}, ["keystone", "glance", "placement", "nova", "neutron", "cinder"])
    cp["metadata"].update(namespace=namespace, uid="uid-" + namespace)
    objects = {}
    for name, kinds in cph.COMPONENT_KINDS.items():
        for api_version, kind in kinds:
            if name == cph.KORC:
                objects[(api_version, kind)] = [{"apiVersion": api_version, "kind": kind, "metadata": {
                    "name": kind.lower(), "namespace": namespace, "generation": 1}, "status": {"conditions": [
                        dict(cond("Available"), observedGeneration=1),
                        dict(cond("Progressing", "False"), observedGeneration=1)]}}]
            else:
                status = mariadb if kind == "MariaDB" and mariadb else _ready(kind)
                objects[(api_version, kind)] = [_owned(api_version, kind, name, namespace, status)]
    report = cph.build_report(cp, objects, evaluate)
    report["table"] = cph.table(report)
    return report


GALERA = {"observedGeneration": 1, "conditions": [cond("Ready", "False", "GaleraNotReady",
                                                       "Galera not ready: 1 of 3 members synced <b>x</b>")]}


def waited(entries, failed=False, msg=None):
    key = "objects" if failed else "resources"
    result = {key: entries, "changed": False, "invocation": {"module_args": {"token": SECRET}}}
    if failed:
        result.update(failed=True, msg=msg or "not ready")
    return result


def release(name, namespace, chart, version, ready=True, missing=None):
    return {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "name": name, "namespace": namespace,
            "found": True, "ready": ready, "terminal": False, "missing": missing or [],
            "status": {"history": [{"chartName": chart, "chartVersion": version, "digest": SECRET}],
                       "lastAttemptedRevision": version, "lastAttemptedValuesChecksum": SECRET}}


def info(version="v1.33.4"):
    return {"version": {"gitVersion": version, "major": "1"}, "api_groups": ["core"], "changed": False}


@pytest.fixture
def lab(inventory_of, tenants_dir):
    return inventory_of("lab"), load_claim_files(tenants_dir("lab"))


def healthy_gathered(failing=False):
    tenants = ["openstack-lab-tenant-a", "openstack-lab-tenant-b"]
    reports = [health_report("openstack", GALERA if failing else None)] + [health_report(ns) for ns in tenants]
    shoots = [{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot", "name": name,
               "namespace": "garden-cobaltcore", "found": True, "ready": True, "terminal": False, "missing": [],
               "status": {"lastOperation": {"type": "Reconcile", "state": "Succeeded", "progress": 100},
                          "credentials": {"rotation": SECRET}}}
              for name in ("lab-cp", "hv-pool-a", "hv-pool-b", "st-pool-a", "st-pool-b")]
    gathered = {
        "garden": {"kubeconfig_exists": True, "cluster_info": info(), "shoots": waited(shoots)},
        "baremetal": {"kubeconfig_exists": True, "cluster_info": info()},
        "management-cluster": {"kubeconfig_exists": True, "cluster_info": info(),
                               "releases": waited([release("external-secrets", "external-secrets",
                                                           "external-secrets", "0.16.2")])},
        "lab-control-plane": {"kubeconfig_exists": True, "cluster_info": info(),
                              "releases": waited([release("c5c3-operator", "c5c3-system", "c5c3-operator", "0.1.0"),
                                                  release("cert-manager", "cert-manager", "cert-manager", "v1.21.2")]),
                              "health": {"ready": not failing, "control_planes": reports, "changed": False}},
    }
    for pool, workers in (("hv-pool-a", 2), ("hv-pool-b", 1)):
        gathered[pool] = {"kubeconfig_exists": True, "cluster_info": info(),
                          "releases": waited([release("hypervisor-operator", "kvm-system", "hypervisor-operator",
                                                      "0.1.0")]),
                          "hypervisors": {"ready": True, "nodes": [{"name": "n%d" % i} for i in range(workers)],
                                          "hypervisors": [{"name": "n%d" % i, "ready": True} for i in range(workers)],
                                          "problems": [], "changed": False}}
    for pool in ("st-pool-a", "st-pool-b"):
        gathered[pool] = {"kubeconfig_exists": True, "cluster_info": info(),
                          "releases": waited([release("rook-ceph", "rook-ceph", "rook-ceph", "v1.17.9")]),
                          "ceph": waited([{"apiVersion": "ceph.rook.io/v1", "kind": "CephCluster", "name": "rook-ceph",
                                           "namespace": "rook-ceph", "found": True, "ready": True, "missing": [],
                                           "status": {"phase": "Ready", "ceph": {"health": "HEALTH_OK",
                                                                                 "fsid": SECRET}}}])}
    return gathered


# ---------------------------------------------------------------------------
# The data

def test_compose_the_lab_region(lab):
    inventory, claims = lab
    composed = data.compose(inventory, claims, healthy_gathered())
    assert composed["region"] == "lab"
    clusters = dict((c["name"], c) for c in composed["clusters"])
    assert list(clusters) == ["garden", "baremetal", "management-cluster", "lab-control-plane", "hv-pool-a",
                              "hv-pool-b", "st-pool-a", "st-pool-b"]
    assert all(c["state"] == "healthy" and c["version"] == "v1.33.4" for c in clusters.values()), clusters
    assert "Shoot lab-cp: Reconcile Succeeded (100%)" in clusters["lab-control-plane"]["details"]
    assert "Hypervisors ready: 2 of 2 Nodes" in clusters["hv-pool-a"]["details"]
    assert "CephCluster Ready, HEALTH_OK" in clusters["st-pool-a"]["details"]
    assert "ControlPlanes ready: 3 of 3" in clusters["lab-control-plane"]["details"]
    # The lab's claims: lab-tenant-a on hv-pool-a and st-pool-a, lab-tenant-b on every pool.
    rows = dict((r["tenant"], [c["pool"] for c in r["cells"] if c["member"]]) for r in composed["matrix"]["rows"])
    assert rows == {"lab-tenant-a": ["hv-pool-a", "st-pool-a"],
                    "lab-tenant-b": ["hv-pool-a", "hv-pool-b", "st-pool-a", "st-pool-b"]}
    pools = dict((p["name"], p) for p in composed["pools"])
    assert pools["hv-pool-a"]["tenants"] == ["lab-tenant-a", "lab-tenant-b"] and pools["hv-pool-a"]["sharing"] == "shared"
    assert pools["hv-pool-b"]["sharing"] == "dedicated" and pools["st-pool-b"]["media"] == "hdd"
    tenants = dict((t["name"], t) for t in composed["tenants"])
    b = tenants["lab-tenant-b"]
    assert b["namespace"] == "openstack-lab-tenant-b" and b["size"] == "small" and b["ready"] is True
    assert "manila" in b["services"]
    volumes = [q for q in b["quotas"] if q["role"] == "volumes"]
    assert [(q["storage_pool"], q["quota"], q["replication"]) for q in volumes] == [
        ("st-pool-a", "100 GiB", 2), ("st-pool-b", "100 GiB", 2)]
    assert [q["role"] for q in b["quotas"] if q["storage_pool"] == "st-pool-b"] == ["volumes"]
    assert [q["quota"] for q in b["quotas"] if q["role"] != "volumes"] == [None, None, None]
    assert "filesystem" in [q["role"] for q in b["quotas"] if q["storage_pool"] == "st-pool-a"]
    assert [q["quota"] for q in tenants["lab-tenant-a"]["quotas"] if q["role"] == "volumes"] == ["unlimited"]
    ops = dict((o["cluster"], o["releases"]) for o in composed["operators"])
    assert [(r["name"], r["chart"], r["version"]) for r in ops["lab-control-plane"]] == [
        ("c5c3-operator", "c5c3-operator", "0.1.0"), ("cert-manager", "cert-manager", "v1.21.2")]
    assert "garden" not in ops
    assert [(h["namespace"], h["tenant"], h["ready"]) for h in composed["health"]] == [
        ("openstack", "(the region)", True), ("openstack-lab-tenant-a", "lab-tenant-a", True),
        ("openstack-lab-tenant-b", "lab-tenant-b", True)]
    assert composed["summary"] == {"clusters": 8, "clusters_healthy": 8, "tenants": 2, "control_planes": 3,
                                   "control_planes_ready": 3, "releases": 7, "releases_ready": 7}


def test_a_failing_phase_is_marked_and_the_phases_behind_it(lab):
    inventory, claims = lab
    composed = data.compose(inventory, claims, healthy_gathered(failing=True))
    region = composed["health"][0]
    assert region["namespace"] == "openstack" and region["ready"] is False
    phases = dict((p["name"], p) for p in region["phases"])
    assert phases["infrastructure"]["failing"] and phases["infrastructure"]["state"] == "blocked"
    assert "GaleraNotReady" in phases["infrastructure"]["components"]
    assert not phases["identity"]["failing"]
    assert "GaleraNotReady" in region["summary"]
    assert [p["failing"] for h in composed["health"][1:] for p in h["phases"]] == [False] * 14
    # The cluster itself is healthy: the OpenStack cluster on it is what fails.
    cluster = next(c for c in composed["clusters"] if c["name"] == "lab-control-plane")
    assert cluster["state"] == "healthy" and "ControlPlanes ready: 2 of 3" in cluster["details"]


def test_clusters_not_created_unreachable_and_failing_reads(lab):
    inventory, claims = lab
    gathered = healthy_gathered()
    gathered["hv-pool-b"] = {"kubeconfig_exists": False}
    gathered["baremetal"]["cluster_info"] = {"failed": True, "msg": "connection refused"}
    gathered["st-pool-b"]["ceph"] = waited([{"name": "rook-ceph", "namespace": "rook-ceph", "found": True,
                                             "ready": False, "missing": ["status.phase is Progressing"],
                                             "status": {"phase": "Progressing"}}], failed=True)
    gathered["management-cluster"]["releases"] = {"failed": True, "msg": "no HelmRelease matches the label selector"}
    gathered["garden"]["shoots"]["resources"][2].update(ready=False, missing=["lastOperation Reconcile Processing"])
    clusters = dict((c["name"], c) for c in data.compose(inventory, claims, gathered)["clusters"])
    assert clusters["hv-pool-b"]["state"] == "not-created" and clusters["hv-pool-b"]["version"] == ""
    assert "Shoot hv-pool-b: lastOperation Reconcile Processing" in clusters["hv-pool-b"]["problems"]
    assert clusters["baremetal"]["state"] == "unreachable"
    assert clusters["baremetal"]["problems"] == ["API server not reachable: connection refused"]
    assert clusters["st-pool-b"]["state"] == "degraded"
    assert clusters["st-pool-b"]["problems"] == ["CephCluster rook-ceph/rook-ceph: status.phase is Progressing"]
    assert clusters["management-cluster"]["problems"] == ["HelmReleases: no HelmRelease matches the label selector"]


def test_an_invalid_claim_is_reported_not_failed_on(lab):
    inventory, claims = lab
    bad = copy.deepcopy(claims[0])
    bad["metadata"]["name"] = "lab-tenant-c"
    bad["spec"]["hypervisorClusters"] = ["hv-pool-z"]
    composed = data.compose(inventory, claims + [bad], healthy_gathered())
    c = next(t for t in composed["tenants"] if t["name"] == "lab-tenant-c")
    assert c["problems"] and "hv-pool-z" in " ".join(c["problems"]) and c["hypervisor_pools"] == ["hv-pool-z"]
    assert "lab-tenant-c" not in [r["tenant"] for r in composed["matrix"]["rows"]]
    assert next(t for t in composed["tenants"] if t["name"] == "lab-tenant-a")["health"] == "ready"


def test_malformed_input_names_every_problem(lab):
    inventory, claims = lab
    with pytest.raises(InputError) as error:
        data.compose(inventory, claims, {"garden": {"cluster_info": "up", "secrets": {}}, "hv-pool-a": []})
    assert error.value.problems == [
        "gathered.garden.secrets: is not a result the report reads",
        "gathered.garden.cluster_info: must be a registered result (a mapping)",
        "gathered.hv-pool-a: must be a mapping"]
    with pytest.raises(InputError):
        data.compose({"name": "Bad Name"}, [], {})
    with pytest.raises(InputError):
        data.compose(inventory, "claims", {})


# ---------------------------------------------------------------------------
# The page and the document

class Page(HTMLParser):
    """What a browser would see: the elements with their attributes, the scripts, every external reference."""

    def __init__(self):
        HTMLParser.__init__(self)
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(page):
    parser = Page()
    parser.feed(page)
    return parser


def test_the_page_is_self_contained_and_has_every_section(lab):
    inventory, claims = lab
    page = render_html.render(data.compose(inventory, claims, healthy_gathered()))
    parsed = parse(page)
    assert page.startswith("<!DOCTYPE html>")
    tags = [t for t, _a in parsed.tags]
    assert "script" not in tags and "link" not in tags and "img" not in tags and "iframe" not in tags
    assert not re.search(r"(src|href)=\"(?!#)", page) and "url(" not in page and "@import" not in page
    assert [a["id"] for t, a in parsed.tags if t == "section"] == [
        "clusters", "pool-sharing", "pools", "tenants", "operators", "health", "drift"]
    members = sorted((a["data-tenant"], a["data-pool"]) for t, a in parsed.tags
                     if t == "td" and "member" in a.get("class", "").split())
    assert members == [("lab-tenant-a", "hv-pool-a"), ("lab-tenant-a", "st-pool-a"), ("lab-tenant-b", "hv-pool-a"),
                       ("lab-tenant-b", "hv-pool-b"), ("lab-tenant-b", "st-pool-a"), ("lab-tenant-b", "st-pool-b")]
    assert "failing" not in page.split("</style>", 1)[1].replace("failing-mark", "")
    assert SECRET not in page


def test_the_failing_phase_is_marked_on_the_page_and_in_markdown(lab):
    inventory, claims = lab
    composed = data.compose(inventory, claims, healthy_gathered(failing=True))
    page = render_html.render(composed)
    rows = [a for t, a in parse(page).tags if t == "tr" and "failing" in a.get("class", "").split()]
    assert [r["data-phase"] for r in rows] == ["infrastructure"]
    assert "state-blocked" in rows[0]["class"].split()
    row = re.search(r'<tr class="[^"]*failing[^"]*"[^>]*>(.*?)</tr>', page).group(1)
    assert "FAILING" in row and "GaleraNotReady" in row
    # The condition's message is text, never markup.
    assert "&lt;b&gt;x&lt;/b&gt;" in row and "<b>x</b>" not in page
    md = render_markdown.render(composed)
    assert re.search(r"^\| 1 \| infrastructure \| \*\*FAILING\*\* blocked \| .*GaleraNotReady", md, re.M), md
    assert "\\<b\\>x\\</b\\>" in md


def test_the_markdown_document(lab):
    inventory, claims = lab
    md = render_markdown.render(data.compose(inventory, claims, healthy_gathered()))
    assert md.startswith("# CobaltCore region lab - report\n")
    assert [line for line in md.splitlines() if line.startswith("## ")] == [
        "## Clusters", "## Pool sharing", "## Pools", "## Tenants", "## Operators", "## ControlPlane health", "## Drift"]
    assert "| lab-tenant-a | x |  | x (primary) |  | only shared pools |" in md
    assert "| lab-tenant-b | x | x | x (primary) | x | dedicated + shared pools, multi-storage |" in md
    assert "st-pool-b: volumes lab-tenant-b-volumes, 2 replicas, quota 100 GiB |" in md
    assert SECRET not in md
    # Every table row has as many cells as its header.
    for block in re.findall(r"((?:^\|.*\|\n)+)", md, re.M):
        widths = set(len(re.findall(r"(?<!\\)\|", line)) for line in block.splitlines())
        assert len(widths) == 1, block


def test_escaping():
    assert render_html.escape('<a href="x">&\'') == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;"
    assert render_html.escape(None) == ""
    assert render_markdown.cell("a|b\nc *d* <e>") == "a\\|b c \\*d\\* \\<e\\>"


def test_the_same_region_gives_the_same_files(lab):
    inventory, claims = lab
    first = data.compose(inventory, claims, healthy_gathered())
    again = data.compose(copy.deepcopy(inventory), copy.deepcopy(claims), healthy_gathered())
    assert render_html.render(first) == render_html.render(again)
    assert render_markdown.render(first) == render_markdown.render(again)
