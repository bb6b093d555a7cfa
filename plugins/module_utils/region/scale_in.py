# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a pool's scale-in may not go below (pure Python).

The operator lowers the pool's `workers` in the inventory; playbooks/scale_in.yml then refuses a count below what
the pool's tenants need (this), evacuates the Nodes on the surplus ServerClaims and releases them
(providers/ironcore.py: surplus_claims, claim_nodes).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ceph_cluster, composition, naming

POOL_GROUPS = {"hypervisor_pools": "hypervisorClusters", "storage_pools": "storageClusters"}


def _group(pool, groups):
    return next((group for group in POOL_GROUPS if pool in (groups or {}).get(group, [])), None)


def _workers(settings):
    workers = (settings or {}).get("workers", 1)
    return workers if isinstance(workers, int) and not isinstance(workers, bool) else None


def _tenant_needs(pool, field, claim):
    """(Nodes the tenant needs on the pool, why), or None when its claim does not name the pool: one Node for any
    user; on a storage pool whose replicas spread over hosts, one per replica of its largest pool there."""
    spec = claim.get("spec") or {}
    if pool not in (spec.get(field) or []):
        return None
    if field != "storageClusters":
        return 1, "its hypervisorClusters name the pool"
    try:
        replicas = composition.replicas_by_storage_pool(claim).get(pool)
    except (KeyError, TypeError, ValueError, AttributeError):
        return 1, "its storageClusters name the pool"
    if not replicas:
        return 1, "its storageClusters name the pool"
    field, count = max(replicas, key=lambda item: item[1])
    return max(1, count), "%s %d" % (field, count)


def problems(pool, groups, settings, claims):
    """Every reason not to scale the pool in to its inventory `workers`: a pool the inventory's hypervisor_pools and
    storage_pools do not have, a count that is not a whole number, and each tenant (claims: the tenants directory's
    and the management cluster's OpenStackCluster claims) that needs more of the pool's Nodes than it keeps."""
    if not isinstance(pool, str) or not kube_names.is_dns1123_label(pool):
        return [problem("pool", "must name the pool to scale in (a DNS-1123 label), got %r" % (pool,))]
    group = _group(pool, groups)
    if group is None:
        return [problem("pool", "%s is no pool of the inventory's %s: scale_in.yml shrinks a pool to its workers "
                        "there (a pool that left the inventory is decommissioned: decommission.yml)"
                        % (pool, " or ".join(sorted(POOL_GROUPS))))]
    workers = _workers(settings)
    if workers is None or workers < 0:
        return [problem("%s.workers" % pool, "must be a whole number >= 0, got %r" % ((settings or {}).get("workers"),))]
    failure_domain = ceph_cluster.failure_domain((settings or {}).get("ceph"))
    found, seen = [], set()
    for claim in claims or []:
        meta = claim.get("metadata") or {}
        key = (meta.get("namespace"), meta.get("name"))
        if claim.get("kind", naming.CLAIM_KIND) != naming.CLAIM_KIND or key in seen:
            continue
        seen.add(key)
        need = _tenant_needs(pool, POOL_GROUPS[group], claim)
        if group == "storage_pools" and need and need[0] > 1 and failure_domain != "host":
            need = (1, "its storageClusters name the pool (replicas spread over %ss)" % failure_domain)
        if need and need[0] > workers:
            found.append("tenant %s (OpenStackCluster claim %s/%s) needs %d: %s"
                         % (meta.get("name"), key[0], key[1], need[0], need[1]))
    if found:
        return [problem("%s.workers" % pool, "%d is below what the pool's tenants need: %s"
                        % (workers, "; ".join(sorted(found))))]
    return []
