"""playbooks/maintenance.yml on the lab region: a hypervisor Node into maintenance (its instances evicted by the
hypervisor operator's stand-in) and back, each second run changed=0, and the refusals."""

import json

from conftest import REPO, _play, failures, objects, task_result

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


def test_an_unknown_node_is_refused_naming_the_pools(region):
    rc, out = maintenance("no-such-node", "on")
    assert rc != 0
    message = task_result(out, "Require a hypervisor pool that has the Node")["msg"]
    assert message.startswith("no hypervisor pool has a Hypervisor no-such-node (pools: hv-pool-a, hv-pool-b"), message
