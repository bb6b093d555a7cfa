# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase 7: every tenant of a region as one batch per cluster, and one tenant's removal.

plan() turns all claims into what each cluster gets (one apply call per cluster and
step, whatever the number of tenants). removal_queries(), removal_steps() and
data_loss() decide what removing one tenant deletes, in which order, and what of it
may hold data. Nothing here talks to a cluster.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import endpoints
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.rook_manifests import (
    RELEASED_KINDS, release_data)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import claim_name_problems
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.composition import compose_openstack_clusters
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import build_region

# The two sides of the region phase 7 writes to.
CONTROL_PLANE = "control_plane"
STORAGE = "storage"

KEYSTONE_API_VERSION = "keystone.openstack.c5c3.io/v1alpha1"
# K-ORC kinds phase 5 creates in an OpenStack cluster's namespace (the catalog and its credentials).
KORC_KINDS = ("Endpoint", "Service", "ApplicationCredential", "User", "Role", "Project", "Domain")
# Rook kinds of a tenant, in removal order: the client first (no new access), then what holds data.
ROOK_REMOVAL_KINDS = ("CephClient", "CephObjectStoreUser", "CephObjectStore", "CephFilesystem", "CephBlockPool")
# Kinds whose deletion destroys data (needs allow_data_loss).
DATA_KINDS = ("CephBlockPool", "CephFilesystem", "CephObjectStore", "CephObjectStoreUser")


def plan(claims, region, ceph=None, require_monitors=False, public_url_template=None, ceph_client_version=0):
    """What phase 7 applies, per cluster, for every claim together.

    ceph maps a storage pool to its Ceph facts ({fsid, monitors}, or {problem} when they could not be
    read); a ControlPlane gets the monitors of its first storage pool in spec.storage.ceph.monitors and
    each Cinder RBD backend those of its own storage pool (missing: left out, as in check mode on a
    region without Ceph yet). With require_monitors, a tenant whose Ceph pools are on a storage pool
    without monitors is a problem: applied, its ControlPlane could not reach that Ceph.
    Raises InputError naming every problem of every claim; nothing is planned then.
    public_url_template: the region's, for Keystone's public endpoint in each ControlPlane
    (None: an inventory-shaped region's own cobaltcore_network.endpoints.public_url_template).
    Every storage pool of the region has an entry (empty without tenants), so each pool's
    run is the same single call; secrets are grouped by storage pool, then control-plane cluster
    (one copy call per pair). ceph_client_version: the tenants' Ceph users' version; retired_ceph_clients holds,
    per cluster, what its lower versions left (the CephClients on storage pools, their Secrets' copies on
    control-plane clusters), to delete once the ControlPlanes' consumers run the current version.
    """
    compositions = compose_openstack_clusters(claims, region, public_url_template, ceph_client_version)
    region = build_region(region)
    ceph = ceph or {}
    control_plane = dict((pool.name, []) for pool in region.control_planes)
    storage = dict((pool.name, []) for pool in region.storage_pools)
    secrets = dict((pool.name, {}) for pool in region.storage_pools)
    retired = dict((pool.name, []) for pool in region.control_planes + region.storage_pools)
    tenants = []
    problems = _unreachable_monitors(region, ceph)
    for composed in compositions:
        namespace_manifest, control_plane_manifest = composed["control_plane"]
        for pool in _add_monitors(control_plane_manifest, composed, ceph):
            if require_monitors:
                problems.append(_no_monitors(composed, pool, ceph.get(pool)))
        control_plane[composed["control_plane_cluster"]].extend([namespace_manifest, control_plane_manifest])
        for pool, manifests in composed["storage"].items():
            storage[pool].extend(manifests)
        for copy in composed["ceph_client_secrets"]:
            entry = dict(copy, control_plane_cluster=composed["control_plane_cluster"])
            entry["labels"] = naming.tenant_labels(composed["name"])
            secrets[copy["storage_cluster"]].setdefault(composed["control_plane_cluster"], []).append(entry)
        for pool, clients in composed["retired_ceph_clients"].items():
            retired[pool].extend(clients)
        retired[composed["control_plane_cluster"]].extend(composed["retired_ceph_client_secrets"])
        tenants.append({
            "name": composed["name"],
            "claim": composed["claim"],
            "namespace": composed["namespace"],
            "control_plane_cluster": composed["control_plane_cluster"],
            "storage_clusters": list(composed["storage"]),
        })
    if problems:
        raise InputError(problems)
    return {"tenants": tenants, "control_plane": control_plane, "storage": storage, "secrets": secrets,
            "retired_ceph_clients": retired}


def _add_monitors(manifest, composed, ceph):
    """Write the monitors into each part of the ControlPlane that reaches a Ceph: the Ceph section (its first
    storage pool) and each Cinder RBD backend (its own, tiered pools). Returns the pools that had none."""
    spec = manifest["spec"]
    consumers = []
    section = spec["storage"].get("ceph")
    primary = next(iter(composed["storage"]), None)
    if section and primary:
        consumers.append((primary, section))
    cinder = (spec.get("openstack") or {}).get("cinder") or {}
    consumers.extend((backend["storageCluster"], backend) for backend in cinder.get("backends") or []
                     if backend.get("type") == "rbd" and backend.get("storageCluster"))
    missing = []
    for pool, consumer in consumers:
        monitors = (ceph.get(pool) or {}).get("monitors")
        if monitors:
            consumer["monitors"] = list(monitors)
        elif pool not in missing:
            missing.append(pool)
    return missing


def _unreachable_monitors(region, ceph):
    """Problems of storage pools whose Ceph reports monitors off the pool's public network (flow ceph-monitors):
    the ControlPlanes and hypervisors, in other clusters, could not reach them."""
    problems = []
    for pool in region.storage_pools:
        public = (pool.data.get("network") or {}).get("public")
        monitors = (ceph.get(pool.name) or {}).get("monitors")
        outside = endpoints.monitors_outside(monitors, public) if public and monitors else []
        if outside:
            problems.append(problem("%s.network.public" % pool.name, "the pool's Ceph reports monitors %s outside its "
                                    "public network %s, which the control plane and the hypervisors could not reach "
                                    "(flow ceph-monitors): its CephCluster must run the mons on the Nodes' network "
                                    "there (network.provider host)" % (", ".join(outside), public)))
    return problems


def _no_monitors(composed, pool, facts):
    why = (facts or {}).get("problem") or "Phase 6 set no Ceph facts for it"
    return problem("spec.storageClusters[%d]" % list(composed["storage"]).index(pool),
                   "storage pool %s has no Ceph monitors to give the ControlPlane (%s); run playbooks/storage.yml "
                   "for it first" % (pool, why), subject=composed["claim"])


def _tenant_selector(name):
    labels = naming.tenant_labels(name)
    return ",".join("%s=%s" % (key, labels[key]) for key in sorted(labels))


def removal_queries(name, side):
    """The LISTs that find one tenant's objects on a cluster of one side.

    Each query is {api_version, kind, namespace, label_selector}; label_selector None means
    every object of the kind in the namespace (the tenant's own namespace only).
    """
    problems = claim_name_problems(name, field="tenant")
    if problems:
        raise InputError(problems)
    selector = _tenant_selector(name)
    if side == STORAGE:
        return [_query(naming.ROOK_API_VERSION, kind, naming.ROOK_NAMESPACE, selector)
                for kind in ROOK_REMOVAL_KINDS]
    if side != CONTROL_PLANE:
        raise InputError(["side: must be %s or %s, got %r" % (CONTROL_PLANE, STORAGE, side)])
    namespace = naming.tenant_namespace(name)
    queries = [_query(naming.KORC_API_VERSION, kind, namespace, None) for kind in KORC_KINDS]
    queries.append(_query(KEYSTONE_API_VERSION, "Keystone", namespace, None))
    queries.append(_query(naming.CONTROL_PLANE_API_VERSION, naming.CONTROL_PLANE_KIND, namespace, selector))
    queries.append(_query("v1", "Secret", namespace, selector))
    queries.append(_query("v1", "Namespace", None, selector))
    return queries


def _query(api_version, kind, namespace, label_selector):
    return {"api_version": api_version, "kind": kind, "namespace": namespace, "label_selector": label_selector}


def removal_steps(name, found):
    """The deletions of one tenant, in reverse dependency order.

    found maps a cluster to {side, objects}: the objects removal_queries() found there
    ({apiVersion, kind, name, namespace}). Returns [{step, cluster, objects}], only steps
    with objects, each step's objects in creation order (the engine deletes a batch in reverse).
    Steps: K-ORC, the ControlPlane with its Keystone, the ceph-client Secrets, the CephClients,
    releasing the data (filesystems' and object stores' Ceph pools: preserve...OnDelete false; block pools'
    images: Rook's force-deletion annotation; a step with
    state present and no deletion), the Ceph pools (object store user and store, filesystem, block
    pools), the namespace. Every step has state absent unless it says present.
    Objects outside the tenant (another namespace on the control plane) are never included.
    """
    namespace = naming.tenant_namespace(name)
    order = [
        ("k-orc", CONTROL_PLANE, lambda o: o["apiVersion"] == naming.KORC_API_VERSION),
        # One step: the operator would recreate a Keystone whose ControlPlane still exists; the
        # engine deletes in reverse list order, so the ControlPlane (Foreground: its children) goes first.
        ("control-plane", CONTROL_PLANE, lambda o: o["kind"] in ("Keystone", naming.CONTROL_PLANE_KIND)),
        ("ceph-client-secrets", CONTROL_PLANE, lambda o: o["kind"] == "Secret"),
        ("ceph-clients", STORAGE, lambda o: o["kind"] == "CephClient"),
        ("release-data", STORAGE, lambda o: o["kind"] in RELEASED_KINDS),
        ("ceph-pools", STORAGE, lambda o: o["kind"] in DATA_KINDS),
        ("namespace", CONTROL_PLANE, lambda o: o["kind"] == "Namespace"),
    ]
    steps = []
    for step, side, wanted in order:
        for cluster in sorted(found):
            entry = found[cluster]
            if entry["side"] != side:
                continue
            objects = [o for o in entry["objects"] if wanted(o) and _belongs(o, side, namespace)]
            if step == "ceph-pools":
                objects.sort(key=lambda o: -ROOK_REMOVAL_KINDS.index(o["kind"]))
            elif step == "control-plane":
                objects.sort(key=lambda o: o["kind"] != "Keystone")
            if not objects:
                continue
            if step == "release-data":
                steps.append({"step": step, "cluster": cluster, "objects": objects, "state": "present",
                              "definition": [release_data(o["kind"], o["name"]) for o in objects]})
            else:
                steps.append({"step": step, "cluster": cluster, "objects": objects, "state": "absent",
                              "definition": [_manifest(o) for o in objects]})
    return steps


def _manifest(obj):
    metadata = {"name": obj["name"]}
    if obj.get("namespace"):
        metadata["namespace"] = obj["namespace"]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": metadata}


def _belongs(obj, side, namespace):
    if side == STORAGE:
        return obj.get("namespace") == naming.ROOK_NAMESPACE and obj["kind"] in ROOK_REMOVAL_KINDS
    if obj["kind"] == "Namespace":
        return obj["name"] == namespace
    return obj.get("namespace") == namespace


def data_loss(steps):
    """What removing would destroy that may hold data, as '<cluster>: <Kind> <namespace>/<name>'."""
    return ["%s: %s %s/%s" % (step["cluster"], obj["kind"], obj["namespace"], obj["name"])
            for step in steps if step["state"] == "absent" for obj in step["objects"] if obj["kind"] in DATA_KINDS]
