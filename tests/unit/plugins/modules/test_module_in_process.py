# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every module gives the same results run in a fork of the worker (plugin_utils/in_process.py) as run as its
own AnsiballZ process, with the same masked output: through ansible-playbook -vvv, both ways, side by side."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

from conftest import REPO, _ROOT
from module_harness import CLIENT_KEY_DATA, KEYSTONE_MODULES, TOKEN
from test_module_kubeconfig_text import KUBE_ARGS, MODULES, kubeconfig_text

from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils import in_process

PASSWORD = "basic-auth-password-never-shown"
UNREACHABLE = "https://127.0.0.1:9"  # the discard port: nothing listens there
KEYSTONE_ARGS = dict((m.__name__.rsplit(".", 1)[-1], args) for m, args in KEYSTONE_MODULES.items())
# Ansible's own bookkeeping that differs between two runs of one task.
VOLATILE = ("_ansible_no_log", "_ansible_delegated_vars", "elapsed", "warnings", "deprecations")


def _args(name):
    args = dict(KEYSTONE_ARGS.get(name) or KUBE_ARGS.get(name) or {})
    if name == "secret_copy":
        args["target_kubeconfig"] = kubeconfig_text(server=UNREACHABLE)
    if name in KEYSTONE_ARGS:
        args.update(auth={"auth_url": "http://127.0.0.1:9/v3", "username": "admin", "password": PASSWORD,
                          "project_name": "admin", "user_domain_name": "Default", "project_domain_name": "Default"},
                    connect_retries=1)
    return args


def _tasks():
    """Per module: arguments that fail validation, and valid ones against a server that does not answer."""
    tasks = []
    for name in MODULES:
        kubeconfig = kubeconfig_text(server=UNREACHABLE)
        tasks.append({"name": "%s bad option" % name, "c5c3.cobaltcore.%s" % name: dict(
            _args(name), kubeconfig=kubeconfig, no_such_option=1), "ignore_errors": True})
        tasks.append({"name": "%s unreachable" % name, "c5c3.cobaltcore.%s" % name: dict(
            _args(name), kubeconfig=kubeconfig), "ignore_errors": True, "check_mode": True, "diff": True})
    return tasks


def _run(tmp_path, in_process_on, interpreter=sys.executable):
    playbook = [{"name": "every module", "hosts": "localhost", "connection": "local", "gather_facts": False,
                 "vars": {"cobaltcore_in_process": in_process_on, "ansible_python_interpreter": interpreter},
                 "tasks": _tasks()}]
    path = tmp_path / ("play-%s.yml" % in_process_on)
    path.write_text(yaml.safe_dump(playbook, sort_keys=False))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=_ROOT, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
    for variable in [v for v in env if v.startswith(("K8S_AUTH_", "OS_", "KUBECONFIG"))]:
        del env[variable]
    proc = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-vvv", "-i",
                             "localhost,", str(path)], cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    stdout, stderr = proc.communicate(timeout=900)
    text = stdout + stderr
    lines = stdout.splitlines()
    out = json.loads("\n".join(lines[lines.index("{"):]))
    results = {}
    for task in out["plays"][0]["tasks"]:
        result = dict(task["hosts"]["localhost"])
        for key in VOLATILE:
            result.pop(key, None)
        # region_lock names its holder, the ansible-playbook process: each run's own pid.
        if "holder" in result:
            holder = result.pop("holder")
            assert holder.split(" pid ")[-1] == str(proc.pid), holder
        results[task["task"]["name"]] = result
    return results, text


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("in-process")
    return _run(tmp_path, True), _run(tmp_path, False)


def test_every_module_gives_the_same_result_both_ways(both):
    (forked, unused), (spawned, unused_text) = both
    assert sorted(forked) == sorted(spawned) and len(forked) == 2 * len(MODULES)
    different = [name for name in sorted(forked) if forked[name] != spawned[name]]
    assert not different, "\n".join("%s:\n  in process: %s\n  as its own process: %s" % (
        name, json.dumps(forked[name], sort_keys=True)[:1500], json.dumps(spawned[name], sort_keys=True)[:1500])
        for name in different[:3])
    for name, result in forked.items():
        assert result.get("failed"), name
        if name.endswith("bad option"):
            assert "no_such_option" in result["msg"] or "missing required arguments" in result["msg"], (name, result)


def test_no_credential_appears_either_way(both):
    (unused, forked_text), (unused_results, spawned_text) = both
    for text in (forked_text, spawned_text):
        for secret in (TOKEN, PASSWORD, CLIENT_KEY_DATA):
            assert secret not in text


def test_in_process_starts_no_interpreter_and_builds_no_ansiballz(both):
    (unused, forked_text), (unused_results, spawned_text) = both
    assert spawned_text.count("Using module file") == 2 * len(MODULES)
    assert "Using module file" not in forked_text
    assert "AnsiballZ" not in forked_text


def test_another_interpreter_runs_the_module_as_its_own_process(tmp_path):
    """A Python other than the controller's (the system's, which the venv's links to) may have other packages:
    the module runs as usual there."""
    assert in_process.python_module_name("c5c3.cobaltcore.wait") == "ansible_collections.c5c3.cobaltcore.plugins.modules.wait"
    playbook = [{"name": "one module", "hosts": "localhost", "connection": "local", "gather_facts": False,
                 "tasks": [{"c5c3.cobaltcore.wait": {"resources": [], "no_such_option": 1}, "ignore_errors": True,
                            "vars": {"ansible_python_interpreter": os.path.realpath(sys.executable)}}]}]
    path = tmp_path / "play.yml"
    path.write_text(yaml.safe_dump(playbook))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=_ROOT, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-vvv", "-i",
                           "localhost,", str(path)], env=env, capture_output=True, text=True, timeout=300, check=False)
    assert "Using module file" in proc.stdout, proc.stdout[-2000:]
