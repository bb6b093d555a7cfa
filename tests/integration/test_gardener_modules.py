"""gardener_shoot's check-mode deletion and gardener_kubeconfig's return_content against the lab's garden.

One Project and one Shoot (played by the lab cluster st-pool-b) of this file's own, removed at the end.
"""

import json
import uuid

import pytest

from conftest import get_object, run_playbook, task_results
from regionlab import config

pytestmark = pytest.mark.lab_only  # conftest.LAB_ONLY

PROJECT = "gm%s" % uuid.uuid4().hex[:6]
NAMESPACE = "garden-%s" % PROJECT
SHOOT = "gm-shoot"
SPEC = {"cloudProfile": {"kind": "CloudProfile", "name": "ironcore"}, "region": "lab",
        "provider": {"type": "ironcore-metal",
                     "workers": [{"name": "pool", "machine": {"type": "bm"}, "minimum": 1, "maximum": 1}]},
        "credentialsBindingName": "lab", "networking": {"type": "calico"}, "purpose": "evaluation"}


def play(tmp_path, tasks, *args):
    path = tmp_path / ("play-%s.yml" % uuid.uuid4().hex[:6])
    path.write_text(json.dumps([{"name": "garden", "hosts": "garden", "gather_facts": False,
                                 "module_defaults": {"group/c5c3.cobaltcore.cobaltcore": {
                                     "kubeconfig": "{{ cobaltcore_kubeconfig }}"}},
                                 "tasks": tasks}]))
    return run_playbook(path, *args, COBALTCORE_LAB_DIR=str(config.STATE))


def shoot_task(**options):
    args = {"project": PROJECT, "shoots": [{"name": SHOOT, "cluster": "st-pool-b", "spec": SPEC}], "wait_timeout": 300}
    args.update(options)
    return {"name": "shoot", "c5c3.cobaltcore.gardener_shoot": args}


def live_shoot():
    return get_object("garden", "-n", NAMESPACE, "shoot", SHOOT)


@pytest.fixture(scope="module")
def shoot(lab, tmp_path_factory):
    project = {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project", "metadata": {"name": PROJECT},
               "spec": {"namespace": NAMESPACE}}
    tmp_path = tmp_path_factory.mktemp("gardener")
    rc, out = play(tmp_path, [
        {"name": "project", "c5c3.cobaltcore.apply": {"definition": project}},
        {"name": "project ready", "c5c3.cobaltcore.wait": {"resources": [
            {"api_version": "core.gardener.cloud/v1beta1", "kind": "Project", "name": PROJECT}], "timeout": 60}},
        shoot_task()])
    assert rc == 0, json.dumps(out["stats"])
    yield SHOOT
    confirmed = dict(project, metadata={"name": PROJECT, "annotations": {"confirmation.gardener.cloud/deletion": "true"}})
    rc, out = play(tmp_path, [
        shoot_task(state="absent"),
        {"name": "confirm", "c5c3.cobaltcore.apply": {"definition": confirmed}},
        {"name": "remove project", "c5c3.cobaltcore.apply": {"definition": project, "state": "absent",
                                                             "delete_propagation": "Background"}}])
    assert rc == 0, json.dumps(out["stats"])
    assert live_shoot() is None


def test_returned_kubeconfig_is_usable_by_the_next_task(shoot, tmp_path):
    rc, out = play(tmp_path, [
        {"name": "fetch", "no_log": True, "register": "access", "c5c3.cobaltcore.gardener_kubeconfig": {
            "project": PROJECT, "shoots": [{"name": shoot}], "expiration_seconds": 600, "renew_before": 60,
            "return_content": True}},
        {"name": "use", "c5c3.cobaltcore.wait": {
            "kubeconfig": "{{ access.kubeconfigs['%s'] | from_yaml }}" % shoot,
            "resources": [{"api_version": "v1", "kind": "Namespace", "name": "kube-system"}], "timeout": 30}}])
    assert rc == 0, json.dumps(out["plays"][0]["tasks"])[-3000:]
    assert task_results(out, "use")["garden"]["resources"][0]["ready"]
    # no_log: Ansible censors the task's result in its output, the registered variable held the kubeconfig.
    assert "kubeconfigs" not in task_results(out, "fetch")["garden"]


def test_return_content_without_no_log_fails_before_any_request(shoot, tmp_path):
    rc, out = play(tmp_path, [{"name": "fetch", "c5c3.cobaltcore.gardener_kubeconfig": {
        "project": PROJECT, "shoots": [{"name": shoot}], "return_content": True}}])
    result = task_results(out, "fetch")["garden"]
    assert rc != 0 and "the task must set no_log: true" in result["msg"]
    assert "requests" not in result


def test_check_mode_deletion_is_a_dry_run_through_gardeners_confirmation(shoot, tmp_path):
    """The lab's admission policy refuses deleting an unannotated Shoot, dry runs too."""
    assert "confirmation.gardener.cloud/deletion" not in (live_shoot()["metadata"].get("annotations") or {})
    rc, out = play(tmp_path, [shoot_task(state="absent")], "--check")
    result = task_results(out, "shoot")["garden"]
    assert rc == 0, result.get("msg")
    assert result["changed"] and result["shoots"] == [{"name": shoot, "result": "deleted"}]
    assert result["requests"]["PATCH"] == 1 and result["requests"]["DELETE"] == 1
    live = live_shoot()
    assert live is not None and not live["metadata"].get("deletionTimestamp")
    assert "confirmation.gardener.cloud/deletion" not in (live["metadata"].get("annotations") or {})
