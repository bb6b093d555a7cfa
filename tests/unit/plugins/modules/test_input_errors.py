# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad input fails a module once, before any request: 'invalid input, nothing was changed' and its problems."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone.module import KeystoneModule
from ansible_collections.c5c3.cobaltcore.plugins.modules import apply, generated_secret, ironcore_server_claim

# No API server listens here: a module that sent a request would fail differently.
KUBECONFIG = {"apiVersion": "v1", "kind": "Config", "current-context": "nowhere",
              "clusters": [{"name": "nowhere", "cluster": {"server": "https://127.0.0.1:9"}}],
              "contexts": [{"name": "nowhere", "context": {"cluster": "nowhere", "user": "nobody"}}],
              "users": [{"name": "nobody", "user": {"token": "token-of-nobody-0123"}}]}


def run(main, args, capsys):
    with patch_module_args(args), pytest.raises(SystemExit):
        main()
    return json.loads(capsys.readouterr().out)


def assert_refused(result, problems):
    assert result["failed"] is True
    assert result["msg"] == "invalid input, nothing was changed: " + "; ".join(problems)
    assert result["problems"] == problems
    assert "requests" not in result  # no client was even built


def test_apply(capsys):
    result = run(apply.main, {"kubeconfig": KUBECONFIG, "definition": [
        {"apiVersion": "v1", "kind": "ConfigMap"}, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                                                    "stringData": {"on": True}}]}, capsys)
    assert_refused(result, ["manifest 0 metadata.name: is required",
                            "manifest 1 stringData.on: must be a string, got bool (Secret s)"])


def test_apply_of_unparsable_yaml(capsys):
    result = run(apply.main, {"kubeconfig": KUBECONFIG, "definition": "kind: [ConfigMap\n"}, capsys)
    assert_refused(result, ["definition: not valid YAML at line 2, column 1"])


def test_generated_secret(capsys):
    result = run(generated_secret.main, {"kubeconfig": KUBECONFIG, "secrets": [
        {"name": "Bad_Name", "namespace": "ns", "generate": [{"key": "k", "length": 4}]}]}, capsys)
    assert_refused(result, ["secrets[0].name: 'Bad_Name' is not a valid Secret name",
                            "secrets[0].generate[0].length: must be an integer of at least 16, got 4",
                            "secrets[0]: nothing to generate, set or render"])


def test_ironcore_server_claim(capsys):
    result = run(ironcore_server_claim.main, {"kubeconfig": KUBECONFIG, "namespace": "claims", "pools": [
        {"name": "hv-a", "count": -1, "selector": {}, "image": "gl:1"},
        {"name": "hv-b", "count": 1, "selector": {"matchExpressions": [{"key": "k", "operator": "Gt"}]},
         "image": "gl:1"}]}, capsys)
    assert_refused(result, ["pools[0].count: must be a whole number >= 0, got -1",
                            "pools[0].selector: must select servers (matchLabels or matchExpressions); an empty "
                            "selector would take servers of every pool",
                            "pools[1].selector.matchExpressions[0].operator: 'Gt' is not one of In, NotIn, Exists, "
                            "DoesNotExist"])


class RefusingKeystoneModule(KeystoneModule):
    """A Keystone module whose run() finds bad input (before any Keystone or Kubernetes call)."""

    def run(self):
        raise InputError([problem("services.glance.port", "'x' is not a TCP port"), problem("region", "is required")])


def refusing_keystone_main():
    RefusingKeystoneModule()()


def test_keystone_module(capsys):
    # openstacksdk connects lazily: nothing reaches this address.
    auth = {"auth_url": "http://127.0.0.1:9/v3", "username": "admin-user", "password": "admin-password-0123",
            "project_name": "admin-project", "user_domain_name": "Default", "project_domain_name": "Default"}
    result = run(refusing_keystone_main, {"auth": auth}, capsys)
    assert_refused(result, ["services.glance.port: 'x' is not a TCP port", "region: is required"])
