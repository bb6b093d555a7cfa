"""playbooks/scale_in.yml on the lab region: hv-pool-b grown by one worker (site.yml on a copy of the inventory), then
scaled in to its inventory's one - the surplus claim's Node evacuated (the hypervisor operator's stand-in), an
eviction held by an instance in ERROR keeping the claim, the claim released, the Shoot's worker lowered; site.yml
with the lower count shrinks nothing, and drift.yml names the held count - and the refusals below what the tenants
need."""

import json
import shutil

import yaml

from conftest import (PROJECT_NAMESPACE, REPO, failures, get_object, objects, run_playbook, standins_restored,
                      task_results, update_standins, writes)
from regionlab import config

SCALE_IN = REPO / "playbooks" / "scale_in.yml"
SITE = REPO / "playbooks" / "site.yml"
DRIFT = REPO / "playbooks" / "drift.yml"
POOL = "hv-pool-b"
CLAIMS = "cobaltcore-servers"
MAINTENANCE = "Take each Node into maintenance and wait until its instances are evacuated"
RELEASE = "Release the surplus claims and wait until metal-operator freed their servers"
SHOOTS = "Create or update every Shoot and wait for all of them together"


def inventory(path, **pools):
    """A copy of the lab inventory with the pools' settings updated as given ({setting: value} per pool)."""
    shutil.copytree(REPO / "inventories" / "lab", path)
    for pool, settings in pools.items():
        pool_file = path / "host_vars" / pool.replace("_", "-") / "pool.yml"
        data = yaml.safe_load(pool_file.read_text())
        data["cobaltcore_pool"].update(settings)
        pool_file.write_text(yaml.safe_dump(data))
    return path


def scale_in(pool, inventory_dir, *args):
    return run_playbook(SCALE_IN, "-e", json.dumps({"pool": pool}), *args, inventory=inventory_dir,
                        COBALTCORE_LAB_DIR=str(config.STATE))


def state():
    """(Node names, Hypervisor names, {claim: server}) of the pool."""
    nodes = sorted(n["metadata"]["name"] for n in objects(POOL, "nodes")
                   if n["metadata"]["labels"].get("worker.gardener.cloud/pool") == "worker")
    hypervisors = sorted(h["metadata"]["name"] for h in objects(POOL, "hypervisors.kvm.cloud.sap"))
    claims = dict((c["metadata"]["name"], c["spec"].get("serverRef", {}).get("name"))
                  for c in objects("baremetal", "serverclaims", CLAIMS) if c["metadata"]["labels"]["c5c3.io/pool"] == POOL)
    return nodes, hypervisors, claims


def shoot_maximum(pool=POOL):
    shoot = get_object("garden", "-n", PROJECT_NAMESPACE, "shoot", pool, missing_ok=False)
    return shoot["spec"]["provider"]["workers"][0]["maximum"]


def unchanged(out):
    return all(s["changed"] == 0 for s in out["stats"].values())


def test_a_count_below_the_tenants_needs_is_refused_naming_them_before_any_write(region, tmp_path):
    # st-pool-b with its replicas over hosts: lab-tenant-b's pools there need more than its one Node.
    ceph = yaml.safe_load((REPO / "inventories/lab/host_vars/st-pool-b/pool.yml").read_text())["cobaltcore_pool"]["ceph"]
    over_hosts = inventory(tmp_path / "inventory", st_pool_b={"ceph": dict(ceph, failure_domain="host")})
    before = writes()
    rc, out = scale_in("st-pool-b", over_hosts)
    assert rc != 0
    ((unused_task, unused_host, msg),) = failures(out)
    assert msg.startswith("st-pool-b.workers: 1 is below what the pool's tenants need: ") and \
        "tenant lab-tenant-b (OpenStackCluster claim tenant-lab-b/lab-tenant-b) needs " in msg, msg
    rc, out = scale_in("hv-pool-z", over_hosts)
    assert rc != 0 and "pool: hv-pool-z is no pool of the inventory's hypervisor_pools or storage_pools" in \
        failures(out)[0][2]
    assert writes() == before


def test_scale_in_evacuates_the_surplus_node_before_its_claim_is_released(region, tmp_path):
    nodes_before, hypervisors_before, claims_before = state()
    assert len(claims_before) == 1 and shoot_maximum() == 1
    grown, shrunk = inventory(tmp_path / "grown", hv_pool_b={"workers": 2}), inventory(tmp_path / "shrunk", hv_pool_b={"workers": 1})
    restored = False
    try:
        rc, out = run_playbook(SITE, "--limit", "ironcore,gardener,%s" % POOL, inventory=grown,
                               COBALTCORE_LAB_DIR=str(config.STATE))
        assert rc == 0, failures(out)
        nodes, hypervisors, claims = state()
        (new,) = sorted(set(nodes) - set(nodes_before))
        (surplus,) = sorted(set(claims) - set(claims_before))
        assert claims[surplus] == new and new in hypervisors and shoot_maximum() == 2
        # site.yml with the lower count shrinks nothing: the claim is kept (phase 1) and the Shoot's worker held
        # (phase 2), so Gardener deletes no Node of its own choosing.
        rc, out = run_playbook(SITE, "--limit", "ironcore,gardener,%s" % POOL, inventory=shrunk,
                               COBALTCORE_LAB_DIR=str(config.STATE))
        assert rc == 0, failures(out)
        assert task_results(out, SHOOTS)["garden"]["workers_held"] == [
            {"name": POOL, "worker": "worker", "runs": 2, "asked": 1}]
        assert state() == (nodes, hypervisors, claims) and shoot_maximum() == 2
        # drift.yml names the held counts: the inventory's and the Shoot's.
        rc, out = run_playbook(DRIFT, "--check", "--limit", "gardener,ironcore,%s" % POOL,
                               "-e", "cobaltcore_report_dir=%s" % tmp_path, inventory=shrunk,
                               COBALTCORE_LAB_DIR=str(config.STATE))
        assert rc == 0, failures(out)
        report = json.loads((tmp_path / "lab-drift.json").read_text())
        found = dict(((c["name"], o["object"]), o["fields"]) for c in report["clusters"] for o in c["objects"])
        assert found == {("garden", "Shoot %s/%s" % (PROJECT_NAMESPACE, POOL)): [
            {"field": "spec.provider.workers[name=worker].%s" % key, "declared": 1, "live": 2}
            for key in ("minimum", "maximum")]}, found
        # --check plans the maintenance and the release, and writes nothing.
        rc, out = scale_in(POOL, shrunk, "--check")
        assert rc == 0, failures(out)
        assert [r["item"] for r in task_results(out, MAINTENANCE)[POOL]["results"]] == [new]
        assert task_results(out, RELEASE)["baremetal"]["changed"]
        assert state() == (nodes, hypervisors, claims) and shoot_maximum() == 2
        node = [n for n in objects(POOL, "hypervisors.kvm.cloud.sap") if n["metadata"]["name"] == new][0]
        assert not node["spec"].get("maintenance")
        # An instance in ERROR holds the eviction: the run fails naming it, and the claim stays with its Node.
        fault = "No valid host was found. There are not enough hosts available."
        with standins_restored():
            update_standins(lambda data: data.setdefault("failures", {}).update(
                {"Hypervisor/%s/%s" % (POOL, new): {"evict": fault}}))
            rc, out = scale_in(POOL, shrunk, "-e", "cobaltcore_maintenance_timeout=15")
            assert rc != 0
            ((unused_task, host, unused_msg),) = failures(out)
            (msg,) = [r["msg"] for r in task_results(out, MAINTENANCE)[POOL]["results"] if r.get("failed")]
            assert host == POOL and "Node %s: not done within 15s (waiting until its instances are evicted)" % new \
                in msg and msg.endswith("failed: %s" % fault), msg
            assert state() == (nodes, hypervisors, claims) and shoot_maximum() == 2
        # The instance gone, the Node is evacuated, its claim released, the Shoot's worker lowered.
        rc, out = scale_in(POOL, shrunk)
        restored = rc == 0
        assert rc == 0, failures(out)
        (evacuated,) = task_results(out, MAINTENANCE)[POOL]["results"]
        # In maintenance since the failed run (ours), now evicted: Ready False until the Node is gone.
        assert (evacuated["item"], evacuated["maintenance"], evacuated["ready"]["status"]) == (new, "ours", "False")
        assert state() == (nodes_before, hypervisors_before, claims_before) and shoot_maximum() == 1
        rc, out = scale_in(POOL, shrunk)
        assert rc == 0 and unchanged(out), out["stats"]
    finally:
        if not restored:  # the region is shared: put it back even when an assertion failed
            run_playbook(SITE, "--limit", "ironcore,gardener,%s" % POOL, "-e", "baremetal_bootstrap_release_surplus=true",
                         COBALTCORE_LAB_DIR=str(config.STATE))
