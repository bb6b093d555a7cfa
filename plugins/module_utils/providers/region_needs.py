# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the preflight reads on the garden, the IronCore cluster and the management cluster, and what it finds
missing there.

region.preflight judges every cluster; this adds the vendors' part (providers.gardener,
providers.ironcore), which region/ may not import, and the placed tenants' needs of the storage pools
(region.scale_in). Pure Python.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener, ironcore
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming, scale_in
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import build_region

# The tenants placed in the region: their OpenStackCluster claims on the management cluster.
TENANT_READS = ({"api_version": naming.CLAIM_API_VERSION, "kind": naming.CLAIM_KIND},)


def reads(group_names, gardener_settings=None):
    """What cluster_info reads on a cluster for the preflight, by the inventory groups it is in."""
    found = []
    if "ironcore" in (group_names or []):
        found += [dict(read) for read in ironcore.PREFLIGHT_READS]
    if "gardener" in (group_names or []) and gardener_settings:
        found += gardener.preflight_reads(gardener_settings)
    if "management" in (group_names or []):
        found += [dict(read) for read in TENANT_READS]
    return found


def _reads_of(cluster, kinds):
    return [read for read in cluster.get("objects") or [] if isinstance(read, dict) and read.get("kind") in kinds]


def problems(values, cluster):
    """What the region needs from this cluster and it lacks: the garden's objects, IronCore's machines."""
    gardener.check_seed_strategy(values["seed_strategy"])
    found = []
    try:
        region = build_region(values["region"]).to_dict()
    except InputError:
        return []  # the region model's own problems are reported once, by region_problems
    if values["gardener"]:
        found += gardener.garden_problems(region, values["gardener"], cluster.get("objects") or [],
                                          values["seed_strategy"])
    if "management" in (values["group_names"] or []):
        found += placed_tenant_problems(values["region"], _reads_of(cluster, (naming.CLAIM_KIND,)))
    if values["bmcs"] is not None:
        machines = dict((read["kind"], read) for read in _reads_of(cluster, ("BMC", "Server")))
        # A kind not served is the API group's problem, reported above.
        if len(machines) == 2 and not any(read.get("error") for read in machines.values()):
            found += ironcore.uncarried_pool_problems(region, values["bmcs"], machines["BMC"]["items"],
                                                      machines["Server"]["items"])
    return found


def placed_tenant_problems(inventory, claim_reads):
    """Storage pools whose workers fall below what a placed tenant needs there (region.scale_in), before phase 1:
    phase 7 would hold the tenant's claim back. claim_reads: the OpenStackCluster reads (an unserved kind - no c5c3
    operator yet - has no tenant)."""
    claims = [item for read in claim_reads if not read.get("error") for item in read.get("items") or []]
    if not claims:
        return []
    groups, hostvars = inventory.get("groups") or {}, inventory.get("hostvars") or {}
    found = []
    for pool in groups.get("storage_pools") or []:
        found += scale_in.problems(pool, groups, (hostvars.get(pool) or {}).get("cobaltcore_pool") or {}, claims)
    return found
