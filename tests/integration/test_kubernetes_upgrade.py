"""upgrade.yml's first play on the lab's garden: the region's Shoots to a new Kubernetes version, one minor at a time,
control plane first, then the storage pools one by one, then the hypervisor pools one by one.

The Shoots are this file's own: the lab inventory's five clusters as Shoots of a Project of its own (the lab
clusters play them beside the region's), so the region's Shoots keep the version its inventory names. The lab's
gardener-apiserver stand-in defaults a short version and refuses a skipped minor or a downgrade
(regionlab/standins/shoot_versions.py).
"""

import json
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from conftest import REPO, ansible_env, kill_run, lab_kubectl, objects, run_playbook, task_result, task_results, \
    wait_truthy
from regionlab import config

pytestmark = pytest.mark.lab_only  # conftest.LAB_ONLY

UPGRADE = REPO / "playbooks" / "upgrade.yml"
PROJECT = "ku%s" % uuid.uuid4().hex[:4]
NAMESPACE = "garden-%s" % PROJECT
ORDER = ["lab-cp", "st-pool-a", "st-pool-b", "hv-pool-a", "hv-pool-b"]
STAGES = ["control plane", "storage pool", "storage pool", "hypervisor pool", "hypervisor pool"]
SETTINGS = {"project": PROJECT, "cloud_profile": {"kind": "CloudProfile", "name": "ironcore-metal"},
            "credentials_binding": "lab-ironcore-metal", "provider_type": "ironcore-metal",
            "kubernetes_version": "1.33", "machine_image": {"name": "gardenlinux", "version": "1877.3.0"},
            "purpose": "production", "flux": False,
            "networking": {"type": "calico", "pods": "100.64.0.0/12", "services": "100.80.0.0/13"}}
TASK = "Move the region's Shoots to Kubernetes "
# The lab's other runs may hold the region's run lock: these Shoots are this file's alone.
FAST = {"cobaltcore_upgrade_step_timeout": 300, "cobaltcore_upgrade_wait_sleep": 1, "cobaltcore_lock_enabled": False}


def play(tmp_path, tasks, *args, settings=None):
    path = tmp_path / ("play-%s.yml" % uuid.uuid4().hex[:6])
    path.write_text(json.dumps([{"name": "garden", "hosts": "garden", "gather_facts": False,
                                 "module_defaults": {"group/c5c3.cobaltcore.cobaltcore": {
                                     "kubeconfig": "{{ cobaltcore_kubeconfig }}"}},
                                 "tasks": tasks}]))
    return run_playbook(path, "-e", json.dumps({"cobaltcore_gardener": settings or SETTINGS}), *args,
                        COBALTCORE_LAB_DIR=str(config.STATE))


def shoots_task(name, hold=False, state="present"):
    args = {"project": PROJECT, "wait_timeout": 300, "wait_sleep": 1,
            "shoots": "{{ {'name': cobaltcore_region, 'groups': groups, 'hostvars': hostvars}"
                      " | c5c3.cobaltcore.gardener_shoots(cobaltcore_gardener) }}"}
    if hold:
        args["hold_kubernetes_version"] = True
    if state == "absent":
        args.update(state="absent", wait_timeout=600)
    return {"name": name, "c5c3.cobaltcore.gardener_shoot": args}


def upgrade(version, *args, **variables):
    settings = dict(SETTINGS, kubernetes_version=version)
    return run_playbook(UPGRADE, "--limit", "garden", "-e", json.dumps(dict(FAST, cobaltcore_gardener=settings,
                                                                            **variables)), *args)


def versions():
    return dict((s["metadata"]["name"], s["spec"]["kubernetes"]["version"]) for s in objects("garden", "shoots", NAMESPACE))


def resource_versions():
    return dict((s["metadata"]["name"], s["metadata"]["resourceVersion"]) for s in objects("garden", "shoots", NAMESPACE))


@pytest.fixture(scope="module")
def shoots(lab, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("kubernetes")
    project = {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project", "metadata": {"name": PROJECT},
               "spec": {"namespace": NAMESPACE}}
    rc, out = play(tmp_path, [
        {"name": "project", "c5c3.cobaltcore.apply": {"definition": project}},
        {"name": "project ready", "c5c3.cobaltcore.wait": {"resources": [
            {"api_version": "core.gardener.cloud/v1beta1", "kind": "Project", "name": PROJECT}], "timeout": 60}},
        shoots_task("shoots")])
    assert rc == 0, json.dumps(out["stats"])
    yield tmp_path
    confirmed = dict(project, metadata={"name": PROJECT, "annotations": {"confirmation.gardener.cloud/deletion": "true"}})
    rc, out = play(tmp_path, [
        shoots_task("remove shoots", state="absent"),
        {"name": "confirm", "c5c3.cobaltcore.apply": {"definition": confirmed}},
        {"name": "remove project", "c5c3.cobaltcore.apply": {"definition": project, "state": "absent",
                                                             "delete_propagation": "Background"}}])
    assert rc == 0, json.dumps(out["stats"])


class Recorder(threading.Thread):
    """Per Shoot and version: when its spec first named it, and when Gardener first reported it reconciled."""

    def __init__(self):
        super().__init__(daemon=True)
        self.written, self.reconciled, self.stop = {}, {}, threading.Event()

    def run(self):
        while not self.stop.is_set():
            now = time.monotonic()
            for shoot in objects("garden", "shoots", NAMESPACE):
                key = (shoot["metadata"]["name"], shoot["spec"]["kubernetes"]["version"])
                self.written.setdefault(key, now)
                status = shoot.get("status") or {}
                last = status.get("lastOperation") or {}
                if status.get("observedGeneration") == shoot["metadata"]["generation"] and last.get("state") == "Succeeded":
                    self.reconciled.setdefault(key, now)
            time.sleep(0.2)


def test_the_lab_defaults_a_short_version_and_phase_2_holds_an_existing_shoots_version(shoots):
    assert versions() == dict((name, "1.33.4") for name in ORDER)
    before = resource_versions()
    rc, out = play(shoots, [shoots_task("hold", hold=True)], settings=dict(SETTINGS, kubernetes_version="1.34"))
    assert rc == 0, json.dumps(out["stats"])
    result = task_results(out, "hold")["garden"]
    assert sorted(h["name"] for h in result["kubernetes_held"]) == sorted(ORDER)
    assert not result["changed"] and resource_versions() == before


def test_check_mode_plans_every_step_and_a_skip_is_refused_before_any_write(shoots):
    before = resource_versions()
    rc, out = upgrade("1.35", "--check", "--diff", cobaltcore_kubernetes_minor_steps=2)
    assert rc == 0, out["stats"]
    lines = task_result(out, TASK)["plan_lines"]
    assert lines == ["step %d: Kubernetes %s on the %s: %s (%s -> %s)" % (
        number, minor, stage, name, old, new) for number, (minor, old, new, name, stage) in enumerate(
        [("1.34", "1.33.4", "1.34.3") + s for s in zip(ORDER, STAGES)]
        + [("1.35", "1.34.3", "1.35.1") + s for s in zip(ORDER, STAGES)], 1)]
    assert "kubernetes version upgrade cannot skip a minor version" in refused_write("1.35.1")
    assert "couldn't find a suitable version for 1.36" in refused_write("1.36")
    rc, out = upgrade("1.35")
    assert rc != 0
    msg = task_result(out, TASK)["msg"]
    for name in ORDER:
        assert "Shoot %s spec.kubernetes.version: runs 1.33.4; 1.35 is 2 minor versions ahead" % name in msg
    assert resource_versions() == before


def test_the_shoots_move_one_at_a_time_in_the_seeds_order_and_a_killed_move_resumes(shoots):
    """SIGKILL once st-pool-b's first step is written: the hypervisor pools were not touched; the next run waits for
    st-pool-b, then goes on in order. Each step is written only after the step before it was reconciled."""
    recorder = Recorder()
    recorder.start()
    try:
        variables = dict(FAST, cobaltcore_gardener=dict(SETTINGS, kubernetes_version="1.35"),
                         cobaltcore_kubernetes_minor_steps=2)
        killed = subprocess.Popen(
            [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(REPO / "inventories" / "lab"),
             str(UPGRADE), "--limit", "garden", "-e", json.dumps(variables)],
            cwd=REPO, env=ansible_env(COBALTCORE_LAB_DIR=str(config.STATE)), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_truthy(lambda: versions()["st-pool-b"] == "1.34.3", "st-pool-b's first step written", timeout=120,
                        interval=0.1)
        finally:
            kill_run(killed)
        assert versions()["hv-pool-a"] == versions()["hv-pool-b"] == "1.33.4"
        rc, out = upgrade("1.35", cobaltcore_kubernetes_minor_steps=2)
    finally:
        recorder.stop.set()
        recorder.join()
    assert rc == 0, json.dumps(task_result(out, TASK))[-3000:]
    assert [m["name"] for s in task_result(out, TASK)["steps"] for m in s["moves"]][:2] == ["hv-pool-a", "hv-pool-b"]
    assert versions() == dict((name, "1.35.1") for name in ORDER)
    steps = [(name, version) for version in ("1.34.3", "1.35.1") for name in ORDER]
    for before, after in zip(steps, steps[1:]):
        assert recorder.written[after] >= recorder.reconciled[before], (before, after)
    rc, out = upgrade("1.35", cobaltcore_kubernetes_minor_steps=2)
    assert rc == 0 and out["stats"]["garden"]["changed"] == 0, out["stats"]
    assert task_result(out, TASK)["plan_lines"] == ["every Shoot runs Kubernetes 1.35: nothing to move"]


def refused_write(version):
    """The garden's answer to a Shoot version written past the collection (a dry run): stderr, or None when taken."""
    proc = lab_kubectl("garden", "-n", NAMESPACE, "patch", "shoot", "lab-cp", "--dry-run=server", "--type=merge",
                       "-p", json.dumps({"spec": {"kubernetes": {"version": version}}}), check=False)
    return proc.stderr if proc.returncode else None


def test_the_lab_refuses_a_downgrade_as_gardener_does(shoots):
    assert "kubernetes version downgrade is not supported" in refused_write("1.34.3")
    assert refused_write("1.36.0") is None  # the next minor, a preview version named explicitly
