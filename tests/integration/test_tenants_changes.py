# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase 7 when claims change: a quota, a second storage pool, a second claim on the same pools, a failing pool.

The tests change the region's two test tenants (lab-tenant-q, lab-tenant-r: conftest.TEST_CLAIMS, which the region
fixture's site.yml built and test_tenants.py checked) and add a third, lab-tenant-s, from a tenants directory of
their own, so the lab's tenants are the witnesses that nothing else is touched; the three are removed at the end
(the removal test removes Q with tenant_remove.yml, the module's end R and S directly).
The Keystone step and the ControlPlane wait are left out: these runs are about what a claim change writes.
"""

import base64
import email.utils
import hashlib
import hmac
import json
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import (REGION_HOST, TENANT_Q, TENANT_R, TEST_CLAIMS, failures, get_object, lab_kubectl,
                      remove_openstack_clusters, standins_restored, task_results, tenant_claim,
                      update_standins, wait_truthy, write_claims)
from regionlab import ceph, config
from test_tenants import (POOLS, REMOVE_PLAY, ROOK_KINDS, TENANTS_PLAY, assert_monitors_are_rooks,
                          control_plane_objects, copied_key, play, rook_key, rook_user_and_key, spec_state,
                          tenant_objects, tenant_state)

Q, R, S = TENANT_Q, TENANT_R, "lab-tenant-s"
# What a test run leaves out (their own tests cover them).
QUICK = {"tenants_keystone": False, "tenants_control_plane_wait": False, "tenants_ceph_wait_timeout": 120}
APPLY_TASKS = ("Apply the tenants' namespaces and ControlPlanes",
               "Apply the tenants' Ceph objects of this storage pool and wait for them")
# Rook's wrapping of a pool it cannot create (pool/controller.go), with the lab's cause.
ROOK_ERROR = 'failed to create pool "{0}".: failed to configure pool "{0}".: lab failure (injected)'.format(S + "-images")


def claim(name, pools=("st-pool-a",), quota=None):
    """lab-tenant-q has Manila on a CephFS and an object store, as the region built it."""
    return tenant_claim(name, pools, quota, files=name == Q)


R_CLAIM = TEST_CLAIMS[R]  # as the region built it


class Claims(object):
    """A tenants directory: write the claims, run phase 7 on them."""

    def __init__(self, directory):
        self.directory = directory

    def run(self, *claims, **extra):
        for old in self.directory.glob("*.yaml"):
            old.unlink()
        write_claims(self.directory, claims)
        variables = dict(QUICK, cobaltcore_tenants_dir=str(self.directory), **extra)
        return play(TENANTS_PLAY, "-e", json.dumps(variables))


def written(out):
    """[(host, 'Kind namespace/name', result)] of every object phase 7's apply tasks did not leave unchanged."""
    found = []
    for task in APPLY_TASKS:
        for host, result in task_results(out, task).items():
            for item in result.get("results", []):
                if item["result"] != "unchanged":
                    found.append((host, "%s %s/%s" % (item["kind"], item.get("namespace") or "", item["name"]),
                                  item["result"]))
    return sorted(found)


def everyone():
    """uid and generation of every tenant's objects: operators keep writing status, so not resourceVersions."""
    return dict((t, spec_state(t)) for t in ("lab-tenant-a", "lab-tenant-b", Q, R, S))


@pytest.fixture(scope="module")
def claims(region, tmp_path_factory):
    directory = Claims(tmp_path_factory.mktemp("tenants"))
    yield directory
    remove_at_once([t for t in (Q, R, S) if tenant_state(t)])


def remove_at_once(names):
    """The tenants' objects deleted side by side, as the end of the module: the removal test's run of
    tenant_remove.yml covers the playbook; here one run per tenant would cost ~20 s each. The namespaces go
    as conftest removes an OpenStack cluster (their Keystones with them), the Rook objects by the tenants' label."""
    if names:
        for pool in POOLS:
            lab_kubectl(pool, "-n", "rook-ceph", "delete", ",".join(ROOK_KINDS), "--wait=false",
                        "-l", "c5c3.io/openstack-cluster-name in (%s)" % ",".join(names))
    control_plane = config.STATE / "kubeconfig" / ("%s.yaml" % REGION_HOST)
    assert remove_openstack_clusters(control_plane, ["openstack-" + name for name in names])
    wait_truthy(lambda: not any(tenant_state(name) for name in names), "the tenants' objects gone", timeout=120)


def ceph_pools(pool):
    """{name: `osd pool ls detail` entry} of the storage pool's real Ceph."""
    return dict((p["pool_name"], p) for p in ceph.Cluster(pool).command("osd pool ls", detail="detail"))


def ceph_users(pool):
    return {entry["entity"] for entry in ceph.Cluster(pool).command("auth ls")["auth_dump"]}


def tenant_ceph(tenant):
    """(monitors, key) of the tenant's first storage pool, as its control plane holds them."""
    cp = get_object(REGION_HOST, "-n", "openstack-" + tenant, "controlplane.c5c3.io", tenant)
    key = copied_key("openstack-" + tenant, "ceph-client-" + tenant)["userKey"]
    return cp["spec"]["storage"]["ceph"]["monitors"], base64.b64decode(key).decode()


def tenant_client(tenant):
    """A librados client with what the tenant's control plane holds."""
    monitors, key = tenant_ceph(tenant)
    return ceph.connect(monitors, "client.openstack-" + tenant, key)


def rbd_as_tenant(tenant, *args, tmp_path):
    """The rbd tool as the tenant's Cinder would run it: its key and its ControlPlane's monitors only."""
    monitors, key = tenant_ceph(tenant)
    keyfile = tmp_path / ("%s.key" % tenant)
    keyfile.write_text(key)
    keyfile.chmod(0o600)
    return subprocess.run(["rbd", "-m", ",".join(monitors), "--id", "openstack-" + tenant, "--keyfile", str(keyfile)]
                          + list(args), capture_output=True, text=True, timeout=60, check=True).stdout


def write_as_tenant(tenant, data):
    client = tenant_client(tenant)
    try:
        with client.open_ioctx(tenant + "-volumes") as io:
            io.write_full("removal-test", data)
    finally:
        client.shutdown()


def s3(gateway, keys, method, resource="/"):
    """A request to a RADOS gateway at (address, port), signed (AWS signature v2) with a user's keys; (status, body)."""
    date = email.utils.formatdate(usegmt=True)
    signed = hmac.new(keys["SecretKey"].encode(), ("%s\n\n\n%s\n%s" % (method, date, resource)).encode(), hashlib.sha1)
    request = urllib.request.Request("http://%s:%d%s" % (gateway[0], gateway[1], resource), method=method, headers={
        "Date": date, "Authorization": "AWS %s:%s" % (keys["AccessKey"], base64.b64encode(signed.digest()).decode())})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def assert_the_object_users_keys_work_at_its_gateways(tenant):
    """The Swift user's keys, as Rook's Secret holds them, against each real gateway of the tenant's store; a wrong
    secret is refused."""
    secret = get_object("st-pool-a", "-n", "rook-ceph", "secret", "rook-ceph-object-user-%s-rgw-swift-%s" % (
        tenant, tenant))
    keys = dict((k, base64.b64decode(v).decode()) for k, v in secret["data"].items())
    gateways = [g for d, g in ceph.Cluster("st-pool-a").rgws().items() if d.startswith(tenant.replace("-", ".") + ".")]
    assert len(gateways) == 2, gateways
    bucket = "/%s-probe" % tenant
    assert s3(gateways[0], keys, "PUT", bucket)[0] == 200
    try:
        for gateway in gateways:
            status, body = s3(gateway, keys, "GET")
            assert status == 200 and "<ID>swift-%s</ID>" % tenant in body and bucket[1:] in body, body
        status, body = s3(gateways[0], dict(keys, SecretKey="not-" + keys["SecretKey"]), "GET")
        assert status == 403 and "SignatureDoesNotMatch" in body, body
    finally:
        assert s3(gateways[0], keys, "DELETE", bucket)[0] == 204


def read_as_tenant(tenant):
    client = tenant_client(tenant)
    try:
        with client.open_ioctx(tenant + "-volumes") as io:
            return io.read("removal-test")
    finally:
        client.shutdown()


def test_a_quota_change_patches_one_pool(claims):
    rc, out = claims.run(claim(Q, quota=100), R_CLAIM)
    assert rc == 0, failures(out)
    before = everyone()
    rc, out = claims.run(claim(Q, quota=200), R_CLAIM)
    assert rc == 0, failures(out)
    assert written(out) == [("st-pool-a", "CephBlockPool rook-ceph/%s-volumes" % Q, "configured")]
    pools = tenant_objects("st-pool-a", Q)
    assert pools[("cephblockpools", Q + "-volumes")]["spec"]["quotas"] == {"maxSize": "200Gi"}
    # The claim's quota is the real pool's.
    assert ceph_pools("st-pool-a")[Q + "-volumes"]["quota_max_bytes"] == 200 * 1024 ** 3
    after = everyone()
    changed = sorted(key for tenant in after for key in after[tenant] if after[tenant][key] != before[tenant].get(key))
    assert changed == [("st-pool-a", "cephblockpools", Q + "-volumes")]


def test_a_new_key_from_rook_reaches_the_control_plane(claims):
    """Rook makes a new key for a CephClient made anew (uid): the next run copies it, nothing else."""
    rc, out = claims.run(claim(Q, quota=200))
    assert rc == 0, failures(out)
    old = rook_key("st-pool-a", "openstack-" + Q)
    lab_kubectl("st-pool-a", "-n", "rook-ceph", "delete", "cephclient", "openstack-" + Q, "--wait=true")
    rc, out = claims.run(claim(Q, quota=200))
    assert rc == 0, failures(out)
    new = rook_key("st-pool-a", "openstack-" + Q)
    assert new != old
    assert copied_key("openstack-" + Q, "ceph-client-" + Q) == rook_user_and_key("st-pool-a", "openstack-" + Q)
    assert copied_key("openstack-" + Q, "ceph-client-" + Q)["userKey"] == new
    assert written(out) == [("st-pool-a", "CephClient rook-ceph/openstack-" + Q, "created")]


def test_a_second_storage_pool_adds_its_pools_and_a_second_cinder_backend(claims):
    rc, out = claims.run(claim(Q, quota=200))
    assert rc == 0, failures(out)
    first_pool = spec_state(Q)
    others = [spec_state(t) for t in ("lab-tenant-a", "lab-tenant-b", R)]
    rc, out = claims.run(claim(Q, pools=("st-pool-a", "st-pool-b"), quota=200))
    assert rc == 0, failures(out)
    assert sorted(tenant_objects("st-pool-b", Q)) == [("cephblockpools", Q + "-volumes"),
                                                      ("cephclients", "openstack-" + Q)]
    assert all(obj["status"]["phase"] == "Ready" for obj in tenant_objects("st-pool-b", Q).values())
    assert copied_key("openstack-" + Q, "ceph-client-%s-st-pool-b" % Q) == rook_user_and_key(
        "st-pool-b", "openstack-" + Q)
    cinder = control_plane_objects(Q)[("controlplanes.c5c3.io", Q)]["spec"]["openstack"]["cinder"]
    assert len(cinder["backends"]) == 2, cinder["backends"]
    assert len(set(b["name"] for b in cinder["backends"])) == 2
    assert_monitors_are_rooks(control_plane_objects(Q)[("controlplanes.c5c3.io", Q)])  # each its own pool's
    # What the first pool holds and the ControlPlane's other sections stay as they were.
    now = spec_state(Q)
    changed = sorted(key for key in now if now[key] != first_pool.get(key))
    assert [key for key in changed if key[0] == "st-pool-a"] == [], changed
    assert [key for key in changed if key[0] == REGION_HOST] == [
        (REGION_HOST, "controlplanes.c5c3.io", Q), (REGION_HOST, "secrets", "ceph-client-%s-st-pool-b" % Q)], changed
    assert [spec_state(t) for t in ("lab-tenant-a", "lab-tenant-b", R)] == others


def test_a_new_claim_on_the_same_pools_leaves_the_others_untouched(claims):
    first = claim(Q, pools=("st-pool-a", "st-pool-b"), quota=200)
    rc, out = claims.run(first, R_CLAIM)
    assert rc == 0, failures(out)
    before = dict((t, spec_state(t)) for t in (Q, R))
    rc, out = claims.run(first, R_CLAIM, claim(S, pools=("st-pool-b", "st-pool-a")))
    assert rc == 0, failures(out)
    assert written(out) and all(host in (REGION_HOST, "st-pool-a", "st-pool-b") and S in name
                                for host, name, _result in written(out)), written(out)
    assert dict((t, spec_state(t)) for t in (Q, R)) == before
    assert sorted(tenant_objects("st-pool-b", S)) == [
        ("cephblockpools", S + "-ephemeral"), ("cephblockpools", S + "-images"), ("cephblockpools", S + "-volumes"),
        ("cephclients", "openstack-" + S)]
    assert sorted(tenant_objects("st-pool-a", S)) == [("cephblockpools", S + "-volumes"),
                                                      ("cephclients", "openstack-" + S)]


def test_a_failing_pool_fails_the_run_naming_tenant_pool_and_rooks_message(claims):
    every = (claim(Q, pools=("st-pool-a", "st-pool-b"), quota=200), R_CLAIM, claim(S, pools=("st-pool-b", "st-pool-a")))
    with standins_restored():
        update_standins(lambda d: d.setdefault("failures", {}).update({
            "CephBlockPool/rook-ceph/%s-images" % S: {"message": ROOK_ERROR}}))
        wait_truthy(lambda: tenant_objects("st-pool-b", S)[("cephblockpools", S + "-images")]["status"]["phase"]
                    == "Failure", "Rook reports the failure")
        rc, out = claims.run(*every, tenants_ceph_wait_timeout=20)
        assert rc != 0
        failed = failures(out)
        assert [host for _task, host, _msg in failed] == ["st-pool-b"], failed
        message = failed[0][2]
        assert "CephBlockPool rook-ceph/%s-images" % S in message, message
        assert ROOK_ERROR in message, message
    rc, out = claims.run(*every)
    assert rc == 0, failures(out)


def test_removal_releases_the_filesystem_and_object_store_data_then_deletes_only_that_tenant(claims, tmp_path):
    first = tenant_objects("st-pool-a", Q)
    assert sorted(kind for kind, _name in first) == ["cephblockpools"] * 3 + [
        "cephclients", "cephfilesystems", "cephobjectstores", "cephobjectstoreusers"]
    assert first[("cephfilesystems", Q + "-cephfs")]["spec"]["preserveFilesystemOnDelete"] is True
    assert first[("cephobjectstores", Q + "-rgw")]["spec"]["preservePoolsOnDelete"] is True
    assert all(obj["status"]["phase"] == "Ready" for obj in first.values()), first
    # The lab's tenants and R converged long before: their objects' resourceVersions stay; S's ControlPlane may
    # still get status from its operator, so its uids and generations.
    versions = dict((t, tenant_state(t)) for t in ("lab-tenant-a", "lab-tenant-b", R))
    others = dict((t, spec_state(t)) for t in ("lab-tenant-a", "lab-tenant-b", R, S))
    # In the real Ceph: Q's pools and user on both storage pools, and an object of lab-tenant-a's written with its key.
    assert {Q + "-volumes"} <= set(ceph_pools("st-pool-a")) and Q + "-volumes" in ceph_pools("st-pool-b")
    assert all("client.openstack-" + Q in ceph_users(pool) for pool in ("st-pool-a", "st-pool-b"))
    write_as_tenant("lab-tenant-a", b"kept")
    # A volume of Q's: Rook deletes a pool that holds images only when asked to force it.
    rbd_as_tenant(Q, "create", "--no-progress", "--size", "8M", "%s-volumes/volume-1" % Q, tmp_path=tmp_path)
    assert rbd_as_tenant(Q, "ls", "%s-volumes" % Q, tmp_path=tmp_path).split() == ["volume-1"]
    assert_the_object_users_keys_work_at_its_gateways(Q)
    rc, out = play(REMOVE_PLAY, "-e", "tenant=%s" % Q, "-e", "confirm=%s" % Q, "-e", "allow_data_loss=true")
    assert rc == 0, failures(out)
    steps = task_results(out, "Delete the tenant step by step")[REGION_HOST]["results"]
    by_step = dict((item["item"]["step"] + "@" + item["item"]["cluster"], item) for item in steps)
    release = by_step["release-data@st-pool-a"]
    assert sorted((r["kind"], r["result"]) for r in release["results"]) == [("CephBlockPool", "configured")] * 3 + [
        ("CephFilesystem", "configured"), ("CephObjectStore", "configured")]
    # Reverse dependency order: K-ORC's objects, the ControlPlane with its Keystone, the key's copy, the client,
    # then the data (released first), then the namespace. Q has a catalog (the region's build bootstrapped it).
    # Q is on both storage pools since test_a_failing_pool_fails_the_run_naming_tenant_pool_and_rooks_message.
    assert list(by_step) == [
        "k-orc@" + REGION_HOST, "control-plane@" + REGION_HOST, "ceph-client-secrets@" + REGION_HOST,
        "ceph-clients@st-pool-a", "ceph-clients@st-pool-b", "release-data@st-pool-a", "release-data@st-pool-b",
        "ceph-pools@st-pool-a", "ceph-pools@st-pool-b", "namespace@" + REGION_HOST], list(by_step)
    assert {"Endpoint", "Service", "User"} <= set(r["kind"] for r in by_step["k-orc@" + REGION_HOST]["results"])
    assert sorted(r["kind"] for r in by_step["control-plane@" + REGION_HOST]["results"]) == ["ControlPlane", "Keystone"]
    assert tenant_state(Q) == {}
    assert copied_key("openstack-" + Q, "ceph-client-" + Q) is None
    assert dict((t, spec_state(t)) for t in ("lab-tenant-a", "lab-tenant-b", R, S)) == others
    assert dict((t, tenant_state(t)) for t in ("lab-tenant-a", "lab-tenant-b", R)) == versions
    # Ceph lost Q's pools and cephx user on both storage pools; the others' pools, users and objects are there.
    for pool in ("st-pool-a", "st-pool-b"):
        wait_truthy(lambda pool=pool: not [p for p in ceph_pools(pool) if p.startswith(Q + "-")], "%s's pools gone" % Q)
        wait_truthy(lambda pool=pool: "client.openstack-" + Q not in ceph_users(pool), "%s's user gone" % Q)
        assert not [d for d in ceph.Cluster(pool).rgws() if d.startswith(Q.replace("-", ".") + ".")]
        assert "client.openstack-" + R in ceph_users(pool)
    assert {"lab-tenant-a-volumes", "lab-tenant-b-volumes", R + "-volumes"} <= set(ceph_pools("st-pool-a"))
    assert read_as_tenant("lab-tenant-a") == b"kept"
    # Removing what is gone deletes nothing.
    rc, out = play(REMOVE_PLAY, "-e", "tenant=%s" % Q, "-e", "confirm=%s" % Q)
    assert rc == 0, failures(out)
    assert all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
