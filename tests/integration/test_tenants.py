# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase 7: the region's four tenants (the lab's two and the tests' two, conftest.TEST_CLAIMS) on the shared
region, and the removal's guards.

The region fixture runs site.yml (phase 7 last) with -vvv, then again; the Ceph objects' status and Secrets are
the Rook stand-in's (lab/regionlab/standins/rook.py, upstream rook-ceph's shapes), the ControlPlanes' children
the c5c3-operator stand-in's. test_tenants_changes.py changes the tests' two tenants, removes one, and removes
both at its end.
"""

import base64
import json
import time

from conftest import (REGION_HOST, REGION_NAMESPACE, REPO, TENANT_Q, TENANT_R, failures, get_object, keystone_admin,
                      keystone_endpoint, kubectl, lab_kubectl, objects, play_seconds, run_playbook, secrets_of,
                      task_results, tenant_claim, token_status, write_claims)
from regionlab import config

TENANTS_PLAY = REPO / "playbooks" / "tenants.yml"
REMOVE_PLAY = REPO / "playbooks" / "tenant_remove.yml"
POOLS = ("st-pool-a", "st-pool-b")
ROOK_KINDS = ("cephblockpools", "cephclients", "cephfilesystems", "cephobjectstores", "cephobjectstoreusers")
LAB_TENANTS = ("lab-tenant-a", "lab-tenant-b")
TENANTS = LAB_TENANTS + (TENANT_Q, TENANT_R)  # the region's (the lab's claims and conftest.TEST_CLAIMS)
RBD = ("volumes", "images", "ephemeral")


def rbd_pools(tenant, kinds=RBD):
    return ["%s-%s" % (tenant, kind) for kind in kinds]


# What the composition puts where for the region's claims (docs/tenants.md): a tenant's first storage pool
# gets its three RBD pools, every further one its volumes (tiered pools); CephFS and the object store go to
# the first.
EXPECTED = {
    "st-pool-a": {
        "cephblockpools": sorted(rbd_pools("lab-tenant-a") + rbd_pools("lab-tenant-b") + rbd_pools(TENANT_Q)
                                 + rbd_pools(TENANT_R, ("volumes",))),
        "cephclients": sorted("openstack-" + t for t in TENANTS),
        "cephfilesystems": ["lab-tenant-b-cephfs", TENANT_Q + "-cephfs"],
        "cephobjectstores": [TENANT_Q + "-rgw"],
        "cephobjectstoreusers": ["swift-" + TENANT_Q],
    },
    "st-pool-b": {
        "cephblockpools": sorted(rbd_pools("lab-tenant-b", ("volumes",)) + rbd_pools(TENANT_R)),
        "cephclients": ["openstack-lab-tenant-b", "openstack-" + TENANT_R],
    },
}
# (storage pool, tenant) -> the RBD pools its client may use there, in order.
CLIENT_POOLS = {
    ("st-pool-a", "lab-tenant-a"): rbd_pools("lab-tenant-a"),
    ("st-pool-a", "lab-tenant-b"): rbd_pools("lab-tenant-b"),
    ("st-pool-b", "lab-tenant-b"): rbd_pools("lab-tenant-b", ("volumes",)),
    ("st-pool-a", TENANT_Q): rbd_pools(TENANT_Q),
    ("st-pool-b", TENANT_R): rbd_pools(TENANT_R),
    ("st-pool-a", TENANT_R): rbd_pools(TENANT_R, ("volumes",)),
}
CAPS = dict(((pool, "openstack-" + tenant), ", ".join("profile rbd pool=%s" % p for p in pools))
            for (pool, tenant), pools in CLIENT_POOLS.items())
# (storage pool, client) -> the Secret the control plane gets: its first storage pool's keeps the seed's name.
COPIES = {
    ("st-pool-a", "openstack-lab-tenant-a"): ("openstack-lab-tenant-a", "ceph-client-lab-tenant-a"),
    ("st-pool-a", "openstack-lab-tenant-b"): ("openstack-lab-tenant-b", "ceph-client-lab-tenant-b"),
    ("st-pool-b", "openstack-lab-tenant-b"): ("openstack-lab-tenant-b", "ceph-client-lab-tenant-b-st-pool-b"),
    ("st-pool-a", "openstack-" + TENANT_Q): ("openstack-" + TENANT_Q, "ceph-client-" + TENANT_Q),
    ("st-pool-b", "openstack-" + TENANT_R): ("openstack-" + TENANT_R, "ceph-client-" + TENANT_R),
    ("st-pool-a", "openstack-" + TENANT_R): ("openstack-" + TENANT_R, "ceph-client-%s-st-pool-a" % TENANT_R),
}
# Each tenant's catalog: what its ControlPlane runs (the XRD's defaults nova, neutron, cinder, glance and
# cortex; nova with placement; a claim with Manila adds manila).
DEFAULT_CATALOG = ["cinder", "cortex", "glance", "keystone", "neutron", "nova", "placement"]
WITH_MANILA = sorted(DEFAULT_CATALOG + ["manila"])
CATALOGS = {"lab-tenant-a": DEFAULT_CATALOG, "lab-tenant-b": WITH_MANILA, TENANT_Q: WITH_MANILA,
            TENANT_R: DEFAULT_CATALOG}
# Phase 7's Keystone steps that talk to Keystone: one module call for every tenant (option clusters).
KEYSTONE_BATCH_TASKS = (
    "Check in each Keystone what the bootstrap created (domain, projects, roles, the admin's role)",
    "Mint K-ORC's application credentials and write their clouds.yaml Secrets",
    "Put the catalogs' endpoints into the region (K-ORC v2.6.0 Endpoints have none)",
    "Grant the service users their roles on the service project (K-ORC v2.6.0 has no RoleAssignment)",
    "Verify the catalogs, the service users and every credential in Keystone",
)
PHASE7_TASKS = ("Apply the tenants' namespaces and ControlPlanes",
                "Apply the tenants' Ceph objects of this storage pool and wait for them")


def rook_monitors(pool):
    """The monitors as Rook lists them in the pool's rook-ceph-mon-endpoints ConfigMap (<mon>=<address>:<port>,...)."""
    config_map = json.loads(lab_kubectl(pool, "get", "configmap", "rook-ceph-mon-endpoints", "-n", "rook-ceph",
                                        "-o", "json").stdout)
    return [entry.split("=", 1)[1] for entry in config_map["data"]["data"].split(",")]


def assert_monitors_are_rooks(cp):
    """The ControlPlane's Ceph section has its first storage pool's monitors, each RBD backend its own pool's."""
    pools = cp["spec"]["storage"]["storageClusters"]
    assert cp["spec"]["storage"]["ceph"]["monitors"] == rook_monitors(pools[0]), cp["metadata"]["namespace"]
    backends = cp["spec"]["openstack"]["cinder"]["backends"]
    assert sorted(b["storageCluster"] for b in backends) == sorted(pools)
    for backend in backends:
        assert backend["monitors"] == rook_monitors(backend["storageCluster"]), backend


def tenant_objects(pool, tenant=None):
    """{(resource, name): object} of the tenants' Rook objects on a storage pool (one tenant's only, if given)."""
    found = {}
    for resource in ROOK_KINDS:
        for obj in objects(pool, resource, "rook-ceph"):
            labels = obj["metadata"].get("labels") or {}
            name = labels.get("c5c3.io/openstack-cluster-name")
            if name and (tenant is None or name == tenant):
                found[(resource, obj["metadata"]["name"])] = obj
    return found


def control_plane_objects(tenant):
    """{(resource, name): object} of one tenant on the control-plane cluster."""
    namespace = "openstack-" + tenant
    found = dict((("namespaces", n["metadata"]["name"]), n) for n in objects(REGION_HOST, "namespaces")
                 if n["metadata"]["name"] == namespace)
    if found:
        for resource in ("controlplanes.c5c3.io", "secrets"):
            for obj in objects(REGION_HOST, resource, namespace):
                if resource != "secrets" or obj["metadata"]["name"].startswith("ceph-client-"):
                    found[(resource, obj["metadata"]["name"])] = obj
    return found


def versions(found):
    return dict((key, obj["metadata"]["resourceVersion"]) for key, obj in found.items())


def tenant_state(tenant):
    state = dict(((REGION_HOST,) + key, value) for key, value in versions(control_plane_objects(tenant)).items())
    for pool in POOLS:
        state.update(((pool,) + key, value) for key, value in versions(tenant_objects(pool, tenant)).items())
    return state


def spec_state(tenant):
    """uid and generation (resourceVersion where there is no generation) of one tenant's objects."""
    found = dict(((REGION_HOST,) + key, obj) for key, obj in control_plane_objects(tenant).items())
    for pool in POOLS:
        found.update(((pool,) + key, obj) for key, obj in tenant_objects(pool, tenant).items())
    return dict((key, (obj["metadata"]["uid"], obj["metadata"].get("generation") or obj["metadata"]["resourceVersion"]))
                for key, obj in found.items())


def rook_key(pool, client):
    return rook_user_and_key(pool, client)["userKey"]


def rook_user_and_key(pool, client):
    secret = json.loads(kubectl(config.STATE / "kubeconfig" / ("%s.yaml" % pool), "-n", "rook-ceph", "get", "secret",
                                "rook-ceph-client-" + client, "-o", "json").stdout)
    return dict((key, secret["data"][key]) for key in ("userID", "userKey"))


def copied_key(namespace, name):
    secret = get_object(REGION_HOST, "-n", namespace, "secret", name)
    return secret["data"] if secret else None


def cp_kubeconfig():
    return config.STATE / "kubeconfig" / ("%s.yaml" % REGION_HOST)


def phase7_tasks(out):
    """{task name: {host: result}} of the keystone_bootstrap role's tasks in phase 7's play."""
    found = {}
    for played in out["plays"]:
        if played["play"]["name"] != "Phase 7 - tenants":
            continue
        for task in played["tasks"]:
            role, _sep, name = task["task"]["name"].rpartition(" : ")
            if role.endswith("keystone_bootstrap"):
                found[name] = task["hosts"]
    return found


def play(playbook, *args):
    return run_playbook(playbook, *args, COBALTCORE_LAB_DIR=str(config.STATE))


def record_versions():
    found = json.loads(lab_kubectl(REGION_HOST, "get", "configmaps", "-A", "--field-selector",
                                   "metadata.name=keystone-bootstrap-verified", "-o", "json").stdout)["items"]
    return dict((c["metadata"]["namespace"], (c["metadata"]["resourceVersion"], c["data"]["digest"])) for c in found)


def test_a_tenant_whose_secret_changed_gets_its_keystone_checked_again_and_only_it(region):
    # A Secret of lab-tenant-b changes (here: an annotation, a new resourceVersion); lab-tenant-a's state does not.
    lab_kubectl(REGION_HOST, "-n", "openstack-lab-tenant-b", "annotate", "--overwrite", "secret", "k-orc-clouds-yaml",
                "example.com/touched=%f" % time.time())
    before = record_versions()
    rc, out = play(TENANTS_PLAY)
    assert rc == 0, failures(out)
    steps = phase7_tasks(out)
    for name in KEYSTONE_BATCH_TASKS:
        result = steps[name][REGION_HOST]
        assert not result.get("skipped"), name
        assert [c["name"].rsplit("-", 1)[-1] for c in result["clusters"]] == ["b"], name
    after = record_versions()
    assert after["openstack-lab-tenant-a"] == before["openstack-lab-tenant-a"]
    assert after["openstack-lab-tenant-b"][1] != before["openstack-lab-tenant-b"][1]


def test_the_lab_tenants_converge(region):
    items = json.loads(lab_kubectl(REGION_HOST, "get", "controlplanes.c5c3.io", "-A", "-o", "json").stdout)["items"]
    cps = dict((cp["metadata"]["namespace"], cp) for cp in items)
    for tenant in TENANTS:
        cp = cps["openstack-" + tenant]
        conditions = dict((c["type"], c["status"]) for c in cp["status"]["conditions"])
        assert conditions["InfrastructureReady"] == "True", (tenant, cp["status"]["conditions"])
        assert cp["spec"]["storage"]["ceph"]["secretRef"] == {"name": "ceph-client-" + tenant, "key": "userKey"}
        # storage.yml's facts (cobaltcore_ceph of each storage pool) reached the ControlPlane as Rook wrote them.
        assert_monitors_are_rooks(cp)
    health = task_results(region.first.out, "Wait for every ControlPlane of the control-plane cluster")[REGION_HOST]
    assert not health.get("failed")
    for pool in POOLS:
        found = tenant_objects(pool)
        by_resource = {}
        for resource, name in found:
            by_resource.setdefault(resource, []).append(name)
        assert dict((r, sorted(n)) for r, n in by_resource.items()) == EXPECTED[pool], pool
        for (resource, name), obj in found.items():
            assert obj["status"]["phase"] == "Ready", (pool, resource, name, obj.get("status"))
            assert name.startswith(obj["metadata"]["labels"]["c5c3.io/openstack-cluster-name"]) or \
                name.endswith(obj["metadata"]["labels"]["c5c3.io/openstack-cluster-name"]), (pool, resource, name)
            if resource == "cephclients":
                assert obj["spec"]["caps"] == {"mon": "profile rbd", "mgr": "profile rbd", "osd": CAPS[(pool, name)]}
    for (pool, client), (namespace, name) in COPIES.items():
        assert copied_key(namespace, name) == rook_user_and_key(pool, client), (pool, client)
        assert base64.b64decode(copied_key(namespace, name)["userID"]).decode() == client


def test_phase7_first_run_and_noop_rerun(region):
    first = dict(play_seconds(region.first.out)).get("Phase 7 - tenants")
    second = dict(play_seconds(region.second.out)).get("Phase 7 - tenants")
    print("\nphase 7: first run %.1fs, no-op re-run %.1fs" % (first, second))
    for name in PHASE7_TASKS:
        for host, result in task_results(region.second.out, name).items():
            if result.get("skipped"):
                continue
            assert not result["changed"], (name, host, result.get("summary"))
            assert set(result["requests"]) <= {"GET"}, (name, host, result["requests"])
    copies = task_results(region.second.out, "Copy the tenants' Ceph users and keys of this storage pool to the control plane")
    for host, result in copies.items():
        for item in result.get("results", []):
            assert not item["changed"] and set(item["requests"]) <= {"GET"}, (host, item["requests"])
            assert [r["result"] for r in item["results"]] == ["unchanged"] * len(item["results"])


def test_a_rerun_that_asks_every_keystone_writes_nothing(region):
    """With tenants_keystone_recheck=always every tenant's Keystone is checked and verified, whatever the records
    say; the region's tenants converged, so nothing is written."""
    before = [tenant_state(t) for t in TENANTS]
    rc, out = play(TENANTS_PLAY, "-e", "cobaltcore_tenants_dir=%s" % region.tenants_dir,
                   "-e", "tenants_keystone_recheck=always")
    assert rc == 0, failures(out)
    for name in KEYSTONE_BATCH_TASKS:
        result = phase7_tasks(out)[name][REGION_HOST]
        assert len(result["clusters"]) == len(TENANTS), (name, result.get("msg"))
    stats = out["stats"]
    assert all(s["changed"] == 0 for s in stats.values()), stats
    after = [tenant_state(t) for t in TENANTS]
    assert after == before


def test_no_ceph_key_in_the_verbose_run(region):
    for (pool, client) in COPIES:
        encoded = rook_key(pool, client)
        for secret in (encoded, base64.b64decode(encoded).decode()):
            assert secret not in region.first.text, "the Ceph key of %s on %s appears in the -vvv run" % (client, pool)
    # The object store user's S3 keys (Rook's rook-ceph-object-user-<store>-<user>), which phase 7 waits on.
    users = [s for s in objects("st-pool-a", "secrets", "rook-ceph")
             if s["metadata"]["name"].startswith("rook-ceph-object-user-")]
    assert users, "no object store user Secret on st-pool-a"
    for user in users:
        for key in ("AccessKey", "SecretKey"):
            value = base64.b64decode(user["data"][key]).decode()
            assert len(value) >= 16 and value not in region.first.text, (user["metadata"]["name"], key)


def test_every_tenant_has_its_own_keystone_with_the_catalog_of_its_control_plane(region):
    urls = {REGION_NAMESPACE: keystone_endpoint(cp_kubeconfig())}
    for tenant in TENANTS:
        namespace = "openstack-" + tenant
        urls[namespace] = keystone_endpoint(cp_kubeconfig(), namespace)
        admin = keystone_admin(cp_kubeconfig(), namespace)
        services = dict((s.id, s.name) for s in admin.identity.services())
        assert sorted(services.values()) == CATALOGS[tenant], tenant
        # Every service's public and internal endpoint, in the region (inventory cobaltcore_region: lab).
        endpoints = sorted((services[e.service_id], e.interface) for e in admin.identity.endpoints()
                           if e.region_id == "lab")
        for service in CATALOGS[tenant]:
            assert (service, "public") in endpoints and (service, "internal") in endpoints, (tenant, service)
        users = sorted(u.name for u in admin.identity.users(domain_id="default"))
        assert users == sorted(["admin"] + [n for n in CATALOGS[tenant] if n != "keystone"]), tenant
    assert len(set(urls.values())) == 1 + len(TENANTS) and all(urls.values()), urls


def test_each_tenants_credentials_get_a_token_from_its_own_keystone_only(region):
    urls = dict((namespace, keystone_endpoint(cp_kubeconfig(), namespace))
                for namespace in (REGION_NAMESPACE,) + tuple("openstack-" + t for t in TENANTS))
    for tenant in TENANTS:
        namespace = "openstack-" + tenant
        secrets = secrets_of(cp_kubeconfig(), namespace)
        for secret, cloud in (("k-orc-clouds-yaml", "openstack"), ("glance-keystone-credentials", "glance"),
                              ("nova-keystone-credentials", "nova")):
            clouds_yaml = secrets[secret]["clouds.yaml"]
            for where, url in urls.items():
                status = token_status(url, clouds_yaml, cloud)
                if where == namespace:
                    assert status == 201, (tenant, secret, where)
                else:
                    assert status in (401, 404), (tenant, secret, where, status)


def test_phase7_bootstraps_every_tenant_with_one_call_per_step_and_reruns_as_a_noop(region):
    first, second = phase7_tasks(region.first.out), phase7_tasks(region.second.out)
    for name in KEYSTONE_BATCH_TASKS:
        result = first[name][REGION_HOST]
        assert not result.get("failed"), (name, result.get("msg"))
        # One entry per tenant (Ansible masks "lab" in them: the region's name is a value of the credential
        # Secrets the modules read, and every value of a Secret read is masked).
        assert len(result["clusters"]) == len(TENANTS) and not any(c.get("failed") for c in result["clusters"])
        assert [c["name"].rsplit("-", 1)[-1] for c in result["clusters"]] == ["a", "b", "q", "r"], name
    for name, hosts in second.items():
        for host, result in hosts.items():
            assert not result.get("changed"), (name, host)
            if "requests" in result and not result.get("skipped"):
                assert set(result["requests"]) <= {"GET"}, (name, host, result["requests"])


def test_no_tenant_keystone_secret_in_the_verbose_run(region):
    for tenant in TENANTS:
        for name, data in secrets_of(cp_kubeconfig(), "openstack-" + tenant).items():
            if name in ("keystone-admin-credentials", "keystone-db-credentials", "k-orc-clouds-yaml") \
                    or name.endswith(("-keystone-user", "-keystone-credentials")):
                for key, value in data.items():
                    if key in ("password", "value", "clouds.yaml"):
                        assert value not in region.first.text, "%s/%s %s appears in the -vvv run" % (tenant, name, key)


def test_removal_refuses_without_confirmation(region):
    before = tenant_state("lab-tenant-a")
    rc, out = play(REMOVE_PLAY, "-e", "tenant=lab-tenant-a", "-e", "confirm=lab-tenant-b")
    assert rc != 0 and any("confirm" in (msg or "") for _t, _h, msg in failures(out)), failures(out)
    assert tenant_state("lab-tenant-a") == before


def test_removal_without_allow_data_loss_deletes_nothing(region):
    before = tenant_state("lab-tenant-a")
    rc, out = play(REMOVE_PLAY, "-e", "tenant=lab-tenant-a", "-e", "confirm=lab-tenant-a")
    assert rc != 0
    messages = " ".join(msg or "" for _t, _h, msg in failures(out))
    for name in ("lab-tenant-a-volumes", "lab-tenant-a-images", "lab-tenant-a-ephemeral"):
        assert "st-pool-a: CephBlockPool rook-ceph/%s" % name in messages
    assert "lab-tenant-b" not in messages
    assert tenant_state("lab-tenant-a") == before


def test_removal_in_check_mode_with_allow_data_loss_writes_nothing(region):
    before = tenant_state("lab-tenant-a")
    rc, out = play(REMOVE_PLAY, "--check", "-e", "tenant=lab-tenant-a", "-e", "confirm=lab-tenant-a",
                   "-e", "allow_data_loss=true")
    assert rc == 0, failures(out)
    steps = task_results(out, "Delete the tenant step by step")[REGION_HOST]["results"]
    # What the run would do: force deletion on the block pools (server dry runs), then the deletions, unwaited.
    release = [r for step in steps if step["item"]["step"] == "release-data" for r in step["results"]]
    assert sorted((r["kind"], r["result"]) for r in release) == [("CephBlockPool", "configured")] * 3, release
    assert all(step["changed"] for step in steps)
    assert tenant_state("lab-tenant-a") == before
    for obj in tenant_objects("st-pool-a", "lab-tenant-a").values():
        assert "rook.io/force-deletion" not in (obj["metadata"].get("annotations") or {}), obj["metadata"]


def test_the_tenants_object_store_serves_http_without_a_secure_port(region):
    """Seed 002's store has securePort 443, which Rook refuses without a certificate ("no TLS certificates found",
    test_rook_refusals.py): the composition leaves it out, so lab-tenant-q's store and its Swift user are Ready, and
    the user's Secret points at the gateways' port 80."""
    found = tenant_objects("st-pool-a", TENANT_Q)
    store = found[("cephobjectstores", TENANT_Q + "-rgw")]
    endpoint = "http://rook-ceph-rgw-%s-rgw.rook-ceph.svc:80" % TENANT_Q
    assert store["spec"]["gateway"] == {"port": 80, "instances": 2}
    assert (store["status"]["phase"], store["status"]["info"]) == ("Ready", {"endpoint": endpoint})
    assert found[("cephobjectstoreusers", "swift-" + TENANT_Q)]["status"]["phase"] == "Ready"
    secret = get_object("st-pool-a", "-n", "rook-ceph", "secret", "rook-ceph-object-user-%s-rgw-swift-%s" % (
        TENANT_Q, TENANT_Q))
    assert base64.b64decode(secret["data"]["Endpoint"]).decode() == endpoint


def test_a_claim_whose_object_store_name_rook_refuses_stops_phase_7_before_any_write(region, tmp_path):
    """Rook refuses a CephObjectStore name over 38 characters (test_rook_refusals.py) and the store is <name>-rgw:
    a claim of 35 characters with the object store is refused with the claim's other problems, nothing written."""
    name = "lab-tenant-with-a-long-object-store"
    long_claim = tenant_claim(name)
    long_claim["spec"]["storage"]["ceph"]["objectStore"] = {"enabled": True}
    long_claim["spec"]["size"] = "huge"
    (tmp_path / "a.yaml").write_text((REPO / "inventories" / "lab" / "tenants" / "lab-tenant-a.yaml").read_text())
    write_claims(tmp_path, [long_claim])
    before = [spec_state(t) for t in LAB_TENANTS]
    rc, out = play(TENANTS_PLAY, "-e", "cobaltcore_tenants_dir=%s" % tmp_path)
    assert rc != 0
    messages = " ".join(msg or "" for _t, _h, msg in failures(out))
    assert ("tenant-%s/%s metadata.name: is 35 characters long; with spec.storage.ceph.objectStore.enabled at most 34 "
            "fit, because Rook refuses its CephObjectStore %s-rgw" % (name, name, name)) in messages, messages
    assert "tenant-%s/%s spec.size" % (name, name) in messages, messages
    assert [spec_state(t) for t in LAB_TENANTS] == before
    assert tenant_state(name) == {}


def test_an_invalid_claim_stops_phase_7_before_any_write(region, tmp_path):
    claims = (REPO / "inventories" / "lab" / "tenants" / "lab-tenant-a.yaml").read_text()
    (tmp_path / "a.yaml").write_text(claims)
    (tmp_path / "b.yaml").write_text(claims.replace("name: lab-tenant-a", "name: lab-tenant-c")
                                     .replace("size: small", "size: huge").replace("st-pool-a", "st-pool-x"))
    # uid and generation: a ControlPlane restored by the test before may still get status from its operator.
    before = [spec_state(t) for t in ("lab-tenant-a", "lab-tenant-b")]
    rc, out = play(TENANTS_PLAY, "-e", "cobaltcore_tenants_dir=%s" % tmp_path)
    assert rc != 0
    messages = " ".join(msg or "" for _t, _h, msg in failures(out))
    assert "tenant-lab-a/lab-tenant-c spec.size" in messages and "spec.storageClusters[0]" in messages, messages
    assert [spec_state(t) for t in ("lab-tenant-a", "lab-tenant-b")] == before
    assert tenant_state("lab-tenant-c") == {}
