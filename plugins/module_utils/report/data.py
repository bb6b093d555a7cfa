# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region report's data, composed from what playbooks/report.yml read (pure Python).

``compose(region, claims, gathered)`` takes

* ``region``: the region as the inventory describes it (anything ``region.model.build_region`` accepts);
* ``claims``: the tenants' OpenStackCluster claims (the tenants directory, or the management cluster);
* ``gathered``: per inventory host the registered results of the read modules - ``kubeconfig_exists``,
  ``cluster_info`` (c5c3.cobaltcore.cluster_info), ``releases`` (c5c3.cobaltcore.wait over the collection's
  HelmReleases), ``shoots`` (the garden: c5c3.cobaltcore.wait over the region's Shoots), ``hypervisors``
  (c5c3.cobaltcore.hypervisor_nodes), ``ceph`` (c5c3.cobaltcore.wait over the pool's CephCluster) and
  ``health`` (c5c3.cobaltcore.control_plane_health); any may be missing or a skipped result.

and returns plain data: clusters with their versions and health, the pool-sharing matrix, pools with their
tenants, tenants with their pools and quotas, operators with chart versions, ControlPlane health by phase.
Only named fields of the results are taken (never whole objects), so nothing else of them - and no Secret,
which no read module of the report returns - reaches the report.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health as cph
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claim_status import valid_claims
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import (
    claim_list, claim_ref, claim_spec_with_defaults, validate_claims)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.composition import storage_placements
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import SERVICE_GROUPS, build_region
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.report import matrix

HEALTHY, DEGRADED, UNREACHABLE, NOT_CREATED = "healthy", "degraded", "unreachable", "not-created"
KIND_LABELS = {
    "gardener": "Gardener (garden)",
    "ironcore": "IronCore (bare metal)",
    "management": "management",
    "control_plane": "control plane",
    "hypervisor": "hypervisor pool",
    "storage": "storage pool",
}
GATHERED_KEYS = ("kubeconfig_exists", "cluster_info", "releases", "shoots", "hypervisors", "ceph", "health")
REPLICATION = {"volumes": ("volumePool", "replication"), "images": ("imagePool", "replication"),
               "ephemeral": ("ephemeralPool", "replication")}


def _validate(gathered):
    if not isinstance(gathered, dict):
        raise InputError([problem("gathered", "must be a mapping of inventory host to its read results")])
    problems = []
    for host in sorted(gathered):
        entry = gathered[host]
        if not isinstance(entry, dict):
            problems.append(problem("gathered.%s" % host, "must be a mapping"))
            continue
        problems.extend(problem("gathered.%s.%s" % (host, key), "is not a result the report reads")
                        for key in sorted(entry) if key not in GATHERED_KEYS)
        problems.extend(problem("gathered.%s.%s" % (host, key), "must be a registered result (a mapping)")
                        for key in GATHERED_KEYS[1:] if entry.get(key) is not None and not isinstance(entry[key], dict))
    if problems:
        raise InputError(problems)


def _ran(result):
    """The registered result of a task that ran, or None (missing, skipped)."""
    if not isinstance(result, dict) or result.get("skipped"):
        return None
    return result


def _waited(result):
    """(objects, error) of a c5c3.cobaltcore.wait result: its objects' readiness (from `resources`, or from
    `objects` when the wait failed), and the message when it read nothing; (None, None) when it did not run."""
    result = _ran(result)
    if result is None:
        return None, None
    found = result.get("resources") or result.get("objects") or []
    objects = [o for o in found if isinstance(o, dict)]
    return objects, (result.get("msg") or "no answer") if not objects and result.get("failed") else None


def _missing(entry):
    return "; ".join(entry.get("missing") or []) or "not ready"


def _status(entry):
    return entry.get("status") if isinstance(entry.get("status"), dict) else {}


# ---------------------------------------------------------------------------
# Clusters

def _cluster_order(region):
    """(host, kind, pool or None) of every cluster: the service clusters, then the pools in inventory order."""
    order = [(region.clusters[group], group, None) for group in SERVICE_GROUPS if region.clusters.get(group)]
    for kind in ("control_plane", "hypervisor", "storage"):
        order.extend((pool.name, kind, pool) for pool in region.pools(kind))
    return order


def _shoot(pool, shoots):
    """(detail, problem) of a pool's Shoot in the garden's wait result."""
    objects, error = shoots
    if objects is None:
        return None, None
    if error:
        return None, "Shoot %s: %s" % (naming.shoot_name(pool.to_dict()), error)
    name = naming.shoot_name(pool.to_dict())
    entry = next((o for o in objects if o.get("name") == name), None)
    if entry is None or not entry.get("found", True):
        return None, "Shoot %s does not exist on the garden" % name
    last = _status(entry).get("lastOperation") or {}
    detail = "Shoot %s: %s %s" % (name, last.get("type") or "?", last.get("state") or "?")
    if last.get("progress") is not None:
        detail += " (%s%%)" % last["progress"]
    return detail, None if entry.get("ready") else "Shoot %s: %s" % (name, _missing(entry))


def releases_of(result):
    """(releases, error) of one cluster: {name, namespace, chart, version, ready, text} per HelmRelease."""
    objects, error = _waited(result)
    if objects is None:
        return None, None
    releases = []
    for entry in sorted(objects, key=lambda o: (o.get("namespace") or "", o.get("name") or "")):
        status = _status(entry)
        history = [h for h in status.get("history") or [] if isinstance(h, dict)]
        last = history[0] if history else {}
        releases.append({
            "name": entry.get("name"), "namespace": entry.get("namespace"),
            "chart": last.get("chartName") or "",
            "version": last.get("chartVersion") or status.get("lastAttemptedRevision") or "",
            "ready": bool(entry.get("ready")),
            "text": "ready" if entry.get("ready") else _missing(entry)})
    return releases, error


def _release_problems(releases, error):
    if releases is None:
        return []
    if error:
        return ["HelmReleases: %s" % error]
    return ["HelmRelease %s/%s: %s" % (r["namespace"], r["name"], r["text"]) for r in releases if not r["ready"]]


def _hypervisor_state(result):
    result = _ran(result)
    if result is None:
        return None, []
    if "hypervisors" not in result:
        return None, ["Hypervisors: %s" % (result.get("msg") or "no answer")]
    ready = len([h for h in result.get("hypervisors") or [] if isinstance(h, dict) and h.get("ready")])
    detail = "Hypervisors ready: %d of %d Nodes" % (ready, len(result.get("nodes") or []))
    return detail, [] if result.get("ready") else list(result.get("problems") or ["the pool is not ready"])


def _ceph_state(result):
    objects, error = _waited(result)
    if objects is None:
        return None, []
    if error:
        return None, ["CephCluster: %s" % error]
    entry = objects[0]
    if not entry.get("found", True):
        return None, ["CephCluster %s/%s does not exist" % (entry.get("namespace"), entry.get("name"))]
    status = _status(entry)
    ceph = status.get("ceph") if isinstance(status.get("ceph"), dict) else {}
    detail = "CephCluster %s, %s" % (status.get("phase") or "?", ceph.get("health") or "no health yet")
    return detail, [] if entry.get("ready") else ["CephCluster %s/%s: %s" % (
        entry.get("namespace"), entry.get("name"), _missing(entry))]


def _control_planes_state(result):
    """A detail only: an OpenStack cluster that is not ready is the health section's, not the cluster's problem."""
    result = _ran(result)
    if result is None:
        return None, []
    if "control_planes" not in result:
        return None, ["ControlPlanes: %s" % (result.get("msg") or "no answer")]
    reports = [r for r in result.get("control_planes") or [] if isinstance(r, dict)]
    return "ControlPlanes ready: %d of %d" % (len([r for r in reports if r.get("ready")]), len(reports)), []


def cluster_entry(host, kind, pool, gathered, shoots):
    """One cluster's line: version, state (healthy, degraded, unreachable, not-created), details, problems."""
    found = gathered.get(host) or {}
    info = _ran(found.get("cluster_info")) or {}
    version = info.get("version") if isinstance(info.get("version"), dict) else {}
    entry = {"name": host, "kind": kind, "kind_label": KIND_LABELS[kind],
             "description": (pool.data.get("description") or "") if pool else "",
             "version": version.get("gitVersion") or "", "details": [], "problems": []}
    shoot_detail, shoot_problem = _shoot(pool, shoots) if pool else (None, None)
    if shoot_detail:
        entry["details"].append(shoot_detail)
    if found.get("kubeconfig_exists") is False:
        entry["state"] = NOT_CREATED if pool else UNREACHABLE
        entry["problems"].append("no kubeconfig yet (phase 2 creates the cluster and fetches it)" if pool
                                 else "its kubeconfig does not exist")
        if shoot_problem:
            entry["problems"].append(shoot_problem)
        return entry
    if not version:
        entry["state"] = UNREACHABLE
        entry["problems"].append("API server not reachable: %s" % (info.get("msg") or "not asked"))
        if shoot_problem:
            entry["problems"].append(shoot_problem)
        return entry
    if shoot_problem:
        entry["problems"].append(shoot_problem)
    releases, error = releases_of(found.get("releases"))
    if releases:
        ready = len([r for r in releases if r["ready"]])
        entry["details"].append("HelmReleases ready: %d of %d" % (ready, len(releases)))
    entry["problems"].extend(_release_problems(releases, error))
    for state, key in ((_hypervisor_state, "hypervisors"), (_ceph_state, "ceph"), (_control_planes_state, "health")):
        detail, problems = state(found.get(key))
        if detail:
            entry["details"].append(detail)
        entry["problems"].extend(problems)
    entry["state"] = DEGRADED if entry["problems"] else HEALTHY
    return entry


# ---------------------------------------------------------------------------
# Tenants

# The claim (the seed's XRD) gives only the volume pool a quota (quotaGB, 0 or none: unlimited); the other
# pools' quota is None.
def _quota_text(quota_gb):
    return "unlimited" if not quota_gb else "%d GiB" % quota_gb


def tenant_entry(claim, index, region):
    """A valid claim's tenant: its pools (primary storage pool first), size, services and Ceph quotas."""
    name = claim["metadata"]["name"]
    spec = claim_spec_with_defaults(claim["spec"])
    ceph = spec["storage"]["ceph"]
    quotas = []
    for placement in storage_placements(name, spec):
        for role, ceph_pool in placement.pools.items():
            section, key = REPLICATION[role]
            quota = ceph["volumePool"].get("quotaGB") if role == "volumes" else None
            quotas.append({"storage_pool": placement.cluster, "role": role, "ceph_pool": ceph_pool,
                           "replication": ceph[section][key],
                           "quota": _quota_text(quota) if role == "volumes" else None})
        if placement.filesystem:
            quotas.append({"storage_pool": placement.cluster, "role": "filesystem",
                           "ceph_pool": naming.filesystem(name),
                           "replication": ceph["filesystem"]["dataPoolReplication"], "quota": None})
        if placement.object_store:
            quotas.append({"storage_pool": placement.cluster, "role": "object store",
                           "ceph_pool": naming.object_store(name),
                           "replication": ceph["objectStore"]["dataPoolReplication"], "quota": None})
    return {
        "name": name, "claim": claim_ref(claim, index), "namespace": naming.tenant_namespace(name),
        "size": spec["size"],
        "control_plane_cluster": spec.get("controlPlaneCluster", region.default_control_plane),
        "hypervisor_pools": list(spec["hypervisorClusters"]), "storage_pools": list(spec["storageClusters"]),
        "services": sorted(service for service, on in spec["services"].items() if on),
        "quotas": quotas, "problems": [],
    }


def quota_line(quota):
    """One Ceph pool of a tenant as text: where, what, replicas and its quota when the claim gives one."""
    text = "%s: %s %s, %s replicas" % (quota["storage_pool"], quota["role"], quota["ceph_pool"], quota["replication"])
    return text + (", quota %s" % quota["quota"] if quota["quota"] else "")


def _names(value):
    return [str(item) for item in value] if isinstance(value, list) else []


def _invalid_tenant(claim, index, problems):
    """An invalid claim as far as it can be read: its name and pools, with its problems."""
    metadata = claim.get("metadata") if isinstance(claim, dict) and isinstance(claim.get("metadata"), dict) else {}
    spec = claim.get("spec") if isinstance(claim, dict) and isinstance(claim.get("spec"), dict) else {}
    name = metadata.get("name") if isinstance(metadata.get("name"), str) else claim_ref(claim, index)
    return {"name": name, "claim": claim_ref(claim, index), "namespace": "", "size": str(spec.get("size") or ""),
            "control_plane_cluster": "", "hypervisor_pools": _names(spec.get("hypervisorClusters")),
            "storage_pools": _names(spec.get("storageClusters")), "services": [], "quotas": [], "problems": problems}


def tenants_of(claims, region):
    """(tenants, problems of no claim): every claim's tenant in claim order; an invalid claim keeps its problems
    and stays out of the matrix."""
    claims = claim_list(claims)
    if claims is None:
        raise InputError([problem("claims", "must be a list of OpenStackCluster claims")])
    problems = validate_claims(claims, region)
    valid = valid_claims(claims, problems)
    tenants = []
    for index, claim in enumerate(claims):
        ref = claim_ref(claim, index)
        if any(claim is v for v in valid):
            tenants.append(tenant_entry(claim, index, region))
        else:
            own = [text[len(ref) + 1:] for text in problems if text.startswith(ref + " ")]
            tenants.append(_invalid_tenant(claim, index, own or ["invalid claim"]))
    others = [text for text in problems if not any(text.startswith(t["claim"] + " ") for t in tenants)]
    return tenants, others


# ---------------------------------------------------------------------------
# ControlPlane health

def _tenant_of_namespace(namespace):
    if namespace == naming.REGION_NAMESPACE:
        return "(the region)"
    if (namespace or "").startswith(naming.NAMESPACE_PREFIX):
        return namespace[len(naming.NAMESPACE_PREFIX):]
    return ""


def _phase_cells(phase):
    on = [c for c in phase.get("components") or [] if c.get("enabled")]
    if phase.get("state") == cph.NOT_ENABLED:
        return "off: %s" % ", ".join(c.get("name") or "" for c in phase.get("components") or [])
    cells = []
    for component in on:
        if component.get("state") == cph.READY:
            cells.append(component.get("name") or "")
            continue
        objects = [o for o in component.get("objects") or [] if isinstance(o, dict)]
        obj = next((o for o in objects if o.get("terminal")), None) or next(
            (o for o in objects if not o.get("ready")), None)
        text = ("%s: %s" % (cph.describe_object(obj), cph.object_text(obj))) if obj else component.get("state")
        cells.append("%s (%s)" % (component.get("name"), text))
    return "; ".join(cells)


def health_entry(cluster, report):
    """One ControlPlane's health by phase: each phase's state, the failing one marked, those waiting behind it."""
    namespace = report.get("namespace")
    entry = {"cluster": cluster, "namespace": namespace, "name": report.get("name"),
             "tenant": _tenant_of_namespace(namespace), "ready": bool(report.get("ready")),
             "failed": bool(report.get("failed")), "first_not_ready": report.get("first_not_ready"),
             "status_phase": ((report.get("control_plane") or {}).get("phase") or ""), "phases": []}
    if report.get("missing"):
        entry["summary"] = report["missing"]
        return entry
    entry["summary"] = cph.summary(report) if report.get("phases") else "no phases reported"
    for phase in report.get("phases") or []:
        entry["phases"].append({
            "phase": phase.get("phase"), "name": phase.get("name"), "state": phase.get("state"),
            "optional": bool(phase.get("optional")), "counted": phase.get("counted", True),
            "failing": phase.get("name") == report.get("first_not_ready"),
            "waiting": phase.get("name") in (report.get("waiting") or []),
            "components": _phase_cells(phase)})
    return entry


def health_of(region, gathered):
    """(entries, problems): every ControlPlane of every control-plane cluster; a cluster not judged is a problem."""
    entries, problems = [], []
    for pool in region.control_planes:
        result = _ran((gathered.get(pool.name) or {}).get("health"))
        if result is None:
            problems.append("%s: not judged (the cluster was not reached)" % pool.name)
            continue
        if "control_planes" not in result:
            problems.append("%s: %s" % (pool.name, result.get("msg") or "no answer"))
            continue
        reports = sorted((r for r in result.get("control_planes") or [] if isinstance(r, dict)),
                         key=lambda r: (r.get("namespace") != naming.REGION_NAMESPACE, r.get("namespace") or "",
                                        r.get("name") or ""))
        entries.extend(health_entry(pool.name, report) for report in reports)
    return entries, problems


# ---------------------------------------------------------------------------

def compose(region, claims, gathered):
    """The report's data (see the module docstring); InputError for a malformed region, claims or results."""
    _validate(gathered)
    region = build_region(region)
    shoots = (None, None)
    garden = region.clusters.get("gardener")
    if garden:
        shoots = _waited((gathered.get(garden) or {}).get("shoots"))
    clusters = [cluster_entry(host, kind, pool, gathered, shoots) for host, kind, pool in _cluster_order(region)]
    tenants, claim_problems = tenants_of(claims, region)
    health, health_problems = health_of(region, gathered)
    for tenant in tenants:
        own = [h for h in health if h["namespace"] == tenant["namespace"] and tenant["namespace"]]
        tenant["health"] = ("no ControlPlane yet" if not own else "ready" if all(h["ready"] for h in own)
                            else "; ".join(h["summary"] for h in own if not h["ready"]))
        tenant["ready"] = bool(own) and all(h["ready"] for h in own)
    valid = [t for t in tenants if not t["problems"]]
    sharing = matrix.build(valid, [p.name for p in region.hypervisor_pools], [p.name for p in region.storage_pools])
    pools = []
    for pool in region.hypervisor_pools + region.storage_pools:
        used = sharing["pools"][pool.name]
        cluster = next(c for c in clusters if c["name"] == pool.name)
        pools.append({"name": pool.name, "kind": used["kind"], "description": pool.data.get("description") or "",
                      "workers": pool.data.get("workers"), "media": pool.data.get("media") or "",
                      "capacity": pool.data.get("capacity") or "", "labels": dict(pool.labels),
                      "tenants": list(used["tenants"]), "sharing": used["sharing"], "state": cluster["state"]})
    operators = []
    for host, _kind, _pool in _cluster_order(region):
        releases, error = releases_of((gathered.get(host) or {}).get("releases"))
        if releases is not None:
            operators.append({"cluster": host, "releases": releases, "error": error})
    return {
        "region": region.name,
        "clusters": clusters,
        "matrix": sharing,
        "pools": pools,
        "tenants": tenants,
        "claim_problems": claim_problems,
        "operators": operators,
        "health": health,
        "health_problems": health_problems,
        "summary": {
            "clusters": len(clusters),
            "clusters_healthy": len([c for c in clusters if c["state"] == HEALTHY]),
            "tenants": len(tenants),
            "control_planes": len(health),
            "control_planes_ready": len([h for h in health if h["ready"]]),
            "releases": sum(len(o["releases"]) for o in operators),
            "releases_ready": sum(len([r for r in o["releases"] if r["ready"]]) for o in operators),
        },
    }
