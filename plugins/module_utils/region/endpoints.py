# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The addresses by which the region's clusters reach each other (seed 004, "Cluster Communication").

Each Shoot is a network of its own: its pods and Services (Shoot spec.networking.pods and .services)
and the names its cluster DNS answers (``*.svc``, ``*.cluster.local``, single-label names) exist only
inside it. Every flow that crosses clusters therefore needs an address from the region's plan:

- ``ceph-monitors`` - the control plane's Glance, Cinder and Nova and the hypervisors' libvirt reach
  each storage pool's Ceph monitors on the pool's storage public network (``cobaltcore_pool.network.public``
  of the storage pool; its Nodes' network, where Rook runs the mons with ``network.provider: host`` and
  ``addressRanges.public``);
- ``public-api`` - users and tenants reach the OpenStack APIs by the catalog's public URLs
  (``cobaltcore_network.endpoints.public_url_template``, the Keystone bootstrap's public URL template);
- ``ovn-southbound`` - the hypervisor pools' ovn-controllers reach the control plane's OVN Southbound database
  (``cobaltcore_network.endpoints.ovn_southbound``, ``tcp:<address>:<port>`` or ``ssl:...``; phase 6 publishes it
  with a LoadBalancer Service of that address).

``plan(region, network, gardener)`` checks them all and raises one InputError naming, for every address
that would only work inside one cluster, the flow, the field and the clusters. No Kubernetes, no Ansible.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re
from collections.abc import Mapping

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.mappings import deep_merge
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.network_plan import (
    HAS_NETADDR, address_of, network_of, overlapping)

ENDPOINTS_FIELD = "cobaltcore_network.endpoints"
ENDPOINT_KEYS = ("public_url_template", "ovn_southbound")
# Names a cluster's DNS answers only for its own pods (Kubernetes DNS specification: <service>.<namespace>.svc.<zone>).
IN_CLUSTER_SUFFIXES = (".svc", ".cluster.local", ".svc.cluster.local")
# What the public URL template is rendered with to check it (the catalog's own values come from keystone/settings.py).
SAMPLE = {"name": "keystone", "type": "identity", "namespace": "openstack", "region": "region", "cluster": "openstack",
          "port": 5000, "path": "/v3"}
_OVSDB = re.compile(r"^(tcp|ssl):(\[[0-9a-fA-F:.]+\]|[^:\[\]]+):([0-9]{1,5})$")
_URL = re.compile(r"^(https?)://(\[[0-9a-fA-F:.]+\]|[^/:\[\]]+)(?::([0-9]{1,5}))?(/.*)?$")
_HOST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")


def in_cluster_name(host):
    """Whether a host name resolves only inside a cluster: a Service name or a name without a domain."""
    host = host.rstrip(".").lower()
    return "." not in host or host.endswith(IN_CLUSTER_SUFFIXES)


def cluster_networks(region, gardener):
    """{cluster: [(what, IPNetwork)]} of every Shoot's pod and Service networks (the Gardener settings, a pool's own
    gardener.networking over them)."""
    common = (gardener or {}).get("networking") or {}
    found = {}
    for key in ("control_planes", "hypervisor_pools", "storage_pools"):
        for pool in region.get(key) or []:
            networking = deep_merge(common, ((pool.get("gardener") or {}).get("networking")))
            for what in ("pods", "services"):
                net = network_of(networking.get(what))
                if net is not None:
                    found.setdefault(pool["name"], []).append((what, net))
    return found


def _address(text):
    """An address, also in brackets ([fd00::1]), or None."""
    return address_of(text.strip("[]")) if isinstance(text, str) else None


def _inside(address, networks):
    """'the services network 100.80.0.0/13 of lab-control-plane, ...' for the networks that hold the address."""
    return ["the %s network %s of %s" % (what, net, cluster) for cluster, owned in sorted(networks.items())
            for what, net in owned if address.version == net.version and address in net]


def _overlaps(net, networks):
    return ["the %s network %s of %s" % (what, other, cluster)
            for cluster, owned in sorted(networks.items()) for what, other in owned if overlapping(net, other)]


class _Flow(object):
    def __init__(self, name, source, target):
        self.name, self.source, self.target = name, source, target

    def refuse(self, field, message):
        return problem(field, "%s (flow %s from %s to %s)" % (message, self.name, self.source, self.target))


def _host_problem(flow, field, host, networks):
    """The problem of a host that only works inside a cluster, or None."""
    address = _address(host)
    if address is None:
        if not _HOST.match(host or ""):
            return flow.refuse(field, "%r is neither an IP address nor a host name" % (host,))
        if in_cluster_name(host):
            return flow.refuse(field, "%s resolves only inside a cluster (a Service name or a name without a "
                                      "domain); give an address or name the region's network routes" % host)
        return None
    hits = _inside(address, networks)
    if hits:
        return flow.refuse(field, "%s is inside %s: it routes only inside that cluster" % (address, ", ".join(hits)))
    return None


def _public_url_template(value, flow, networks, problems):
    field = ENDPOINTS_FIELD + ".public_url_template"
    try:
        url = value.format(**SAMPLE) if isinstance(value, str) else None
    except (KeyError, IndexError, ValueError):
        url = None
    match = _URL.match(url or "")
    if match is None:
        problems.append(flow.refuse(field, "%r is not a URL template of {name}, {type}, {namespace}, {cluster}, "
                                           "{region}, {port} and {path} (such as "
                                           "https://{name}.{cluster}.eu-de-1.example.com{path})" % (value,)))
        return None
    found = _host_problem(flow, field, match.group(2), networks)
    if found:
        problems.append(found)
        return None
    return value


def parse_ovsdb_remote(value):
    """(protocol, host, port) of an OVSDB remote such as tcp:10.0.0.5:6642, or None."""
    match = _OVSDB.match(value) if isinstance(value, str) else None
    if match is None or not 0 < int(match.group(3)) < 65536:
        return None
    return match.group(1), match.group(2).strip("[]"), int(match.group(3))


def _ovn_southbound(value, flow, networks, problems):
    field = ENDPOINTS_FIELD + ".ovn_southbound"
    remote = parse_ovsdb_remote(value)
    if remote is None:
        problems.append(flow.refuse(field, "%r is not an OVSDB remote such as tcp:10.100.0.50:6642 (or ssl:...)"
                                    % (value,)))
        return None
    found = _host_problem(flow, field, remote[1], networks)
    if found:
        problems.append(found)
        return None
    return value


def _storage_public(pool, flow, networks, seen, problems):
    field = "%s.network.public" % pool["name"]
    data = pool.get("network")
    if not isinstance(data, Mapping) or data.get("public") is None:
        problems.append(flow.refuse(field, "is required: the network of the pool's Nodes where Rook runs the Ceph "
                                           "monitors (network.provider host), which the other clusters reach"))
        return None
    for key in sorted(set(data) - {"public"}):
        problems.append(problem("%s.network.%s" % (pool["name"], key), "is not a field of a storage pool's network "
                                                                       "(public)"))
    net = network_of(data["public"])
    if net is None:
        problems.append(flow.refuse(field, "%r is not a network in CIDR notation (such as 10.30.1.0/24)"
                                    % (data["public"],)))
        return None
    hits = _overlaps(net, networks)
    if hits:
        problems.append(flow.refuse(field, "%s overlaps %s: monitors there route only inside that cluster"
                                    % (net, ", ".join(hits))))
        return None
    for other, other_net in seen:
        if overlapping(net, other_net):
            problems.append(flow.refuse(field, "%s overlaps %s's public network %s" % (net, other, other_net)))
            return None
    nodes = network_of(((pool.get("gardener") or {}).get("networking") or {}).get("nodes"))
    if nodes is not None and nodes != net:
        problems.append(problem("%s.gardener.networking.nodes" % pool["name"],
                                "%s is not the pool's public network %s; leave it out" % (nodes, net)))
    seen.append((pool["name"], net))
    return str(net)


def plan(region, network=None, gardener=None):
    """The region's cross-cluster addresses; InputError naming every one that would work inside one cluster only.

    region: the region dict (control_planes, hypervisor_pools, storage_pools with their `network` and
    `gardener`); network: cobaltcore_network (its `endpoints`); gardener: cobaltcore_gardener (the Shoots'
    networking). Returns {public_url_template, storage_pools: {name: {public}}, flows}.
    """
    if not HAS_NETADDR:
        raise InputError([problem(ENDPOINTS_FIELD, "the Python package netaddr is required on the controller")])
    network = network if isinstance(network, Mapping) else {}
    endpoints = network.get("endpoints")
    problems = []
    if endpoints is None:
        endpoints = {}
    elif not isinstance(endpoints, Mapping):
        raise InputError([problem(ENDPOINTS_FIELD, "must be a mapping with %s" % ", ".join(ENDPOINT_KEYS))])
    for key in sorted(set(endpoints) - set(ENDPOINT_KEYS)):
        problems.append(problem("%s.%s" % (ENDPOINTS_FIELD, key), "is not a field of the region's endpoints (%s)"
                                % ", ".join(ENDPOINT_KEYS)))
    networks = cluster_networks(region, gardener)
    control_planes = [p["name"] for p in region.get("control_planes") or []]
    hypervisors = [p["name"] for p in region.get("hypervisor_pools") or []]
    storage = region.get("storage_pools") or []
    result = {"public_url_template": None, "ovn_southbound": None, "storage_pools": {}, "flows": []}
    control = ", ".join(control_planes) or "the control plane"
    flow = _Flow("public-api", "users and tenants", control)
    if endpoints.get("public_url_template") is None:
        problems.append(flow.refuse(ENDPOINTS_FIELD + ".public_url_template", "is required: the catalog's public URLs "
                                    "(such as https://{name}.{cluster}.eu-de-1.example.com{path})"))
    else:
        result["public_url_template"] = _public_url_template(endpoints["public_url_template"], flow, networks, problems)
    result["flows"].append({"name": flow.name, "from": ["users"], "to": control_planes,
                            "address": result["public_url_template"]})
    if hypervisors:
        flow = _Flow("ovn-southbound", ", ".join(hypervisors), control)
        if endpoints.get("ovn_southbound") is None:
            problems.append(flow.refuse(ENDPOINTS_FIELD + ".ovn_southbound", "is required: the address of the OVN "
                                        "Southbound database that the hypervisors' ovn-controllers reach (such as "
                                        "tcp:10.100.0.50:6642, a LoadBalancer address of the control plane)"))
        else:
            result["ovn_southbound"] = _ovn_southbound(endpoints["ovn_southbound"], flow, networks, problems)
        result["flows"].append({"name": flow.name, "from": hypervisors, "to": control_planes,
                                "address": result["ovn_southbound"]})
    seen = []
    for pool in storage:
        flow = _Flow("ceph-monitors", ", ".join(control_planes + hypervisors) or "the OpenStack clusters", pool["name"])
        public = _storage_public(pool, flow, networks, seen, problems)
        result["storage_pools"][pool["name"]] = {"public": public}
        result["flows"].append({"name": flow.name, "from": control_planes + hypervisors, "to": [pool["name"]],
                                "address": public})
    if problems:
        raise InputError(problems)
    return result


def monitors_outside(monitors, public):
    """The monitors ("ip:port") of a storage pool that are not on its planned public network."""
    net = network_of(public)
    outside = []
    for monitor in monitors or []:
        host = monitor.rpartition(":")[0] if monitor.count(":") == 1 or monitor.startswith("[") else monitor
        address = _address(host)
        if net is None or address is None or address.version != net.version or address not in net:
            outside.append(monitor)
    return outside
