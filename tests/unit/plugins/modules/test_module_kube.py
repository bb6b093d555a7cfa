# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""run() of the Kubernetes modules: arguments, check mode, results and failure messages.

The modules run in-process as Ansible runs them; the API behind the KubeClient seam is
module_harness.FakeKube (the lab's integration tests run them against real API servers).
"""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import json
import datetime
import os
import stat

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import masking
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import api_error
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.drift import DRIFT_ENV
from ansible_collections.c5c3.cobaltcore.plugins.modules import (
    apply, gardener_cluster_info, gardener_kubeconfig, gardener_shoot, generated_secret, ironcore_bmc, ironcore_server_claim,
    ironcore_server_info, wait)

from module_harness import GARDENER, IRONCORE, assert_hidden, run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import


def configmap(name="a", namespace="n", **data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": data or {"k": "v"}}


def writes(api, dry_run=None):
    return [c for c in api.calls if c[0] in ("PATCH", "DELETE", "POST") and (dry_run is None or c[-1] == dry_run)]


# -- apply ----------------------------------------------------------------------

def test_apply_creates_then_changes_nothing(kube):
    result, _text = run_module(apply.main, {"definition": [configmap("a"), configmap("b")]})
    assert result["changed"] and result["summary"] == {"created": 2}
    assert [r["result"] for r in result["results"]] == ["created", "created"]
    assert result["requests"]["PATCH"] == 2
    kube.calls[:] = []
    result, _text = run_module(apply.main, {"definition": [configmap("a"), configmap("b")]})
    assert not result["changed"] and result["summary"] == {"unchanged": 2}
    assert writes(kube) == []


def test_apply_check_mode_sends_dry_runs_and_stores_nothing(kube):
    result, _text = run_module(apply.main, {"definition": configmap()}, check_mode=True)
    assert result["changed"] and result["results"][0]["result"] == "created"
    assert writes(kube) == [("PATCH", "ConfigMap", "a", "n", True)]
    assert kube.find("v1", "ConfigMap", "a", "n") is None


def test_apply_yaml_text_namespace_default_and_diff(kube):
    kube.add(configmap("a", k="old"))
    text = yaml.safe_dump_all([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
                                "data": {"k": "new"}}])
    result, _text = run_module(apply.main, {"definition": text, "namespace": "n"}, diff=True)
    assert result["results"][0]["result"] == "configured"
    (diff,) = result["diff"]
    assert diff["before"]["data"] == {"k": "old"} and diff["after"]["data"] == {"k": "new"}
    assert diff["before_header"] == "ConfigMap n/a"


def test_apply_absent_deletes_and_check_mode_dry_runs_the_delete(kube):
    kube.add(configmap("a"))
    result, _text = run_module(apply.main, {"definition": [configmap("a"), configmap("gone")], "state": "absent"},
                               check_mode=True)
    assert [r["result"] for r in result["results"]] == ["deleted", "absent"] and result["changed"]
    assert writes(kube) == [("DELETE", "ConfigMap", "a", "n", True)]
    assert kube.find("v1", "ConfigMap", "a", "n") is not None
    result, _text = run_module(apply.main, {"definition": configmap("a"), "state": "absent"})
    assert result["changed"] and kube.find("v1", "ConfigMap", "a", "n") is None


def test_apply_reports_every_bad_manifest_before_any_request(kube):
    result, _text = run_module(apply.main, {"definition": [configmap("a"), {"kind": "ConfigMap"}, configmap("a")]})
    assert result["failed"] and result["problems"] == [
        "manifest 1 apiVersion: is required", "manifest 1 metadata.name: is required",
        "manifest 2: ConfigMap n/a is listed twice (also manifest 0)"]
    assert kube.calls == []


def test_apply_needs_a_namespace_for_namespaced_kinds(kube):
    obj = configmap()
    del obj["metadata"]["namespace"]
    result, _text = run_module(apply.main, {"definition": obj})
    assert result["failed"] and "is namespaced, but neither the manifest nor the namespace option names one" \
        in result["msg"]


def test_apply_needs_definition_or_src(kube):
    result, _text = run_module(apply.main, {})
    assert result["failed"] and result["msg"] == "one of the following is required: definition, src"


def test_apply_reads_src_files_and_waits(kube, tmp_path):
    path = tmp_path / "cm.yaml"
    path.write_text(yaml.safe_dump(configmap("from-file")))
    result, _text = run_module(apply.main, {"src": [str(path)], "wait": True, "wait_timeout": 5})
    assert result["results"][0]["name"] == "from-file"
    assert result["ready"][0]["ready"] and result["ready"][0]["name"] == "from-file"


def test_apply_failure_names_the_refused_request(kube):
    kube.failures[("PATCH", "ConfigMap")] = api_error("PATCH", "/api/v1/namespaces/n/configmaps/a", 403,
                                                      {"reason": "Forbidden", "message": "denied"})
    result, _text = run_module(apply.main, {"definition": configmap()})
    assert result["failed"]
    assert result["msg"] == "forbidden: the credentials may not patch /api/v1/namespaces/n/configmaps/a (denied)"
    assert result["error"]["status"] == 403 and result["requests"]["PATCH"] == 1


# -- wait -----------------------------------------------------------------------

def test_wait_for_named_objects_and_by_labels(kube):
    kube.add(dict(configmap("a"), metadata={"name": "a", "namespace": "n", "labels": {"app": "x"}}))
    result, _text = run_module(wait.main, {"resources": [{"api_version": "v1", "kind": "ConfigMap", "name": "a",
                                                          "namespace": "n"}], "timeout": 1})
    assert not result["changed"] and result["resources"][0]["ready"]
    result, _text = run_module(wait.main, {"api_version": "v1", "kind": "ConfigMap", "label_selectors": ["app=x"],
                                           "expression": "data.k == 'v'", "timeout": 1}, check_mode=True)
    assert [r["name"] for r in result["resources"]] == ["a"] and result["resources"][0]["ready"]


def test_wait_failure_messages(kube):
    result, _text = run_module(wait.main, {"api_version": "v1", "kind": "ConfigMap", "label_selectors": ["app=none"]})
    assert result["failed"] and result["msg"] == "no ConfigMap matches the label selector app=none"
    result, _text = run_module(wait.main, {"resources": [{"api_version": "v1", "kind": "ConfigMap", "name": "b",
                                                          "namespace": "n"}], "timeout": 0})
    assert result["failed"] and result["msg"] == "1 object(s) not ready after 0s: ConfigMap n/b: not found"
    assert result["objects"][0]["found"] is False


def test_wait_reports_the_latest_warning_event_of_a_kind_that_reports_errors_only_there(kube):
    pool = {"apiVersion": "ceph.rook.io/v1", "kind": "CephBlockPool",
            "metadata": {"name": "t-volumes", "namespace": "rook-ceph", "uid": "u1", "generation": 1},
            "status": {"phase": "Failure"}}
    kube.add(pool)

    def event(name, uid, kind, message, stamp):
        kube.add({"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": "rook-ceph"},
                  "involvedObject": {"uid": uid}, "type": kind, "reason": "ReconcileFailed", "message": message,
                  "lastTimestamp": stamp})
    event("old", "u1", "Warning", "failed to create pool: first", "2026-01-01T00:00:00Z")
    event("new", "u1", "Warning", "failed to create pool: second", "2026-01-01T00:01:00Z")
    event("normal", "u1", "Normal", "not an error", "2026-01-01T00:02:00Z")
    event("other", "u2", "Warning", "another pool's error", "2026-01-01T00:03:00Z")
    ref = {"api_version": "ceph.rook.io/v1", "kind": "CephBlockPool", "name": "t-volumes", "namespace": "rook-ceph"}
    result, _text = run_module(wait.main, {"resources": [ref], "timeout": 1})
    assert result["failed"] and result["msg"].startswith("1 object(s) failed: CephBlockPool rook-ceph/t-volumes: ")
    assert result["msg"].endswith("; last Warning event ReconcileFailed: failed to create pool: second"), result["msg"]
    # A kind whose errors are in its status gets no event line.
    kube.add(dict(configmap("c"), metadata={"name": "c", "namespace": "rook-ceph", "uid": "u1"}))
    result, _text = run_module(wait.main, {"resources": [{"api_version": "v1", "kind": "ConfigMap", "name": "c",
                                                          "namespace": "rook-ceph"}], "expression": "data.x == 'y'",
                                           "timeout": 0})
    assert result["failed"] and "Warning event" not in result["msg"]


def test_wait_argument_rules(kube):
    result, _text = run_module(wait.main, {"label_selectors": ["a=b"]})
    assert result["failed"] and "label_selectors" in result["msg"] and "api_version" in result["msg"]
    result, _text = run_module(wait.main, {"resources": [], "label_selectors": ["a"], "api_version": "v1",
                                           "kind": "ConfigMap"})
    assert result["failed"] and "mutually exclusive" in result["msg"]


def test_wait_refuses_a_bad_expression(kube):
    kube.add(configmap())
    result, _text = run_module(wait.main, {"resources": [{"api_version": "v1", "kind": "ConfigMap", "name": "a",
                                                          "namespace": "n"}], "expression": "data.[", "timeout": 0})
    assert result["failed"] and result["msg"].startswith("invalid input, nothing was changed: expression: 'data.['"), result["msg"]


# -- generated_secret ---------------------------------------------------------------

def test_generated_secret_generates_once_and_keeps_values(kube):
    args = {"namespace": "n", "secrets": [{"name": "s", "generate": [{"key": "password", "length": 20}],
                                           "values": {"user": "admin"}, "templates": {"dsn": "admin:${password}"}}]}
    result, _text = run_module(generated_secret.main, args)
    assert result["changed"] and result["secrets"] == [
        {"name": "s", "namespace": "n", "result": "created", "generated": ["password"]}]
    data = dict((k, base64.b64decode(v).decode()) for k, v in kube.find("v1", "Secret", "s", "n")["data"].items())
    assert len(data["password"]) == 20 and data["dsn"] == "admin:" + data["password"] and data["user"] == "admin"
    result, _text = run_module(generated_secret.main, args)
    assert not result["changed"] and result["secrets"][0]["generated"] == []
    assert base64.b64decode(kube.find("v1", "Secret", "s", "n")["data"]["password"]).decode() == data["password"]


@pytest.mark.parametrize("exists", [False, True], ids=["absent", "without-the-key"])
def test_generated_secret_never_replaces_a_value_another_run_wrote_first(kube, monkeypatch, exists):
    """Two runs at once: the other one writes the password between this one's read and write."""
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import generated_secret as logic
    theirs = base64.b64encode(b"theirs-0123456789abcdef").decode()
    if exists:
        kube.add({"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {"name": "s", "namespace": "n"},
                  "data": {"user": base64.b64encode(b"admin").decode()}})
    desired = logic.desired_secret

    def racing(spec, live, found=None, **kwargs):
        manifest = desired(spec, live, found, **kwargs)
        if live is None or "password" not in (live.get("data") or {}):
            other = kube.find("v1", "Secret", "s", "n") or {
                "apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {"name": "s", "namespace": "n"}}
            other = dict(other, data=dict(other.get("data") or {}, password=theirs))
            kube.add(other)  # a new resourceVersion
        return manifest

    monkeypatch.setattr(logic, "desired_secret", racing)
    result, _text = run_module(generated_secret.main, {"namespace": "n", "secrets": [{"name": "s", "generate": ["password"]}]})
    assert not result.get("failed"), result
    assert kube.find("v1", "Secret", "s", "n")["data"]["password"] == theirs
    assert result["secrets"][0]["generated"] == [] and not result["changed"]


def test_generated_secret_copies_another_secrets_value_decoded_and_never_shows_it(kube):
    secret = "copied-credential-secret-0123456789"
    kube.add({"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {"name": "src", "namespace": "n"},
              "data": {"value": base64.b64encode(secret.encode()).decode()}})
    result, text = run_module(generated_secret.main, {"namespace": "n", "secrets": [{
        "name": "s", "values_from": [{"key": "value", "api_version": "v1", "kind": "Secret", "name": "src",
                                      "field": "data.value"}],
        "templates": {"clouds.yaml": "secret: ${value}"}}]}, diff=True)
    assert not result.get("failed"), result
    data = kube.find("v1", "Secret", "s", "n")["data"]
    assert base64.b64decode(data["value"]).decode() == secret
    assert base64.b64decode(data["clouds.yaml"]).decode() == "secret: " + secret
    assert secret not in text and base64.b64encode(secret.encode()).decode() not in text


def test_generated_secret_check_mode(kube):
    args = {"namespace": "n", "secrets": [{"name": "s", "generate": ["password"]}]}
    result, _text = run_module(generated_secret.main, args, check_mode=True)
    assert result["changed"] and result["secrets"][0]["result"] == "created"
    # An absent Secret is only ever created (POST, here a dry run), so a concurrent writer's value is never replaced.
    (call,) = writes(kube)
    assert call[0] == "POST" and call[1] == "/api/v1/namespaces/n/secrets" and call[3]["dryRun"] == "All"
    assert kube.find("v1", "Secret", "s", "n") is None


def test_generated_secret_failures_list_every_problem(kube):
    result, _text = run_module(generated_secret.main, {"secrets": [{"name": "Bad_Name", "generate": ["p"]},
                                                                   {"name": "ok", "namespace": "n"}]})
    assert result["failed"] and result["msg"].startswith("invalid input, nothing was changed: ")
    assert result["problems"] == ["secrets[0].name: 'Bad_Name' is not a valid Secret name",
                                  "secrets[0].namespace: None is missing or invalid",
                                  "secrets[1]: nothing to generate, set or render"]
    result, _text = run_module(generated_secret.main, {"namespace": "n", "secrets": [{"name": "s", "values_from": [
        {"key": "id", "api_version": "v1", "kind": "ConfigMap", "name": "app", "field": "data.id"}]}]})
    assert result["failed"] and result["problems"] == [
        "Secret n/s values_from[0]: ConfigMap n/app (for key id) does not exist"]
    assert writes(kube) == []


# -- gardener_shoot -----------------------------------------------------------------

def shoot(name="x", **metadata):
    meta = {"name": name, "namespace": "garden-p"}
    meta.update(metadata)
    return {"apiVersion": GARDENER, "kind": "Shoot", "metadata": meta,
            "spec": {"region": "r", "kubernetes": {"version": "1.33.0"}}}


def test_gardener_shoot_creates_with_the_cluster_label_in_the_projects_namespace(kube):
    kube.add({"apiVersion": GARDENER, "kind": "Project", "metadata": {"name": "p"},
              "spec": {"namespace": "garden-p"}})
    result, _text = run_module(gardener_shoot.main, {"project": "p", "wait": False, "shoots": [
        {"name": "x", "cluster": "hv-pool-a", "spec": {"region": "r"}}]})
    assert result["namespace"] == "garden-p" and result["shoots"] == [{"name": "x", "result": "created"}]
    assert kube.find(GARDENER, "Shoot", "x", "garden-p")["metadata"]["labels"] == {"c5c3.io/cluster": "hv-pool-a"}


def test_gardener_shoot_reports_refused_updates_before_writing(kube):
    kube.add(shoot())
    result, _text = run_module(gardener_shoot.main, {"namespace": "garden-p", "wait": False, "shoots": [
        {"name": "x", "spec": {"region": "other", "kubernetes": {"version": "1.33.0"}}}, {"name": "y"}]})
    assert result["failed"] and "Shoot x spec.region: field is immutable" in result["problems"][0]
    assert result["problems"][1] == "shoots[1].spec: is required to create or update Shoot y"
    assert writes(kube) == []


def test_gardener_shoot_holds_an_existing_shoots_kubernetes_and_creates_new_ones_at_the_asked_version(kube):
    kube.add(shoot())
    args = {"namespace": "garden-p", "wait": False, "hold_kubernetes_version": True, "shoots": [
        {"name": "x", "spec": {"region": "r", "kubernetes": {"version": "1.34"}}},
        {"name": "y", "spec": {"region": "r", "kubernetes": {"version": "1.34"}}}]}
    result, _text = run_module(gardener_shoot.main, args)
    assert result["kubernetes_held"] == [{"name": "x", "runs": "1.33.0", "asked": "1.34"}]
    assert "Shoot x runs Kubernetes 1.33.0, the inventory asks for 1.34: left as it is" in str(result["warnings"][0])
    assert [r["result"] for r in result["shoots"]] == ["unchanged", "created"]
    assert kube.find(GARDENER, "Shoot", "x", "garden-p")["spec"]["kubernetes"] == {"version": "1.33.0"}
    assert kube.find(GARDENER, "Shoot", "y", "garden-p")["spec"]["kubernetes"] == {"version": "1.34"}
    # The minor it runs, without a patch: the patch it runs, no warning. Lower: refused.
    args["shoots"] = [{"name": "x", "spec": {"region": "r", "kubernetes": {"version": "1.33"}}}]
    result, _text = run_module(gardener_shoot.main, args)
    assert result["kubernetes_held"] == [] and not result.get("warnings") and result["shoots"][0]["result"] == "unchanged"
    args["shoots"] = [{"name": "x", "spec": {"region": "r", "kubernetes": {"version": "1.32"}}}]
    result, _text = run_module(gardener_shoot.main, args)
    assert result["failed"] and "kubernetes version downgrade is not supported" in result["problems"][0]


def test_gardener_shoot_holds_a_lower_worker_count_of_an_existing_shoot_and_applies_a_higher_one(
        kube, tmp_path, monkeypatch):
    live = shoot()
    live["spec"]["provider"] = {"type": "metal", "workers": [{"name": "worker", "minimum": 2, "maximum": 2}]}
    kube.add(live)

    def spec(count):
        return {"region": "r", "kubernetes": {"version": "1.33.0"},
                "provider": {"type": "metal", "workers": [{"name": "worker", "minimum": count, "maximum": count}]}}

    args = {"namespace": "garden-p", "wait": False, "hold_workers": True, "shoots": [{"name": "x", "spec": spec(1)}]}
    result, _text = run_module(gardener_shoot.main, args)
    assert result["workers_held"] == [{"name": "x", "worker": "worker", "runs": 2, "asked": 1}]
    assert "Shoot x keeps worker worker at 2 machines, the inventory asks for 1: playbooks/scale_in.yml" in str(
        result["warnings"][0])
    assert result["shoots"][0]["result"] == "unchanged"
    assert kube.find(GARDENER, "Shoot", "x", "garden-p")["spec"]["provider"]["workers"][0]["maximum"] == 2
    # drift.yml's check-mode run reports the held counts as the inventory's and the live ones.
    found = tmp_path / "drift.json"
    monkeypatch.setenv(DRIFT_ENV, str(found))
    result, _text = run_module(gardener_shoot.main, args, check_mode=True)
    monkeypatch.delenv(DRIFT_ENV)
    (drift,) = json.loads(found.read_text())["drift"]
    assert (drift["name"], drift["fields"]) == ("x", [
        {"field": "spec.provider.workers[name=worker].minimum", "declared": 1, "live": 2},
        {"field": "spec.provider.workers[name=worker].maximum", "declared": 1, "live": 2}])
    args["shoots"] = [{"name": "x", "spec": spec(3)}]
    result, _text = run_module(gardener_shoot.main, args)
    assert result["workers_held"] == [] and result["shoots"][0]["result"] == "configured"
    assert kube.find(GARDENER, "Shoot", "x", "garden-p")["spec"]["provider"]["workers"][0]["maximum"] == 3
    # Without the hold (scale_in.yml, once the surplus Nodes are gone) the lower count is applied.
    args.update(hold_workers=False, shoots=[{"name": "x", "spec": spec(1)}])
    result, _text = run_module(gardener_shoot.main, args)
    assert "workers_held" not in result and result["shoots"][0]["result"] == "configured"
    assert kube.find(GARDENER, "Shoot", "x", "garden-p")["spec"]["provider"]["workers"][0] == {
        "name": "worker", "minimum": 1, "maximum": 1}


def test_gardener_shoot_needs_an_existing_project(kube):
    result, _text = run_module(gardener_shoot.main, {"project": "nope", "shoots": [{"name": "x"}]})
    assert result["failed"] and result["msg"] == "Gardener project nope does not exist"


def test_gardener_shoot_delete_in_check_mode_is_a_server_dry_run(kube):
    kube.add(shoot())
    kube.on_request = lambda method, path, body, query: (200, {})
    result, _text = run_module(gardener_shoot.main, {"namespace": "garden-p", "state": "absent",
                                                     "shoots": [{"name": "x"}, {"name": "gone"}]}, check_mode=True)
    assert result["changed"] and result["shoots"] == [{"name": "x", "result": "deleted"},
                                                      {"name": "gone", "result": "absent"}]
    annotate, delete = writes(kube)
    assert annotate[:2] == ("PATCH", "/apis/core.gardener.cloud/v1beta1/namespaces/garden-p/shoots/x")
    assert annotate[3] == {"dryRun": "All"}
    assert delete == ("DELETE", "Shoot", "x", "garden-p", True)
    assert kube.find(GARDENER, "Shoot", "x", "garden-p") is not None


def test_gardener_shoot_check_mode_delete_passes_gardeners_refusal_for_the_missing_annotation(kube):
    """A dry-run annotation is not stored, so Gardener refuses the dry-run deletion for its absence."""
    kube.add(shoot())
    kube.on_request = lambda method, path, body, query: (200, {})
    path = "/apis/core.gardener.cloud/v1beta1/namespaces/garden-p/shoots/x"
    kube.failures[("DELETE", "Shoot")] = api_error("DELETE", path, 403, {
        "reason": "Forbidden",
        "message": 'shoots.core.gardener.cloud "x" is forbidden: must have a "confirmation.gardener.cloud/deletion" '
                   'annotation to delete'})
    result, _text = run_module(gardener_shoot.main, {"namespace": "garden-p", "state": "absent",
                                                     "shoots": [{"name": "x"}]}, check_mode=True)
    assert not result.get("failed") and result["changed"], result
    # Any other refusal (RBAC) fails the check.
    kube.failures[("DELETE", "Shoot")] = api_error("DELETE", path, 403, {"reason": "Forbidden", "message": "RBAC"})
    result, _text = run_module(gardener_shoot.main, {"namespace": "garden-p", "state": "absent",
                                                     "shoots": [{"name": "x"}]}, check_mode=True)
    assert result["failed"] and result["msg"] == "forbidden: the credentials may not delete %s (RBAC)" % path


def test_gardener_shoot_delete_annotates_deletes_and_waits(kube):
    kube.add(shoot(annotations={"confirmation.gardener.cloud/deletion": "true"}))
    kube.add(shoot("y"))
    kube.on_request = lambda method, path, body, query: (200, {})
    result, _text = run_module(gardener_shoot.main, {"namespace": "garden-p", "state": "absent", "wait_timeout": 5,
                                                     "shoots": [{"name": "x"}, {"name": "y"}]})
    assert result["changed"] and not result.get("failed"), result
    assert [w[:2] for w in writes(kube)] == [
        ("DELETE", "Shoot"), ("PATCH", "/apis/core.gardener.cloud/v1beta1/namespaces/garden-p/shoots/y"),
        ("DELETE", "Shoot")]
    assert all(not w[-1] for w in writes(kube))
    assert kube.find(GARDENER, "Shoot", "x", "garden-p") is None


def test_gardener_shoot_deletes_the_shoots_labelled_with_a_cluster_whatever_their_names(kube):
    kube.add(shoot("old-name", labels={"c5c3.io/cluster": "hv-pool-c"},
                   annotations={"confirmation.gardener.cloud/deletion": "true"}))
    kube.add(shoot("hv-pool-a", labels={"c5c3.io/cluster": "hv-pool-a"}))
    args = {"namespace": "garden-p", "state": "absent", "wait_timeout": 5, "clusters": ["hv-pool-c"]}
    result, _text = run_module(gardener_shoot.main, args)
    assert result["changed"] and result["shoots"] == [{"name": "old-name", "result": "deleted"}], result
    assert kube.find(GARDENER, "Shoot", "old-name", "garden-p") is None
    assert kube.find(GARDENER, "Shoot", "hv-pool-a", "garden-p") is not None
    result, _text = run_module(gardener_shoot.main, args)
    assert not result["changed"] and result["shoots"] == []


# -- gardener_kubeconfig -------------------------------------------------------------

def admin_kubeconfig(days=1):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, u"admin")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=days)).sign(key, hashes.SHA256()))
    from cryptography.hazmat.primitives import serialization
    pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "x", "cluster": {"server": "https://api.x.example"}}],
        "users": [{"name": "x", "user": {"client-certificate-data": base64.b64encode(pem).decode(),
                                         "client-key-data": base64.b64encode(key_pem).decode()}}],
        "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}]})


@pytest.fixture
def garden(kube):
    kube.add(shoot())
    fetched = admin_kubeconfig()
    kube.on_request = lambda method, path, body, query: (201, {"status": {
        "kubeconfig": base64.b64encode(fetched.encode()).decode(), "expirationTimestamp": "2999-01-01T00:00:00Z"}})
    kube.fetched = fetched
    return kube


# -- gardener_cluster_info -----------------------------------------------------------

def test_gardener_cluster_info_reads_through_a_shoot_that_advertises_an_api_server(garden):
    """The fake is the garden and, through the fetched kubeconfig, the Shoot's cluster too."""
    live = garden.find(GARDENER, "Shoot", "x", "garden-p")
    live["metadata"]["labels"] = {"c5c3.io/cluster": "cp-b"}
    live["status"] = {"advertisedAddresses": [{"name": "service-account-issuer", "url": "https://issuer"},
                                              {"name": "external", "url": "https://api.x.example"}]}
    garden.add(shoot("y", labels={"c5c3.io/cluster": "hv-pool-c"}))  # no kube-apiserver advertised
    garden.add({"apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane",
                "metadata": {"name": "t-1", "namespace": "openstack-t-1"}})
    read = {"api_version": "c5c3.io/v1alpha1", "kind": "ControlPlane"}
    result, text = run_module(gardener_cluster_info.main, {"namespace": "garden-p", "objects": [read],
                                                           "clusters": ["cp-b", "hv-pool-c", "gone"]}, check_mode=True)
    assert not result.get("failed") and not result["changed"], result
    (cp, pool, gone) = result["clusters"]
    assert (cp["shoot"], cp["api_server"]) == ("x", True)
    assert [o["metadata"]["name"] for o in cp["objects"][0]["items"]] == ["t-1"]
    assert (pool["shoot"], pool["api_server"], pool["objects"]) == ("y", False, [])
    assert gone == {"cluster": "gone", "shoot": None, "api_server": False, "objects": []}
    # One admin kubeconfig request (for x; Gardener stores nothing for it), and its credentials nowhere in the output.
    assert [c[:2] for c in writes(garden)] == [
        ("POST", "/apis/core.gardener.cloud/v1beta1/namespaces/garden-p/shoots/x/adminkubeconfig")]
    assert garden.clients[-1]["kubeconfig"] == garden.fetched
    assert_hidden(text, *masking.kubeconfig_credentials(garden.fetched))


def test_gardener_cluster_info_never_reads_a_secrets_data(garden):
    result, _text = run_module(gardener_cluster_info.main, {"namespace": "garden-p", "clusters": ["x"], "objects": [
        {"api_version": "v1", "kind": "Secret", "namespace": "n"}]})
    assert result["failed"] and "objects[0].kind: gardener_cluster_info reads Secrets only as a list with " \
        "metadata_only" in result["msg"]
    assert garden.calls == []


def test_gardener_kubeconfig_return_content_gives_a_usable_kubeconfig_to_a_no_log_task(garden):
    result, _text = run_module(gardener_kubeconfig.main, {"namespace": "garden-p", "return_content": True,
                                                          "shoots": [{"name": "x"}]}, no_log=True)
    assert not result.get("failed"), result
    assert result["kubeconfigs"] == {"x": garden.fetched}
    parsed = yaml.safe_load(result["kubeconfigs"]["x"])
    assert parsed["users"][0]["user"]["client-key-data"].startswith("LS0t")


def test_gardener_kubeconfig_return_content_needs_no_log(garden):
    result, text = run_module(gardener_kubeconfig.main, {"namespace": "garden-p", "return_content": True,
                                                         "shoots": [{"name": "x"}]})
    assert result["failed"] and "task must set no_log: true" in result["msg"]
    assert writes(garden) == [] and "kubeconfigs" not in result


def test_gardener_kubeconfig_an_unusable_answer_is_the_servers_fault_not_the_input(garden, tmp_path):
    garden.on_request = lambda method, path, body, query: (201, {"status": {}})
    path = tmp_path / "x.yaml"
    result, _text = run_module(gardener_kubeconfig.main, {"namespace": "garden-p", "shoots": [{"name": "x", "path": str(path)}]})
    assert result["failed"] and not result["msg"].startswith("invalid input"), result["msg"]
    assert "Shoot garden-p/x: the adminkubeconfig answer is unusable: status.kubeconfig" in result["msg"]
    assert not path.exists()


def test_gardener_kubeconfig_writes_a_private_file_and_keeps_it_while_valid(garden, tmp_path):
    path = tmp_path / "kube" / "x.yaml"
    args = {"namespace": "garden-p", "shoots": [{"name": "x", "path": str(path)}]}
    result, _text = run_module(gardener_kubeconfig.main, args, diff=True)
    assert result["changed"] and result["shoots"][0]["renewed"] and result["shoots"][0]["reason"] == "no kubeconfig yet"
    assert path.read_text() == garden.fetched
    assert stat.S_IMODE(os.stat(str(path)).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(str(path.parent)).st_mode) == 0o700
    assert result["diff"][0]["after"]["expires"] == result["shoots"][0]["expires"]
    result, _text = run_module(gardener_kubeconfig.main, args)
    assert not result["changed"] and result["shoots"][0]["server"] == "https://api.x.example"
    assert len(writes(garden)) == 1


def test_gardener_kubeconfig_check_mode_fetches_nothing(garden, tmp_path):
    result, _text = run_module(gardener_kubeconfig.main, {"namespace": "garden-p", "shoots": [
        {"name": "x", "path": str(tmp_path / "x.yaml")}]}, check_mode=True)
    assert result["changed"] and result["shoots"][0]["renewed"] and writes(garden) == []
    assert not (tmp_path / "x.yaml").exists()


def test_gardener_kubeconfig_argument_problems(garden):
    result, _text = run_module(gardener_kubeconfig.main, {"namespace": "garden-p", "expiration_seconds": 60,
                                                          "renew_before": 60, "shoots": [{"name": "x"}]})
    assert result["failed"] and result["problems"] == [
        "expiration_seconds: Gardener refuses less than 600 seconds",
        "renew_before: must be at least 0 and less than expiration_seconds",
        "shoots[0].path: needed unless return_content is true"]


# -- IronCore ---------------------------------------------------------------------------

BMC_ARGS = {"secrets": [{"name": "bmc-1", "username": "root", "password": "pw-123456"}],
            "bmcs": [{"name": "bmc-a", "mac_address": "52:54:00:00:00:01", "ip": "10.0.0.1", "secret": "bmc-1",
                      "labels": {"c5c3.io/machine-pool": "rack-1"}}],
            "wait": False, "wait_servers": False, "check_credentials": False}


def test_ironcore_bmc_applies_secrets_and_bmcs(kube):
    result, _text = run_module(ironcore_bmc.main, BMC_ARGS)
    assert [(r["kind"], r["result"]) for r in result["results"]] == [("BMCSecret", "created"), ("BMC", "created")]
    assert kube.find(IRONCORE, "BMC", "bmc-a")["spec"]["bmcSecretRef"] == {"name": "bmc-1"}
    assert result["bmcs"] == [{"name": "bmc-a", "state": None, "servers": []}]


def test_ironcore_bmc_check_mode_and_absent(kube):
    result, _text = run_module(ironcore_bmc.main, BMC_ARGS, check_mode=True)
    assert result["changed"] and all(w[-1] for w in writes(kube)) and "bmcs" not in result
    run_module(ironcore_bmc.main, BMC_ARGS)
    result, _text = run_module(ironcore_bmc.main, dict(BMC_ARGS, state="absent"))
    assert [r["result"] for r in result["results"]] == ["deleted", "deleted"]
    assert kube.find(IRONCORE, "BMC", "bmc-a") is None


def test_ironcore_bmc_lists_every_problem(kube):
    result, _text = run_module(ironcore_bmc.main, {"secrets": [{"name": "bmc-1", "username": "root",
                                                                "password": "pw-123456"}],
                                                   "bmcs": [{"name": "b", "mac_address": "zz", "ip": "nope",
                                                             "secret": "other"}]})
    assert result["failed"] and result["problems"] == [
        "bmcs[0].mac_address: 'zz' is not a MAC address", "bmcs[0].ip: 'nope' is not an IP address",
        "bmcs[0].secret: 'other' is none of the given secrets (bmc-1)"]
    assert writes(kube) == []


def server(name, state="Available", **labels):
    return {"apiVersion": IRONCORE, "kind": "Server", "metadata": {"name": name, "labels": labels},
            "spec": {"bmcRef": {"name": "bmc-a"}}, "status": {"state": state, "powerState": "Off"}}


POOL = {"name": "hv-a", "count": 2, "selector": {"matchLabels": {"pool": "a"}}, "image": "img"}


def test_ironcore_server_claim_claims_for_each_pool(kube):
    for name in ("s1", "s2", "s3"):
        kube.add(server(name, pool="a"))
    result, _text = run_module(ironcore_server_claim.main, {"namespace": "servers", "wait": False,
                                                            "pools": [dict(POOL, ignition="{}")]})
    assert result["changed"] and result["pools"][0]["create"] == ["hv-a-1", "hv-a-2"]
    assert kube.find("v1", "Secret", "hv-a-ignition", "servers") is not None
    assert kube.find(IRONCORE, "ServerClaim", "hv-a-1", "servers")["spec"]["serverSelector"] == POOL["selector"]


def test_ironcore_server_claim_shortage_fails_but_only_warns_in_check_mode(kube):
    kube.add(server("s1", pool="a"))
    kube.add(server("s2", state="Error", pool="a"))
    result, _text = run_module(ironcore_server_claim.main, {"namespace": "servers", "wait": False, "pools": [POOL]})
    assert result["failed"] and result["msg"].startswith(
        "invalid input, nothing was changed: pools[0].count: pool hv-a is 1 server(s) short")
    assert writes(kube) == []
    result, _text = run_module(ironcore_server_claim.main, {"namespace": "servers", "wait": False, "pools": [POOL]},
                               check_mode=True)
    assert not result.get("failed") and "pool hv-a is 1 server(s) short" in str(result["warnings"])
    assert all(w[-1] for w in writes(kube))


def test_ironcore_server_info_filters_and_counts(kube):
    kube.add(server("s1", pool="a"))
    kube.add(server("s2", state="Reserved", pool="a"))
    kube.add(server("s3", pool="b"))
    result, _text = run_module(ironcore_server_info.main, {"selector": {"matchLabels": {"pool": "a"}}})
    assert [s["name"] for s in result["servers"]] == ["s1", "s2"]
    assert result["counts"] == {"Available": 1, "Reserved": 1} and not result["changed"]
    result, _text = run_module(ironcore_server_info.main, {"states": ["Available"], "names": ["s1", "s2", "s3"]})
    assert [s["name"] for s in result["servers"]] == ["s1", "s3"]
