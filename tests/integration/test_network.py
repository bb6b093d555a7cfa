"""Phase 6 on the lab: OVN as the network plan says; a missing Raft member and a bad plan fail naming them.

The chassis are judged against the hypervisor Nodes the pools' clusters have. Until the gardenlet
stand-in creates those Nodes, the `hypervisor_nodes` fixture writes Nodes as it will (named after
Servers, InternalIP from the pool's underlay from the 10th host upward, Ready, the hypervisor label) -
only when no pool has a hypervisor Node yet - and removes only the Nodes it created.
"""

import ipaddress
import json
import shutil
import subprocess
import time

import pytest
import yaml

from conftest import (REPO, SITE, failures, lab_kubectl, objects, run_playbook, standins_restored, task_results,
                      update_standins, wait_truthy, writes)
from regionlab import config, ovn, processes

NETWORK = REPO / "playbooks" / "network.yml"
HYPERVISORS = REPO / "playbooks" / "hypervisors.yml"
WAIT = "Wait for OVN as the network plan says"
HYPERVISOR = "node-role.kubernetes.io/hypervisor"
# The fixture's Nodes: (pool, underlay, how many), as the lab inventory plans them.
OWN_NODES = (("hv-pool-a", "10.20.1.0/24", 2), ("hv-pool-b", "10.20.2.0/24", 1))


def node(name, ip):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HYPERVISOR: "", "kubernetes.io/hostname": name}},
            "status": {"addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "lab node", "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                                       "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}


def internal_ip(body):
    return next(a["address"] for a in body["status"]["addresses"] if a["type"] == "InternalIP")


def put_node(pool, body):
    """A Node as a gardenlet writes it: created (unless it exists), then its status."""
    kubectl = [str(config.BIN / "kubectl"), "--kubeconfig", str(config.STATE / "kubeconfig" / ("%s.yaml" % pool))]
    body = {"apiVersion": "v1", "kind": "Node", "status": body["status"],
            "metadata": {"name": body["metadata"]["name"], "labels": body["metadata"].get("labels") or {}}}
    subprocess.run(kubectl + ["create", "-f", "-"], input=json.dumps(body), text=True, capture_output=True,
                   check=False, timeout=60)
    subprocess.run(kubectl + ["patch", "node", body["metadata"]["name"], "--subresource", "status", "--type",
                              "merge", "-p", json.dumps({"status": body["status"]})], text=True, capture_output=True,
                   check=True, timeout=60)


def hypervisor_nodes_of(pool):
    return [n for n in objects(pool, "nodes") if HYPERVISOR in (n["metadata"].get("labels") or {})]


@pytest.fixture(scope="module")
def hypervisor_nodes(lab, region):
    """{pool: [Node]}: the hypervisor Nodes of each pool's cluster; the fixture's own only when there are none."""
    created = []
    if not any(hypervisor_nodes_of(pool) for pool, _underlay, _count in OWN_NODES):
        for pool, underlay, count in OWN_NODES:
            taken = {internal_ip(n) for n in objects(pool, "nodes") if n.get("status", {}).get("addresses")}
            free = [str(ip) for ip in list(ipaddress.ip_network(underlay).hosts())[9:] if str(ip) not in taken]
            for index in range(count):
                name = "ovn-test-%s-%d" % (pool[-1], index)
                put_node(pool, node(name, free[index]))
                created.append((pool, name))
    yield {pool: hypervisor_nodes_of(pool) for pool, _underlay, _count in OWN_NODES}
    for pool, name in created:
        lab_kubectl(pool, "delete", "node", name, "--ignore-not-found")


def expected_chassis(nodes):
    return sorted((pool, n["metadata"]["name"], internal_ip(n)) for pool, found in nodes.items() for n in found)


def chassis_by_name():
    return {c["metadata"]["name"]: c for c in objects("lab-control-plane", "ovnchassis", "ovn-system")}


def test_phase_6_sees_a_chassis_per_hypervisor_node_and_a_rerun_changes_nothing(hypervisor_nodes):
    assert all(hypervisor_nodes.values()), hypervisor_nodes  # a Node in each pool, else nothing is judged
    started = time.monotonic()
    rc, out = run_playbook(NETWORK, COBALTCORE_LAB_DIR=str(config.STATE))
    first = time.monotonic() - started
    assert rc == 0, failures(out)
    result = task_results(out, WAIT)["lab-control-plane"]
    assert result["ready"] and result["problems"] == []
    expected = expected_chassis(hypervisor_nodes)
    assert sorted((c["pool"], c["node"], c["ip"]) for c in result["chassis"]) == expected
    assert result["chassis_count"] == result["hypervisor_nodes"] == len(expected)
    assert result["tenant_mtu"] == 1442 and result["pools"]["hv-pool-a"]["tenant_mtu"] == 8942
    assert result["raft"]["southbound"]["members"] == ["ovn-sb-0", "ovn-sb-1", "ovn-sb-2"]
    chassis = chassis_by_name()
    a_node = hypervisor_nodes["hv-pool-a"][0]["metadata"]["name"]
    b_node = hypervisor_nodes["hv-pool-b"][0]["metadata"]["name"]
    # each pool's own bridges, as its ovn-agents release renders them
    assert chassis[a_node]["spec"]["bridgeMappings"] == [
        {"physicalNetwork": "physnet-external", "bridge": "br-ex"},
        {"physicalNetwork": "physnet-provider", "bridge": "br-provider"}]
    assert chassis[b_node]["spec"]["bridgeMappings"] == [{"physicalNetwork": "physnet-provider", "bridge": "br-provider"}]
    assert "ownerReferences" not in chassis[b_node]["metadata"]
    assert chassis[b_node]["metadata"]["labels"]["ovn.c5c3.io/pool"] == "hv-pool-b"
    neutron = objects("lab-control-plane", "neutrons", "openstack")[0]
    assert neutron["spec"]["ovn"]["sbConnection"] == "tcp:ovn-sb.ovn-system.svc.cluster.local:6642"
    # The real Southbound database has every chassis with its Node's address; the hypervisors reach it only at the
    # plan's address, where phase 6's LoadBalancer Service publishes it.
    registered = ovn.Central().chassis()
    assert sorted((c["metadata"]["name"], registered[c["spec"]["systemId"]]["encaps"]) for c in chassis.values()) == \
        sorted((node, [ip]) for dummy, node, ip in expected)
    service = objects("lab-control-plane", "services", "ovn-system")
    published = [s for s in service if s["metadata"]["name"] == "ovn-sb-public"][0]
    assert published["status"]["loadBalancer"]["ingress"][0]["ip"] == "127.20.0.100"
    for pool in hypervisor_nodes:
        config_map = json.loads(lab_kubectl(pool, "get", "configmap", "ovn-controller-config", "-n", "ovn-system",
                                            "-o", "json").stdout)
        assert config_map["data"]["ovn-remote"] == "tcp:127.20.0.100:6642", pool
    versions = {n: c["metadata"]["resourceVersion"] for n, c in chassis.items()}
    started = time.monotonic()
    rc, out = run_playbook(NETWORK, COBALTCORE_LAB_DIR=str(config.STATE))
    second = time.monotonic() - started
    assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    time.sleep(2)  # the stand-in's heartbeat is coarse: no status write per pass
    assert {n: c["metadata"]["resourceVersion"] for n, c in chassis_by_name().items()} == versions
    print("\nphase 6: first %.1fs, re-run %.1fs" % (first, second))


def test_a_node_that_stops_being_a_hypervisor_loses_its_chassis_until_phase_5_labels_it_again(hypervisor_nodes):
    """The chassis follows the Node's hypervisor label (the ovn-operator's selector); the hypervisor
    pools' play puts a removed label back. (A Node that goes: test_hypervisors.py shrinks a pool.)"""
    name = hypervisor_nodes["hv-pool-b"][-1]["metadata"]["name"]
    lab_kubectl("hv-pool-b", "label", "node", name, HYPERVISOR + "-")
    try:
        wait_truthy(lambda: name not in chassis_by_name(), "chassis of the unlabelled Node %s gone" % name, 30)
    finally:
        rc, out = run_playbook(HYPERVISORS, "--limit", "hv-pool-b", COBALTCORE_LAB_DIR=str(config.STATE))
    assert rc == 0, failures(out)
    assert out["stats"]["hv-pool-b"]["changed"] == 1
    wait_truthy(lambda: name in chassis_by_name(), "chassis of the Node %s back" % name, 30)


def test_a_missing_southbound_raft_member_fails_the_play_naming_it(hypervisor_nodes):
    with standins_restored():
        update_standins(lambda d: d.update(failures=dict(d.get("failures") or {},
                                                         OVNCluster={"missing_members": ["ovn-sb-2"]})))
        rc, out = run_playbook(NETWORK, "-e", json.dumps({"ovn_network_timeout": 8}),
                               COBALTCORE_LAB_DIR=str(config.STATE))
    assert rc != 0
    ((task, host, msg),) = failures(out)
    assert task.endswith(WAIT) and host == "lab-control-plane"
    assert "Southbound Raft has 2 of 3 members; missing ovn-sb-2" in msg, msg
    assert "SouthboundReady (ovn-sb-2 is not a Raft member: 2 of 3)" in msg, msg


def test_a_chassis_pointed_at_the_control_planes_own_name_fails_phase_6_naming_its_node(hypervisor_nodes):
    """The OVNCluster's endpoint resolves only inside the control plane: an ovn-controller given it is not connected,
    and phase 6 names its Node. Given the planned address again, it reconnects and phase 6 converges."""
    node = hypervisor_nodes["hv-pool-b"][0]["metadata"]["name"]
    internal = "tcp:ovn-sb.ovn-system.svc.cluster.local:6642"

    def remote(value):
        lab_kubectl("hv-pool-b", "-n", "ovn-system", "patch", "configmap", "ovn-controller-config", "--type", "merge",
                    "-p", json.dumps({"data": {"ovn-remote": value}}))

    remote(internal)
    try:
        rc, out = run_playbook(NETWORK, "-e", json.dumps({"ovn_network_timeout": 10}),
                               COBALTCORE_LAB_DIR=str(config.STATE))
        assert rc != 0
        ((task, host, msg),) = failures(out)
        assert task.endswith(WAIT) and host == "lab-control-plane"
        assert node in msg and "not connected to the Southbound database; it connects to %s" % internal in msg, msg
        print("\n" + msg)
    finally:
        remote("tcp:127.20.0.100:6642")
    rc, out = run_playbook(NETWORK, COBALTCORE_LAB_DIR=str(config.STATE))
    assert rc == 0, failures(out)


def test_the_southbound_leader_killed_during_phase_6_and_the_run_converges(hypervisor_nodes):
    central = ovn.Central()
    leader = central.leader("sb")
    assert leader in ("ovn-sb-0", "ovn-sb-1", "ovn-sb-2")
    started = time.monotonic()
    processes.stop(central.process("sb", int(leader[-1])))
    rc, out = run_playbook(NETWORK, COBALTCORE_LAB_DIR=str(config.STATE))
    assert rc == 0, failures(out)
    result = task_results(out, WAIT)["lab-control-plane"]
    assert result["raft"]["southbound"]["members"] == ["ovn-sb-0", "ovn-sb-1", "ovn-sb-2"]
    # The killed member, started again as its StatefulSet's pod would be, rejoins under the new leader.
    wait_truthy(lambda: central.members("sb") == ["ovn-sb-0", "ovn-sb-1", "ovn-sb-2"] and central.leader("sb"),
                "the Southbound's three members and a leader", 30)
    print("\nSouthbound leader %s killed; phase 6 converged after %.1fs, leader now %s" % (
        leader, time.monotonic() - started, central.leader("sb")))


def bad_plan(host_vars):
    """hv-pool-b's underlay overlaps hv-pool-a's and holds one of its encapsulation addresses; hv-pool-b has
    no bridge for the provider network that both pools serve."""
    path = host_vars / "hv-pool-b" / "pool.yml"
    data = yaml.safe_load(path.read_text())
    data["cobaltcore_pool"]["network"].update(underlay="10.20.0.0/16", encapsulation=["10.20.1.10", "10.20.2.10"],
                                              bridge_mappings={"physnet-other": "br-other"})
    path.write_text(yaml.safe_dump(data))


def test_a_bad_network_plan_fails_site_before_any_write_naming_each_field(lab, region, tmp_path):
    inventory = tmp_path / "inventory"
    shutil.copytree(REPO / "inventories" / "lab", inventory)
    bad_plan(inventory / "host_vars")
    before = writes()
    rc, out = run_playbook(SITE, "-e", json.dumps({"cobaltcore_network": {"provider_networks": [
        {"name": "provider", "physical_network": "physnet-provider", "type": "vlan", "vlan_ranges": ["100:5000"]}]}}),
        inventory=inventory, COBALTCORE_LAB_DIR=str(config.STATE))
    assert rc != 0
    assert writes() == before
    found = failures(out)
    assert {t for t, _h, _m in found} == {"c5c3.cobaltcore.preflight : Check the region's network plan"}, found
    msg = found[0][2]
    for text in ("hv-pool-b.network.underlay: 10.20.0.0/16 overlaps hv-pool-a's underlay 10.20.1.0/24",
                 "hv-pool-b.network.encapsulation: 10.20.1.10 is also hv-pool-a's encapsulation address",
                 "hv-pool-b.network.bridge_mappings: has no bridge for physical network physnet-provider, which "
                 "provider network provider needs",
                 "cobaltcore_network.provider_networks[0].vlan_ranges[0]: '100:5000': VLAN IDs are 1-4094"):
        assert text in msg, (text, msg)
    assert [p["play"]["name"] for p in out["plays"]] == [
        "Preflight - every cluster reachable, supported, and serving what the region needs"]


def test_addresses_that_work_inside_one_cluster_only_fail_site_before_any_write(lab, region, tmp_path):
    inventory = tmp_path / "inventory"
    shutil.copytree(REPO / "inventories" / "lab", inventory)
    pool = inventory / "host_vars" / "st-pool-a" / "pool.yml"
    data = yaml.safe_load(pool.read_text())
    data["cobaltcore_pool"]["network"]["public"] = "100.80.4.0/24"   # inside every Shoot's Service network
    pool.write_text(yaml.safe_dump(data))
    network = inventory / "group_vars" / "all" / "network.yml"
    data = yaml.safe_load(network.read_text())
    data["cobaltcore_network"]["endpoints"]["public_url_template"] = "https://{name}.{namespace}.svc.cluster.local{path}"
    data["cobaltcore_network"]["endpoints"]["ovn_southbound"] = "tcp:ovn-sb.ovn-system.svc.cluster.local:6642"
    network.write_text(yaml.safe_dump(data))
    before = writes()
    rc, out = run_playbook(SITE, inventory=inventory, COBALTCORE_LAB_DIR=str(config.STATE))
    assert rc != 0
    assert writes() == before
    found = failures(out)
    assert {t for t, _h, _m in found} == {
        "c5c3.cobaltcore.preflight : Check the addresses by which the region's clusters reach each other"}, found
    msg = found[0][2]
    for text in ("cobaltcore_network.endpoints.public_url_template: keystone.openstack.svc.cluster.local resolves only "
                 "inside a cluster", "(flow public-api from users and tenants to lab-control-plane)",
                 "st-pool-a.network.public: 100.80.4.0/24 overlaps the services network 100.80.0.0/13 of "
                 "hv-pool-a", "(flow ceph-monitors from lab-control-plane, hv-pool-a, hv-pool-b to st-pool-a)",
                 "cobaltcore_network.endpoints.ovn_southbound: ovn-sb.ovn-system.svc.cluster.local resolves only inside "
                 "a cluster", "(flow ovn-southbound from hv-pool-a, hv-pool-b to lab-control-plane)"):
        assert text in msg, (text, msg)
