# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_info: the server's version and served API groups from three requests, and its failures."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import socket
import time

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
