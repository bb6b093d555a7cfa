"""The c5c3-operator stand-in's ControlPlane health and its children's operator stand-ins, on the lab.

Two ControlPlanes in namespaces of their own on lab-control-plane (standin-cp-test-<token>-order
and -fail); the CRDs come from phase 3 (the `region` fixture). The test plays the keystone-operator
itself (it writes the Keystone CR's status first, so the stand-in leaves it alone and no real
Keystone is started): the chain is about order and health, not about Keystone. The module sets
short delays and, for the second namespace, a terminal MariaDB failure in standins.yaml, and
restores the file afterwards.
"""

import os
import sys
import time
import uuid

import pytest
import yaml

from conftest import ControlPlaneApi as Api, standins_restored, wait_truthy
from regionlab import config
from regionlab.standins import c5c3

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(REPO, ".cache", "collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
# pylint: disable=wrong-import-position
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import readiness  # noqa: E402

TOKEN = uuid.uuid4().hex[:5]
NS = {"order": "standin-cp-test-%s-order" % TOKEN, "fail": "standin-cp-test-%s-fail" % TOKEN}
C5C3 = "/apis/c5c3.io/v1alpha1"
DELAYS = {"control_plane": 0.0, "keystone": 30.0, "mariadb": 1.5, "rabbitmq": 1.0, "valkey": 1.0, "memcached": 0.5,
          "service": 0.5}
FAILURE = {"reason": "GaleraNotReady", "message": "Galera cluster lost quorum (injected)", "terminal": True}
SERVICES = ("keystone", "glance", "placement", "nova", "neutron", "cinder")
PHASE_CONDITIONS = [p[0] for p in c5c3.PHASES]


def wait_for(check, what, timeout=60.0):
    return wait_truthy(check, what, timeout, interval=0.2)


def write_settings(data):
    config.STANDINS.write_text(yaml.safe_dump(data))


def child_url(child, namespace):
    return "/apis/%s/namespaces/%s/%s/%s" % (child.api_version, namespace, child.plural, child.child_name)


def control_plane(namespace):
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane", "metadata": {"name": "cp", "namespace": namespace},
            "spec": {"infrastructure": {"mariadb": {"replicas": 3, "storageSize": "10Gi"},
                                        "rabbitmq": {"replicas": 3},
                                        "valkey": {"replicas": 3, "sentinel": {"enabled": True}},
                                        "memcached": {"replicas": 2}},
                     "services": {name: {"enabled": True} for name in SERVICES},
                     "tempest": {"enabled": True, "schedule": "0 3 * * *"},
                     "korc": {"enabled": True}, "global": {"region": "Lab"}}}


def conditions(obj):
    return {c["type"]: c for c in ((obj or {}).get("status") or {}).get("conditions") or []}


def play_keystone_operator(api, namespace):
    """Ready for the Keystone CR's generation, written before the keystone-operator stand-in's delay."""
    keystone = wait_for(lambda: api.get(child_url(c5c3.COMPONENTS_BY_KEY["keystone"], namespace)), "Keystone CR", 60)
    gen = keystone["metadata"]["generation"]
    status = {"status": {
        "observedGeneration": gen, "endpoint": "http://127.0.0.1:1/v3", "conditions": [
            {"type": "Ready", "status": "True", "reason": "AllReady", "message": "played by the test",
             "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": gen}]}}
    api.ok("PATCH", child_url(c5c3.COMPONENTS_BY_KEY["keystone"], namespace) + "/status", status,
           "application/merge-patch+json", params={"fieldManager": "test-keystone-operator"})
    return keystone


@pytest.fixture(scope="module")
def api(lab, region):  # the children's CRDs come from phase 3
    with standins_restored() as saved:
        base = yaml.safe_load(saved) if saved else {}
        base = base if isinstance(base, dict) else {}
        base["delays"] = dict(base.get("delays") or {}, **DELAYS)
        base["failures"] = dict(base.get("failures") or {}, **{"MariaDB/%s" % NS["fail"]: FAILURE})
        write_settings(base)
        time.sleep(0.5)  # the stand-ins re-read it on their next wake-up
        api = Api()
        for namespace in NS.values():
            api.ok("POST", "/api/v1/namespaces",
                   {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        yield api
    for namespace in NS.values():
        api.call("DELETE", "/api/v1/namespaces/%s" % namespace)


def test_children_come_phase_by_phase_and_turn_ready(api):
    namespace = NS["order"]
    api.ok("POST", C5C3 + "/namespaces/%s/controlplanes" % namespace, control_plane(namespace))
    children = [c for c in c5c3.CHILD_KINDS if c.key != "cortex"]  # cortex is not enabled
    created, ready, phases = {}, {}, {}
    played = False
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not (len(ready) == len(children) and "Ready" in phases):
        now = time.monotonic()
        for child in children:
            obj = api.get(child_url(child, namespace))
            if obj is not None:
                created.setdefault(child.key, now)
                if readiness.evaluate(obj).ready:
                    ready.setdefault(child.key, now)
        if "keystone" in created and not played:
            play_keystone_operator(api, namespace)
            played = True
        cp = api.get(C5C3 + "/namespaces/%s/controlplanes/cp" % namespace)
        for ctype, cond in conditions(cp).items():
            if cond["status"] == "True" and cond.get("observedGeneration") == cp["metadata"]["generation"]:
                phases.setdefault(ctype, now)
        time.sleep(0.1)
    assert sorted(ready) == sorted(c.key for c in children), (created, ready, conditions(cp))
    # Each child is created only after everything it waits for was ready.
    for child in children:
        for need in c5c3.WAITS_FOR[child.key]:
            if need in ready:
                assert created[child.key] >= ready[need], (child.key, need, created, ready)
    order = ["mariadb", "keystone", "glance", "nova", "tempest"]
    assert [created[k] for k in order] == sorted(created[k] for k in order)
    # The ControlPlane's phase conditions turn True one after the other, then Ready.
    assert [phases[c] for c in PHASE_CONDITIONS + ["Ready"]] == sorted(phases[c] for c in PHASE_CONDITIONS + ["Ready"])
    cp = api.get(C5C3 + "/namespaces/%s/controlplanes/cp" % namespace)
    assert cp["status"]["phase"] == "Ready" and cp["status"]["observedGeneration"] == cp["metadata"]["generation"]
    assert conditions(cp)["Ready"]["reason"] == "AllReady"
    assert cp["status"]["services"]["mariadb"] == "Ready" and cp["status"]["services"]["tempest"] == "Ready"
    for child in children:
        obj = api.get(child_url(child, namespace))
        owner = obj["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["uid"], owner["controller"]) == ("ControlPlane", cp["metadata"]["uid"], True)
    # Upstream status shapes (spot checks; the readiness rules judged them all above).
    mariadb = api.get(child_url(c5c3.COMPONENTS_BY_KEY["mariadb"], namespace))
    assert conditions(mariadb)["Ready"]["reason"] == "StatefulSetReady" and mariadb["status"]["currentPrimary"]
    rabbit = api.get(child_url(c5c3.COMPONENTS_BY_KEY["rabbitmq"], namespace))
    assert {t: c["status"] for t, c in conditions(rabbit).items()} == {
        "AllReplicasReady": "True", "ClusterAvailable": "True", "NoWarnings": "True", "ReconcileSuccess": "True"}
    assert api.get(child_url(c5c3.COMPONENTS_BY_KEY["valkey"], namespace))["status"]["state"] == "Ready"
    nova = api.get(child_url(c5c3.COMPONENTS_BY_KEY["nova"], namespace))
    assert nova["status"]["endpoint"] == "http://nova.%s.svc:8774" % namespace
    assert nova["spec"]["keystone"]["authUrl"] == "http://127.0.0.1:1/v3"


def test_injected_mariadb_failure_blocks_the_phases_behind_it(api):
    namespace = NS["fail"]
    api.ok("POST", C5C3 + "/namespaces/%s/controlplanes" % namespace, control_plane(namespace))
    mariadb_url = child_url(c5c3.COMPONENTS_BY_KEY["mariadb"], namespace)

    def failed():
        cond = conditions(api.get(mariadb_url)).get("Ready")
        return cond and cond["reason"] == FAILURE["reason"] and cond
    cond = wait_for(failed, "MariaDB failing", 30)
    assert (cond["status"], cond["message"]) == ("False", FAILURE["message"])
    for key in ("rabbitmq", "valkey", "memcached"):
        wait_for(lambda k=key: readiness.evaluate(api.get(child_url(c5c3.COMPONENTS_BY_KEY[k], namespace)) or {
            "metadata": {}}).ready, "%s ready" % key, 30)

    def blocked():
        cp = api.get(C5C3 + "/namespaces/%s/controlplanes/cp" % namespace)
        infra = conditions(cp).get("InfrastructureReady")
        return infra and FAILURE["message"] in infra["message"] and cp
    cp = wait_for(blocked, "InfrastructureReady naming the MariaDB failure", 30)
    cond = conditions(cp)
    assert cond["InfrastructureReady"]["status"] == "False"
    assert "Keystone waits for mariadb" in cond["IdentityReady"]["message"]
    assert all(cond[c]["status"] == "False" for c in PHASE_CONDITIONS[1:5] + ["Ready"])
    assert cp["status"]["services"]["keystone"] == "Pending" and cp["status"]["phase"] == "Provisioning"
    # Terminal: taking the failure out of standins.yaml does not heal this MariaDB ...
    data = yaml.safe_load(config.STANDINS.read_text())
    del data["failures"]["MariaDB/%s" % namespace]
    write_settings(data)
    time.sleep(3 * DELAYS["mariadb"])
    assert failed()
    assert api.get(child_url(c5c3.COMPONENTS_BY_KEY["keystone"], namespace)) is None
    # ... a change of its spec does, and the phases behind it go on.
    api.ok("PATCH", mariadb_url, {"spec": {"replicasAllowEvenNumber": True}}, "application/merge-patch+json",
           params={"fieldManager": "test-administrator"})
    wait_for(lambda: readiness.evaluate(api.get(mariadb_url)).ready, "MariaDB ready after the change", 30)
    wait_for(lambda: api.get(child_url(c5c3.COMPONENTS_BY_KEY["keystone"], namespace)), "Keystone CR", 30)
