"""c5c3.cobaltcore.wait against a real API server: generation-aware, terminal fast, clear timeouts, batched."""

import json
import re
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from conftest import REPO, ansible_env, kubectl, run_tasks

pytestmark = pytest.mark.lab_only  # conftest.LAB_ONLY

HOST = "management-cluster"
GROUP = "widgets.test.c5c3.io"


@pytest.fixture(scope="module")
def widget_crd(lab):
    kc = lab["clusters"][HOST]["kubeconfig"]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.%s" % GROUP},
           "spec": {"group": GROUP, "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                      "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                      "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}
    kubectl(kc, "apply", "--server-side", "-f", "-", stdin=json.dumps(crd))
    kubectl(kc, "wait", "--for=condition=Established", "crd/widgets.%s" % GROUP, "--timeout=60s")
    return kc


@pytest.fixture
def namespace(widget_crd):
    name = "wait-%s" % uuid.uuid4().hex[:8]
    kubectl(widget_crd, "create", "namespace", name)
    yield name
    kubectl(widget_crd, "delete", "namespace", name, "--wait=false")


def create_widget(kc, namespace, name, labels=None, size=1):
    obj = {"apiVersion": "%s/v1" % GROUP, "kind": "Widget",
           "metadata": {"name": name, "namespace": namespace, "labels": labels or {}}, "spec": {"size": size}}
    kubectl(kc, "apply", "--server-side", "-f", "-", stdin=json.dumps(obj))
    return json.loads(kubectl(kc, "get", "-n", namespace, "widget", name, "-o", "json").stdout)


def set_status(kc, namespace, name, status):
    kubectl(kc, "patch", "-n", namespace, "widget", name, "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": status}))


def ready_status(generation, status="True", reason="Done", message="all good"):
    return {"observedGeneration": generation,
            "conditions": [{"type": "Ready", "status": status, "reason": reason, "message": message,
                            "lastTransitionTime": "2026-01-01T00:00:00Z"}]}


def wait_task(namespace, names, timeout=20, **extra):
    args = {"kubeconfig": "{{ cobaltcore_kubeconfig }}", "timeout": timeout, "sleep": 1,
            "resources": [{"api_version": "%s/v1" % GROUP, "kind": "Widget", "name": n, "namespace": namespace}
                          for n in names]}
    args.update(extra)
    return {"name": "wait", "c5c3.cobaltcore.wait": args}


def test_stale_ready_is_not_ready_until_observed_generation_catches_up(widget_crd, namespace, tmp_path):
    kc = widget_crd
    create_widget(kc, namespace, "w")
    set_status(kc, namespace, "w", ready_status(1))
    # A spec change bumps the generation; the old Ready no longer counts.
    widget = create_widget(kc, namespace, "w", size=2)
    assert widget["metadata"]["generation"] == 2
    rc, tasks = run_tasks([wait_task(namespace, ["w"], timeout=3)], tmp_path)
    assert rc != 0
    msg = tasks["wait"][HOST]["msg"]
    assert "not ready after 3s" in msg and "observedGeneration 1" in msg and "generation 2" in msg

    timer = threading.Timer(2.0, set_status, (kc, namespace, "w", ready_status(2)))
    timer.start()
    started = time.monotonic()
    rc, tasks = run_tasks([wait_task(namespace, ["w"], timeout=30)], tmp_path)
    timer.join()
    assert rc == 0, tasks["wait"][HOST].get("msg")
    assert tasks["wait"][HOST]["resources"][0]["ready"] is True
    assert time.monotonic() - started < 25


def test_timeout_names_the_unmet_condition_reason_and_message(widget_crd, namespace, tmp_path):
    create_widget(widget_crd, namespace, "slow")
    installing = ready_status(1, status="False", reason="Installing", message="waiting for chart")
    set_status(widget_crd, namespace, "slow", installing)
    rc, tasks = run_tasks([wait_task(namespace, ["slow", "ghost"], timeout=3)], tmp_path)
    assert rc != 0
    msg = tasks["wait"][HOST]["msg"]
    assert "2 object(s) not ready after 3s" in msg
    assert "Widget %s/slow" % namespace in msg and "Installing" in msg and "waiting for chart" in msg
    assert "Widget %s/ghost: not found" % namespace in msg


def test_failed_expression_fails_at_once(widget_crd, namespace, tmp_path):
    create_widget(widget_crd, namespace, "broken")
    set_status(widget_crd, namespace, "broken", {"observedGeneration": 1, "phase": "Failure"})
    started = time.monotonic()
    task = wait_task(namespace, ["broken"], timeout=120, expression="status.phase == 'Ready'",
                     failed_expression="status.phase == 'Failure'")
    rc, tasks = run_tasks([task], tmp_path)
    assert rc != 0
    assert "failed" in tasks["wait"][HOST]["msg"]
    assert time.monotonic() - started < 30


def test_many_objects_by_label_selector_are_checked_with_one_list_per_round(widget_crd, namespace, tmp_path):
    for i in range(20):
        create_widget(widget_crd, namespace, "many-%02d" % i, labels={"bench": "yes"})
        set_status(widget_crd, namespace, "many-%02d" % i, ready_status(1))
    rc, tasks = run_tasks([{"name": "wait", "c5c3.cobaltcore.wait": {
        "kubeconfig": "{{ cobaltcore_kubeconfig }}", "api_version": "%s/v1" % GROUP, "kind": "Widget",
        "namespace": namespace, "label_selectors": ["bench=yes"], "timeout": 30}}], tmp_path)
    assert rc == 0, tasks["wait"][HOST].get("msg")
    result = tasks["wait"][HOST]
    assert len(result["resources"]) == 20 and all(r["ready"] for r in result["resources"])
    # discovery + the selector's list + one list for the first (ready) round
    assert result["requests"] == {"GET": 3}


def test_apply_waits_with_a_caller_given_condition(widget_crd, namespace, tmp_path):
    obj = {"apiVersion": "%s/v1" % GROUP, "kind": "Widget", "metadata": {"name": "cond", "namespace": namespace},
           "spec": {"size": 1}}
    installed = {"observedGeneration": 1, "conditions": [{"type": "Installed", "status": "True", "reason": "Ok",
                                                          "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}

    def operator():
        # Plays the operator: once the apply has created the object, report the condition.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if kubectl(widget_crd, "get", "-n", namespace, "widget", "cond", check=False).returncode == 0:
                time.sleep(1)
                set_status(widget_crd, namespace, "cond", installed)
                return
            time.sleep(0.2)

    timer = threading.Thread(target=operator)
    timer.start()
    rc, tasks = run_tasks([{"name": "apply", "c5c3.cobaltcore.apply": {
        "kubeconfig": "{{ cobaltcore_kubeconfig }}", "definition": obj, "wait": True, "wait_timeout": 30,
        "wait_condition": {"type": "Installed"}}}], tmp_path)
    timer.join()
    assert rc == 0, tasks["apply"][HOST].get("msg")
    assert tasks["apply"][HOST]["ready"][0]["ready"] is True


def test_several_builtin_objects_listed_together_keep_their_kinds_rule(widget_crd, namespace, tmp_path):
    for name in ("one", "two"):
        kubectl(widget_crd, "create", "configmap", "-n", namespace, name)
    refs = [{"api_version": "v1", "kind": "ConfigMap", "name": n, "namespace": namespace} for n in ("one", "two")]
    rc, tasks = run_tasks([{"name": "wait", "c5c3.cobaltcore.wait": {
        "kubeconfig": "{{ cobaltcore_kubeconfig }}", "resources": refs, "timeout": 10}}], tmp_path)
    assert rc == 0, tasks["wait"][HOST].get("msg")
    assert [r["ready"] for r in tasks["wait"][HOST]["resources"]] == [True, True]


def test_a_namespaced_kind_without_namespace_fails_at_once(widget_crd, tmp_path):
    started = time.monotonic()
    rc, tasks = run_tasks([{"name": "wait", "c5c3.cobaltcore.wait": {
        "kubeconfig": "{{ cobaltcore_kubeconfig }}", "timeout": 60,
        "resources": [{"api_version": "v1", "kind": "ConfigMap", "name": "x"}]}}], tmp_path)
    assert rc != 0 and "ConfigMap is namespaced" in tasks["wait"][HOST]["msg"]
    assert time.monotonic() - started < 20


def run_with_stderr(tasks, path, *args):
    """(rc, the task's result on HOST, stderr) of one play run with the JSON callback, as run_tasks runs it."""
    path.write_text(json.dumps([{"name": "progress", "hosts": HOST, "gather_facts": False, "tasks": tasks}]))
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(REPO / "inventories" / "lab"),
                           str(path)] + list(args), cwd=REPO, env=ansible_env(), capture_output=True, text=True,
                          timeout=120, check=False)
    out = json.loads(proc.stdout)  # stdout stays the JSON callback's alone
    return proc.returncode, out["plays"][0]["tasks"][0]["hosts"][HOST], proc.stderr


def test_progress_shows_while_waiting_when_asked_and_never_changes_the_result(widget_crd, namespace, tmp_path):
    kc = widget_crd
    create_widget(kc, namespace, "ok")
    set_status(kc, namespace, "ok", ready_status(1))
    create_widget(kc, namespace, "slow")
    set_status(kc, namespace, "slow", ready_status(1, status="False", reason="Installing", message="waiting for chart"))
    # A wait that times out after 3 s either way; a line a second when asked. Not asked: not a terminal, no -v.
    task = wait_task(namespace, ["ok", "slow"], timeout=3)
    every_second = ["-e", "cobaltcore_progress_interval=1"]
    rc, result, stderr = run_with_stderr([task], tmp_path / "asked.yml", "-e", "cobaltcore_progress=true",
                                         *every_second)
    quiet_rc, quiet, quiet_stderr = run_with_stderr([task], tmp_path / "quiet.yml", *every_second)
    assert rc == quiet_rc != 0
    lines = re.findall(r"^\[%s\] (\d+)s: (.*)$" % HOST, stderr, re.M)
    assert lines, stderr[-2000:]
    assert set(text for _seconds, text in lines) == {
        "1/2 ready, slowest Widget %s/slow: Ready=False Installing: waiting for chart" % namespace}
    # At most one line a second, the first after a second.
    seconds = [int(s) for s, _text in lines]
    assert seconds[0] >= 1 and seconds == sorted(set(seconds)) and len(seconds) <= 3
    assert "slowest" not in quiet_stderr and "[%s]" % HOST not in quiet_stderr

    def same(result):
        """The result but for the seconds waited and the request count, which vary with the machine's load."""
        return dict(result, objects=[dict(o, elapsed=None) for o in result["objects"]], requests=None,
                    waited_seconds=None)
    assert same(result) == same(quiet)
    assert result["msg"].startswith("1 object(s) not ready after 3s: Widget %s/slow" % namespace)
