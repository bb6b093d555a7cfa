# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The storage pools' real Ceph (lab/regionlab/ceph.py) as the tenants' OpenStack services would use it.

Each tenant's client connects with what the control plane holds for it - the key in the ceph-client-<tenant> Secret
of its namespace and the monitors of its ControlPlane - and nothing else: cephx lets it write and read its own pools
and refuses another tenant's pools and the admin's commands.
"""

import base64
import errno
import json

import pytest

from conftest import REGION_HOST, TENANT_Q, TENANT_R, get_object, lab_kubectl, wait_truthy
from regionlab import ceph

# What only Rook's admin may do: list the keys, make a user, lift a pool's quota (mon caps `profile rbd` read the
# maps, so `osd pool ls` is allowed to a tenant).
ADMIN_COMMANDS = (("auth ls", {}), ("auth get-or-create", {"entity": "client.intruder", "caps": ["mon", "allow *"]}),
                  ("osd pool set-quota", {"field": "max_bytes", "val": "0"}))


def control_plane(tenant):
    return get_object(REGION_HOST, "-n", "openstack-" + tenant, "controlplane.c5c3.io", tenant)


def tenant_access(tenant):
    """[(storage pool, monitors, Secret name, pools)]: each Ceph the tenant's control plane reaches, as it holds it."""
    cp = control_plane(tenant)
    access = []
    for backend in cp["spec"]["openstack"]["cinder"]["backends"]:
        if backend.get("type") != "rbd":
            continue
        pool = backend["storageCluster"]
        pools = [p["metadata"]["name"] for p in rook_pools(pool)
                 if p["metadata"]["labels"].get("c5c3.io/openstack-cluster-name") == tenant]
        access.append((pool, backend["monitors"], backend["secretRef"], pools))
    return access


def rook_pools(pool):
    return json.loads(lab_kubectl(pool, "get", "cephblockpools", "-n", "rook-ceph", "-o", "json").stdout)["items"]


def key_of(tenant, secret):
    found = get_object(REGION_HOST, "-n", "openstack-" + tenant, "secret", secret)
    return base64.b64decode(found["data"]["userKey"]).decode()


def expect_refused(action):
    with pytest.raises((ceph.rados().PermissionError, ceph.CephError)) as refused:
        action()
    code = getattr(refused.value, "code", None)
    assert code in (None, -errno.EACCES, -errno.EPERM), refused.value
    return refused.value


def test_each_tenants_key_writes_its_own_pools_and_is_refused_everything_else(region):
    tenants = ("lab-tenant-a", "lab-tenant-b", TENANT_Q, TENANT_R)
    by_pool = {}
    for tenant in tenants:
        for pool, dummy, dummy, pools in tenant_access(tenant):
            by_pool.setdefault(pool, {})[tenant] = pools
    checked, pools_seen = [], set()
    for tenant in tenants:
        for pool, monitors, secret, own in tenant_access(tenant):
            assert own, (tenant, pool)
            others = [p for t, pools in by_pool[pool].items() if t != tenant for p in pools]
            client = ceph.connect(monitors, "client.openstack-" + tenant, key_of(tenant, secret))
            try:
                for name in own:
                    with client.open_ioctx(name) as io:
                        io.write_full("isolation-test", tenant.encode())
                        assert io.read("isolation-test") == tenant.encode()
                for name in others:
                    with client.open_ioctx(name) as io:
                        expect_refused(lambda io=io: io.write_full("isolation-test", b"intruder"))
                for command, args in ADMIN_COMMANDS:
                    if command == "osd pool set-quota":
                        args = dict(args, pool=own[0])
                    expect_refused(lambda command=command, args=args: ceph.command(client, command, **args))
            finally:
                client.shutdown()
            pools_seen.add(pool)
            checked.append("%s on %s: wrote %s; refused %s and %s" % (
                tenant, pool, ", ".join(own), ", ".join(others) or "-", ", ".join(c for c, dummy in ADMIN_COMMANDS)))
    print("\n" + "\n".join(checked))
    assert pools_seen == {"st-pool-a", "st-pool-b"}  # tenants on both storage pools, one on both


def test_the_monitors_the_control_plane_holds_are_the_storage_pools_node_addresses(region):
    for tenant in ("lab-tenant-a", "lab-tenant-b"):
        for pool, monitors, dummy, dummy in tenant_access(tenant):
            state = ceph.Cluster(pool).state()
            assert [m.split(":")[0] for m in monitors] == [address for dummy, address in state["mons"]], (tenant, pool)


def test_each_pool_in_ceph_is_as_its_cephblockpool_says(region):
    for pool in ("st-pool-a", "st-pool-b"):
        live = dict((p["pool_name"], p) for p in ceph.Cluster(pool).command("osd pool ls", detail="detail"))
        for block_pool in rook_pools(pool):
            spec, name = block_pool["spec"], block_pool["metadata"]["name"]
            assert name in live, (pool, name)
            assert live[name]["size"] == spec["replicated"]["size"], (pool, name)
            assert block_pool["status"]["poolID"] == live[name]["pool_id"]
            want = (spec.get("quotas") or {}).get("maxSize")
            assert live[name]["quota_max_bytes"] == (int(want[:-2]) << 30 if want else 0), (pool, name)
            assert "rbd" in live[name]["application_metadata"]


def mds_map(pool_ceph, filesystem):
    dump = pool_ceph.command("fs dump")
    return next(f["mdsmap"] for f in dump["filesystems"] if f["mdsmap"]["fs_name"] == filesystem)


def test_a_tenants_filesystem_is_served_by_real_mds_daemons(region):
    """lab-tenant-b's CephFilesystem (Manila's shares): its MDS daemons run on the storage pool's Node, one active and
    one in standby-replay, its pools spread over OSDs, and Ceph's volumes module makes a subvolume in the CSI group -
    which only an active MDS can serve."""
    pool_ceph = ceph.Cluster("st-pool-a")
    node_address = pool_ceph.state()["osds"][0]["address"]
    found = json.loads(lab_kubectl("st-pool-a", "get", "cephfilesystems", "-n", "rook-ceph", "-o", "json").stdout)
    filesystems = [f for f in found["items"]
                   if f["metadata"]["labels"].get("c5c3.io/openstack-cluster-name") == "lab-tenant-b"]
    assert len(filesystems) == 1 and filesystems[0]["status"]["phase"] == "Ready"
    name = filesystems[0]["metadata"]["name"]

    def served():
        daemons = mds_map(pool_ceph, name)["info"].values()
        states = sorted((d["name"], d["state"]) for d in daemons)
        return states if [s for dummy, s in states] in (["up:active", "up:standby-replay"],
                                                        ["up:standby-replay", "up:active"]) else None
    states = wait_truthy(served, "an active MDS and a standby-replay one for %s" % name)
    assert sorted(n for n, dummy in states) == [name + "-a", name + "-b"]
    mdsmap = mds_map(pool_ceph, name)
    assert all(d["addr"].startswith(node_address + ":") for d in mdsmap["info"].values())
    pools = dict((p["pool_id"], p) for p in pool_ceph.command("osd pool ls", detail="detail"))
    rules = dict((r["rule_id"], r["rule_name"]) for r in pool_ceph.command("osd crush rule dump"))
    made = [pools[mdsmap["metadata_pool"]]] + [pools[i] for i in mdsmap["data_pools"]]
    assert [p["pool_name"] for p in made] == [name + "-metadata", name + "-data0"]
    assert [rules[p["crush_rule"]] for p in made] == [name + "-metadata_osd", name + "-data0_osd"]
    groups = [g["name"] for g in pool_ceph.mgr_command("fs subvolumegroup ls", vol_name=name)]
    assert groups == ["csi"]
    share = dict(vol_name=name, sub_name="share-probe", group_name="csi")
    pool_ceph.mgr_command("fs subvolume create", timeout=30, size=1 << 20, **share)
    try:
        info = pool_ceph.mgr_command("fs subvolume info", timeout=30, **share)
        assert info["path"].startswith("/volumes/csi/share-probe/") and info["bytes_quota"] == 1 << 20
    finally:
        pool_ceph.mgr_command("fs subvolume rm", timeout=30, **share)
    assert pool_ceph.mgr_command("fs subvolume ls", vol_name=name, group_name="csi") == []
