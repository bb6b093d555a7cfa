# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ovn-operator stand-in (lab/regionlab/standins/ovn.py) against in-memory API servers: the
control plane's (OVNCluster, OVNChassis) and one per hypervisor pool (Nodes, the ovn-agents ConfigMap).

Passes are run by hand with every delay 0; what the stand-in writes is judged by the collection's own
verdict (region/ovn.py), so both read the seed the same way. tests/integration/test_network.py does
the same against real API servers.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import itertools
import os
import sys

import pytest

from conftest import REPO, merge_patch

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import ovn, settings  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import network_plan  # noqa: E402
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ovn as verdict  # noqa: E402

SB = "tcp:ovn-sb.ovn-system.svc.cluster.local:6642"
NB = "tcp:ovn-nb.ovn-system.svc.cluster.local:6641"
# The planned address, where the control plane's LoadBalancer Service publishes the Southbound database.
PUBLISHED = "tcp:127.20.0.100:6642"
SERVICES = "/api/v1/namespaces/ovn-system/services"
CHASSIS = "/apis/ovn.c5c3.io/v1alpha1/namespaces/ovn-system/ovnchassis"
CLUSTERS = "/apis/ovn.c5c3.io/v1alpha1/namespaces/ovn-system/ovnclusters"
NODES = "/api/v1/nodes"
CONFIG = "/api/v1/namespaces/ovn-system/configmaps"
PLAN = network_plan.build_plan({"name": "lab", "hypervisor_pools": [
    {"name": "hv-pool-a", "workers": 2, "network": {"underlay": "10.20.1.0/24", "encapsulation": "10.20.1.10-10.20.1.250",
                                                    "bridge_mappings": {"physnet-provider": "br-provider",
                                                                        "physnet-external": "br-ex"}}},
    {"name": "hv-pool-b", "workers": 1, "network": {"underlay": "10.20.2.0/24", "encapsulation": "10.20.2.10-10.20.2.250",
                                                    "bridge_mappings": {"physnet-provider": "br-provider"}}}]})


class FakeKube:
    """One API server: objects by (collection URL, name); label selectors of `k` and `k=v`; every
    request that writes is counted."""

    versions = itertools.count(1)

    def __init__(self, manager="lab-ovn-operator"):
        self.manager = manager
        self.objects = {}
        self.writes = 0

    def put(self, collection, obj):
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("uid", "uid-%s" % meta["name"])
        meta.setdefault("generation", 1)
        meta.setdefault("managedFields", [])
        meta["resourceVersion"] = str(next(self.versions))
        self.objects[(collection, meta["name"])] = obj
        return obj

    def list(self, url):
        collection, _sep, query = url.partition("?")
        selector = query.partition("labelSelector=")[2].replace("%3D", "=").replace("%2F", "/").replace("%2C", ",")
        wanted = [term.partition("=") for term in selector.split(",") if term]
        return [copy.deepcopy(o) for (c, _n), o in sorted(self.objects.items()) if c == collection and all(
            k in (o["metadata"].get("labels") or {}) and (not sep or o["metadata"]["labels"][k] == v)
            for k, sep, v in wanted)]

    def get(self, url):
        return copy.deepcopy(self.objects.get(tuple(url.rsplit("/", 1))))

    def apply(self, url, obj, force=True):
        self.writes += 1
        key = tuple(url.rsplit("/", 1))
        live = self.objects.get(key)
        if live is None:
            return copy.deepcopy(self.put(key[0], obj))
        if live.get("spec") != obj.get("spec"):
            live["metadata"]["generation"] += 1
        live["spec"] = copy.deepcopy(obj.get("spec"))
        live["metadata"]["labels"] = dict(obj["metadata"].get("labels") or {})
        live["metadata"]["resourceVersion"] = str(next(self.versions))
        return copy.deepcopy(live)

    def patch(self, url, obj, patch, subresource=None):
        self.writes += 1
        live = self.objects.get(tuple(url.rsplit("/", 1)))
        if live is None:
            return None
        merge_patch(live.setdefault("status", {}), patch["status"])
        if not any(f["manager"] == self.manager for f in live["metadata"]["managedFields"]):
            live["metadata"]["managedFields"].append({"manager": self.manager, "subresource": "status"})
        live["metadata"]["resourceVersion"] = str(next(self.versions))
        return copy.deepcopy(live)

    def delete(self, url):
        self.writes += 1
        return self.objects.pop(tuple(url.rsplit("/", 1)), None)


class FakeCentral:
    """The OVN databases (the lab runs the real ones, lab/regionlab/ovn.py): members that are not stopped, and the
    chassis whose ovn-controller reaches the Southbound database - through an address a load balancer serves."""

    def __init__(self):
        self.stopped, self.chassis_ids, self.relayed, self.deleted = set(), {}, set(), []

    def start(self, skip=()):
        self.stopped = set(skip)

    def members(self, db):
        names = ["ovn-%s-%d" % (db, i) for i in range(3)]
        return [n for n in names if n not in self.stopped]

    def delete_chassis(self, name):
        self.deleted.append(name)
        for ids in self.chassis_ids.values():
            if ids.get("system-id") == name:
                ids["ovn-remote"] = None

    def chassis(self):
        return dict((ids["system-id"], {"hostname": ids["hostname"], "encaps": [ids["ovn-encap-ip"]]})
                    for ids in self.chassis_ids.values() if ids.get("ovn-remote") in self.relayed)


class FakeChassis:
    """A hypervisor Node's Open vSwitch: its external_ids, kept in the FakeCentral."""

    def __init__(self, central, pool, node):
        self.central, self.key = central, (pool, node)

    def start(self):
        self.central.chassis_ids.setdefault(self.key, {})

    def configure(self, wanted):
        have = self.central.chassis_ids.setdefault(self.key, {})
        changed = any(have.get(k) != v for k, v in wanted.items())
        have.update(wanted)
        return changed

    def connected(self):
        return self.central.chassis_ids.get(self.key, {}).get("ovn-remote") in self.central.relayed

    def destroy(self):
        self.central.chassis_ids.pop(self.key, None)


class Ctl:
    """What the stand-in uses of the c5c3-operator's loop: delays 0, settings, a log."""

    def __init__(self):
        self.data = {"delays": {k: 0 for k in settings.DEFAULT_DELAYS}}
        self.logged = []
        self.next_due = 10.0

    @property
    def settings(self):
        return self

    def get(self):
        return settings.StandinSettings(self.data)

    def after(self, key, delay):
        return delay <= 0

    def delay(self, name):
        return self.get().delay(name)

    def log(self, message):
        self.logged.append(message)


def node(name, ip, hypervisor=True):
    labels = {"kubernetes.io/hostname": name}
    if hypervisor:
        labels[ovn.HYPERVISOR_LABEL] = ""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"addresses": [{"type": "InternalIP", "address": ip}] if ip else [],
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def agents_config(mappings, remote=PUBLISHED):
    return {"metadata": {"name": ovn.AGENTS_CONFIG, "namespace": ovn.NAMESPACE},
            "data": {"ovn-remote": remote, "ovn-encap-type": "geneve", "ovn-bridge-mappings": mappings}}


@pytest.fixture
def world():
    control, pool_a, pool_b = FakeKube(), FakeKube(), FakeKube()
    control.put(CLUSTERS, {"apiVersion": ovn.GV, "kind": "OVNCluster",
                           "metadata": {"name": ovn.NAME, "namespace": ovn.NAMESPACE}, "spec": ovn.cluster_spec()})
    for name, ip in (("hv-a-0", "10.20.1.10"), ("hv-a-1", "10.20.1.11")):
        pool_a.put(NODES, node(name, ip))
    pool_a.put(NODES, node("worker-a", "10.20.1.50", hypervisor=False))  # not selected
    pool_a.put(CONFIG, agents_config("physnet-provider:br-provider,physnet-external:br-ex"))
    pool_b.put(NODES, node("hv-b-0", "10.20.2.10"))
    pool_b.put(CONFIG, agents_config("physnet-provider:br-provider"))
    op = ovn.OVNOperator(Ctl(), cluster=None)
    op.kube, op.pools = control, [("hv-pool-a", pool_a), ("hv-pool-b", pool_b)]
    central = FakeCentral()
    central.relayed.add(PUBLISHED)  # the planned address is served (phase 6's Service; see the load balancer test)
    op.central, op.chassis_of, op.read_every = central, lambda pool, node: FakeChassis(central, pool, node), 0
    return op, control, {"hv-pool-a": pool_a, "hv-pool-b": pool_b}


def run(op, passes=1):
    for _round in range(passes):
        op.reconcile(op.kube.get(CLUSTERS + "/" + ovn.NAME))


def judge(op, pools):
    cluster = op.kube.get(CLUSTERS + "/" + ovn.NAME)
    endpoints = (cluster.get("status") or {}).get("endpoints") or {}
    neutron = {"spec": {"ovn": {"nbConnection": endpoints.get("northbound"), "sbConnection": endpoints.get("southbound")}}}
    selector = "labelSelector=" + ovn.HYPERVISOR_LABEL
    nodes = dict((name, kube.list(NODES + "?" + selector)) for name, kube in pools.items())
    return verdict.verify(PLAN, cluster, op.kube.list(CHASSIS), nodes, neutron)


def conditions(obj):
    return dict((c["type"], c) for c in obj["status"]["conditions"])


def test_a_chassis_per_selected_node_and_a_ready_cluster_as_the_collection_judges_it(world):
    op, control, pools = world
    run(op, 2)  # the first pass publishes the endpoints the chassis connect to in the second
    report = judge(op, pools)
    assert report["problems"] == [] and report["ready"], report["problems"]
    chassis = dict((c["metadata"]["name"], c) for c in control.list(CHASSIS))
    assert sorted(chassis) == ["hv-a-0", "hv-a-1", "hv-b-0"]
    assert chassis["hv-a-0"]["spec"]["bridgeMappings"] == [
        {"physicalNetwork": "physnet-external", "bridge": "br-ex"},
        {"physicalNetwork": "physnet-provider", "bridge": "br-provider"}]
    assert chassis["hv-b-0"]["spec"]["encapsulation"] == {"type": "geneve", "ip": "10.20.2.10"}
    assert chassis["hv-b-0"]["metadata"]["labels"] == {ovn.POOL_LABEL: "hv-pool-b", ovn.NODE_LABEL: "hv-b-0"}
    assert "ownerReferences" not in chassis["hv-b-0"]["metadata"]
    cluster = control.get(CLUSTERS + "/" + ovn.NAME)
    assert cluster["status"]["endpoints"] == {"northbound": NB, "southbound": SB}
    assert cluster["status"]["southbound"] == {"replicas": 3, "readyReplicas": 3,
                                               "members": ["ovn-sb-0", "ovn-sb-1", "ovn-sb-2"]}
    assert conditions(cluster)["Ready"]["observedGeneration"] == 1


def test_a_converged_pass_writes_nothing(world):
    op, control, pools = world
    run(op, 3)
    versions = dict((c["metadata"]["name"], c["metadata"]["resourceVersion"]) for c in control.list(CHASSIS))
    before = control.writes + sum(k.writes for k in pools.values())
    run(op, 2)
    assert control.writes + sum(k.writes for k in pools.values()) == before
    assert dict((c["metadata"]["name"], c["metadata"]["resourceVersion"]) for c in control.list(CHASSIS)) == versions


def test_a_node_gone_or_unselected_loses_its_chassis_and_a_foreign_chassis_stays(world):
    op, control, pools = world
    run(op, 2)
    control.put(CHASSIS, {"metadata": {"name": "manual", "namespace": ovn.NAMESPACE}, "spec": {}})
    del pools["hv-pool-b"].objects[(NODES, "hv-b-0")]
    pools["hv-pool-a"].objects[(NODES, "hv-a-1")]["metadata"]["labels"].pop(ovn.HYPERVISOR_LABEL)
    run(op)
    assert sorted(c["metadata"]["name"] for c in control.list(CHASSIS)) == ["hv-a-0", "manual"]
    run(op)  # the Southbound read after: the chassis of the Nodes gone are deleted there too
    assert len(op.central.deleted) == 2 and [c["hostname"] for c in op.central.chassis().values()] == ["hv-a-0"]
    assert control.get(CLUSTERS + "/" + ovn.NAME)["status"]["chassisCount"] == 1
    problems = judge(op, pools)["problems"]
    assert problems == ["OVNChassis manual has no hypervisor Node in any pool"], problems


def test_a_node_without_an_internal_ip_gets_no_chassis_and_is_named(world):
    op, control, pools = world
    pools["hv-pool-b"].put(NODES, node("hv-b-1", None))  # kubelet has not reported its address yet
    run(op, 2)
    assert "hv-b-1" not in [c["metadata"]["name"] for c in control.list(CHASSIS)]
    problems = judge(op, pools)["problems"]
    assert "Node hv-b-1 of hv-pool-b has no OVNChassis (the Node has no InternalIP, the chassis' geneve address)" \
        in problems, problems


def test_a_missing_raft_member_is_named_and_the_majority_still_serves(world):
    op, control, pools = world
    op.ctl.data["failures"] = {"OVNCluster": {"missing_members": ["ovn-sb-2"]}}
    run(op, 2)
    cluster = control.get(CLUSTERS + "/" + ovn.NAME)
    cond = conditions(cluster)
    assert (cond["SouthboundReady"]["status"], cond["SouthboundReady"]["reason"]) == ("False", "RaftMemberMissing")
    assert cond["SouthboundReady"]["message"] == "ovn-sb-2 is not a Raft member: 2 of 3"
    assert cond["Ready"]["status"] == "False" and cond["NorthboundReady"]["status"] == "True"
    assert cluster["status"]["endpoints"]["southbound"] == SB  # 2 of 3 is a majority
    assert judge(op, pools)["problems"] == [
        "OVNCluster ovn-system/ovn: Ready is False (NotAllReady: not ready: SouthboundReady (ovn-sb-2 is not a Raft "
        "member: 2 of 3))",
        "OVNCluster ovn-system/ovn: Southbound Raft has 2 of 3 members; missing ovn-sb-2"]
    del op.ctl.data["failures"]
    run(op)
    assert judge(op, pools)["ready"]


def test_ovn_controller_pointed_at_a_name_of_the_control_plane_never_registers_and_is_named(world):
    op, control, pools = world
    pools["hv-pool-b"].put(CONFIG, agents_config("physnet-provider:br-provider", remote=SB))
    run(op, 2)
    chassis = dict((c["metadata"]["name"], c) for c in control.list(CHASSIS))
    connected = conditions(chassis["hv-b-0"])["OVSConnected"]
    assert (connected["status"], connected["reason"]) == ("False", "ConnectionFailed")
    assert connected["message"] == ("ovn-controller on hv-b-0 is not registered in the Southbound database; it "
                                    "connects to %s" % SB)
    assert conditions(chassis["hv-a-0"])["Ready"]["status"] == "True"
    cluster = control.get(CLUSTERS + "/" + ovn.NAME)
    assert cluster["status"]["activeControllers"] == 2 and cluster["status"]["chassisCount"] == 3
    assert conditions(cluster)["ControllersReady"]["message"].startswith("2 of 3 ovn-controllers connected; "
                                                                         "not connected: hv-b-0 (")


def test_a_load_balancer_service_of_the_southbound_gets_its_address():
    op = ovn.OVNOperator(Ctl(), cluster=None)
    op.kube = FakeKube()
    relays = []

    class Relay:
        def __init__(self, address, port, backends):
            relays.append((address, port, backends))

        def close(self):
            relays.append("closed")

    service = {"metadata": {"name": "ovn-sb-public", "namespace": ovn.NAMESPACE},
               "spec": {"type": "LoadBalancer", "loadBalancerIP": "127.20.0.100", "selector": {"app": "ovn-sb"},
                        "ports": [{"port": 6642, "targetPort": 6642}]}}
    op.kube.put(SERVICES, service)
    op.kube.put(SERVICES, {"metadata": {"name": "other", "namespace": ovn.NAMESPACE},
                           "spec": {"type": "LoadBalancer", "loadBalancerIP": "127.20.0.101", "selector": {"app": "x"},
                                    "ports": [{"port": 80}]}})
    original, ovn.data_plane.Relay = ovn.data_plane.Relay, Relay
    try:
        op.reconcile_load_balancers()
        op.reconcile_load_balancers()
        assert relays == [("127.20.0.100", 6642, [(a, 6642) for a in ovn.data_plane.MEMBER_ADDRESSES])]
        assert op.kube.get(SERVICES + "/ovn-sb-public")["status"] == {
            "loadBalancer": {"ingress": [{"ip": "127.20.0.100", "ipMode": "VIP"}]}}
        assert "status" not in op.kube.get(SERVICES + "/other")  # not the Southbound's: no address from the lab
        del op.kube.objects[(SERVICES, "ovn-sb-public")]
        op.reconcile_load_balancers()
        assert relays[-1] == "closed"
    finally:
        ovn.data_plane.Relay = original
