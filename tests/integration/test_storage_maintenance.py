"""A storage Node's maintenance and a storage pool's scale-in on the lab region, against the pools' real Ceph: the
collection's Ceph Jobs run the real ceph client (the lab's shell-pods kubelet) against the lab's daemons.

st-pool-b grows by the rack's spare storage server (site.yml on a copy of the inventory): the Rook stand-in makes OSDs
on the new Node. maintenance.yml takes that Node's OSDs out with their data moved and brings them back; st-pool-a's
only Node is refused, naming the pools that would lose their last OSDs; scale_in.yml drains the new Node, releases its
server and purges its OSDs from Ceph's maps."""

import json
import time

from conftest import (REPO, failures, get_object, objects, run_playbook, task_results, wait_truthy)
from regionlab import ceph, config
from test_scale_in import inventory, shoot_maximum, unchanged

MAINTENANCE = REPO / "playbooks" / "maintenance.yml"
SCALE_IN = REPO / "playbooks" / "scale_in.yml"
# Phases 1 and 2: the claim and the Shoot's worker. The tenants phase of a site.yml limited to st-pool-b would refuse
# the claims that name st-pool-a, whose Ceph facts a limited run does not gather.
GROW = [REPO / "playbooks" / "baremetal.yml", REPO / "playbooks" / "clusters.yml"]
LIMIT = "ironcore,gardener,%s" % "st-pool-b"
POOL = "st-pool-b"
ANNOTATION = "c5c3.io/storage-maintenance"
DRAIN = "Take each storage Node's Ceph OSDs out and wait until their data moved"
PURGE = "Purge each released Node's OSDs and its CRUSH bucket"


def play(playbook, *args, inventory_dir=None):
    return run_playbook(playbook, *args, inventory=inventory_dir, COBALTCORE_LAB_DIR=str(config.STATE))


def storage_task(node, state):
    return "Storage Node %s maintenance %s" % (node, state)


def maintenance(node, state, *args, inventory_dir=None):
    return play(MAINTENANCE, "-e", json.dumps({"node": node, "state": state}), *args, inventory_dir=inventory_dir)


def phases_1_2(inventory_dir, *args):
    for playbook in GROW:
        rc, out = play(playbook, "--limit", LIMIT, *args, inventory_dir=inventory_dir)
        if rc != 0:
            return rc, out
    return rc, out


def write_objects(pool, count):
    """Objects in the tenant's RBD pool of st-pool-b: the data the drain must move."""
    ioctx = ceph.Cluster(pool).admin().open_ioctx("lab-tenant-b-volumes")
    try:
        for index in range(count):
            ioctx.write_full("drain-%d" % index, b"x" * 4096)
    finally:
        ioctx.close()


def read_objects(pool, count):
    ioctx = ceph.Cluster(pool).admin().open_ioctx("lab-tenant-b-volumes")
    try:
        return [len(ioctx.read("drain-%d" % index, 8192)) for index in range(count)]
    finally:
        ioctx.close()


def pgs_on(pool, osd_ids):
    """The PGs whose up or acting set has any of the OSDs."""
    return [p["pgid"] for p in ceph.Cluster(pool).command("pg ls")["pg_stats"]
            if set(p["up"] + p["acting"]) & set(osd_ids)]


def node_object(pool, name):
    return get_object(pool, "node", name)


def osds(pool, host):
    """{osd id: (status, reweight)} of the host's OSDs in the pool's Ceph."""
    tree = ceph.Cluster(pool).command("osd tree")
    ids = [c for n in tree["nodes"] if n["type"] == "host" and n["name"] == host for c in n.get("children", [])]
    return dict((n["id"], (n["status"], n["reweight"])) for n in tree["nodes"] if n["id"] in ids)


def pgs_clean(pool):
    states = ceph.Cluster(pool).command("pg stat")
    states = states.get("pg_summary", states)["num_pg_by_state"]
    return all(s["name"] == "active+clean" for s in states)


def pool_nodes(pool):
    return sorted(n["metadata"]["name"] for n in objects(pool, "nodes")
                  if n["metadata"]["labels"].get("worker.gardener.cloud/pool") == "worker")


def test_the_only_node_of_a_pool_is_refused_naming_the_pools(region):
    (node,) = pool_nodes("st-pool-a")
    before = osds("st-pool-a", node)
    rc, out = maintenance(node, "on")
    assert rc != 0
    ((unused_task, host, msg),) = failures(out)
    assert host == "st-pool-a" and "refused to take the OSDs of %s out" % node in msg and \
        "pool lab-tenant-a-volumes (size 3) would have 0 osd buckets with OSDs in" in msg, msg
    live = node_object("st-pool-a", node)
    assert ANNOTATION not in live["metadata"].get("annotations", {}) and not live["spec"].get("unschedulable")
    assert osds("st-pool-a", node) == before and all(w == 1 for unused, w in before.values())
    assert not objects("st-pool-a", "jobs", "rook-ceph")


def test_a_storage_node_goes_out_with_its_data_moved_comes_back_and_is_scaled_in(region, tmp_path):
    nodes_before = pool_nodes(POOL)
    grown = inventory(tmp_path / "grown", st_pool_b={"workers": 2})
    shrunk = inventory(tmp_path / "shrunk", st_pool_b={"workers": 1})
    restored, new = False, None
    try:
        rc, out = phases_1_2(grown)
        assert rc == 0, failures(out)
        (new,) = sorted(set(pool_nodes(POOL)) - set(nodes_before))
        # Rook's OSD orchestration makes the new Node's OSDs; CRUSH puts data on them.
        wait_truthy(lambda: len(osds(POOL, new)) == 3 and all(s == "up" for s, w in osds(POOL, new).values()),
                    "the OSDs of %s up" % new, timeout=120)
        wait_truthy(lambda: pgs_clean(POOL), "every PG active+clean", timeout=120)
        new_osds = sorted(osds(POOL, new))
        write_objects(POOL, 20)
        wait_truthy(lambda: pgs_on(POOL, list(osds(POOL, new))) and pgs_clean(POOL),
                    "a PG on the new Node's OSDs", timeout=60)

        # --check plans the Job and writes nothing.
        rc, out = maintenance(new, "on", "--check", inventory_dir=grown)
        assert rc == 0, failures(out)
        assert task_results(out, storage_task(new, "on"))[POOL]["job"]["action"] == "out"
        assert all(w == 1 for unused, w in osds(POOL, new).values())
        assert not node_object(POOL, new)["spec"].get("unschedulable")

        rc, out = maintenance(new, "on", inventory_dir=grown)
        assert rc == 0, failures(out)
        assert task_results(out, storage_task(new, "on"))[POOL]["changed"]
        # Out, their data moved: no PG on them, every PG whole, the data readable.
        assert all(w == 0 and s == "up" for s, w in osds(POOL, new).values()), osds(POOL, new)
        assert pgs_on(POOL, list(osds(POOL, new))) == [] and pgs_clean(POOL)
        assert read_objects(POOL, 20) == [4096] * 20
        live = node_object(POOL, new)
        assert live["metadata"]["annotations"][ANNOTATION] == "cobaltcore - maintenance" and \
            live["spec"]["unschedulable"] is True
        assert not objects(POOL, "jobs", "rook-ceph")
        rc, out = maintenance(new, "on", inventory_dir=grown)
        assert rc == 0 and unchanged(out), out["stats"]

        rc, out = maintenance(new, "off", inventory_dir=grown)
        assert rc == 0, failures(out)
        assert all(w == 1 for unused, w in osds(POOL, new).values()) and pgs_clean(POOL)
        live = node_object(POOL, new)
        assert ANNOTATION not in live["metadata"].get("annotations", {}) and not live["spec"].get("unschedulable")
        rc, out = maintenance(new, "off", inventory_dir=grown)
        assert rc == 0 and unchanged(out), out["stats"]

        # The scale-in drains the Node, releases its server and purges its OSDs.
        rc, out = play(SCALE_IN, "-e", json.dumps({"pool": POOL}), "--check", inventory_dir=shrunk)
        assert rc == 0, failures(out)
        assert [r["item"] for r in task_results(out, DRAIN)[POOL]["results"]] == [new]
        assert all(w == 1 for unused, w in osds(POOL, new).values()) and shoot_maximum(POOL) == 2
        rc, out = play(SCALE_IN, "-e", json.dumps({"pool": POOL}), inventory_dir=shrunk)
        restored = rc == 0
        assert rc == 0, failures(out)
        assert [(r["item"]["item"], r["crush_host"]) for r in task_results(out, PURGE)[POOL]["results"]] == [
            (new, new)]
        assert pool_nodes(POOL) == nodes_before and shoot_maximum(POOL) == 1
        tree = ceph.Cluster(POOL).command("osd tree")
        assert osds(POOL, new) == {} and new not in [n["name"] for n in tree["nodes"]]
        assert not set(new_osds) & set(n["id"] for n in tree["nodes"]), tree
        assert pgs_clean(POOL) and read_objects(POOL, 20) == [4096] * 20
        rc, out = play(SCALE_IN, "-e", json.dumps({"pool": POOL}), inventory_dir=shrunk)
        assert rc == 0 and unchanged(out), out["stats"]
    finally:
        if not restored:  # the region is shared: put it back even when an assertion failed
            if new:
                maintenance(new, "off", inventory_dir=grown)
            rc, out = play(SCALE_IN, "-e", json.dumps({"pool": POOL}), inventory_dir=shrunk)
            if rc != 0:
                phases_1_2(None, "-e", "baremetal_bootstrap_release_surplus=true")
            time.sleep(1)
