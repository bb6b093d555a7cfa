# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The decommission of a pool - a hypervisor or storage pool or a control-plane cluster - the inventory no longer
has (pure Python).

A pool goes in this order: the operator removes it from the inventory and runs site.yml (the region's ControlPlane
stops using it) and moves its tenants off it; then playbooks/decommission.yml, which refuses while anything still
names the pool or runs on it, deletes its Shoot (found by the collection's cluster label, as its Shoot name may have
been the pool's own setting), releases its servers (deletes the ServerClaims labelled with the pool) and removes the
BMCs of those servers that the inventory no longer lists.

What runs on the cluster itself (the ControlPlanes of a control-plane cluster) is read through its Shoot
(gardener_cluster_info), as the run no longer has its kubeconfig: the inventory does not say which kind of pool it
was, so every decommission reads it.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import POOL_GROUPS

# The HTTP status of a read of a kind the cluster does not serve: no ControlPlane can run there.
NOT_SERVED = 404


def input_problems(pool, confirm, groups, region=None):
    """Every problem of decommission.yml's input: the pool (a name no pool group of the inventory has any more, nor
    the region's default control-plane cluster while the inventory has no control_plane group) and its confirmation
    (the same name)."""
    if not isinstance(pool, str) or not kube_names.is_dns1123_label(pool):
        return [problem("pool", "must name the pool to decommission (a DNS-1123 label), got %r" % (pool,))]
    problems = []
    groups = groups or {}
    still = [group for group in sorted(POOL_GROUPS.values()) if pool in groups.get(group, [])]
    if not groups.get(POOL_GROUPS["control_planes"]) and region and pool == naming.control_plane_cluster(region):
        still.append("the region's control-plane cluster, as no control_plane group names another")
    if still:
        problems.append(problem("pool", "%s is still in the inventory (%s): remove it there and run site.yml first, "
                                "or the next run creates it again" % (pool, ", ".join(still))))
    if confirm != pool:
        problems.append(problem("confirm", "must be %s (the pool whose Shoot and servers go), got %r"
                                % (pool, confirm)))
    return problems


def _names_pool(spec_lists, pool):
    return any(pool in (values or []) for values in spec_lists)


def users(pool, objects, default_control_plane=None, cluster_reads=()):
    """What still uses the pool or runs on it, sorted.

    objects: the claims (the tenants directory's, the management cluster's) and the live ControlPlanes of the
    inventory's control-plane clusters; a claim uses the pool when its hypervisor or storage clusters name it, or its
    control-plane cluster (default_control_plane, the region's, when it names none) is the pool; a ControlPlane when
    its hypervisor or storage clusters name it.
    cluster_reads: gardener_cluster_info's entries; every ControlPlane read on the pool's own cluster runs there, and
    a read the cluster refused leaves what runs there unknown, which counts as a use."""
    found = []
    for obj in objects or []:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        where = "%s/%s" % (meta.get("namespace"), meta.get("name"))
        if obj.get("kind") == naming.CLAIM_KIND and (
                _names_pool((spec.get("hypervisorClusters"), spec.get("storageClusters")), pool)
                or spec.get("controlPlaneCluster", default_control_plane) == pool):
            found.append("tenant %s (OpenStackCluster claim %s)" % (meta.get("name"), where))
        elif obj.get("kind") == naming.CONTROL_PLANE_KIND and _names_pool(
                (((spec.get("compute") or {}).get("hypervisorClusters")),
                 ((spec.get("storage") or {}).get("storageClusters"))), pool):
            found.append(_control_plane(obj))
    for entry in cluster_reads or ():
        if entry.get("cluster") != pool:
            continue
        for read in entry.get("objects") or []:
            if read.get("error") and read.get("status") != NOT_SERVED:
                found.append("whatever runs on %s (Shoot %s: its %s could not be read: %s)"
                             % (pool, entry.get("shoot"), read.get("kind"), read["error"]))
            found.extend("%s, which runs on %s" % (_control_plane(obj), pool) for obj in read.get("items") or []
                         if obj.get("kind") == naming.CONTROL_PLANE_KIND)
    return sorted(set(found))


def _control_plane(obj):
    meta = obj.get("metadata") or {}
    cluster = (meta.get("labels") or {}).get(naming.OPENSTACK_CLUSTER_NAME_LABEL)
    return "ControlPlane %s/%s%s" % (meta.get("namespace"), meta.get("name"),
                                     " of OpenStack cluster %s" % cluster if cluster else "")


def _ref(obj):
    meta = obj["metadata"]
    ref = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": {"name": meta["name"]}}
    if meta.get("namespace"):
        ref["metadata"]["namespace"] = meta["namespace"]
    return ref


def release_plan(claims, servers, bmcs, inventory_bmcs):
    """What the pool's release deletes on the IronCore cluster: its ServerClaims (claims: those labelled with the
    pool), and the BMCs of their servers that the inventory no longer lists (inventory_bmcs: the names
    cobaltcore_bmcs has) and that no other claim's server needs. Returns {claims, servers, bmcs}: the references of
    the claims and BMCs to delete, as manifests for the apply module, and the servers released."""
    released = set(c["metadata"]["name"] for c in claims)
    bmc_of = dict((s["metadata"]["name"], ((s.get("spec") or {}).get("bmcRef") or {}).get("name")) for s in servers)
    freed = sorted(set(((c.get("spec") or {}).get("serverRef") or {}).get("name") for c in claims) - {None})
    busy = set()  # BMCs with a server another claim holds
    for server in servers:
        holder = ((server.get("spec") or {}).get("serverClaimRef") or {}).get("name")
        if holder and holder not in released:
            busy.add(bmc_of[server["metadata"]["name"]])
    existing = dict((b["metadata"]["name"], b) for b in bmcs)
    gone = sorted(set(bmc_of.get(name) for name in freed) - {None} - set(inventory_bmcs or []) - busy)
    return {"claims": [_ref(c) for c in sorted(claims, key=lambda c: c["metadata"]["name"])],
            "servers": freed,
            "bmcs": [_ref(existing[name]) for name in gone if name in existing]}
