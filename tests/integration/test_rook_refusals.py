# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What rook-ceph v1.17.9 refuses, the lab's Rook stand-in (lab/regionlab/standins/rook.py) refuses, with Rook's
phase, conditions and messages (issue 45):

- a CephObjectStore with a securePort and no certificate: phase Failure, "... no TLS certificates found"
  (object/spec.go generateVolumeSourceWithTLSSecret), its users ReconcileFailed ("no rgw pod found");
- a CephObjectStore name longer than 38 characters: Progressing, the error in a ReconcileFailed event only
  (apis/ceph.rook.io/v1/object.go ValidateObjectSpec, object/rgw.go validateStore);
- a CephBlockPool that CephBlockPoolRadosNamespaces name is not deleted, force-deletion or not
  (pool/controller.go handleDeletionBlocked, pool/dependents.go).

The objects are the tests' own (named fidelity-*, without the tenants' labels, so that no tenant test counts them),
in rook-ceph of st-pool-a beside the region's, whose CephCluster is Ready; each test removes what it made. The
collection's side (no securePort in the tenants' stores, claim names Rook accepts) is in test_tenants.py.
"""

import json
import sys

from conftest import REPO, get_object, kubectl, lab_kubectl, wait_truthy
from regionlab import ceph, config

# The collection imports itself by its collection path: the checkout's symlink under .cache.
COLLECTIONS = str(REPO / ".cache" / "collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
# pylint: disable=wrong-import-position
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate  # noqa: E402

POOL, NAMESPACE = "st-pool-a", "rook-ceph"
# As the composition writes pools on the lab's one-Node storage pools (ceph.failure_domain osd).
REPLICATED = {"failureDomain": "osd", "replicated": {"size": 3}}


def rook(kind, name, spec):
    return {"apiVersion": "ceph.rook.io/v1", "kind": kind, "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": spec}


def create(*manifests):
    kubectl(config.STATE / "kubeconfig" / ("%s.yaml" % POOL), "create", "-f", "-",
            stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(manifests)}))


def found(resource, name):
    return get_object(POOL, "-n", NAMESPACE, resource, name)


def status(resource, name):
    return (found(resource, name) or {}).get("status") or {}


def conditions(resource, name):
    return dict((c["type"], (c["status"], c["reason"], c["message"])) for c in status(resource, name).get("conditions")
                or [])


def rook_events(name):
    """The messages of Rook's ReconcileFailed events about an object of rook-ceph."""
    listed = get_object(POOL, "-n", NAMESPACE, "events", "--field-selector", "involvedObject.name=" + name,
                        missing_ok=False)
    return [e["message"] for e in listed["items"] if e.get("reason") == "ReconcileFailed"]


def remove(*objects):
    """[(resource, name)] deleted and waited for until gone (Rook's finalizers run first)."""
    for resource, name in objects:
        lab_kubectl(POOL, "-n", NAMESPACE, "delete", resource, name, "--wait=false", "--ignore-not-found")
    for resource, name in objects:
        wait_truthy(lambda resource=resource, name=name: found(resource, name) is None, "%s %s gone" % (resource, name),
                    timeout=120)


def ceph_pools():
    return [p["pool_name"] for p in ceph.Cluster(POOL).command("osd pool ls", detail="detail")]


def gateways_of(store):
    return [d for d in ceph.Cluster(POOL).rgws() if d.startswith(store.replace("-", ".") + ".")]


def test_rook_refuses_secure_port_without_certificate(region):
    store, user = "fidelity-tls-rgw", "fidelity-tls-user"
    create(rook("CephObjectStore", store, {"metadataPool": REPLICATED, "dataPool": REPLICATED,
                                           "gateway": {"port": 80, "securePort": 443, "instances": 1}}),
           rook("CephObjectStoreUser", user, {"store": store, "displayName": "fidelity"}))
    try:
        wait_truthy(lambda: status("cephobjectstores", store).get("phase") == "Failure", "Rook's Failure", timeout=120)
        # setFailedStatus: no observedGeneration, no info; the endpoints from the spec. The engine's waits fail at once.
        failed = found("cephobjectstores", store)
        assert "observedGeneration" not in failed["status"] and "info" not in failed["status"], failed["status"]
        assert failed["status"]["endpoints"]["secure"] == ["https://rook-ceph-rgw-%s.rook-ceph.svc:443" % store]
        assert evaluate(failed).terminal
        assert rook_events(store) == [
            'failed to reconcile CephObjectStore "rook-ceph/%s". failed to create object store deployments: failed to '
            'create object store "%s": failed to start rgw pods: failed to create rgw deployment: no TLS certificates '
            'found' % (store, store)]
        # Rook made the pools before the gateways' Deployment refused; no gateway runs, so the user gets no keys.
        assert store + ".rgw.buckets.data" in ceph_pools() and gateways_of(store) == []
        wait_truthy(lambda: rook_events(user), "Rook's event about the user")
        assert rook_events(user) == ['failed to reconcile CephObjectStoreUser "rook-ceph/%s". failed to detect if '
                                     'object store "%s" is initialized: no rgw pod found' % (user, store)]
        assert status("cephobjectstoreusers", user) == {"phase": "ReconcileFailed"}
        assert found("secrets", "rook-ceph-object-user-%s-%s" % (store, user)) is None
    finally:
        remove(("cephobjectstoreusers", user), ("cephobjectstores", store))
    assert not [p for p in ceph_pools() if p.startswith(store + ".")]


def test_rook_refuses_object_store_names_longer_than_38_characters(region):
    store = "fidelity-" + "x" * 26 + "-rgw"
    assert len(store) == 39
    create(rook("CephObjectStore", store, {"metadataPool": REPLICATED, "dataPool": REPLICATED,
                                           "gateway": {"port": 80, "instances": 1}}))
    try:
        wait_truthy(lambda: rook_events(store), "Rook's event about the store", timeout=120)
        assert rook_events(store) == [
            'failed to reconcile CephObjectStore "rook-ceph/%s". invalid object store "%s" arguments: object store '
            'name cannot be longer than 38 characters' % (store, store)]
        # validateStore refuses before anything is made: Progressing (not terminal, Rook retries), nothing in Ceph.
        refused = found("cephobjectstores", store)
        assert refused["status"]["phase"] == "Progressing" and "observedGeneration" not in refused["status"]
        verdict = evaluate(refused)
        assert not verdict.ready and not verdict.terminal
        assert not [p for p in ceph_pools() if p.startswith(store)] and gateways_of(store) == []
    finally:
        remove(("cephobjectstores", store))


def test_rook_keeps_a_block_pool_that_a_rados_namespace_names_even_with_force_deletion(region):
    pool, namespace = "fidelity-held-volumes", "fidelity-held-ns"
    create(rook("CephBlockPool", pool, REPLICATED))
    try:
        wait_truthy(lambda: status("cephblockpools", pool).get("phase") == "Ready", "the pool Ready", timeout=120)
        ceph.Cluster(POOL).rbd("create", "--no-progress", "--size", "8M", "%s/volume-1" % pool)
        create(rook("CephBlockPoolRadosNamespace", namespace, {"blockPoolName": pool}))
        lab_kubectl(POOL, "-n", NAMESPACE, "delete", "cephblockpool", pool, "--wait=false")
        held = {
            "PoolDeletionIsBlocked": ("True", "PoolNotEmpty",
                                      'pool "%s" contains images or snapshots and cannot be deleted' % pool),
            "DeletionIsBlocked": ("True", "ObjectHasDependents",
                                  'CephBlockPool "rook-ceph/%s" will not be deleted until all dependents are removed: '
                                  'CephBlockPoolRadosNamespaces: [%s]' % (pool, namespace))}
        wait_truthy(lambda: conditions("cephblockpools", pool) == held, "Rook's conditions holding the pool")
        # Force deletion: Rook's clean-up removes the images; the RADOS namespace still holds the pool.
        lab_kubectl(POOL, "-n", NAMESPACE, "annotate", "cephblockpool", pool, "rook.io/force-deletion=true")
        wait_truthy(lambda: conditions("cephblockpools", pool).get("PoolDeletionIsBlocked", ("",))[0] == "False",
                    "the images removed")
        assert conditions("cephblockpools", pool)["DeletionIsBlocked"] == held["DeletionIsBlocked"]
        assert ceph.Cluster(POOL).rbd_usage(pool) == (0, 0) and pool in ceph_pools()
        assert found("cephblockpools", pool) is not None
        # The namespace gone, the pool goes: in Ceph, then its CR.
        lab_kubectl(POOL, "-n", NAMESPACE, "delete", "cephblockpoolradosnamespace", namespace)
        wait_truthy(lambda: found("cephblockpools", pool) is None, "the pool's CR gone", timeout=120)
        assert pool not in ceph_pools()
    finally:
        lab_kubectl(POOL, "-n", NAMESPACE, "delete", "cephblockpoolradosnamespace", namespace, "--ignore-not-found")
        lab_kubectl(POOL, "-n", NAMESPACE, "annotate", "--overwrite", "cephblockpool", pool,
                    "rook.io/force-deletion=true", check=False)
        remove(("cephblockpools", pool))
