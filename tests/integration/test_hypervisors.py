# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hypervisor pools (after phase 5): Nodes = workers, each labelled, a Ready Hypervisor per Node.

The Nodes are the gardenlet stand-in's (one per bound ServerClaim), the Hypervisors its
hypervisor-operator stand-in's (lab/regionlab/standins/nodes.py, hypervisor_operator.py).
"""

import ipaddress
import shutil
import time

import yaml

from conftest import (CLAIMS_NAMESPACE as CLAIMS, REPO, failures, objects, run_playbook,
                      task_results, wait_truthy)
from regionlab import config

SITE = REPO / "playbooks" / "site.yml"
NETWORK = REPO / "playbooks" / "network.yml"
POOLS = {"hv-pool-a": ("standard", 2), "hv-pool-b": ("premium", 1)}
TASK = "Label the pool's Nodes as hypervisors and wait for a Ready Hypervisor per Node"
LABELS = {"node-role.kubernetes.io/hypervisor": "", "nova.openstack.cloud.sap/virt-driver": "kvm",
          "cobaltcore.cloud.sap/node-hypervisor-lifecycle": "skip-tests"}


def underlay(pool):
    """The pool's node network from the lab inventory's network plan."""
    path = REPO / "inventories" / "lab" / "host_vars" / pool / "pool.yml"
    return yaml.safe_load(path.read_text())["cobaltcore_pool"]["network"]["underlay"]


def pool_state(pool):
    nodes = dict((n["metadata"]["name"], n) for n in objects(pool, "nodes")
                 if n["metadata"]["labels"].get("worker.gardener.cloud/pool") == "worker")
    hypervisors = dict((h["metadata"]["name"], h) for h in objects(pool, "hypervisors.kvm.cloud.sap"))
    claims = sorted(c["spec"]["serverRef"]["name"] for c in objects("baremetal", "serverclaims", CLAIMS)
                    if c["metadata"]["labels"]["c5c3.io/pool"] == pool)
    return nodes, hypervisors, claims


def address(node):
    return [a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP"][0]


def condition(obj, ctype):
    return [c for c in obj["status"]["conditions"] if c["type"] == ctype][0]


def check_pool(pool, workers, tier):
    nodes, hypervisors, claims = pool_state(pool)
    assert sorted(nodes) == claims and len(nodes) == workers, (pool, sorted(nodes), claims)
    assert sorted(hypervisors) == sorted(nodes), pool
    network = ipaddress.ip_network(underlay(pool))  # the Shoot's spec.networking.nodes (phase 2)
    for name, node in nodes.items():
        labels = node["metadata"]["labels"]
        assert dict((k, labels.get(k)) for k in LABELS) == LABELS, name
        assert labels["tier"] == tier and labels["kubernetes.io/hostname"] == name
        assert ipaddress.ip_address(address(node)) in network
        assert int(ipaddress.ip_address(address(node))) - int(network.network_address) >= 10
        ready = condition(node, "Ready")
        assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")
        hv = hypervisors[name]
        assert hv["metadata"]["ownerReferences"][0]["uid"] == node["metadata"]["uid"]
        assert hv["status"]["internalIp"] == address(node)
        assert (condition(hv, "Ready")["status"], condition(hv, "Ready")["reason"]) == ("True", "Ready")
        assert condition(hv, "Onboarding")["reason"] == "Succeeded"
        assert hv["spec"]["lifecycleEnabled"] and hv["spec"]["skipTests"]
    return nodes, hypervisors


def test_every_hypervisor_pool_has_its_nodes_labelled_and_a_ready_hypervisor_each(region):
    for pool, (tier, workers) in POOLS.items():
        check_pool(pool, workers, tier)
    first = task_results(region.first.out, TASK)
    assert sorted(first) == sorted(POOLS)
    for pool, result in first.items():
        assert [h["name"] for h in result["hypervisors"]] == sorted(n["name"] for n in result["nodes"])
        assert result["ready"] and not result["problems"]
    # The re-run writes nothing: every Node is labelled already.
    second = task_results(region.second.out, TASK)
    assert all(not r["changed"] and all(not n["labels_changed"] for n in r["nodes"]) for r in second.values())
    assert all(r["requests"].get("PATCH", 0) == 0 for r in second.values())


def chassis():
    """{name: OVNChassis} of the region (the ovn-operator's, on the control plane)."""
    return dict((c["metadata"]["name"], c) for c in objects("lab-control-plane", "ovnchassis", "ovn-system"))


def _inventory(tmp_path, workers):
    copy = tmp_path / "inventory"
    shutil.copytree(REPO / "inventories" / "lab", copy)
    path = copy / "host_vars" / "hv-pool-b" / "pool.yml"
    data = yaml.safe_load(path.read_text())
    data["cobaltcore_pool"]["workers"] = workers
    path.write_text(yaml.safe_dump(data))
    return copy


def _play(*args, inventory=None):
    started = time.monotonic()
    rc, out = run_playbook(SITE, "--limit", "ironcore,gardener,hv-pool-b", *args, inventory=inventory,
                           COBALTCORE_LAB_DIR=str(config.STATE))
    return rc, out, time.monotonic() - started


def test_growing_a_hypervisor_pool_adds_one_node_and_one_hypervisor_and_shrinking_removes_them(region, tmp_path):
    before_a = pool_state("hv-pool-a")
    nodes_b, hypervisors_b, unused = pool_state("hv-pool-b")
    chassis_before = chassis()
    assert sorted(chassis_before) == sorted(list(before_a[0]) + list(nodes_b))
    restored = False
    try:
        rc, out, seconds = _play(inventory=_inventory(tmp_path, 2))
        assert rc == 0, failures(out)
        nodes, hypervisors = check_pool("hv-pool-b", 2, "premium")
        new = sorted(set(nodes) - set(nodes_b))
        assert len(new) == 1
        for name in nodes_b:  # the existing Node and Hypervisor are untouched
            assert nodes[name]["metadata"]["uid"] == nodes_b[name]["metadata"]["uid"]
            assert address(nodes[name]) == address(nodes_b[name])
            assert hypervisors[name]["metadata"]["resourceVersion"] == hypervisors_b[name]["metadata"]["resourceVersion"]
        result = task_results(out, TASK)["hv-pool-b"]
        assert result["changed"] and [n["name"] for n in result["nodes"] if n["labels_changed"]] == new
        assert pool_state("hv-pool-a")[0].keys() == before_a[0].keys()
        # One new chassis, at the new Node's address; the others untouched; phase 6 agrees.
        grown = wait_truthy(lambda: new[0] in chassis() and chassis(), "a chassis for %s" % new[0], 30)
        assert sorted(grown) == sorted(list(chassis_before) + new)
        assert grown[new[0]]["spec"]["encapsulation"] == {"type": "geneve", "ip": address(nodes[new[0]])}
        assert all(grown[n]["metadata"]["resourceVersion"] == c["metadata"]["resourceVersion"]
                   for n, c in chassis_before.items())
        rc, out = run_playbook(NETWORK, COBALTCORE_LAB_DIR=str(config.STATE))
        assert rc == 0, failures(out)
        assert task_results(out, "Wait for OVN as the network plan says")["lab-control-plane"]["chassis_count"] == len(grown)
        print("\ngrow hv-pool-b by one worker (site.yml limited to it): %.1fs" % seconds)
        # Back to the inventory's size: the surplus claim is released, its Node and Hypervisor go.
        rc, out, seconds = _play("-e", "baremetal_bootstrap_release_surplus=true")
        restored = rc == 0
        assert rc == 0, failures(out)
        nodes, hypervisors = check_pool("hv-pool-b", 1, "premium")
        assert sorted(nodes) == sorted(nodes_b) and sorted(hypervisors) == sorted(hypervisors_b)
        wait_truthy(lambda: sorted(chassis()) == sorted(chassis_before), "the surplus chassis gone", 30)
        print("shrink it back: %.1fs" % seconds)
    finally:
        if not restored:  # the region is shared: put it back even when an assertion failed
            _play("-e", "baremetal_bootstrap_release_surplus=true")
