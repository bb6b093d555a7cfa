# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase 7 with the claims on the management cluster (tenants_claims_source=management_cluster).

On the session's converged region: the claims' CRD is installed by the run (not in check mode), a new tenant's
claim applied to the management cluster converges and its status says Synced and Ready, an invalid claim gets
its problems in its status and nothing of it is applied (by default nothing at all), a re-run changes nothing.
The tenant is removed and the claims deleted at the end; the lab's own tenants (directory) are untouched.
"""

import json

import pytest

from conftest import REPO, failures, get_object, kubectl, lab_kubectl, run_playbook, task_results
from regionlab import config, processes
from regionlab import kube as labkube
from test_tenants import spec_state, tenant_state

TENANTS_PLAY = REPO / "playbooks" / "tenants.yml"
REMOVE_PLAY = REPO / "playbooks" / "tenant_remove.yml"
MGMT = "management-cluster"
CRD = "openstackclusters.c5c3.io"
SOURCE = ("-e", "tenants_claims_source=management_cluster")
GOOD = ("tenant-lab-m", "lab-tenant-m")
BAD = ("tenant-lab-x", "lab-tenant-x")
LAB_TENANTS = ("lab-tenant-a", "lab-tenant-b")


def claim(namespace, name, **spec):
    body = {"region": "lab", "size": "small", "hypervisorClusters": ["hv-pool-a"], "storageClusters": ["st-pool-a"]}
    body.update(spec)
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": "OpenStackCluster",
            "metadata": {"name": name, "namespace": namespace}, "spec": body}


# The XRD admits it (so does the CRD); the collection's rules do not: an unknown storage pool, an image pool
# replication above 5.
INVALID = claim(*BAD, storageClusters=["st-pool-zz"], storage={"ceph": {"imagePool": {"replication": 7}}})
BAD_FIELDS = ("spec.storageClusters[0]", "spec.storage.ceph.imagePool.replication")


def play(playbook, *args):
    return run_playbook(playbook, *args, COBALTCORE_LAB_DIR=str(config.STATE))


def live_claim(namespace, name):
    return get_object(MGMT, "-n", namespace, "openstackclusters.c5c3.io", name)


def conditions(namespace, name):
    return dict((c["type"], c) for c in (live_claim(namespace, name).get("status") or {}).get("conditions") or [])


def kubectl_apply(obj):
    """As Flux applies a claim: server-side, its own field manager."""
    return kubectl(config.STATE / "kubeconfig" / ("%s.yaml" % MGMT), "apply", "--server-side",
                   "--field-manager=flux-test", "-f", "-", stdin=json.dumps(obj), check=False)


def apply_claims(*claims):
    for obj in claims:
        lab_kubectl(MGMT, "create", "namespace", obj["metadata"]["namespace"], check=False)
        proc = kubectl_apply(obj)
        assert proc.returncode == 0, proc.stderr


def restore_lab_crd():
    """The lab's own claim CRD (hand-written, as Crossplane makes it from the XRD) instead of the collection's."""
    cluster = config.cluster(MGMT)
    lab_kubectl(MGMT, "delete", "crd", CRD, "--ignore-not-found", "--wait=true", "--timeout=120s")
    labkube.apply_files(cluster, labkube.crd_files(cluster))
    processes.wait_until(lambda: not labkube.crds_not_established(cluster), 120, "CRDs of %s Established" % MGMT)


@pytest.fixture(scope="module")
def management(region):
    """A management cluster without the claims' CRD (so without claims) at the start; at the end the tenant is
    removed, the claims deleted and the lab's own CRD back."""
    lab_kubectl(MGMT, "delete", "crd", CRD, "--ignore-not-found", "--wait=true", "--timeout=120s")
    lab_before = [spec_state(t) for t in LAB_TENANTS]
    yield lab_before
    for namespace, _name in (GOOD, BAD):
        lab_kubectl(MGMT, "delete", "namespace", namespace, "--ignore-not-found", "--wait=false")
    rc, out = 0, None
    if tenant_state(GOOD[1]):  # the removal test removes it; only a failed one leaves it
        rc, out = play(REMOVE_PLAY, "-e", "tenant=%s" % GOOD[1], "-e", "confirm=%s" % GOOD[1],
                       "-e", "allow_data_loss=true", *SOURCE)
    restore_lab_crd()
    assert rc == 0, failures(out)


def test_check_mode_installs_nothing_and_the_run_installs_the_crd(management):
    rc, out = play(TENANTS_PLAY, "--check", *SOURCE)
    assert rc == 0, failures(out)
    assert get_object(MGMT, "crd", CRD) is None
    rc, out = play(TENANTS_PLAY, *SOURCE)
    assert rc == 0, failures(out)
    crd = json.loads(lab_kubectl(MGMT, "get", "crd", CRD, "-o", "json").stdout)
    assert dict((c["type"], c["status"]) for c in crd["status"]["conditions"])["Established"] == "True"
    version = crd["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}}
    assert [c["name"] for c in version["additionalPrinterColumns"]] == ["REGION", "SIZE", "SYNCED", "READY", "AGE"]
    # The API server refuses what the XRD refuses.
    lab_kubectl(MGMT, "create", "namespace", GOOD[0], check=False)
    proc = kubectl_apply(claim(*GOOD, size="huge"))
    assert proc.returncode != 0 and "size" in proc.stderr
    assert live_claim(*GOOD) is None


def test_an_invalid_claim_gets_its_problems_and_nothing_is_applied(management):
    apply_claims(claim(*GOOD), INVALID)
    rc, out = play(TENANTS_PLAY, *SOURCE)
    assert rc != 0
    messages = " ".join(msg or "" for _t, _h, msg in failures(out))
    for field in BAD_FIELDS:
        assert "%s/%s %s" % (BAD + (field,)) in messages, messages
    bad = conditions(*BAD)
    assert (bad["Synced"]["status"], bad["Synced"]["reason"]) == ("False", "ReconcileError")
    for field in BAD_FIELDS:
        assert field in bad["Synced"]["message"], bad["Synced"]
    assert bad["Synced"]["observedGeneration"] == live_claim(*BAD)["metadata"]["generation"]
    assert (bad["Ready"]["status"], bad["Ready"]["reason"]) == ("False", "Creating")
    # The valid claim is held back by default, and told so without naming the other tenant.
    held = conditions(*GOOD)["Synced"]
    assert (held["status"], held["reason"]) == ("False", "ReconcileError") and "another claim" in held["message"]
    assert BAD[1] not in held["message"]
    assert tenant_state(GOOD[1]) == {} and tenant_state(BAD[1]) == {}


def test_the_valid_claim_converges_and_says_ready(management):
    rc, out = play(TENANTS_PLAY, "-e", "tenants_claims_apply_valid=true", *SOURCE)
    assert rc == 0, failures(out)
    state = tenant_state(GOOD[1])
    assert ("lab-control-plane", "controlplanes.c5c3.io", GOOD[1]) in state
    for resource, name in (("cephblockpools", GOOD[1] + "-volumes"), ("cephclients", "openstack-" + GOOD[1])):
        assert ("st-pool-a", resource, name) in state, sorted(state)
    good = conditions(*GOOD)
    assert (good["Synced"]["status"], good["Synced"]["reason"]) == ("True", "ReconcileSuccess")
    assert (good["Ready"]["status"], good["Ready"]["reason"]) == ("True", "Available"), good["Ready"]
    assert good["Ready"]["observedGeneration"] == live_claim(*GOOD)["metadata"]["generation"]
    # The invalid one still says why, and nothing of it exists.
    assert conditions(*BAD)["Synced"]["status"] == "False"
    assert tenant_state(BAD[1]) == {}
    printed = lab_kubectl(MGMT, "-n", GOOD[0], "get", "openstackclusters.c5c3.io", GOOD[1]).stdout.split("\n")[1].split()
    assert printed[1:5] == ["lab", "small", "True", "True"], printed


def test_a_rerun_changes_nothing(management):
    before = dict((key, live_claim(*key)["metadata"]["resourceVersion"]) for key in (GOOD, BAD))
    times = dict((key, dict((t, c["lastTransitionTime"]) for t, c in conditions(*key).items())) for key in (GOOD, BAD))
    rc, out = play(TENANTS_PLAY, "-e", "tenants_claims_apply_valid=true", *SOURCE)
    assert rc == 0, failures(out)
    assert all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    assert dict((key, live_claim(*key)["metadata"]["resourceVersion"]) for key in (GOOD, BAD)) == before
    assert dict((key, dict((t, c["lastTransitionTime"]) for t, c in conditions(*key).items()))
                for key in (GOOD, BAD)) == times


def test_removal_reads_the_claim_from_the_management_cluster(management):
    rc, out = play(REMOVE_PLAY, "-e", "tenant=%s" % GOOD[1], "-e", "confirm=%s" % GOOD[1],
                   "-e", "allow_data_loss=true", *SOURCE)
    assert rc == 0, failures(out)
    said = [r.get("msg") for r in task_results(out, "Say that the claim is still there").values() if not r.get("skipped")]
    assert said and "%s/%s is still on the management cluster" % GOOD in said[0], said
    assert tenant_state(GOOD[1]) == {}
    # The lab's own tenants (the tenants directory) were never touched.
    assert [spec_state(t) for t in LAB_TENANTS] == management
