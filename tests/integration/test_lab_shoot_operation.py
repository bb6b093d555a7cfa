"""gardener-apiserver's `gardener.cloud/operation` annotation on the lab's Shoots (strategy.go
mustIncreaseGeneration of gardener v1.146.3, played by the front's mutating webhook,
lab/regionlab/standins/shoot_admission.py), and the gardenlet stand-in's answer to the new generation.

Everything lives in this module's own Project (shoot-op-<token>) and is removed at the end; the
injected failures come from the lab's standins.yaml, which the module writes and restores.
"""

import time
import uuid

import pytest
import yaml

from conftest import standins_restored
from regionlab import config, standins
from test_lab_standins import CONFIRM, CORE, FAIL, GARDEN, MERGE, Api, wait_for

pytestmark = [pytest.mark.lab_only, pytest.mark.standins]  # conftest.LAB_ONLY, conftest.STANDINS_MARK

TOKEN = uuid.uuid4().hex[:5]
PROJECT = "shoot-op-%s" % TOKEN
NAMESPACE = "garden-%s" % PROJECT
OPERATION = "gardener.cloud/operation"
LAB_FIELD = "labOperationBumps"
STEP = 0.15
QUIET = 8 * STEP  # longer than a retry (5 steps) or a whole flow would need to start


def last_op(obj):
    return ((obj or {}).get("status") or {}).get("lastOperation") or {}


def at_generation(obj, op_type, state):
    """The Shoot's last operation is op_type/state for its current generation."""
    return (obj is not None and last_op(obj).get("type") == op_type and last_op(obj).get("state") == state
            and obj["status"].get("observedGeneration") == obj["metadata"]["generation"])


def annotation(obj):
    return (obj["metadata"].get("annotations") or {}).get(OPERATION)


def shoot(name, labels=None):
    spec = {"cloudProfile": {"kind": "CloudProfile", "name": "ironcore"}, "region": "lab",
            "provider": {"type": "ironcore-metal"}, "purpose": "evaluation"}
    return {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels or {}}, "spec": spec}


@pytest.fixture(scope="module")
def env(lab):
    with standins_restored():
        # ok: played by hv-pool-a (as test_lab_standins' Shoot), succeeds; failed: its Create fails; gone: no lab
        # cluster plays it (its Create fails), and its Delete fails until the fault is cleared.
        names = {k: "%s-%s" % (PROJECT, k) for k in ("ok", "failed", "gone")}
        config.STANDINS.write_text(yaml.safe_dump({
            "delays": {"shoot_step": STEP, "care": 1.0},
            "shoots": {names["failed"]: {"fail": FAIL}, names["gone"]: {"fail_delete": "cannot delete"}}}))
        api = Api(GARDEN)
        api.ok("POST", CORE + "/projects", {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
                                            "metadata": {"name": PROJECT}, "spec": {"namespace": NAMESPACE}})
        wait_for(lambda: api.get(CORE + "/projects/" + PROJECT), "Project Ready",
                 until=lambda p: ((p or {}).get("status") or {}).get("phase") == "Ready")
        for key, labels in (("ok", {"c5c3.io/cluster": "hv-pool-a"}), ("failed", {"c5c3.io/cluster": "hv-pool-a"}),
                            ("gone", None)):
            api.ok("POST", CORE + "/namespaces/%s/shoots" % NAMESPACE, shoot(names[key], labels))
        yield {"api": api, "front": Api(GARDEN, standins.front_url()), "names": names}
        config.STANDINS.write_text(yaml.safe_dump({"delays": {"shoot_step": STEP, "care": 1.0}}))
        time.sleep(0.5)  # the stand-in re-reads the file
        for item in (api.get(CORE + "/namespaces/%s/shoots" % NAMESPACE) or {}).get("items", []):
            url = CORE + "/namespaces/%s/shoots/%s" % (NAMESPACE, item["metadata"]["name"])
            api.call("PATCH", url, CONFIRM, MERGE)
            api.call("DELETE", url)
            if last_op(item).get("state") == "Failed" and item["metadata"].get("deletionTimestamp"):
                api.call("PATCH", url, {"metadata": {"annotations": {OPERATION: "retry"}}}, MERGE)
        wait_for(lambda: api.get(CORE + "/namespaces/%s/shoots" % NAMESPACE), "test Shoots gone", 30,
                 until=lambda out: not (out or {}).get("items"))
        api.call("PATCH", CORE + "/projects/" + PROJECT, CONFIRM, MERGE)
        api.call("DELETE", CORE + "/projects/" + PROJECT)
        wait_for(lambda: api.get(CORE + "/projects/" + PROJECT), "test Project gone", until=lambda p: p is None)


def url_of(env, key):
    return CORE + "/namespaces/%s/shoots/%s" % (NAMESPACE, env["names"][key])


def annotate(env, key, value):
    """Through the front, as clients write."""
    return env["front"].ok("PATCH", url_of(env, key), {"metadata": {"annotations": {OPERATION: value}}}, MERGE)


def test_reconcile_on_a_succeeded_shoot_bumps_the_generation_and_an_unchanged_put_does_not(env):
    api, url = env["api"], url_of(env, "ok")
    before = wait_for(lambda: api.get(url), "Create Succeeded", until=lambda o: at_generation(o, "Create", "Succeeded"))
    out = annotate(env, "ok", "reconcile")
    assert out["metadata"]["generation"] == before["metadata"]["generation"] + 1
    assert annotation(out) is None and out[LAB_FIELD] == before.get(LAB_FIELD, 0) + 1
    done = wait_for(lambda: api.get(url), "Reconcile Succeeded",
                    until=lambda o: at_generation(o, "Reconcile", "Succeeded"))
    assert done["metadata"]["generation"] == out["metadata"]["generation"]
    # A PUT of the Shoot as read, or without the lab's field, or with it changed, moves nothing.
    for change in (lambda o: o, lambda o: o.pop(LAB_FIELD), lambda o: o.update({LAB_FIELD: 99})):
        for attempt in range(5):  # the care controller writes status every second: read again on a conflict
            body = api.get(url)
            change(body)
            code, put = api.call("PUT", url, body)
            if code != 409:
                break
        assert code == 200, (code, put)
        assert put["metadata"]["generation"] == done["metadata"]["generation"]
        assert put[LAB_FIELD] == out[LAB_FIELD]
    # retry on a Shoot that is not Failed: kept, nothing runs.
    kept = annotate(env, "ok", "retry")
    assert annotation(kept) == "retry" and kept["metadata"]["generation"] == done["metadata"]["generation"]
    time.sleep(QUIET)
    now = api.get(url)
    assert annotation(now) == "retry" and last_op(now) == last_op(done)
    assert now["status"]["observedGeneration"] == done["metadata"]["generation"]


def test_failed_shoot_keeps_reconcile_and_takes_retry(env):
    api, url = env["api"], url_of(env, "failed")
    failed = wait_for(lambda: api.get(url), "Create Failed", until=lambda o: at_generation(o, "Create", "Failed"))
    kept = annotate(env, "failed", "reconcile")
    assert annotation(kept) == "reconcile" and kept["metadata"]["generation"] == failed["metadata"]["generation"]
    time.sleep(QUIET)
    now = api.get(url)
    assert annotation(now) == "reconcile" and last_op(now) == last_op(failed)
    out = annotate(env, "failed", "retry")
    assert out["metadata"]["generation"] == failed["metadata"]["generation"] + 1 and annotation(out) is None
    retried = wait_for(lambda: api.get(url), "Create retried",
                       until=lambda o: at_generation(o, "Create", "Failed")
                       and last_op(o)["lastUpdateTime"] != last_op(failed)["lastUpdateTime"])
    assert retried["status"]["observedGeneration"] == out["metadata"]["generation"]


def test_retry_after_a_failed_delete_runs_the_delete_again(env):
    api, url = env["api"], url_of(env, "gone")
    wait_for(lambda: api.get(url), "Create Failed", until=lambda o: at_generation(o, "Create", "Failed"))
    api.ok("PATCH", url, CONFIRM, MERGE)
    api.ok("DELETE", url)
    failed = wait_for(lambda: api.get(url), "Delete Failed", until=lambda o: at_generation(o, "Delete", "Failed"))
    time.sleep(QUIET)
    assert last_op(api.get(url)) == last_op(failed)  # a failed Delete waits
    config.STANDINS.write_text(yaml.safe_dump({"delays": {"shoot_step": STEP, "care": 1.0}}))
    time.sleep(QUIET)  # the fault is cleared, and still nothing runs
    assert last_op(api.get(url)) == last_op(failed)
    out = annotate(env, "gone", "retry")
    assert out["metadata"]["generation"] == failed["metadata"]["generation"] + 1 and annotation(out) is None
    wait_for(lambda: api.get(url), "Shoot deleted", until=lambda o: o is None)
