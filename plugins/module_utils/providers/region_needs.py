# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the preflight reads on the garden and the IronCore cluster, and what it finds missing there.

region.preflight judges every cluster; this adds the vendors' part (providers.gardener,
providers.ironcore), which region/ may not import. Pure Python.

The preflight asks every cluster what to read (reads), and most clusters are neither the garden nor the IronCore
cluster: the vendors' modules and the region model are imported only for those that are, as the filters import
module_utils only when they call them (plugin_utils/lazy_import.py).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError


def reads(group_names, gardener_settings=None):
    """What cluster_info reads on a cluster for the preflight, by the inventory groups it is in."""
    found = []
    if "ironcore" in (group_names or []):
        from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ironcore
        found += [dict(read) for read in ironcore.PREFLIGHT_READS]
    if "gardener" in (group_names or []) and gardener_settings:
        from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener
        found += gardener.preflight_reads(gardener_settings)
    return found


def _reads_of(cluster, kinds):
    return [read for read in cluster.get("objects") or [] if isinstance(read, dict) and read.get("kind") in kinds]


def problems(values, cluster):
    """What the region needs from this cluster and it lacks: the garden's objects, IronCore's machines."""
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener, ironcore
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import build_region
    gardener.check_seed_strategy(values["seed_strategy"])
    found = []
    try:
        region = build_region(values["region"]).to_dict()
    except InputError:
        return []  # the region model's own problems are reported once, by region_problems
    if values["gardener"]:
        found += gardener.garden_problems(region, values["gardener"], cluster.get("objects") or [],
                                          values["seed_strategy"])
    if values["bmcs"] is not None:
        machines = dict((read["kind"], read) for read in _reads_of(cluster, ("BMC", "Server")))
        # A kind not served is the API group's problem, reported above.
        if len(machines) == 2 and not any(read.get("error") for read in machines.values()):
            found += ironcore.uncarried_pool_problems(region, values["bmcs"], machines["BMC"]["items"],
                                                      machines["Server"]["items"])
    return found
