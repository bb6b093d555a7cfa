"""Phase 6 on the lab: OVN as the network plan says; a missing Raft member and a bad plan fail naming them.

Until the gardenlet stand-in creates the hypervisor Nodes, the `hypervisor_nodes` fixture writes Nodes as
it will (named after Servers, InternalIP from the pool's underlay from the 10th host upward, Ready, the
hypervisor label) and removes them afterwards.
"""

import json
import subprocess
import time

import pytest
import yaml

from conftest import REPO, SITE, failures, lab_kubectl, objects, run_playbook, task_results, wait_truthy, writes
from regionlab import config

NETWORK = REPO / "playbooks" / "network.yml"
PREFLIGHT = REPO / "playbooks" / "preflight.yml"
WAIT = "Wait for OVN as the network plan says"
NODES = {"hv-pool-a": [("ovn-test-a-0", "10.20.1.10"), ("ovn-test-a-1", "10.20.1.11")],
         "hv-pool-b": [("ovn-test-b-0", "10.20.2.10")]}


def node(name, ip):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"node-role.kubernetes.io/hypervisor": "",
                                                  "kubernetes.io/hostname": name}},
            "status": {"addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "lab node", "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                                       "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}


def put_node(pool, name, ip):
    """A Node as the gardenlet stand-in will write it: created, then its status."""
    kubectl = [str(config.BIN / "kubectl"), "--kubeconfig", str(config.STATE / "kubeconfig" / ("%s.yaml" % pool))]
    body = node(name, ip)
    subprocess.run(kubectl + ["create", "-f", "-"], input=json.dumps(body), text=True, capture_output=True,
                   check=False, timeout=60)
    subprocess.run(kubectl + ["patch", "node", name, "--subresource", "status", "--type", "merge", "-p",
                              json.dumps({"status": body["status"]})], text=True, capture_output=True, check=True,
                   timeout=60)


@pytest.fixture(scope="module")
def hypervisor_nodes(lab, region):
    for pool, nodes in NODES.items():
        for name, ip in nodes:
            put_node(pool, name, ip)
    yield NODES
    for pool, nodes in NODES.items():
        for name, _ip in nodes:
            lab_kubectl(pool, "delete", "node", name, "--ignore-not-found")


def test_phase_6_sees_a_chassis_per_hypervisor_node_and_a_rerun_changes_nothing(hypervisor_nodes):
    started = time.monotonic()
    rc, out = run_playbook(NETWORK, COBALTCORE_LAB_DIR=str(config.STATE))
    first = time.monotonic() - started
    assert rc == 0, failures(out)
    result = task_results(out, WAIT)["lab-control-plane"]
    assert result["ready"] and result["problems"] == []
    assert sorted((c["pool"], c["node"], c["ip"]) for c in result["chassis"]) == sorted(
        (pool, name, ip) for pool, nodes in NODES.items() for name, ip in nodes)
    assert result["chassis_count"] == result["hypervisor_nodes"] == 3
    assert result["tenant_mtu"] == 1442 and result["pools"]["hv-pool-a"]["tenant_mtu"] == 8942
    assert result["raft"]["southbound"]["members"] == ["ovn-sb-0", "ovn-sb-1", "ovn-sb-2"]
    chassis = {c["metadata"]["name"]: c for c in objects("lab-control-plane", "ovnchassis", "ovn-system")}
    assert chassis["ovn-test-a-0"]["spec"]["bridgeMappings"] == [
        {"physicalNetwork": "physnet-external", "bridge": "br-ex"},
        {"physicalNetwork": "physnet-provider", "bridge": "br-provider"}]
    assert "ownerReferences" not in chassis["ovn-test-b-0"]["metadata"]
    assert chassis["ovn-test-b-0"]["metadata"]["labels"]["ovn.c5c3.io/pool"] == "hv-pool-b"
    neutron = objects("lab-control-plane", "neutrons", "openstack")[0]
    assert neutron["spec"]["ovn"]["sbConnection"] == "tcp:ovn-sb.ovn-system.svc.cluster.local:6642"
    versions = {n: c["metadata"]["resourceVersion"] for n, c in chassis.items()}
    started = time.monotonic()
    rc, out = run_playbook(NETWORK, COBALTCORE_LAB_DIR=str(config.STATE))
    second = time.monotonic() - started
    assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    time.sleep(2)  # the stand-in's heartbeat is coarse: no status write per pass
    again = {c["metadata"]["name"]: c["metadata"]["resourceVersion"]
             for c in objects("lab-control-plane", "ovnchassis", "ovn-system")}
    assert again == versions
    print("\nphase 6: first %.1fs, re-run %.1fs" % (first, second))


def test_a_node_that_goes_loses_its_chassis(hypervisor_nodes):
    lab_kubectl("hv-pool-b", "delete", "node", "ovn-test-b-0")
    try:
        wait_truthy(lambda: "ovn-test-b-0" not in {c["metadata"]["name"] for c in objects(
            "lab-control-plane", "ovnchassis", "ovn-system")}, "chassis of a deleted Node gone", 30)
    finally:
        put_node("hv-pool-b", *NODES["hv-pool-b"][0])


def test_a_missing_southbound_raft_member_fails_the_play_naming_it(hypervisor_nodes):
    saved = config.STANDINS.read_text() if config.STANDINS.exists() else None
    data = yaml.safe_load(saved or "{}") or {}
    data["failures"] = dict(data.get("failures") or {}, OVNCluster={"missing_members": ["ovn-sb-2"]})
    config.STANDINS.write_text(yaml.safe_dump(data))
    try:
        rc, out = run_playbook(NETWORK, "-e", json.dumps({"ovn_network_timeout": 8}),
                               COBALTCORE_LAB_DIR=str(config.STATE))
    finally:
        if saved is None:
            config.STANDINS.unlink()
        else:
            config.STANDINS.write_text(saved)
    assert rc != 0
    ((task, host, msg),) = failures(out)
    assert task.endswith(WAIT) and host == "lab-control-plane"
    assert "Southbound Raft has 2 of 3 members; missing ovn-sb-2" in msg, msg
    assert "SouthboundReady (ovn-sb-2 is not a Raft member: 2 of 3)" in msg, msg


def test_a_bad_network_plan_fails_site_before_any_write_naming_each_field(lab, region):
    bad = {"cobaltcore_network": {"provider_networks": [
        {"name": "provider", "physical_network": "physnet-provider", "type": "vlan", "vlan_ranges": ["100:5000"]},
        {"name": "storage", "physical_network": "physnet-storage", "type": "flat", "pools": ["hv-pool-a"]}]}}
    before = writes()
    rc, out = run_playbook(SITE, "-e", json.dumps(bad), COBALTCORE_LAB_DIR=str(config.STATE))
    assert rc != 0
    assert writes() == before
    found = failures(out)
    assert {t for t, _h, _m in found} == {"c5c3.cobaltcore.preflight : Check the region's network plan"}, found
    msg = found[0][2]
    assert "cobaltcore_network.provider_networks[0].vlan_ranges[0]: '100:5000': VLAN IDs are 1-4094" in msg
    assert "hv-pool-a.network.bridge_mappings: has no bridge for physical network physnet-storage" in msg
    assert [p["play"]["name"] for p in out["plays"]] == ["Preflight - every cluster reachable, supported, and serving what the region needs"]
