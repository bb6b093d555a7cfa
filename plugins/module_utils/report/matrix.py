# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Seed 001's pool-sharing matrix: the OpenStack clusters (tenants) as rows, the hypervisor and storage
pools as columns, a mark where a tenant's claim names the pool.

A pool named by one tenant is dedicated to it, by several shared, by none unused; a tenant's description
says which of its pools are shared (the seed's "Dedicated + shared pools", "Only shared pools") and
whether it spans several storage pools ("multi-storage"). Pure Python.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

HYPERVISOR, STORAGE = "hypervisor", "storage"
SHARED, DEDICATED, UNUSED = "shared", "dedicated", "unused"


def sharing(count):
    """How a pool named by this many tenants is used."""
    return UNUSED if count == 0 else DEDICATED if count == 1 else SHARED


def build(tenants, hypervisor_pools, storage_pools):
    """The matrix of tenants ({name, hypervisor_pools, storage_pools}) over the region's pools (names, in
    inventory order); a pool a tenant names that the region lacks is left out (the claim is invalid then).

    Returns {hypervisor_pools, storage_pools, rows: [{tenant, cells: [{pool, kind, member, primary}],
    description}], pools: {pool: {kind, tenants, sharing}}}; primary marks a tenant's first storage pool
    (it hosts the images, ephemeral disks, file system and object store, region/composition.py).
    """
    columns = [(name, HYPERVISOR) for name in hypervisor_pools] + [(name, STORAGE) for name in storage_pools]
    pools = dict((name, {"kind": kind, "tenants": [], "sharing": UNUSED}) for name, kind in columns)
    for tenant in tenants:
        for key in ("hypervisor_pools", "storage_pools"):
            for name in tenant.get(key) or []:
                if name in pools and tenant["name"] not in pools[name]["tenants"]:
                    pools[name]["tenants"].append(tenant["name"])
    for entry in pools.values():
        entry["sharing"] = sharing(len(entry["tenants"]))
    rows = []
    for tenant in tenants:
        named = set(tenant.get("hypervisor_pools") or []) | set(tenant.get("storage_pools") or [])
        first_storage = (tenant.get("storage_pools") or [None])[0]
        cells = [{"pool": name, "kind": kind, "member": name in named,
                  "primary": kind == STORAGE and name == first_storage} for name, kind in columns]
        rows.append({"tenant": tenant["name"], "cells": cells, "description": describe(tenant, pools)})
    return {"hypervisor_pools": list(hypervisor_pools), "storage_pools": list(storage_pools), "rows": rows,
            "pools": pools}


def describe(tenant, pools):
    """The seed's description of a tenant's pools: dedicated and/or shared, multi-storage."""
    named = [name for key in ("hypervisor_pools", "storage_pools") for name in tenant.get(key) or [] if name in pools]
    kinds = set(pools[name]["sharing"] for name in named)
    if kinds == set([SHARED]):
        text = "only shared pools"
    elif kinds == set([DEDICATED]):
        text = "only dedicated pools"
    elif kinds:
        text = "dedicated + shared pools"
    else:
        text = "no pools of the region"
    if len(tenant.get("storage_pools") or []) > 1:
        text += ", multi-storage"
    return text
