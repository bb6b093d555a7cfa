# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase 6's verdict on the region's OVN, pure logic (no client, no Ansible).

``verify(plan, cluster, chassis, nodes, neutron)`` judges what the caller read:

* ``plan``: network_plan.build_plan()'s result;
* ``cluster``: the OVNCluster (ovn.c5c3.io/v1alpha1) or None; ``chassis``: its namespace's OVNChassis;
* ``nodes``: {pool: [Node]} - the Nodes of each hypervisor pool's cluster that the OVNCluster's
  controller nodeSelector selects;
* ``neutron``: the Neutron CR or None.

It returns a report with ``problems`` (one string each, all of them), ``ready`` and the data:
Raft members per database, chassis by Node, the tenant MTU.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.conditions import condition
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import endpoints, naming, network_plan

DATABASES = (("northbound", "NorthboundReady", "nbConnection", "ovn-nb", "Northbound"),
             ("southbound", "SouthboundReady", "sbConnection", "ovn-sb", "Southbound"))
HYPERVISOR_SELECTOR = {"node-role.kubernetes.io/hypervisor": ""}
# The Southbound database's members (seed 003: the StatefulSet behind the Service ovn-sb) and the Service that
# publishes them to the hypervisor pools at the region's planned address.
SOUTHBOUND_SELECTOR = {"app": "ovn-sb"}
SOUTHBOUND_SERVICE = "ovn-sb-public"
SOUTHBOUND_PORT = 6642


def southbound_service(remote, namespace="ovn-system"):
    """The LoadBalancer Service that publishes the Southbound database at the plan's OVSDB remote
    (cobaltcore_network.endpoints.ovn_southbound): its address as spec.loadBalancerIP (a name is the operator's DNS
    for whatever address the load balancer gets), its port to the members' 6642."""
    parsed = endpoints.parse_ovsdb_remote(remote)
    if parsed is None:
        raise InputError([problem("ovn_southbound", "%r is not an OVSDB remote such as tcp:10.100.0.50:6642" % (remote,))])
    dummy, host, port = parsed
    spec = {"type": "LoadBalancer", "selector": dict(SOUTHBOUND_SELECTOR),
            "ports": [{"name": "ovsdb-sb", "protocol": "TCP", "port": port, "targetPort": SOUTHBOUND_PORT}]}
    if network_plan.address_of(host) is not None:
        spec["loadBalancerIP"] = host
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": SOUTHBOUND_SERVICE, "namespace": namespace,
                         "labels": {naming.MANAGED_BY_LABEL: naming.MANAGED_BY}},
            "spec": spec}


def node_selector(cluster):
    return dict((((cluster or {}).get("spec") or {}).get("controller") or {}).get("nodeSelector")
                or HYPERVISOR_SELECTOR)


def _internal_ip(node):
    return next((a.get("address") for a in (node.get("status") or {}).get("addresses") or []
                 if a.get("type") == "InternalIP"), None)


def _raft(cluster, key, conn, default):
    spec = (cluster.get("spec") or {}).get(key) or {}
    status = (cluster.get("status") or {}).get(key) or {}
    replicas = spec.get("replicas") or 3
    service = (((cluster.get("spec") or {}).get("neutronIntegration") or {}).get(conn) or {}).get("service") or {}
    names = ["%s-%d" % (service.get("name") or default, i) for i in range(replicas)]
    members = list(status.get("members") or [])
    ready = status.get("readyReplicas")
    return {"replicas": replicas, "ready_replicas": ready, "members": members,
            "missing": [n for n in names if n not in members]}


def _cluster_problems(cluster, where):
    problems, raft = [], {}
    meta = cluster["metadata"]
    status = cluster.get("status") or {}
    gen = meta.get("generation")
    if status.get("observedGeneration") != gen:
        problems.append("%s: status is for generation %s, not the current %s" % (where, status.get("observedGeneration"), gen))
    ready = condition(cluster, "Ready")
    if not ready or ready.get("status") != "True":
        why = " (%s: %s)" % (ready.get("reason"), ready.get("message")) if ready else ""
        problems.append("%s: Ready is %s%s" % (where, (ready or {}).get("status", "missing"), why))
    elif ready.get("observedGeneration", gen) != gen and status.get("observedGeneration") == gen:
        problems.append("%s: Ready is for generation %s, not the current %s" % (where, ready["observedGeneration"], gen))
    for key, _ctype, conn, default, label in DATABASES:
        raft[key] = found = _raft(cluster, key, conn, default)
        if found["ready_replicas"] != found["replicas"] or found["missing"]:
            problems.append("%s: %s Raft has %s of %d members%s" % (
                where, label, found["ready_replicas"] if found["ready_replicas"] is not None else "no count of",
                found["replicas"], "; missing %s" % ", ".join(found["missing"]) if found["missing"] else ""))
    return problems, raft


def verify(plan, cluster, chassis, nodes, neutron, where="OVNCluster ovn-system/ovn", neutron_where="Neutron"):
    problems = []
    report = {"tenant_mtu": plan.get("tenant_mtu"), "geneve_overhead": plan.get("geneve_overhead"),
              "pools": dict((name, {"tenant_mtu": p.get("tenant_mtu"), "underlay": p.get("underlay")})
                            for name, p in (plan.get("pools") or {}).items())}
    if cluster is None:
        problems.append("%s does not exist" % where)
        report.update(problems=problems, ready=False, chassis=[], raft={}, endpoints={})
        return report
    more, raft = _cluster_problems(cluster, where)
    problems.extend(more)
    status = cluster.get("status") or {}
    endpoints = status.get("endpoints") or {}
    expected = dict((n["metadata"]["name"], (pool, n)) for pool in sorted(nodes) for n in nodes[pool])
    count = sum(len(n) for n in nodes.values())
    if status.get("chassisCount") != count:
        problems.append("%s: chassisCount is %s, the hypervisor pools have %d hypervisor Node%s" % (
            where, status.get("chassisCount"), count, "" if count == 1 else "s"))
    by_name = dict((c["metadata"]["name"], c) for c in chassis)
    for name in sorted(set(expected) - set(by_name)):
        pool, node = expected[name]
        problems.append("Node %s of %s has no OVNChassis%s" % (
            name, pool, "" if _internal_ip(node) else " (the Node has no InternalIP, the chassis' geneve address)"))
    for name in sorted(set(by_name) - set(expected)):
        problems.append("OVNChassis %s has no hypervisor Node in any pool" % name)
    seen, rows = {}, []
    for name in sorted(set(by_name) & set(expected)):
        pool, node = expected[name]
        spec = by_name[name].get("spec") or {}
        planned = (plan.get("pools") or {}).get(pool) or {}
        ip = (spec.get("encapsulation") or {}).get("ip")
        node_ip = _internal_ip(node)
        what = "OVNChassis %s (Node %s of %s)" % (name, name, pool)
        if ip != node_ip:
            problems.append("%s: encapsulation ip %s is not the Node's InternalIP %s" % (what, ip, node_ip))
        if not network_plan.in_underlay(planned, ip):
            problems.append("%s: encapsulation ip %s is outside the underlay %s" % (what, ip, planned.get("underlay")))
        elif not network_plan.encapsulation_contains(planned, ip):
            problems.append("%s: encapsulation ip %s is not a planned encapsulation address" % (what, ip))
        if ip in seen:
            problems.append("%s: encapsulation ip %s is also OVNChassis %s's" % (what, ip, seen[ip]))
        seen.setdefault(ip, name)
        if (spec.get("encapsulation") or {}).get("type") != "geneve":
            problems.append("%s: encapsulation type %s, not geneve" % (what, (spec.get("encapsulation") or {}).get("type")))
        mappings = dict((m.get("physicalNetwork"), m.get("bridge")) for m in spec.get("bridgeMappings") or [])
        if mappings != (planned.get("bridge_mappings") or {}):
            problems.append("%s: bridge mappings %s, planned %s" % (
                what, network_plan.bridge_mappings_text(mappings) or "none",
                network_plan.bridge_mappings_text(planned.get("bridge_mappings") or {}) or "none"))
        ready = condition(by_name[name], "Ready") or {}
        if ready.get("status") != "True":
            problems.append("%s: Ready is %s (%s)" % (what, ready.get("status", "missing"), ready.get("message")))
        rows.append({"name": name, "pool": pool, "node": name, "ip": ip, "node_ip": node_ip,
                     "system_id": spec.get("systemId"), "bridge_mappings": mappings,
                     "ready": ready.get("status") == "True"})
    if neutron is None:
        problems.append("%s does not exist" % neutron_where)
    else:
        ovn = (neutron.get("spec") or {}).get("ovn") or {}
        for key, _ctype, conn, _default, label in DATABASES:
            if not endpoints.get(key):
                problems.append("%s: publishes no %s endpoint" % (where, label))
            elif ovn.get(conn) != endpoints[key]:
                problems.append("%s: spec.ovn.%s is %s, the OVNCluster's %s endpoint is %s" % (
                    neutron_where, conn, ovn.get(conn), label, endpoints[key]))
    report.update(problems=problems, ready=not problems, chassis=rows, raft=raft, endpoints=endpoints,
                  chassis_count=status.get("chassisCount"), hypervisor_nodes=count,
                  active_controllers=status.get("activeControllers"))
    return report


def failure_message(report, timeout=None):
    head = "OVN is not as planned" + (" after %ss" % timeout if timeout else "")
    return "%s: %s" % (head, "; ".join(report["problems"]))
