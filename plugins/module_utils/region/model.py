# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region model: the Kubernetes clusters of one CobaltCore region.

A region has service clusters (Gardener, IronCore, management), one or more
control-plane clusters, hypervisor pools and storage pools. It is built from a
region dict (a full model as Region.to_dict() writes it, or a minimal one that
lists pool names only) or from the Ansible inventory (region_from_inventory).
Building validates the region and raises InputError listing every problem, each
as "region <field>: <message>".
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import re
from collections.abc import Mapping

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ceph_cluster, naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.mappings import plain_copy
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.openapi_schema import (
    index_path, join_path, validate)

CONTROL_PLANE = "control_plane"
HYPERVISOR = "hypervisor"
STORAGE = "storage"
KIND_NAMES = {
    CONTROL_PLANE: "control-plane cluster",
    HYPERVISOR: "hypervisor pool",
    STORAGE: "storage pool",
}

# Pool list key of the region dict -> kind of its clusters.
POOL_LISTS = (
    ("control_planes", CONTROL_PLANE),
    ("hypervisor_pools", HYPERVISOR),
    ("storage_pools", STORAGE),
)

# Inventory groups (DESIGN section 3).
SERVICE_GROUPS = ("gardener", "ironcore", "management")
POOL_GROUPS = {
    "control_planes": "control_plane",
    "hypervisor_pools": "hypervisor_pools",
    "storage_pools": "storage_pools",
}
POOL_VARIABLE = "cobaltcore_pool"
IRONCORE_VARIABLE = "cobaltcore_ironcore"
NETWORK_VARIABLE = "cobaltcore_network"

MEDIA = ("nvme", "ssd", "hdd")
# Label that marks a pool as dedicated to one OpenStack cluster (seed 001).
DEDICATED_LABEL = "dedicated"

# Kubernetes quantity without exponent forms, as Rook's maxSize pattern.
_QUANTITY = re.compile(r"^[0-9]+[.]?[0-9]*([KMGTPE]i|[kMGTPE])?$")

_STRING = {"type": "string"}
_STRING_LIST = {"type": "array", "items": _STRING}

_CLUSTER_PROPERTIES = {
    "name": _STRING,
    "description": _STRING,
    "region": _STRING,
    "workers": {"type": "integer", "minimum": 1},
    # The availability zone of the pool's machines: the Shoot worker's zones, the zone its servers are
    # claimed in (their topology.kubernetes.io/zone), for a hypervisor pool its Nova availability zone.
    "zone": _STRING,
    "labels": {"type": "object", "additionalProperties": _STRING},
    "ironcore": {"type": "object", "properties": {
        "machine_pool": _STRING,
        "machine_class": _STRING,
        "image": _STRING,
    }},
    # Per-cluster Shoot settings over the garden's defaults (see gardener.shoot_spec).
    "gardener": {"type": "object", "properties": {
        "shoot_name": _STRING,
        "kubernetes_version": _STRING,
        "worker_name": _STRING,
        "machine_type": _STRING,
        "architecture": _STRING,
        "purpose": _STRING,
        "machine_image": {"type": "object", "properties": {"name": _STRING, "version": _STRING}},
        "networking": {"type": "object", "additionalProperties": {}},
        "infrastructure_config": {"type": "object", "additionalProperties": {}},
        "control_plane_config": {"type": "object", "additionalProperties": {}},
    }},
}

_STORAGE_PROPERTIES = dict(_CLUSTER_PROPERTIES, **{
    "capacity": _STRING,
    "media": {"type": "string", "enum": list(MEDIA)},
    "encrypted": {"type": "boolean"},
    # The pool's CephCluster (phase 6); ceph_cluster.validate checks its content.
    "ceph": {"type": "object", "additionalProperties": {}},
    # The pool's public network, where the other clusters reach its Ceph monitors; endpoints.py checks it.
    "network": {"type": "object", "additionalProperties": {}},
})

# A hypervisor pool's network plan; network_plan.py validates its content (phase 6, docs/network.md).
# high_availability: the Hypervisors' spec.highAvailability (docs/hypervisors.md).
_HYPERVISOR_PROPERTIES = dict(_CLUSTER_PROPERTIES, network={"type": "object", "additionalProperties": {}},
                              high_availability={"type": "boolean"})

POOL_SCHEMAS = {
    CONTROL_PLANE: {"type": "object", "required": ["name"], "properties": _CLUSTER_PROPERTIES},
    HYPERVISOR: {"type": "object", "required": ["name"], "properties": _HYPERVISOR_PROPERTIES},
    STORAGE: {"type": "object", "required": ["name"], "properties": _STORAGE_PROPERTIES},
}

REGION_SCHEMA = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": _STRING,
        "clusters": {"type": "object", "properties": dict(
            (group, _STRING) for group in SERVICE_GROUPS)},
        "control_planes": {"type": "array"},
        "hypervisor_pools": {"type": "array"},
        "storage_pools": {"type": "array"},
        "ironcore": {"type": "object", "properties": {
            "machine_pools": _STRING_LIST,
            "machine_classes": _STRING_LIST,
            "zones": _STRING_LIST,
        }},
    },
}


# What every problem of the region names first.
SUBJECT = "region"


class Pool(object):
    """One Kubernetes cluster of the region that is not a service cluster."""

    def __init__(self, kind, data):
        self.kind = kind
        self.name = data["name"]
        self.data = plain_copy(data)

    @property
    def labels(self):
        return self.data.get("labels", {})

    @property
    def dedicated(self):
        return self.labels.get(DEDICATED_LABEL) == "true"

    def to_dict(self):
        return copy.deepcopy(self.data)


class Region(object):
    """A validated region; build it with build_region()."""

    def __init__(self, name, clusters, pools, ironcore):
        self.name = name
        self.clusters = clusters
        self.ironcore = ironcore
        self._pools = pools

    def pools(self, kind):
        return [pool for pool in self._pools if pool.kind == kind]

    @property
    def control_planes(self):
        return self.pools(CONTROL_PLANE)

    @property
    def hypervisor_pools(self):
        return self.pools(HYPERVISOR)

    @property
    def storage_pools(self):
        return self.pools(STORAGE)

    def pool(self, name):
        """The cluster called name, or None."""
        for pool in self._pools:
            if pool.name == name:
                return pool
        return None

    @property
    def default_control_plane(self):
        return naming.control_plane_cluster(self.name)

    def to_dict(self):
        result = {"name": self.name, "clusters": dict(
            (group, host) for group, host in self.clusters.items() if host is not None)}
        for key, kind in POOL_LISTS:
            result[key] = [pool.to_dict() for pool in self.pools(kind)]
        if self.ironcore is not None:
            result["ironcore"] = copy.deepcopy(self.ironcore)
        return result


def build_region(data):
    """A Region from a region dict (full or minimal), an inventory-shaped dict
    (see region_from_inventory) or a Region.

    Pools may be given by name only ("hv-pool-a") or as dicts with a name.
    Without control_planes the region has one, <name>-control-plane.
    Raises InputError with every problem found.
    """
    if isinstance(data, Region):
        return data
    if is_inventory(data):
        data = region_from_inventory(data)
    problems = validate(REGION_SCHEMA, data, "", SUBJECT)
    if problems:
        raise InputError(problems)
    name = data["name"]
    pools = []
    for key, kind in POOL_LISTS:
        entries = data.get(key)
        if entries is None and kind == CONTROL_PLANE:
            entries = [naming.control_plane_cluster(name)]
        for index, entry in enumerate(entries or ()):
            problems.extend(_check_pool_entry(kind, entry, pool_path(key, index, entry)))
            if not problems:
                pools.append(Pool(kind, _pool_dict(entry)))
    if not problems:
        region = Region(name, _clusters(data.get("clusters", {})), pools,
                        _ironcore(data.get("ironcore")))
        problems.extend(validate_region(region))
    if problems:
        raise InputError(problems)
    return region


def pool_path(key, index, entry):
    """Where a pool is in the region: by its name (the inventory host) when it has one, else by index."""
    name = entry if isinstance(entry, str) else entry.get("name") if isinstance(entry, Mapping) else None
    if isinstance(name, str) and name:
        return "%s[%s]" % (key, name)
    return index_path(key, index)


def _pool_dict(entry):
    return {"name": entry} if isinstance(entry, str) else entry


def _check_pool_entry(kind, entry, path):
    return validate(POOL_SCHEMAS[kind], _pool_dict(entry), path, SUBJECT)


def _clusters(data):
    return dict((group, data.get(group)) for group in SERVICE_GROUPS)


def _ironcore(data):
    if data is None:
        return None
    result = {"machine_pools": list(data.get("machine_pools", ())),
              "machine_classes": list(data.get("machine_classes", ()))}
    if data.get("zones") is not None:  # declared: the pools' zones must be among them
        result["zones"] = list(data["zones"])
    return result


def validate_region(region):
    """Problems of a structurally valid region, as 'region <field>: <message>' strings."""
    problems = []
    if not kube_names.is_dns1123_label(region.name):
        problems.append(_problem("name", "%r is not a DNS-1123 label" % region.name))
    problems.extend(_check_unique_names(region))
    for key, kind in POOL_LISTS:
        for index, pool in enumerate(region.pools(kind)):
            path = pool_path(key, index, pool.name)
            problems.extend(_check_pool(region, pool, path))
    problems.extend(_check_dedicated_machine_pools(region))
    return problems


def _problem(field, message):
    return problem(field, message, SUBJECT)


def _check_unique_names(region):
    problems = []
    seen = {}
    for group, host in sorted(region.clusters.items()):
        if host is not None:
            seen.setdefault(host, "clusters." + group)
    for key, kind in POOL_LISTS:
        for index, pool in enumerate(region.pools(kind)):
            path = index_path(key, index)
            if pool.name in seen:
                problems.append(_problem(join_path(path, "name"), "%s is also %s" % (
                    pool.name, seen[pool.name])))
            else:
                seen[pool.name] = path
    return problems


def _check_pool(region, pool, path):
    problems = []
    if not kube_names.is_dns1123_label(pool.name):
        problems.append(_problem(join_path(path, "name"),
                                 "%r is not a DNS-1123 label" % pool.name))
    pool_region = pool.data.get("region")
    if pool_region is not None and pool_region != region.name:
        problems.append(_problem(join_path(path, "region"), "%s belongs to region %s, not %s" % (
            pool.name, pool_region, region.name)))
    for key, value in sorted(pool.labels.items()):
        if not kube_names.is_label_key(key) or not kube_names.is_label_value(value):
            problems.append(_problem(join_path(join_path(path, "labels"), key),
                                     "%r: %r is not a valid Kubernetes label" % (key, value)))
    zone = pool.data.get("zone")
    if zone is not None and not (zone and kube_names.is_label_value(zone)):
        problems.append(_problem(join_path(path, "zone"), "%r is not a zone name (a label value: "
                                 "topology.kubernetes.io/zone)" % zone))
    capacity = pool.data.get("capacity")
    if capacity is not None and not _QUANTITY.match(capacity):
        problems.append(_problem(join_path(path, "capacity"),
                                 "%r is not a quantity such as 500Ti" % capacity))
    if pool.kind == STORAGE and pool.data.get("ceph") is not None:
        problems.extend(_problem(join_path(path, item.split(":", 1)[0]), item.split(": ", 1)[1])
                        for item in ceph_cluster.validate(pool.data["ceph"]))
    problems.extend(_check_ironcore_references(region, pool, path))
    return problems


def _check_ironcore_references(region, pool, path):
    """Machine pools and classes must be ones the IronCore cluster declares."""
    if region.ironcore is None:
        return []
    problems = []
    declared = (("machine_pool", "machine_pools"), ("machine_class", "machine_classes"))
    zone = pool.data.get("zone")
    if zone and region.ironcore.get("zones") is not None and zone not in region.ironcore["zones"]:
        problems.append(_problem(join_path(path, "zone"), "%s is not among the IronCore zones of region %s (%s)" % (
            zone, region.name, ", ".join(region.ironcore["zones"]) or "none")))
    for field, declared_key in declared:
        value = pool.data.get("ironcore", {}).get(field)
        if value is not None and value not in region.ironcore[declared_key]:
            problems.append(_problem(
                join_path(join_path(path, "ironcore"), field),
                "%s is not among the IronCore %s of region %s (%s)" % (
                    value, declared_key.replace("_", " "), region.name,
                    ", ".join(region.ironcore[declared_key]) or "none")))
    return problems


def _check_dedicated_machine_pools(region):
    """A dedicated pool is physically isolated: no other pool uses its machines."""
    problems = []
    users = {}
    for key, kind in POOL_LISTS:
        for pool in region.pools(kind):
            machine_pool = pool.data.get("ironcore", {}).get("machine_pool")
            if machine_pool is not None:
                users.setdefault(machine_pool, []).append(pool)
    for key, kind in POOL_LISTS:
        for index, pool in enumerate(region.pools(kind)):
            machine_pool = pool.data.get("ironcore", {}).get("machine_pool")
            others = [other.name for other in users.get(machine_pool, ()) if other is not pool]
            if pool.dedicated and others:
                problems.append(_problem(
                    join_path(pool_path(key, index, pool.name), "ironcore.machine_pool"),
                    "%s is dedicated but shares IronCore machine pool %s with %s" % (
                        pool.name, machine_pool, ", ".join(others))))
    return problems


def is_inventory(data):
    """Whether data is {'name': ..., 'groups': ..., 'hostvars': ...}, not a region dict."""
    return isinstance(data, Mapping) and "groups" in data and "hostvars" in data


def region_from_inventory(inventory):
    """A region dict from {'name': region, 'groups': groups, 'hostvars': hostvars}.

    Each cluster is an inventory host; its description is the host variable
    cobaltcore_pool, and the IronCore host may declare its machine pools and
    classes in cobaltcore_ironcore. Raises InputError when the inventory
    itself is malformed; build_region() validates the result.
    """
    problems = []
    if not isinstance(inventory, Mapping):
        raise InputError([problem("", "must be a mapping with name, groups, hostvars", "inventory")])
    groups = inventory.get("groups") or {}
    hostvars = inventory.get("hostvars") or {}
    result = {"name": inventory.get("name"), "clusters": {}}
    for group in SERVICE_GROUPS:
        hosts = list(groups.get(group, ()))
        if len(hosts) > 1:
            problems.append(problem("groups." + group, "must hold one cluster, holds %s" % ", ".join(hosts), "inventory"))
        result["clusters"][group] = hosts[0] if hosts else None
    for key, group in sorted(POOL_GROUPS.items()):
        result[key] = []
        for host in groups.get(group, ()):
            variables = _host_variable(hostvars, host, POOL_VARIABLE)
            if not isinstance(variables, Mapping):
                problems.append(problem("hostvars.%s.%s" % (host, POOL_VARIABLE), "must be a mapping", "inventory"))
                continue
            pool = {"name": host}
            pool.update(_plain(variables))
            result[key].append(pool)
    ironcore_host = result["clusters"]["ironcore"]
    declared = _host_variable(hostvars, ironcore_host, IRONCORE_VARIABLE) if ironcore_host else None
    if declared:
        result["ironcore"] = _plain(declared)
    if problems:
        raise InputError(problems)
    return result


def public_url_template_of(data):
    """cobaltcore_network.endpoints.public_url_template of an inventory-shaped region, read on its control-plane
    hosts (where the ControlPlanes go); None for a region dict or an inventory that sets none."""
    if not is_inventory(data):
        return None
    hostvars = data.get("hostvars") or {}
    for host in (data.get("groups") or {}).get(POOL_GROUPS["control_planes"]) or ():
        network = _host_variable(hostvars, host, NETWORK_VARIABLE)
        endpoints = network.get("endpoints") if isinstance(network, Mapping) else None
        template = endpoints.get("public_url_template") if isinstance(endpoints, Mapping) else None
        if isinstance(template, str) and template:
            return template
    return None


def _host_variable(hostvars, host, variable):
    host_data = hostvars.get(host) if isinstance(hostvars, Mapping) else None
    if not isinstance(host_data, Mapping):
        return {}
    value = host_data.get(variable)
    return {} if value is None else value


def _plain(value):
    """Plain dicts and lists from Ansible's lazy mappings (HostVars and friends)."""
    if isinstance(value, Mapping):
        return dict((key, _plain(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
