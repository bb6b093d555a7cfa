# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_info: the server's version and served API groups from three requests, and its failures."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import socket
import time

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.modules import cluster_info

from module_harness import kubeconfig, run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import

VERSION = {"major": "1", "minor": "37", "gitVersion": "v1.37.2"}
APIS = {"kind": "APIGroupList", "groups": [
    {"name": "apps", "versions": [{"groupVersion": "apps/v1", "version": "v1"}]},
    {"name": "core.gardener.cloud", "versions": [{"groupVersion": "core.gardener.cloud/v1beta1", "version": "v1beta1"}]},
]}


def _server(answers):
    def on_request(method, path, body, query):
        return answers.get(path, (404, {"kind": "Status", "reason": "NotFound", "message": "not found"}))
    return on_request


def test_version_groups_and_versions(kube):
    kube.on_request = _server({"/version": (200, VERSION), "/api": (200, {"versions": ["v1"]}), "/apis": (200, APIS)})
    result, dummy = run_module(cluster_info.main, {"kubeconfig": kubeconfig()}, check_mode=True)
    assert not result.get("failed") and not result["changed"]
    assert result["version"]["gitVersion"] == "v1.37.2"
    assert result["api_groups"] == ["apps", "core", "core.gardener.cloud"]
    assert result["api_versions"] == ["apps/v1", "core.gardener.cloud/v1beta1", "v1"]
    assert [call[:2] for call in kube.calls] == [("GET", "/version"), ("GET", "/api"), ("GET", "/apis")]
    assert result["requests"] == {"GET": 3}
    assert kube.client_options == [{"retries": 2, "retry_budget": 10}]


def test_refused_credentials_fail_with_the_servers_answer(kube):
    kube.on_request = _server({"/version": (401, {"kind": "Status", "reason": "Unauthorized", "message": "Unauthorized"})})
    result, text = run_module(cluster_info.main, {"kubeconfig": kubeconfig()})
    assert result["failed"] and "401" in result["msg"] and "Unauthorized" in result["msg"]
    assert "version" not in result


def test_an_unreachable_server_is_reported_within_seconds():
    # A real client against a port nobody listens on: refused at once, retried twice, then reported.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.time()
    config = kubeconfig(server="https://127.0.0.1:%d" % port)
    del config["users"][0]["user"]["client-key-data"]
    result, dummy = run_module(cluster_info.main, {"kubeconfig": config})
    assert result["failed"] and "cannot reach the API server" in result["msg"] and "after 3 attempts" in result["msg"]
    assert time.time() - started < 10


GARDENER = "core.gardener.cloud/v1beta1"


def _answers():
    return _server({"/version": (200, VERSION), "/api": (200, {"versions": ["v1"]}), "/apis": (200, APIS)})


def test_objects_are_read_by_name_or_listed_in_the_same_call(kube):
    kube.on_request = _answers()
    kube.add({"apiVersion": GARDENER, "kind": "Project", "metadata": {"name": "cc", "managedFields": [{"manager": "x"}]},
              "spec": {"namespace": "garden-cc"}})
    kube.add({"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "BMC", "metadata": {"name": "b1", "labels": {"a": "1"}}})
    kube.add({"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "BMC", "metadata": {"name": "b2", "labels": {"a": "2"}}})
    objects = [{"api_version": GARDENER, "kind": "Project", "name": "cc"},
               {"api_version": GARDENER, "kind": "Project", "name": "nope"},
               {"api_version": "metal.ironcore.dev/v1alpha1", "kind": "BMC", "label_selector": "a=2"}]
    result, dummy = run_module(cluster_info.main, {"kubeconfig": kubeconfig(), "objects": objects}, check_mode=True)
    assert not result.get("failed") and not result["changed"]
    found, missing, listed = result["objects"]
    assert [o["metadata"]["name"] for o in found["items"]] == ["cc"] and found["error"] is None
    assert "managedFields" not in found["items"][0]["metadata"]
    assert missing["items"] == [] and missing["error"] is None
    assert [o["metadata"]["name"] for o in listed["items"]] == ["b2"] and listed["name"] is None


def test_a_kind_not_served_and_a_forbidden_read_are_answers_a_failing_server_is_a_failure(kube):
    kube.on_request = _answers()
    kube.failures[("GET", "Seed")] = KubeError("seeds is forbidden", status=403, reason="Forbidden")
    kube.kinds[(GARDENER, "Seed")] = ("seeds", False)
    objects = [{"api_version": GARDENER, "kind": "Seed"}, {"api_version": GARDENER, "kind": "CloudProfile", "name": "x"}]
    result, dummy = run_module(cluster_info.main, {"kubeconfig": kubeconfig(), "objects": objects})
    assert not result.get("failed")
    seeds, profile = result["objects"]
    assert (seeds["status"], seeds["error"]) == (403, "seeds is forbidden")
    assert profile["status"] == 404 and "does not serve kind CloudProfile" in profile["error"]
    kube.failures[("GET", "Seed")] = KubeError("etcdserver: request timed out", status=500, reason="InternalError")
    result, dummy = run_module(cluster_info.main, {"kubeconfig": kubeconfig(), "objects": objects[:1]})
    assert result["failed"] and "request timed out" in result["msg"]


def test_secrets_and_selectors_on_a_named_read_are_refused_before_any_request(kube):
    kube.on_request = _answers()
    objects = [{"api_version": "v1", "kind": "Secret", "name": "admin"},
               {"api_version": GARDENER, "kind": "Project", "name": "cc", "label_selector": "a=b"}]
    result, dummy = run_module(cluster_info.main, {"kubeconfig": kubeconfig(), "objects": objects})
    assert result["failed"] and result["problems"] == [
        "objects[0].kind: cluster_info reads Secrets only as a list with metadata_only",
        "objects[1]: a read by name takes no label_selector or field_selector"]
    assert kube.calls == []


def test_secrets_are_listed_with_their_metadata_only(kube):
    kube.on_request = _answers()
    kube.add({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n", "labels": {"a": "1"}},
              "data": {"password": "c2VjcmV0"}})
    objects = [{"api_version": "v1", "kind": "Secret", "label_selector": "a=1", "metadata_only": True},
               {"api_version": "v1", "kind": "Secret", "name": "s", "namespace": "n", "metadata_only": True}]
    result, text = run_module(cluster_info.main, {"kubeconfig": kubeconfig(), "objects": objects[1:]})
    assert result["failed"] and result["problems"] == [
        "objects[0].kind: cluster_info reads Secrets only as a list with metadata_only"]
    result, text = run_module(cluster_info.main, {"kubeconfig": kubeconfig(), "objects": objects[:1]})
    (listed,) = result["objects"]
    assert [o["metadata"]["name"] for o in listed["items"]] == ["s"]
    assert set(listed["items"][0]) == set(["apiVersion", "kind", "metadata"]) and "c2VjcmV0" not in text
