# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the Flux module reads from a cluster (the client side of providers.flux)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import time

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.progress import problems_line
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import flux
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps

# A lease renewed within its duration, give or take this much clock skew between hosts.
LEASE_SKEW = 30


def now():
    return time.time()


def _lease_problem(lease, name, namespace):
    if lease is None:
        return "Lease %s/%s does not exist" % (namespace, name)
    spec = lease.get("spec") or {}
    renewed = timestamps.parse_timestamp(spec.get("renewTime"))
    duration = spec.get("leaseDurationSeconds") or 15
    if not spec.get("holderIdentity") or renewed is None:
        return "Lease %s/%s has no holder" % (namespace, name)
    if renewed + duration + LEASE_SKEW < now():
        return "Lease %s/%s was last renewed at %s by %s" % (
            namespace, name, spec.get("renewTime"), spec.get("holderIdentity"))
    return None


def flux_state(client, namespace):
    """(problems, facts): what keeps Flux from running on this cluster, and what shows that it does."""
    problems, facts = [], {"namespace": namespace, "kinds": [], "leases": {}}
    for api_version, kind in ((flux.SOURCE_API_VERSION, "HelmRepository"), (flux.HELM_API_VERSION, "HelmRelease")):
        try:
            client.resource(api_version, kind)
            facts["kinds"].append("%s/%s" % (api_version, kind))
        except KubeError:
            problems.append("%s %s is not served (Flux's CRDs are not installed)" % (api_version, kind))
    if problems:
        return problems, facts
    leases = client.resource("coordination.k8s.io/v1", "Lease")
    for name in flux.CONTROLLER_LEASES:
        lease = client.get(leases, name, namespace)
        trouble = _lease_problem(lease, name, namespace)
        if trouble:
            problems.append(trouble + " (the controller does not run)")
        else:
            facts["leases"][name] = {"holder": lease["spec"]["holderIdentity"], "renewed": lease["spec"]["renewTime"]}
    return problems, facts


def await_flux(client, cluster, namespace, timeout, sleep, progress=None):
    """Facts of a running Flux, waiting up to timeout seconds (checks at most sleep seconds apart); WaitError
    naming what is missing."""
    def attempt():
        problems, facts = flux_state(client, namespace)
        offer(progress, lambda: problems_line("%s: Flux" % cluster, problems))
        return not problems, (problems, facts)

    done, (problems, facts) = poll(attempt, timeout, sleep)
    if not done:
        waited = " after %ss" % timeout if timeout else ""
        raise WaitError("%s: Flux does not run%s: %s" % (cluster, waited, "; ".join(problems)), [facts])
    return facts


def live_releases(client, releases):
    """The HelmReleases as they are: {(namespace, name): object}; one LIST per namespace."""
    rtype = client.resource(flux.HELM_API_VERSION, "HelmRelease")
    found = {}
    for namespace in sorted(set(r["metadata"]["namespace"] for r in releases)):
        for item in client.list(rtype, namespace):
            found[(namespace, item["metadata"]["name"])] = item
    return found


def _chart_stalled(chart, version):
    """source-controller's words when it gave up on the release's chart for the pinned version (Stalled:
    e.g. InvalidChartReference, no such version in the index); helm-controller itself keeps retrying."""
    if chart is None or (chart.get("spec") or {}).get("version") != version:
        return None
    if (chart.get("status") or {}).get("observedGeneration") != chart["metadata"].get("generation"):
        return None
    for cond in (chart.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Stalled" and cond.get("status") == "True":
            return "HelmChart %s/%s: %s: %s" % (chart["metadata"]["namespace"], chart["metadata"]["name"],
                                                cond.get("reason"), cond.get("message"))
    return None


def release_failure(client, flux_namespace, releases, states):
    """(release, text) for the first release that will not become ready this run, or None."""
    by_name = dict(((r["metadata"]["namespace"], r["metadata"]["name"]), r) for r in releases)
    charts = None
    for ref, state, _obj in states:
        release = by_name[(ref["namespace"], ref["name"])]
        if state is not None and state.terminal:
            return release, "; ".join(state.missing)
        if state is None or state.ready:
            continue
        if charts is None:
            items = client.list(client.resource(flux.SOURCE_API_VERSION, "HelmChart"), flux_namespace)
            charts = dict(((c["metadata"]["namespace"], c["metadata"]["name"]), c) for c in items)
        text = _chart_stalled(charts.get(flux.helm_chart_name(release)), release["spec"]["chart"]["spec"]["version"])
        if text:
            return release, text
    return None


def first_blocking(releases, states):
    """(release, text) of the first release not ready whose dependencies are all ready."""
    ready = set(ref["name"] for ref, state, _obj in states if state is not None and state.ready)
    by_name = dict((r["metadata"]["name"], r) for r in releases)
    pending = [(ref, state) for ref, state, _obj in states if state is None or not state.ready]
    for ref, state in pending:
        needs = [d["name"] for d in by_name[ref["name"]]["spec"].get("dependsOn") or []]
        if all(n in ready for n in needs):
            return by_name[ref["name"]], "; ".join(state.missing) if state else "not found"
    ref, state = pending[0]
    return by_name[ref["name"]], "; ".join(state.missing) if state else "not found"


def managed_releases(client):
    """The HelmReleases of the cluster the collection made (its managed-by label), in every namespace."""
    return client.list(client.resource(flux.HELM_API_VERSION, "HelmRelease"), label_selector=flux.managed_selector())


def objects_left(client, releases):
    """{(namespace, name): ["<Kind> <namespace>/<name>", ...]} of the releases whose kinds still have objects: the
    kinds of the CRDs helm-controller installed with the release - or, for a release without CRDs of its own (a
    controller whose CRDs come in a chart of their own, as mariadb-operator's), with the releases it depends on. One
    LIST per CRD."""
    if not releases:
        return {}
    crds = client.resource("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    by_release = {}

    def crds_of(owner):
        if owner not in by_release:
            by_release[owner] = client.list(crds, label_selector=flux.release_objects_selector(*owner))
        return by_release[owner]

    left = {}
    for namespace, name, depends_on in releases:
        kinds = crds_of((namespace, name)) or [crd for owner in depends_on for crd in crds_of(owner)]
        found = [obj for crd in kinds for obj in _objects_of(client, crd)]
        if found:
            left[(namespace, name)] = found
    return left


def _objects_of(client, crd):
    spec = crd.get("spec") or {}
    version = next((v["name"] for v in spec.get("versions") or [] if v.get("storage")), None)
    kind = (spec.get("names") or {}).get("kind")
    try:
        rtype = client.resource("%s/%s" % (spec.get("group"), version), kind)
    except KubeError:
        return []  # not served (any more): no object of it can be read or left
    return ["%s %s" % (kind, "/".join(p for p in (o["metadata"].get("namespace"), o["metadata"]["name"]) if p))
            for o in client.list(rtype)]
