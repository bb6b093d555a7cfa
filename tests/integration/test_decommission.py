"""playbooks/decommission.yml on the lab region: the refusals (a pool still in the inventory, a pool a tenant and the
region's ControlPlane still use, a wrong confirmation, a control-plane cluster with ControlPlanes on it), and the
decommission of a pool the inventory no longer has: its Shoot deleted through the lab's gardenlet with Gardener's
deletion confirmation, its ServerClaim released by the real metal-operator, its BMC kept as the inventory lists it;
check mode first, changed=0 again."""

import json
import shutil
import time

from conftest import CLAIMS_NAMESPACE, PROJECT_NAMESPACE, REPO, _play, failures, get_object, lab_kubectl, objects, \
    run_playbook, writes
from regionlab import config

DECOMMISSION = REPO / "playbooks" / "decommission.yml"
POOL = "hv-pool-x"   # in no inventory: the pool a region removed from its inventory


def decommission(pool, *args, confirm=None, inventory=None):
    variables = json.dumps({"pool": pool, "confirm": pool if confirm is None else confirm})
    if inventory is None:
        rc, out, unused = _play(DECOMMISSION, "-e", variables, *args)
        return rc, out
    return run_playbook(DECOMMISSION, "-e", variables, *args, inventory=inventory, COBALTCORE_LAB_DIR=str(config.STATE))


def changed(out):
    return sum(s["changed"] for s in out["stats"].values())


def test_a_pool_in_the_inventory_or_in_use_and_a_wrong_confirmation_are_refused(region, tmp_path):
    rc, out = decommission("hv-pool-b", confirm="hv-pool-a")
    ((unused_task, unused_host, msg),) = failures(out)
    assert rc != 0 and "pool: hv-pool-b is still in the inventory (hypervisor_pools)" in msg and \
        "confirm: must be hv-pool-b" in msg, msg
    # The same region with hv-pool-b gone from its inventory: lab-tenant-b and the region's ControlPlane still use it.
    inventory = tmp_path / "lab"
    shutil.copytree(REPO / "inventories" / "lab", inventory)
    hosts = inventory / "hosts.yml"
    hosts.write_text(hosts.read_text().replace("hv-pool-a: {}, hv-pool-b: {}", "hv-pool-a: {}"))
    rc, out = decommission("hv-pool-b", "--check", inventory=inventory)
    ((unused_task, unused_host, msg),) = failures(out)
    assert rc != 0 and msg.startswith("hv-pool-b is still used by ControlPlane openstack-lab-tenant-b/lab-tenant-b of "
                                      "OpenStack cluster lab-tenant-b, ControlPlane openstack/lab of OpenStack cluster "
                                      "lab, tenant lab-tenant-b (OpenStackCluster claim tenant-lab-b/lab-tenant-b)"), msg
    assert get_object("garden", "-n", PROJECT_NAMESPACE, "shoot", "hv-pool-b") is not None


def test_a_control_plane_cluster_with_control_planes_on_it_is_refused_naming_them(region, tmp_path):
    """lab-control-plane gone from an inventory that lists another control-plane cluster: its ControlPlanes, read
    through its Shoot, and the tenants placed there (their claims name no control-plane cluster: the region's
    default) refuse its decommission, in check mode and without, and nothing is written."""
    inventory = tmp_path / "lab"
    shutil.copytree(REPO / "inventories" / "lab", inventory)
    hosts = inventory / "hosts.yml"
    hosts.write_text(hosts.read_text().replace("lab-control-plane: {}", "lab-cp-2: {}"))
    # The other control-plane cluster: lab-control-plane's API server stands in for it (its ControlPlanes are read).
    (inventory / "host_vars" / "lab-control-plane").rename(inventory / "host_vars" / "lab-cp-2")
    (inventory / "host_vars" / "lab-cp-2" / "kubeconfig.yml").write_text(
        'cobaltcore_kubeconfig: "{{ cobaltcore_private_dir }}/kubeconfig/lab-control-plane.yaml"\n')
    running = sorted("ControlPlane %s/%s of OpenStack cluster %s, which runs on lab-control-plane" % (
        c["metadata"]["namespace"], c["metadata"]["name"], c["metadata"]["labels"]["c5c3.io/openstack-cluster-name"])
        for c in get_object("lab-control-plane", "controlplanes.c5c3.io", "-A", missing_ok=False)["items"])
    assert "ControlPlane openstack/lab of OpenStack cluster lab, which runs on lab-control-plane" in running
    # The inventory copy's tenants directory: the lab's claims.
    placed = ["tenant lab-tenant-a (OpenStackCluster claim tenant-lab-a/lab-tenant-a)",
              "tenant lab-tenant-b (OpenStackCluster claim tenant-lab-b/lab-tenant-b)"]
    before = writes()
    for args in (("--check",), ()):
        rc, out = decommission("lab-control-plane", *args, inventory=inventory)
        ((unused_task, unused_host, msg),) = failures(out)
        assert rc != 0 and msg == "lab-control-plane is still used by %s: move them off it first" % ", ".join(
            sorted(running + placed)), msg
    assert writes() == before
    (shoot,) = get_object("garden", "-n", PROJECT_NAMESPACE, "shoots", "-l", "c5c3.io/cluster=lab-control-plane",
                          missing_ok=False)["items"]
    assert shoot["metadata"]["name"] == "lab-cp" and not shoot["metadata"].get("deletionTimestamp")


def spare_server():
    """A lab KVM server no claim holds (the lab's spare in lab-1b)."""
    free = [s for s in objects("baremetal", "servers.metal.ironcore.dev")
            if not (s.get("spec") or {}).get("serverClaimRef") and s["metadata"]["labels"].get(
                "c5c3.io/machine-class") == "lab-kvm" and (s.get("status") or {}).get("state") == "Available"]
    assert free, "no Available KVM server in the lab"
    return free[0]


def test_a_pool_the_inventory_no_longer_has_goes_its_shoot_deleted_and_its_servers_released(region, tmp_path):
    # What a pool the inventory dropped leaves: its Shoot (labelled with it) and a ServerClaim.
    template = get_object("garden", "-n", PROJECT_NAMESPACE, "shoot", "hv-pool-b")
    shoot = {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
             "metadata": {"name": POOL, "namespace": PROJECT_NAMESPACE, "labels": {"c5c3.io/cluster": POOL}},
             "spec": template["spec"]}
    server = spare_server()["metadata"]["name"]
    like = [c for c in objects("baremetal", "serverclaims.metal.ironcore.dev", CLAIMS_NAMESPACE)
            if c["metadata"]["labels"].get("c5c3.io/pool") == "hv-pool-b"][0]
    claim = {"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "ServerClaim",
             "metadata": {"name": POOL + "-0", "namespace": CLAIMS_NAMESPACE, "labels": {"c5c3.io/pool": POOL}},
             "spec": dict([(k, v) for k, v in like["spec"].items() if k not in ("serverRef", "serverSelector")],
                          serverRef={"name": server})}
    try:
        for cluster, manifest in (("garden", shoot), ("baremetal", claim)):
            path = tmp_path / ("%s.json" % cluster)
            path.write_text(json.dumps(manifest))
            lab_kubectl(cluster, "create", "-f", str(path))
        deadline = time.monotonic() + 120
        while (get_object("baremetal", "-n", CLAIMS_NAMESPACE, "serverclaim", POOL + "-0").get("status") or {}).get(
                "phase") != "Bound":
            assert time.monotonic() < deadline, "the claim was not bound"
            time.sleep(1)

        rc, out = decommission(POOL, "--check")
        assert rc == 0 and changed(out) > 0, failures(out)
        assert get_object("garden", "-n", PROJECT_NAMESPACE, "shoot", POOL) is not None
        assert get_object("baremetal", "-n", CLAIMS_NAMESPACE, "serverclaim", POOL + "-0") is not None

        rc, out = decommission(POOL)
        assert rc == 0, failures(out)
        assert get_object("garden", "-n", PROJECT_NAMESPACE, "shoot", POOL) is None
        assert get_object("baremetal", "-n", CLAIMS_NAMESPACE, "serverclaim", POOL + "-0") is None
        released = get_object("baremetal", "server", server)
        assert not (released.get("spec") or {}).get("serverClaimRef"), released["spec"]
        # Its BMC is one the inventory lists: it stays.
        assert get_object("baremetal", "bmc", released["spec"]["bmcRef"]["name"]) is not None

        rc, out = decommission(POOL)
        assert rc == 0 and changed(out) == 0, out["stats"]
    finally:
        lab_kubectl("baremetal", "-n", CLAIMS_NAMESPACE, "delete", "serverclaim", POOL + "-0", "--ignore-not-found",
                    "--wait=true")
        lab_kubectl("garden", "-n", PROJECT_NAMESPACE, "annotate", "shoot", POOL,
                    "confirmation.gardener.cloud/deletion=true", "--overwrite", check=False)
        lab_kubectl("garden", "-n", PROJECT_NAMESPACE, "delete", "shoot", POOL, "--ignore-not-found", "--wait=true")
