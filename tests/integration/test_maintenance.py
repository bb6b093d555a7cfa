"""playbooks/maintenance.yml on the lab region: a hypervisor Node into maintenance (its instances evicted by the
hypervisor operator's stand-in) and back, each second run changed=0, an eviction held by an instance in ERROR,
and the refusals."""

import json

from conftest import REPO, _play, failures, objects, standins_restored, task_result, update_standins

MAINTENANCE = REPO / "playbooks" / "maintenance.yml"
POOL = "hv-pool-b"
REASON = "cobaltcore - maintenance"


def hypervisor(name):
    (found,) = [hv for hv in objects(POOL, "hypervisors.kvm.cloud.sap") if hv["metadata"]["name"] == name]
    return found


def ready(hv):
    (cond,) = [c for c in hv["status"]["conditions"] if c["type"] == "Ready"]
    return cond["status"], cond["reason"]


def maintenance(node, state, *args):
    rc, out, unused = _play(MAINTENANCE, "-e", json.dumps({"node": node, "state": state}), *args)
    return rc, out


def test_a_node_goes_into_maintenance_evicted_and_comes_back_ready(region):
    node = sorted(hv["metadata"]["name"] for hv in objects(POOL, "hypervisors.kvm.cloud.sap"))[0]
    assert ready(hypervisor(node)) == ("True", "Ready") and not hypervisor(node)["spec"].get("maintenance")
    rc, out = maintenance(node, "on", "--check")
    assert rc == 0 and not hypervisor(node)["spec"].get("maintenance"), failures(out)
    try:
        rc, out = maintenance(node, "on")
        assert rc == 0, failures(out)
        hv = hypervisor(node)
        assert (hv["spec"]["maintenance"], hv["spec"]["maintenanceReason"]) == ("manual", REASON)
        assert hv["status"]["evicted"] is True and ready(hv)[0] == "False", hv["status"]
        rc, out = maintenance(node, "on")
        assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    finally:
        rc, out = maintenance(node, "off")
    assert rc == 0, failures(out)
    hv = hypervisor(node)
    assert not hv["spec"].get("maintenance") and "maintenanceReason" not in hv["spec"] and \
        ready(hv) == ("True", "Ready"), hv
    rc, out = maintenance(node, "off")
    assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]


def eviction(name):
    found = [e for e in objects(POOL, "evictions.kvm.cloud.sap") if e["metadata"]["name"] == name]
    return found[0] if found else None


def test_an_instance_in_error_holds_the_eviction_and_the_run_names_it(region):
    node = sorted(hv["metadata"]["name"] for hv in objects(POOL, "hypervisors.kvm.cloud.sap"))[-1]
    fault = "No valid host was found. There are not enough hosts available."
    try:
        with standins_restored():
            update_standins(lambda data: data.setdefault("failures", {}).update(
                {"Hypervisor/%s/%s" % (POOL, node): {"evict": fault}}))
            rc, out = maintenance(node, "on", "-e", "cobaltcore_maintenance_timeout=15")
            assert rc != 0
            ((unused_task, host, msg),) = failures(out)
            (instance,) = eviction(node)["status"]["outstandingInstances"]
            assert host == POOL and msg.endswith("(waiting until its instances are evicted): instances still on it: "
                                                 "%s; Migration of instance %s failed: %s" % (instance, instance, fault))
            hv = hypervisor(node)
            assert hv["spec"]["maintenance"] == "manual" and ready(hv) == ("False", "Evicting"), "the Node stays out"
        # The failure gone (the instance deleted by its owner), the same run ends the maintenance's eviction.
        rc, out = maintenance(node, "on")
        assert rc == 0 and hypervisor(node)["status"]["evicted"] is True, failures(out)
    finally:
        rc, out = maintenance(node, "off")
    assert rc == 0 and ready(hypervisor(node)) == ("True", "Ready") and eviction(node) is None, failures(out)


def test_an_unknown_node_is_refused_naming_the_pools(region):
    rc, out = maintenance("no-such-node", "on")
    assert rc != 0
    message = task_result(out, "Require a pool that has the Node")["msg"]
    assert message == "no hypervisor or storage pool has a Node no-such-node (pools: hv-pool-a, hv-pool-b, " \
        "st-pool-a, st-pool-b)", message
