"""c5c3.cobaltcore.apply against a real API server: created, unchanged with zero writes, configured, conflicts."""

import base64
import json
import threading
import time
import uuid

import pytest
import yaml

from conftest import apiserver_writes, kubectl, read_json, run_playbook, run_tasks
from regionlab import config

HOST = "management-cluster"
KUBECONFIG = "{{ cobaltcore_kubeconfig }}"


@pytest.fixture
def namespace(kubeconfigs):
    name = "engine-%s" % uuid.uuid4().hex[:8]
    kubectl(kubeconfigs[HOST], "create", "namespace", name)
    yield name
    kubectl(kubeconfigs[HOST], "delete", "namespace", name, "--wait=false")


def configmap(namespace, name="settings", **data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": data or {"a": "1"}}


def apply_task(definition, name="apply", **options):
    args = {"kubeconfig": KUBECONFIG, "definition": definition}
    args.update(options)
    return {"name": name, "c5c3.cobaltcore.apply": args}


def result_of(tasks, name="apply"):
    return tasks[name][HOST]


def test_create_then_noop_without_writes_then_configured_with_a_field_diff(lab, namespace, tmp_path, kubeconfigs):
    objects = [configmap(namespace, "cm-%d" % i, a="1", b="2") for i in range(5)]
    rc, tasks = run_tasks([apply_task(objects)], tmp_path)
    assert rc == 0
    first = result_of(tasks)
    assert first["changed"] and first["summary"] == {"created": 5}

    before = apiserver_writes(HOST, "configmaps")
    rc, tasks = run_tasks([apply_task(objects)], tmp_path)
    again = result_of(tasks)
    assert rc == 0 and not again["changed"]
    assert again["summary"] == {"unchanged": 5}
    assert sum(again["requests"].get(v, 0) for v in ("POST", "PUT", "PATCH", "DELETE")) == 0
    assert apiserver_writes(HOST, "configmaps") == before

    objects[2]["data"]["b"] = "3"
    rc, tasks = run_tasks([apply_task(objects)], tmp_path, diff=True)
    changed = result_of(tasks)
    assert changed["changed"] and changed["summary"] == {"configured": 1, "unchanged": 4}
    (entry,) = [r for r in changed["results"] if r["result"] == "configured"]
    assert entry["name"] == "cm-2"
    assert entry["diff"]["before"]["data"] == {"a": "1", "b": "2"}
    assert entry["diff"]["after"]["data"] == {"a": "1", "b": "3"}
    assert "managedFields" not in json.dumps(entry["diff"])


def test_removed_field_is_dropped_and_foreign_fields_stay(lab, namespace, tmp_path, kubeconfigs):
    kc = kubeconfigs[HOST]
    rc, tasks = run_tasks([apply_task(configmap(namespace, a="1", b="2"))], tmp_path)
    assert rc == 0
    # Another field manager adds a field of its own.
    patch = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "settings", "namespace": namespace}, "data": {"other": "x"}})
    kubectl(kc, "apply", "--server-side", "--field-manager", "someone-else", "-f", "-", stdin=patch)
    rc, tasks = run_tasks([apply_task(configmap(namespace, a="1"))], tmp_path)
    assert rc == 0 and result_of(tasks)["results"][0]["result"] == "configured"
    live = json.loads(kubectl(kc, "get", "-n", namespace, "configmap", "settings", "-o", "json").stdout)
    assert live["data"] == {"a": "1", "other": "x"}
    rc, tasks = run_tasks([apply_task(configmap(namespace, a="1"))], tmp_path)
    assert result_of(tasks)["results"][0]["result"] == "unchanged"


def test_conflict_is_reported_unless_forced(lab, namespace, tmp_path, kubeconfigs):
    kc = kubeconfigs[HOST]
    theirs = json.dumps(configmap(namespace, a="theirs"))
    kubectl(kc, "apply", "--server-side", "--field-manager", "someone-else", "-f", "-", stdin=theirs)
    rc, tasks = run_tasks([apply_task(configmap(namespace, a="ours"))], tmp_path)
    assert rc != 0
    failed = result_of(tasks)
    assert "conflict" in failed["msg"].lower() and "someone-else" in failed["msg"]
    assert "force_conflicts" in failed["msg"]
    rc, tasks = run_tasks([apply_task(configmap(namespace, a="ours"), force_conflicts=True)], tmp_path)
    assert rc == 0 and result_of(tasks)["results"][0]["result"] == "configured"


def test_check_mode_writes_nothing_and_reports_what_would_change(lab, namespace, tmp_path, kubeconfigs):
    kc = kubeconfigs[HOST]
    run_tasks([apply_task(configmap(namespace, "existing", a="1"))], tmp_path)
    before = apiserver_writes(HOST, "configmaps")
    objects = [configmap(namespace, "existing", a="2"), configmap(namespace, "new", a="1")]
    rc, tasks = run_tasks([apply_task(objects)], tmp_path, check=True, diff=True)
    result = result_of(tasks)
    assert rc == 0 and result["changed"]
    assert {r["name"]: r["result"] for r in result["results"]} == {"existing": "configured", "new": "created"}
    assert apiserver_writes(HOST, "configmaps") == before
    assert read_json(kc, "-n", namespace, "configmap", "new") is None
    live = json.loads(kubectl(kc, "get", "-n", namespace, "configmap", "existing", "-o", "json").stdout)
    assert live["data"] == {"a": "1"}


def test_check_mode_deletes_nothing(lab, namespace, tmp_path, kubeconfigs):
    """state absent in check mode is a server dry run: the API server reads a DELETE's dryRun from its body (it reads
    the query only when there is none), and an object deleted in check mode is still there."""
    kc = kubeconfigs[HOST]
    run_tasks([apply_task(configmap(namespace, "kept", a="1"))], tmp_path)
    rc, tasks = run_tasks([apply_task(configmap(namespace, "kept"), state="absent", wait=True)], tmp_path, check=True)
    result = result_of(tasks)
    assert rc == 0 and result["changed"] and result["results"][0]["result"] == "deleted"
    live = read_json(kc, "-n", namespace, "configmap", "kept")
    assert live is not None and not live["metadata"].get("deletionTimestamp")


def test_check_mode_with_a_new_namespace_and_crd_in_the_same_call(lab, tmp_path, kubeconfigs):
    suffix = uuid.uuid4().hex[:6]
    group = "t%s.test.c5c3.io" % suffix
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.%s" % group},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                      "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]}}
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gadgets-%s" % suffix}}
    gadget = {"apiVersion": "%s/v1" % group, "kind": "Gadget",
              "metadata": {"name": "one", "namespace": "gadgets-%s" % suffix}, "spec": {"size": 3}}
    # Given out of order on purpose: the module puts CRD and namespace first.
    objects = [gadget, ns, crd]
    rc, tasks = run_tasks([apply_task(objects)], tmp_path, check=True)
    assert rc == 0
    assert [r["result"] for r in result_of(tasks)["results"]] == ["created"] * 3
    rc, tasks = run_tasks([apply_task(objects)], tmp_path)
    assert rc == 0, result_of(tasks).get("msg")
    assert [r["kind"] for r in result_of(tasks)["results"]] == ["CustomResourceDefinition", "Namespace", "Gadget"]
    rc, tasks = run_tasks([apply_task(objects)], tmp_path)
    assert result_of(tasks)["summary"] == {"unchanged": 3}
    rc, tasks = run_tasks([apply_task(objects, state="absent", wait=True, wait_timeout=60)], tmp_path)
    assert rc == 0, result_of(tasks).get("msg")
    assert result_of(tasks)["summary"] == {"deleted": 3}


def test_secret_values_never_appear_in_results_or_diffs(lab, namespace, tmp_path):
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": namespace},
              "stringData": {"password": "hunter2-very-secret"}}
    rc, tasks = run_tasks([apply_task(secret)], tmp_path, diff=True)
    assert rc == 0 and result_of(tasks)["results"][0]["result"] == "created"
    assert "hunter2" not in json.dumps(result_of(tasks))  # not even in the echoed module arguments
    secret["stringData"]["password"] = "another-very-secret"
    rc, tasks = run_tasks([apply_task(secret)], tmp_path, diff=True)
    assert result_of(tasks)["results"][0]["result"] == "configured"
    text = json.dumps(result_of(tasks))
    assert "hunter2" not in text and "another-very" not in text
    assert "aHVudGVy" not in text  # nor base64 of it
    assert result_of(tasks)["results"][0]["diff"]["after"]["data"] == {"password": "<redacted>"}
    rc, tasks = run_tasks([apply_task(secret)], tmp_path)
    assert result_of(tasks)["results"][0]["result"] == "unchanged"


def test_invalid_object_reports_the_servers_field_errors(lab, namespace, tmp_path):
    bad = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Not_Valid", "namespace": namespace}}
    rc, tasks = run_tasks([apply_task(bad)], tmp_path)
    assert rc != 0
    msg = result_of(tasks)["msg"]
    assert msg.startswith("invalid object") and "metadata.name" in msg


def test_a_field_the_schema_does_not_declare_fails_at_once(lab, namespace, tmp_path):
    repo = {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository",
            "metadata": {"name": "undeclared", "namespace": namespace},
            "spec": {"url": "https://charts.example.invalid", "interval": "10m", "noSuchField": True}}
    started = time.monotonic()
    rc, tasks = run_tasks([apply_task(repo)], tmp_path)
    assert rc != 0
    msg = result_of(tasks)["msg"]
    assert msg.startswith("invalid object") and "noSuchField" in msg
    assert result_of(tasks)["requests"]["PATCH"] == 1  # not retried
    assert time.monotonic() - started < 20


def test_bad_manifests_are_all_reported_before_any_write(lab, namespace, tmp_path, kubeconfigs):
    good = configmap(namespace, "would-be-written")
    objects = [good, {"apiVersion": "v1", "kind": "ConfigMap"}, {"kind": "Secret", "metadata": {"name": "x"}}, good]
    rc, tasks = run_tasks([apply_task(objects)], tmp_path)
    assert rc != 0
    result = result_of(tasks)
    assert result["problems"] == ["manifest 1 metadata.name: is required", "manifest 2 apiVersion: is required",
                                  "manifest 3: ConfigMap %s/would-be-written is listed twice (also manifest 0)"
                                  % namespace], result["problems"]
    assert result["msg"] == "invalid input, nothing was changed: " + "; ".join(result["problems"])
    assert kubectl(kubeconfigs[HOST], "get", "-n", namespace, "configmap", "would-be-written",
                   check=False).returncode != 0


def test_forbidden_names_verb_resource_and_namespace(lab, namespace, tmp_path):
    rc, tasks = run_tasks([{"name": "apply", "c5c3.cobaltcore.apply": {
        "kubeconfig": KUBECONFIG, "impersonate_user": "system:serviceaccount:default:nobody",
        "definition": configmap(namespace)}}], tmp_path)
    assert rc != 0
    msg = result_of(tasks)["msg"]
    assert msg.startswith("forbidden: the credentials may not get") and "/namespaces/%s/configmaps" % namespace in msg


def test_apiserver_restart_during_apply_converges_without_duplicates(lab, namespace, tmp_path, kubeconfigs):
    from regionlab import kube, processes
    cluster = config.cluster(HOST)
    objects = [configmap(namespace, "restart-%03d" % i) for i in range(150)]
    session = kube._session(cluster)
    url = "%s/api/v1/namespaces/%s/configmaps" % (cluster.server, namespace)
    restarted = []

    def restart():
        # Restart the API server once the apply has written some of the objects.
        deadline = time.time() + 60
        while time.time() < deadline:
            count = len([i for i in session.get(url, timeout=5).json().get("items", [])
                         if i["metadata"]["name"].startswith("restart-")])
            if count >= 10:
                restarted.append(count)
                processes.stop("apiserver-%s" % HOST)
                kube.start_cluster(cluster)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=restart)
    thread.start()
    rc, tasks = run_tasks([apply_task(objects)], tmp_path)
    thread.join()
    processes.wait_until(lambda: kube.apiserver_ready(cluster), 120, "apiserver restart")
    assert restarted and restarted[0] < 150, "the API server was not restarted during the apply"
    assert rc == 0, result_of(tasks).get("msg")
    rc, tasks = run_tasks([apply_task(objects)], tmp_path)
    assert rc == 0 and result_of(tasks)["summary"] == {"unchanged": 150}
    names = kubectl(kubeconfigs[HOST], "get", "-n", namespace, "configmaps", "-o", "name").stdout.split()
    assert len([n for n in names if "restart-" in n]) == 150


def test_one_module_defaults_group_sets_auth_for_both_collections(lab, namespace, tmp_path):
    play = [{"name": "defaults", "hosts": HOST, "gather_facts": False,
             "module_defaults": {"group/c5c3.cobaltcore.cobaltcore": {"kubeconfig": KUBECONFIG}},
             "tasks": [
                 {"name": "apply", "c5c3.cobaltcore.apply": {"definition": configmap(namespace, "defaults")}},
                 {"name": "read", "kubernetes.core.k8s_info": {"kind": "ConfigMap", "namespace": namespace,
                                                               "name": "defaults"}},
             ]}]
    path = tmp_path / "defaults.yml"
    path.write_text(json.dumps(play))
    rc, out = run_playbook(path)
    assert rc == 0, json.dumps(out["stats"])
    read = out["plays"][0]["tasks"][1]["hosts"][HOST]
    assert read["resources"][0]["data"] == {"a": "1"}


def test_kubeconfig_given_as_a_dict_in_memory(lab, namespace, tmp_path):
    task = apply_task(configmap(namespace, "in-memory"))
    task["c5c3.cobaltcore.apply"]["kubeconfig"] = "{{ lookup('ansible.builtin.file', cobaltcore_kubeconfig) | from_yaml }}"
    task["no_log"] = False
    rc, tasks = run_tasks([task], tmp_path)
    assert rc == 0, result_of(tasks).get("msg")
    assert result_of(tasks)["results"][0]["result"] == "created"
    text = json.dumps(result_of(tasks))
    with open(lab["clusters"][HOST]["kubeconfig"]) as handle:
        key = yaml.safe_load(handle)["users"][0]["user"]["client-key-data"]
    assert key not in text  # the credentials stay masked ...
    assert result_of(tasks)["results"][0]["kind"] == "ConfigMap"  # ... and nothing else is


def test_a_field_removed_inside_a_list_item_is_applied(lab, namespace, tmp_path, kubeconfigs):
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": namespace},
               "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}
    rc, tasks = run_tasks([apply_task(service)], tmp_path)
    assert rc == 0
    del service["spec"]["ports"][0]["targetPort"]
    rc, tasks = run_tasks([apply_task(service)], tmp_path, check=True)
    assert result_of(tasks)["results"][0]["result"] == "configured"  # check mode sees it too
    rc, tasks = run_tasks([apply_task(service)], tmp_path)
    assert result_of(tasks)["results"][0]["result"] == "configured"
    live = json.loads(kubectl(kubeconfigs[HOST], "get", "-n", namespace, "service", "web", "-o", "json").stdout)
    assert live["spec"]["ports"][0]["targetPort"] == 80  # back to the server's default


def test_secrets_stay_hidden_when_the_call_fails_or_comes_as_yaml_text(lab, namespace, tmp_path):
    pem = "-----BEGIN KEY-----\nTOPSECRETLINE1xyz\nTOPSECRETLINE2xyz\n-----END KEY-----\n"
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pem", "namespace": namespace},
              "stringData": {"key.pem": pem, "password": "hunter2-TOPSECRET"}}
    text = yaml.safe_dump_all([secret, configmap(namespace, "dup"), configmap(namespace, "dup")])
    rc, tasks = run_tasks([apply_task(text)], tmp_path)
    assert rc != 0 and "listed twice" in result_of(tasks)["msg"]
    rc2, tasks2 = run_tasks([apply_task(yaml.safe_dump(secret))], tmp_path)
    assert rc2 == 0, result_of(tasks2).get("msg")
    rc3, tasks3 = run_tasks([apply_task("kind: Secret\nstringData: {password: hunter2-TOPSECRET\n")], tmp_path)
    assert rc3 != 0 and "not valid YAML at line" in result_of(tasks3)["msg"]
    for outcome in (tasks, tasks2, tasks3):
        dumped = json.dumps(result_of(outcome))
        assert "TOPSECRET" not in dumped


def test_secrets_stay_hidden_when_an_argument_fails_validation(lab, namespace, tmp_path):
    """AnsibleModule validates before the module runs, and echoes every argument when that fails."""
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "early", "namespace": namespace},
              "stringData": {"password": "hunter2-TOPSECRET"}}
    for definition in (secret, yaml.safe_dump(secret)):
        rc, tasks = run_tasks([apply_task(definition, wait_timeout="x")], tmp_path)
        result = result_of(tasks)
        assert rc != 0 and "wait_timeout" in result["msg"], result
        assert "TOPSECRET" not in json.dumps(result)
        assert base64.b64encode(b"hunter2-TOPSECRET").decode() not in json.dumps(result)
    assert "early" in json.dumps(result["invocation"]["module_args"]["definition"])


def test_check_mode_reports_a_removed_field(lab, namespace, tmp_path):
    run_tasks([apply_task(configmap(namespace, "shrink", a="1", b="2"))], tmp_path)
    rc, tasks = run_tasks([apply_task(configmap(namespace, "shrink", a="1"))], tmp_path, check=True, diff=True)
    assert rc == 0
    (entry,) = result_of(tasks)["results"]
    assert entry["result"] == "configured"
    assert entry["diff"]["before"]["data"] == {"a": "1", "b": "2"} and entry["diff"]["after"]["data"] == {"a": "1"}
