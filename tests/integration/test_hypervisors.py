# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hypervisor pools (after phase 5): Nodes = workers, each labelled and in its pool's zone, a Ready Hypervisor
per Node.

The Nodes are the gardenlet stand-in's (one per bound ServerClaim, their zone their Server's), the Hypervisors its
hypervisor-operator stand-in's (lab/regionlab/standins/nodes.py, hypervisor_operator.py). The onboarding tests
make Nodes of their own (not of the worker pool, so the gardenlet leaves them alone) and remove them again.
"""

import contextlib
import ipaddress
import json
import shutil
import time
import uuid

import yaml

from conftest import (CLAIMS_NAMESPACE as CLAIMS, PROJECT_NAMESPACE, REPO, failures, get_object, kubectl, objects,
                      run_playbook, task_results, wait_truthy)
from regionlab import config

SITE = REPO / "playbooks" / "site.yml"
NETWORK = REPO / "playbooks" / "network.yml"
POOLS = {"hv-pool-a": ("standard", 2), "hv-pool-b": ("premium", 1)}
ZONES = {"hv-pool-a": "lab-1a", "hv-pool-b": "lab-1b"}   # host_vars/<pool>/pool.yml zone
ZONE = "topology.kubernetes.io/zone"
HYPERVISORS = "hypervisors.kvm.cloud.sap"
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


def conditions(obj):
    return dict((c["type"], c) for c in (obj.get("status") or {}).get("conditions") or [])


def check_pool(pool, workers, tier):
    nodes, hypervisors, claims = pool_state(pool)
    assert sorted(nodes) == claims and len(nodes) == workers, (pool, sorted(nodes), claims)
    assert sorted(hypervisors) == sorted(nodes), pool
    network = ipaddress.ip_network(underlay(pool))  # the Shoot's spec.networking.nodes (phase 2)
    # The pool's zone: the Shoot worker's zones, its claimed Servers' label and so (the CCM) its Nodes'.
    shoot = get_object("garden", "-n", PROJECT_NAMESPACE, "shoot", pool, missing_ok=False)
    assert shoot["spec"]["provider"]["workers"][0]["zones"] == [ZONES[pool]]
    servers = dict((s["metadata"]["name"], s) for s in objects("baremetal", "servers"))
    for name, node in nodes.items():
        labels = node["metadata"]["labels"]
        assert dict((k, labels.get(k)) for k in LABELS) == LABELS, name
        assert labels["tier"] == tier and labels["kubernetes.io/hostname"] == name
        assert labels[ZONE] == servers[name]["metadata"]["labels"][ZONE] == ZONES[pool], name
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
        # The region runs no kvm-ha-service: the pools' high_availability (default false) is on every Hypervisor.
        assert hv["spec"]["highAvailability"] is False and hv["metadata"]["labels"][ZONE] == ZONES[pool]
        assert condition(hv, "AggregatesUpdated")["status"] == "True" and "HaEnabled" not in conditions(hv)
    return nodes, hypervisors


def test_every_hypervisor_pool_has_its_nodes_labelled_and_a_ready_hypervisor_each(region):
    for pool, (tier, workers) in POOLS.items():
        check_pool(pool, workers, tier)
    first = task_results(region.first.out, TASK)
    assert sorted(first) == sorted(POOLS)
    for pool, result in first.items():
        assert [h["name"] for h in result["hypervisors"]] == sorted(n["name"] for n in result["nodes"])
        assert result["ready"] and not result["problems"]
        # The operator creates Hypervisors with highAvailability true; the first run turned it off on each.
        assert result["high_availability_changed"] == [h["name"] for h in result["hypervisors"]]
        assert all(h["high_availability"] is False for h in result["hypervisors"])
    # The re-run writes nothing: every Node is labelled already.
    second = task_results(region.second.out, TASK)
    assert all(not r["changed"] and all(not n["labels_changed"] for n in r["nodes"]) for r in second.values())
    assert all(r["high_availability_changed"] == [] for r in second.values())
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


# ---------------------------------------------------------------------------
# Onboarding as upstream's operator does it (v1.2.3), on Nodes of the tests' own in hv-pool-a

POOL = "hv-pool-a"
KUBECONFIG = config.STATE / "kubeconfig" / ("%s.yaml" % POOL)
MERGE = "merge"


def hypervisor(name):
    return get_object(POOL, HYPERVISORS, name)


@contextlib.contextmanager
def own_node(zone=None):
    """A Node the hypervisor operator takes (virt-driver and lifecycle labels), not of the Shoot's worker pool (the
    gardenlet leaves it alone); removed with its Hypervisor at the end. zone: its topology.kubernetes.io/zone."""
    name = "hv-test-%s" % uuid.uuid4().hex[:6]
    labels = {"nova.openstack.cloud.sap/virt-driver": "kvm", "cobaltcore.cloud.sap/node-hypervisor-lifecycle": "skip-tests",
              "kubernetes.io/hostname": name}
    if zone:
        labels[ZONE] = zone
    kubectl(KUBECONFIG, "apply", "-f", "-", stdin=json.dumps(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}))
    try:
        yield name
    finally:
        kubectl(KUBECONFIG, "delete", "node", name, "--ignore-not-found", "--wait=true", "--timeout=60s", check=False)
        kubectl(KUBECONFIG, "delete", HYPERVISORS, name, "--ignore-not-found", "--wait=true", "--timeout=60s", check=False)
        wait_truthy(lambda: hypervisor(name) is None, "the test's Hypervisor %s gone" % name, 60)


def patch_spec(name, **spec):
    """A spec change by a region's operator (kubectl's own field manager)."""
    kubectl(KUBECONFIG, "patch", HYPERVISORS, name, "--type", MERGE, "-p", json.dumps({"spec": spec}))


def reached(name, check):
    """The Hypervisor once check(hypervisor) holds (None before it exists)."""
    def found():
        hv = hypervisor(name)
        return hv if hv and check(hv) else None
    return found


def reason_of(hv, ctype):
    cond = conditions(hv).get(ctype) or {}
    return cond.get("status"), cond.get("reason"), cond.get("message")


def still(name, check, seconds):
    """check(hypervisor) holds for seconds (every step of the stand-in waits its `hypervisor` delay, 0.2 s here)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        hv = hypervisor(name)
        assert check(hv), hv["status"]
        time.sleep(0.5)
    return hypervisor(name)


def test_hypervisor_onboarding_waits_for_zone_label(region):
    """onboarding_controller.go initialOnboarding: without topology.kubernetes.io/zone the reconcile fails ("cannot
    find availability-zone label ...") and Onboarding stays Initial; the aggregates controller asks Nova for the
    aggregates [<zone>, tenant_filter_tests], with no zone an aggregate named "" that Nova does not have. Once the
    CCM's zone label is on the Node, the operator copies it to the Hypervisor and onboarding completes."""
    with own_node() as name:
        initial = wait_truthy(reached(name, lambda hv: reason_of(hv, "Onboarding")[1] == "Initial"
                                      and reason_of(hv, "AggregatesUpdated")[1] == "Failed"),
                              "the Hypervisor registered and stuck at Initial", 60)
        assert initial["status"]["hypervisorId"] and initial["status"]["serviceId"]
        assert reason_of(initial, "AggregatesUpdated") == (
            "False", "Failed", "failed to apply aggregates: aggregates not found: []")
        waiting = ("False", "Onboarding", "Onboarding in progress: Initial onboarding")
        held = still(name, lambda hv: reason_of(hv, "Onboarding")[1] == "Initial" and reason_of(hv, "Ready") == waiting, 3)
        assert ZONE not in (held["metadata"].get("labels") or {}) and not held["status"].get("aggregates")
        patch_spec(name, highAvailability=False)   # as the collection does (no kvm-ha-service here)
        kubectl(KUBECONFIG, "label", "node", name, "%s=%s" % (ZONE, ZONES[POOL]))   # the CCM, from the Server
        ready = wait_truthy(reached(name, lambda hv: reason_of(hv, "Ready")[0] == "True"), "the Hypervisor Ready", 60)
        assert ready["metadata"]["labels"][ZONE] == ZONES[POOL]
        assert reason_of(ready, "Onboarding") == ("False", "Succeeded", "Onboarding completed")
        assert reason_of(ready, "AggregatesUpdated") == ("True", "Succeeded", "Aggregates from spec applied successfully")
        assert reason_of(ready, "Ready") == ("True", "Ready", "Hypervisor is ready")


def test_hypervisor_onboarding_waits_for_ha_enabled(region):
    """Since v1.2.3 completeOnboarding waits, under spec.highAvailability (the operator creates Hypervisors with
    true), for HaEnabled, which only kvm-ha-service sets: without it onboarding stays at Handover."""
    with own_node(ZONES[POOL]) as name:
        handover = wait_truthy(reached(name, lambda hv: reason_of(hv, "Onboarding")[1] == "Handover"
                                       and reason_of(hv, "AggregatesUpdated")[0] == "True"
                                       and reason_of(hv, "TraitsUpdated")[0] == "True"),
                               "onboarding at Handover with aggregates and traits done", 60)
        assert handover["spec"]["highAvailability"] is True and "HaEnabled" not in conditions(handover)
        waiting = ("False", "Onboarding", "Onboarding in progress: Waiting for other controllers to take over")
        still(name, lambda hv: reason_of(hv, "Onboarding")[1] == "Handover" and reason_of(hv, "Ready") == waiting, 3)
        # kvm-ha-service enables HA for the hypervisor (a status write beside the operator's).
        ha = {"type": "HaEnabled", "status": "True", "reason": "Succeeded", "message": "HA enabled",
              "lastTransitionTime": "2026-01-01T00:00:00Z"}
        kubectl(KUBECONFIG, "patch", HYPERVISORS, name, "--subresource=status", "--type=json",
                "--field-manager=kvm-ha-service", "-p", json.dumps([{"op": "add", "path": "/status/conditions/-",
                                                                     "value": ha}]))
        ready = wait_truthy(reached(name, lambda hv: reason_of(hv, "Ready")[0] == "True"), "the Hypervisor Ready", 60)
        assert reason_of(ready, "Onboarding") == ("False", "Succeeded", "Onboarding completed")


def test_hypervisor_maintenance_reports_not_ready(region):
    """ready/controller.go ComputeReadyCondition under spec.maintenance: ha (kvm-ha-service's) is Ready False
    Maintenance; manual disables the compute service and evicts (Evicting, then Evicted: the lab's hypervisors hold
    no VMs); back to "" the Hypervisor is enabled and Ready again."""
    with own_node(ZONES[POOL]) as name:
        wait_truthy(reached(name, lambda hv: reason_of(hv, "Onboarding")[1] is not None), "onboarding started", 60)
        patch_spec(name, highAvailability=False)
        wait_truthy(reached(name, lambda hv: reason_of(hv, "Ready")[0] == "True"), "the Hypervisor Ready", 60)
        patch_spec(name, maintenance="ha")
        found = wait_truthy(reached(name, lambda hv: reason_of(hv, "Ready")[0] == "False"), "Ready False", 30)
        assert reason_of(found, "Ready") == ("False", "Maintenance", "Hypervisor is in maintenance mode")
        patch_spec(name, maintenance="manual", maintenanceReason="integration test")
        evicted = wait_truthy(reached(name, lambda hv: reason_of(hv, "Ready")[1] == "Evicted"), "Ready False Evicted", 30)
        assert reason_of(evicted, "Ready") == ("False", "Evicted", "Hypervisor is disabled and evicted")
        assert reason_of(evicted, "HypervisorDisabled") == ("True", "Succeeded", "Hypervisor is disabled")
        assert reason_of(evicted, "Evicting") == ("False", "Succeeded", "Evicted") and evicted["status"]["evicted"]
        patch_spec(name, maintenance="")
        back = wait_truthy(reached(name, lambda hv: reason_of(hv, "Ready")[0] == "True"), "Ready again", 30)
        assert reason_of(back, "HypervisorDisabled") == ("False", "Succeeded", "Hypervisor is enabled")
        assert "Evicting" not in conditions(back) and not back["status"].get("evicted")


def test_hypervisor_follows_its_nodes_labels_and_annotations(region):
    """hypervisor_controller.go syncLabelsAndAnnotations on every reconcile: the transferred labels (added and
    changed, never removed), spec.aggregates from nova.openstack.cloud.sap/aggregates plus the zone, and
    spec.customTraits from nova.openstack.cloud.sap/custom-traits."""
    with own_node(ZONES[POOL]) as name:
        wait_truthy(reached(name, lambda hv: True), "the Hypervisor", 60)
        kubectl(KUBECONFIG, "label", "node", name, "--overwrite", "kubernetes.metal.cloud.sap/bb=bb-1", "tier=gold")
        kubectl(KUBECONFIG, "annotate", "node", name, "nova.openstack.cloud.sap/aggregates=az-x, tenant-a",
                "nova.openstack.cloud.sap/custom-traits=CUSTOM_LAB")
        synced = wait_truthy(reached(name, lambda hv: hv["spec"].get("customTraits") == ["CUSTOM_LAB"]),
                             "the annotations on the Hypervisor", 30)
        assert synced["spec"]["aggregates"] == ["az-x", "tenant-a", ZONES[POOL]]
        labels = synced["metadata"]["labels"]
        assert labels["kubernetes.metal.cloud.sap/bb"] == "bb-1" and "tier" not in labels  # only the transferred ones
        kubectl(KUBECONFIG, "label", "node", name, "kubernetes.metal.cloud.sap/bb-")
        time.sleep(2)
        assert hypervisor(name)["metadata"]["labels"]["kubernetes.metal.cloud.sap/bb"] == "bb-1"  # never removed
