# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region's network plan (phase 6, OVN), pure and validated with netaddr.

Per hypervisor pool (``cobaltcore_pool.network``)::

    underlay: 10.20.1.0/24          # the pool's node network (Shoot spec.networking.nodes)
    mtu: 9000                       # the underlay's MTU (default 1500)
    encapsulation: 10.20.1.10-10.20.1.250   # geneve addresses: a range, a CIDR or a list
    bridge_mappings: {physnet-provider: br-provider}

Region-wide (``cobaltcore_network``)::

    tenant_ipv6: true               # tenant networks may carry IPv6: tenant MTU >= 1280
    provider_networks:
      - {name: provider, physical_network: physnet-provider, type: vlan,
         vlan_ranges: ["100:199"], pools: [hv-pool-a, hv-pool-b]}

``build_plan(region, network)`` checks everything and raises one InputError naming
every offending field (``hv-pool-b.network.underlay: ...``,
``cobaltcore_network.provider_networks[0].vlan_ranges[1]: ...``); else it returns
the plan with each pool's tenant MTU. No Kubernetes, no Ansible: unit-tested alone.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re
from collections.abc import Mapping

try:
    import netaddr
    HAS_NETADDR = True
except ImportError:  # pragma: no cover - netaddr is in requirements.txt
    netaddr = None
    HAS_NETADDR = False

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem

NETWORK_VARIABLE = "cobaltcore_network"
DEFAULT_MTU = 1500
# Neutron's ML2/OVN geneve overhead: [ml2_type_geneve] max_header_size, which the OVN mechanism
# driver requires to be at least 38 (neutron/plugins/ml2/drivers/ovn/mech_driver/mech_driver.py,
# OVN_MIN_GENEVE_MAX_HEADER_SIZE), plus the outer IP header the geneve type driver subtracts
# (neutron_lib.constants.IP_HEADER_LENGTH: 20 for IPv4, 40 for IPv6): 58 and 78 bytes.
GENEVE_MAX_HEADER_SIZE = 38
IP_HEADER_LENGTH = {4: 20, 6: 40}
IPV6_MIN_MTU = 1280
IPV4_MIN_MTU = 68
MIN_VLAN, MAX_VLAN = 1, 4094
NETWORK_TYPES = ("vlan", "flat")
# The OVN operator's grammar (c5c3/cobaltcore operators/ovn OVNBridgeMapping): a physical network
# is a DNS-1123 label, a bridge a Linux interface name (IFNAMSIZ leaves 15 bytes).
_PHYSNET = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_BRIDGE = re.compile(r"^[a-zA-Z0-9_.-]{1,15}$")
# ovn-controller's own integration bridge: never a provider bridge.
INTEGRATION_BRIDGE = "br-int"
POOL_KEYS = ("underlay", "mtu", "encapsulation", "bridge_mappings")
REGION_KEYS = ("provider_networks", "tenant_ipv6", "endpoints")  # endpoints: region/endpoints.py
PROVIDER_KEYS = ("name", "physical_network", "type", "vlan_ranges", "pools")


def geneve_overhead(ip_version):
    return GENEVE_MAX_HEADER_SIZE + IP_HEADER_LENGTH[ip_version]


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def network_of(text):
    """An IPNetwork with no host bits set, or None."""
    if not isinstance(text, str) or "/" not in text:
        return None
    try:
        net = netaddr.IPNetwork(text)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None
    return net if net.ip == net.network else None  # IPNetwork equality ignores host bits


def address_of(text):
    if not isinstance(text, str):
        return None
    try:
        return netaddr.IPAddress(text)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None


def _encapsulation(value, where, problems):
    """(IPSet, [addresses as written], version) of a pool's encapsulation value; None when unusable."""
    if isinstance(value, str) and "-" in value:
        first, _dash, last = value.partition("-")
        start, end = address_of(first.strip()), address_of(last.strip())
        if start is None or end is None or start.version != end.version or start > end:
            problems.append(problem(where, "%r is not a range <first>-<last> of addresses" % value))
            return None
        return netaddr.IPSet(netaddr.IPRange(start, end)), None, start.version
    if isinstance(value, str):
        net = network_of(value)
        if net is None:
            problems.append(problem(where, "%r is neither an address range, a CIDR nor a list of addresses" % value))
            return None
        return netaddr.IPSet(net), None, net.version
    if isinstance(value, (list, tuple)) and value:
        found, listed, versions = netaddr.IPSet(), [], set()
        for index, item in enumerate(value):
            address = address_of(item)
            if address is None:
                problems.append(problem("%s[%d]" % (where, index), "%r is not an IP address" % (item,)))
                continue
            if address in found:
                problems.append(problem("%s[%d]" % (where, index), "%s is listed twice" % address))
            found.add(address)
            listed.append(address)
            versions.add(address.version)
        if len(versions) > 1:
            problems.append(problem(where, "mixes IPv4 and IPv6 addresses"))
            return None
        return (found, listed, versions.pop()) if listed else None
    problems.append(problem(where, "is required: an address range, a CIDR or a list of addresses"))
    return None


def _pool_plan(pool, problems):
    name = pool["name"]
    base = "%s.network" % name
    data = pool.get("network")
    if data is None:
        problems.append(problem(base, "is required: every hypervisor pool needs an underlay for geneve"))
        return None
    if not isinstance(data, Mapping):
        problems.append(problem(base, "must be a mapping with %s" % ", ".join(POOL_KEYS)))
        return None
    for key in sorted(set(data) - set(POOL_KEYS)):
        problems.append(problem("%s.%s" % (base, key), "is not a field of a pool's network (%s)" % ", ".join(POOL_KEYS)))
    underlay = network_of(data.get("underlay"))
    if underlay is None:
        problems.append(problem(base + ".underlay", "%r is not a network in CIDR notation (such as 10.20.1.0/24)"
                                % (data.get("underlay"),)))
    nodes = (((pool.get("gardener") or {}).get("networking") or {}).get("nodes"))
    if nodes and underlay is not None and network_of(nodes) != underlay:
        # the Shoot's node network is the underlay (providers/gardener.py): two values would be one lost
        problems.append(problem("%s.gardener.networking.nodes" % name, "%s is not the pool's underlay %s; leave it out"
                                % (nodes, underlay)))
    mtu = data.get("mtu", DEFAULT_MTU)
    if not _is_int(mtu) or not 576 <= mtu <= 65535:
        problems.append(problem(base + ".mtu", "%r is not an MTU (an integer 576-65535)" % (mtu,)))
        mtu = None
    encap = _encapsulation(data.get("encapsulation"), base + ".encapsulation", problems)
    mappings = data.get("bridge_mappings") or {}
    if not isinstance(mappings, Mapping):
        problems.append(problem(base + ".bridge_mappings", "must be a mapping of physical network to bridge"))
        mappings = {}
    for physnet, bridge in sorted(mappings.items()):
        where = "%s.bridge_mappings.%s" % (base, physnet)
        if not isinstance(physnet, str) or len(physnet) > 63 or not _PHYSNET.match(physnet):
            problems.append(problem(where, "%r is not a physical network name (a DNS-1123 label)" % (physnet,)))
        if not isinstance(bridge, str) or not _BRIDGE.match(bridge):
            problems.append(problem(where, "%r is not an OVS bridge name (1-15 of a-z A-Z 0-9 _ . -)" % (bridge,)))
        elif bridge == INTEGRATION_BRIDGE:
            problems.append(problem(where, "%s is ovn-controller's integration bridge, not a provider bridge" % bridge))
    result = {"name": name, "underlay": str(underlay) if underlay is not None else None, "mtu": mtu,
              "bridge_mappings": dict(mappings), "workers": pool.get("workers", 1),
              "_underlay": underlay, "_encap": None}
    if underlay is not None:
        result["ip_version"] = underlay.version
        if mtu is not None:
            result["tenant_mtu"] = mtu - geneve_overhead(underlay.version)
    if encap is not None and underlay is not None:
        addresses, listed, version = encap
        where = base + ".encapsulation"
        if version != underlay.version:
            problems.append(problem(where, "is IPv%d, the underlay %s is IPv%d" % (version, underlay, underlay.version)))
        else:
            outside = addresses - netaddr.IPSet(underlay)
            if outside:
                problems.append(problem(where, "%s %s outside the underlay %s" % (
                    _describe(outside), "is" if outside.size == 1 else "are", underlay)))
            reserved = [a for a in (underlay.network, underlay.broadcast) if a is not None and a in addresses]
            if reserved:
                problems.append(problem(where, "holds %s, the underlay's %s" % (
                    " and ".join(str(a) for a in reserved), "network/broadcast address")))
            usable = addresses & netaddr.IPSet(underlay)
            workers = pool.get("workers", 1)
            if _is_int(workers) and usable.size < workers:
                problems.append(problem(where, "offers %d address(es) for %d workers" % (usable.size, workers)))
            result["_encap"] = addresses
            result["encapsulation"] = [str(a) for a in listed] if listed else [str(c) for c in addresses.iter_cidrs()]
    return result


def _describe(ipset):
    cidrs = [str(c.ip) if c.size == 1 else str(c) for c in ipset.iter_cidrs()]  # a lone address without /32
    return ", ".join(cidrs[:4]) + (" and more" if len(cidrs) > 4 else "")


def _vlan_ranges(value, where, problems):
    """[(start, end)] of vlan_ranges ("100:199", "100", or 100); problems for the bad ones."""
    ranges = []
    if not isinstance(value, (list, tuple)) or not value:
        problems.append(problem(where, "is required for a vlan network: a list such as [\"100:199\"]"))
        return ranges
    for index, item in enumerate(value):
        here = "%s[%d]" % (where, index)
        text = str(item) if _is_int(item) else item
        parts = text.split(":") if isinstance(text, str) else []
        try:
            numbers = [int(p) for p in parts]
        except ValueError:
            numbers = []
        if len(numbers) not in (1, 2):
            problems.append(problem(here, "%r is not a VLAN range <start>:<end>" % (item,)))
            continue
        start, end = numbers[0], numbers[-1]
        if not (MIN_VLAN <= start <= MAX_VLAN and MIN_VLAN <= end <= MAX_VLAN):
            problems.append(problem(here, "%r: VLAN IDs are %d-%d" % (item, MIN_VLAN, MAX_VLAN)))
        elif start > end:
            problems.append(problem(here, "%r starts after it ends" % (item,)))
        else:
            for other in ranges:
                if start <= other[1] and other[0] <= end:
                    problems.append(problem(here, "%r overlaps %d:%d of the same network" % (item, other[0], other[1])))
                    break
            ranges.append((start, end))
    return ranges


def _provider_networks(network, pools, problems):
    base = "%s.provider_networks" % NETWORK_VARIABLE
    entries = network.get("provider_networks") or []
    if not isinstance(entries, (list, tuple)):
        problems.append(problem(base, "must be a list"))
        return []
    result, names, flat, vlans = [], {}, {}, {}
    for index, entry in enumerate(entries):
        where = "%s[%d]" % (base, index)
        if not isinstance(entry, Mapping):
            problems.append(problem(where, "must be a mapping with %s" % ", ".join(PROVIDER_KEYS)))
            continue
        for key in sorted(set(entry) - set(PROVIDER_KEYS)):
            problems.append(problem("%s.%s" % (where, key), "is not a field of a provider network (%s)"
                                    % ", ".join(PROVIDER_KEYS)))
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            problems.append(problem(where + ".name", "is required"))
        elif name in names:
            problems.append(problem(where + ".name", "%s is also provider_networks[%d]" % (name, names[name])))
        else:
            names[name] = index
        physnet = entry.get("physical_network")
        if not isinstance(physnet, str) or len(physnet) > 63 or not _PHYSNET.match(physnet):
            problems.append(problem(where + ".physical_network", "%r is not a physical network name (a DNS-1123 label)"
                                    % (physnet,)))
            physnet = None
        kind = entry.get("type")
        ranges = []
        if kind not in NETWORK_TYPES:
            problems.append(problem(where + ".type", "%r is not one of %s" % (kind, ", ".join(NETWORK_TYPES))))
        elif kind == "flat":
            if entry.get("vlan_ranges"):
                problems.append(problem(where + ".vlan_ranges", "a flat network has no VLANs"))
            if physnet and physnet in flat:
                problems.append(problem(where + ".physical_network", "%s carries flat network %s already: Neutron "
                                        "allows one flat network per physical network" % (physnet, flat[physnet])))
            elif physnet:
                flat[physnet] = name
        else:
            ranges = _vlan_ranges(entry.get("vlan_ranges"), where + ".vlan_ranges", problems)
            for start, end in ranges:
                for other_name, (o_start, o_end) in vlans.get(physnet, []):
                    if physnet and start <= o_end and o_start <= end:
                        problems.append(problem(where + ".vlan_ranges", "%d:%d overlaps %d:%d of %s on %s" % (
                            start, end, o_start, o_end, other_name, physnet)))
            if physnet:
                vlans.setdefault(physnet, []).extend((name, r) for r in ranges)
        served = entry.get("pools")
        if served is None:
            served = sorted(pools)
        elif not isinstance(served, (list, tuple)) or not all(isinstance(p, str) for p in served) or not served:
            problems.append(problem(where + ".pools", "must be a non-empty list of hypervisor pool names"))
            served = []
        for pool_name in served:
            pool = pools.get(pool_name)
            if pool is None:
                problems.append(problem(where + ".pools", "%s is not a hypervisor pool of the region (%s)"
                                        % (pool_name, ", ".join(sorted(pools)) or "none")))
            elif physnet and physnet not in pool["bridge_mappings"]:
                problems.append(problem("%s.network.bridge_mappings" % pool_name, "has no bridge for physical "
                                        "network %s, which provider network %s needs" % (physnet, name)))
        result.append({"name": name, "physical_network": physnet, "type": kind,
                       "vlan_ranges": ["%d:%d" % r for r in ranges], "pools": list(served)})
    return result


def build_plan(region, network=None):
    """The validated plan of a region dict (hypervisor_pools with their `network`) and cobaltcore_network.

    Returns {pools: {name: {underlay, mtu, ip_version, tenant_mtu, encapsulation, bridge_mappings,
    workers}}, provider_networks, tenant_mtu, tenant_ipv6, geneve_overhead}; raises InputError
    naming every problem.
    """
    if not HAS_NETADDR:
        raise InputError([problem(NETWORK_VARIABLE, "the Python package netaddr is required on the controller")])
    problems = []
    network = {} if network is None else network
    if not isinstance(network, Mapping):
        raise InputError([problem(NETWORK_VARIABLE, "must be a mapping with %s" % ", ".join(REGION_KEYS))])
    for key in sorted(set(network) - set(REGION_KEYS)):
        problems.append(problem("%s.%s" % (NETWORK_VARIABLE, key), "is not a field of the region's network (%s)"
                                % ", ".join(REGION_KEYS)))
    tenant_ipv6 = network.get("tenant_ipv6", True)
    if not isinstance(tenant_ipv6, bool):
        problems.append(problem(NETWORK_VARIABLE + ".tenant_ipv6", "must be true or false"))
        tenant_ipv6 = True
    pools = {}
    for pool in region.get("hypervisor_pools") or []:
        planned = _pool_plan(pool, problems)
        if planned is not None:
            pools[pool["name"]] = planned
    _cross_pool(pools, problems)
    floor = IPV6_MIN_MTU if tenant_ipv6 else IPV4_MIN_MTU
    for name, planned in sorted(pools.items()):
        tenant = planned.get("tenant_mtu")
        if tenant is not None and tenant < floor:
            problems.append(problem("%s.network.mtu" % name, "%d leaves tenant networks %d bytes after geneve's %d, "
                                    "below the %d %s needs" % (planned["mtu"], tenant,
                                                               geneve_overhead(planned["ip_version"]), floor,
                                                               "IPv6" if tenant_ipv6 else "IPv4")))
    providers = _provider_networks(network, pools, problems)
    if problems:
        raise InputError(problems)
    tenant_mtus = [p["tenant_mtu"] for p in pools.values()]
    return {
        "pools": dict((name, dict((k, v) for k, v in p.items() if not k.startswith("_"))) for name, p in pools.items()),
        "provider_networks": providers,
        "tenant_ipv6": tenant_ipv6,
        "tenant_mtu": min(tenant_mtus) if tenant_mtus else None,
        "geneve_overhead": dict((v, geneve_overhead(v)) for v in IP_HEADER_LENGTH),
    }


def overlapping(net, other):
    """Whether two networks of the same IP version share an address."""
    return net.version == other.version and net.first <= other.last and other.first <= net.last


def _cross_pool(pools, problems):
    """Underlays do not overlap; no encapsulation address belongs to two pools."""
    seen = []
    for name in list(pools):
        planned = pools[name]
        underlay, encap = planned["_underlay"], planned["_encap"]
        for other in seen:
            other_underlay = other["_underlay"]
            if underlay is not None and other_underlay is not None and overlapping(underlay, other_underlay):
                problems.append(problem("%s.network.underlay" % name, "%s overlaps %s's underlay %s" % (
                    underlay, other["name"], other_underlay)))
            if encap is not None and other["_encap"] is not None:
                shared = encap & other["_encap"]
                if shared:
                    problems.append(problem("%s.network.encapsulation" % name, "%s %s also %s's encapsulation "
                                            "address%s" % (_describe(shared), "is" if shared.size == 1 else "are",
                                                           other["name"], "" if shared.size == 1 else "es")))
        seen.append(planned)


# Helpers for the verification and the lab values --------------------------------

def bridge_mappings_text(mappings):
    """OVS external_ids:ovn-bridge-mappings: "physnet:bridge,..." sorted by physical network."""
    return ",".join("%s:%s" % (k, mappings[k]) for k in sorted(mappings))


def parse_bridge_mappings(text):
    """{physnet: bridge} of an ovn-bridge-mappings value; None when it is malformed."""
    result = {}
    for part in [p.strip() for p in (text or "").split(",") if p.strip()]:
        physnet, sep, bridge = part.partition(":")
        if not sep or not physnet or not bridge or physnet in result:
            return None
        result[physnet] = bridge
    return result


def encapsulation_contains(planned_pool, ip):
    """Whether ip is one of the pool's planned encapsulation addresses."""
    address = address_of(ip)
    if address is None:
        return False
    return any(address in netaddr.IPNetwork(c) if "/" in c else address == netaddr.IPAddress(c)
               for c in planned_pool.get("encapsulation") or [])


def in_underlay(planned_pool, ip):
    address = address_of(ip)
    return address is not None and planned_pool.get("underlay") is not None and \
        address in netaddr.IPNetwork(planned_pool["underlay"])
