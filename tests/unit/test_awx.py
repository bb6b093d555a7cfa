# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX side as code (awx/), without an AWX: every awx.awx task's arguments, templated as Ansible
templates them, validated against the argument spec of the installed awx.awx module; the workflow in
site.yml's order; a job template for every playbook; the credential types' injectors."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import importlib
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from ansible.module_utils import basic
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AWX = os.path.join(REPO, "awx")
# The module options AnsibleModule takes besides argument_spec that constrain the arguments.
CONSTRAINTS = ("mutually_exclusive", "required_together", "required_one_of", "required_if", "required_by")


class _Captured(Exception):
    pass


def _module_spec(name):
    """argument_spec and its constraints of awx.awx.<name>, as its main() hands them to AnsibleModule."""
    module = importlib.import_module("ansible_collections.awx.awx.plugins.modules.%s" % name)
    original = basic.AnsibleModule.__init__

    def capture(self, argument_spec, **kwargs):
        raise _Captured(argument_spec, kwargs)

    basic.AnsibleModule.__init__ = capture
    try:
        module.main()
    except _Captured as captured:
        return captured.args
    finally:
        basic.AnsibleModule.__init__ = original
    raise AssertionError("awx.awx.%s never built its AnsibleModule" % name)


def _load(name):
    return DataLoader().load_from_file(os.path.join(AWX, name), trusted_as_template=True)


def _variables(play):
    variables = {"playbook_dir": AWX, "omit": "__omit_place_holder__"}
    for name in play["vars_files"]:
        variables.update(_load(name))
    return variables


def _calls():
    """(task name, module, templated arguments) of every awx.awx task of awx/configure.yml, one per loop item."""
    play = _load("configure.yml")[0]
    variables = _variables(play)
    calls = []
    for task in play["tasks"]:
        module = next(key for key in task if key.startswith("awx.awx."))
        items = Templar(loader=DataLoader(), variables=variables).template(task["loop"]) if "loop" in task else [None]
        for item in items:
            templar = Templar(loader=DataLoader(), variables=dict(variables, item=item))
            args = templar.template(task[module])
            args = dict((key, value) for key, value in args.items() if value != variables["omit"])
            calls.append((task["name"], module.split(".")[-1], args))
    return calls


CALLS = _calls()


def test_every_task_is_an_awx_task_with_a_loop_over_data():
    assert {module for _name, module, _args in CALLS} == {
        "credential_type", "organization", "execution_environment", "project", "inventory", "inventory_source",
        "job_template", "workflow_job_template", "workflow_job_template_node"}


@pytest.mark.parametrize("name,module,args", CALLS, ids=["%s:%s" % (c[1], c[2].get("name") or c[2].get("identifier"))
                                                         for c in CALLS])
def test_awx_task_arguments_validate_against_the_module_spec(name, module, args):
    spec, kwargs = _module_spec(module)
    validator = ArgumentSpecValidator(spec, **dict((k, kwargs[k]) for k in CONSTRAINTS if k in kwargs))
    result = validator.validate(args)
    assert not result.error_messages, "%s (awx.awx.%s): %s" % (name, module, result.error_messages)


def test_a_wrong_argument_is_caught():
    """The validation above can fail: an unknown option and a wrong choice are refused."""
    spec, kwargs = _module_spec("job_template")
    validator = ArgumentSpecValidator(spec, **dict((k, kwargs[k]) for k in CONSTRAINTS if k in kwargs))
    errors = validator.validate({"name": "x", "playbok": "site.yml", "state": "gone"}).error_messages
    assert any("playbok" in e for e in errors) and any("state" in e for e in errors), errors


def _site_order():
    site = yaml.safe_load(open(os.path.join(REPO, "playbooks", "site.yml")))
    # The phases; site.yml's own last play releases the run lock, which each job of a workflow does itself.
    return ["playbooks/%s" % play["ansible.builtin.import_playbook"] for play in site
            if "ansible.builtin.import_playbook" in play]


def test_workflow_runs_the_phases_in_site_order():
    templates = dict((args["name"], args["playbook"]) for _n, module, args in CALLS if module == "job_template")
    nodes = [args for _n, module, args in CALLS
             if module == "workflow_job_template_node" and args["workflow_job_template"] == "CobaltCore region"]
    by_id = dict((node["identifier"], node) for node in nodes)
    pointed = set(n for node in nodes for n in node.get("success_nodes") or [])
    roots = [node for node in nodes if node["identifier"] not in pointed]
    assert len(roots) == 1, roots
    chain, node = [], roots[0]
    while node:
        chain.append(templates[node["unified_job_template"]])
        following = node.get("success_nodes") or []
        assert len(following) <= 1 and not node.get("failure_nodes") and not node.get("always_nodes"), node
        node = by_id[following[0]] if following else None
    assert chain == _site_order()
    assert len(chain) == len(nodes)


def test_every_playbook_has_a_job_template_never_sliced():
    templates = [args for _n, module, args in CALLS if module == "job_template"]
    playbooks = sorted("playbooks/%s" % f for f in os.listdir(os.path.join(REPO, "playbooks")) if f.endswith(".yml"))
    assert sorted(t["playbook"] for t in templates) == playbooks
    assert all(t["job_slice_count"] == 1 for t in templates)
    site = next(t for t in templates if t["playbook"] == "playbooks/site.yml")
    assert site["extra_vars"]["cobaltcore_tenants_dir"] == "{{ playbook_dir }}/../inventories/{{ cobaltcore_region }}/tenants"


def test_the_report_is_written_where_a_job_keeps_it():
    """AWX keeps a job's set_stats data as its artifacts, no file written inside the execution environment
    (ansible-runner's artifacts directory included): the report's default directory is a path to mount."""
    report = next(a for _n, m, a in CALLS if m == "job_template" and a["playbook"] == "playbooks/report.yml")
    (question,) = [q for q in report["survey_spec"]["spec"] if q["variable"] == "cobaltcore_report_dir"]
    assert not question["default"].startswith(("/runner", "/tmp")) and "mounted" in question["question_name"]
    with open(os.path.join(REPO, "playbooks", "report.yml")) as handle:
        tasks = yaml.safe_load(handle)[0]["tasks"]
    stats = [t["ansible.builtin.set_stats"]["data"] for t in tasks if "ansible.builtin.set_stats" in t]
    assert [sorted(s["cobaltcore_report"]) for s in stats] == [["files", "region", "summary"]]


def test_tenant_removal_asks_twice_and_waits_for_approval():
    calls = [(module, args) for _n, module, args in CALLS]
    workflow = next(a for m, a in calls if m == "workflow_job_template" and a["name"] == "CobaltCore tenant remove")
    assert workflow["survey_enabled"] is True
    assert [q["variable"] for q in workflow["survey_spec"]["spec"]] == ["tenant", "confirm", "allow_data_loss"]
    assert all(q["required"] for q in workflow["survey_spec"]["spec"])
    nodes = dict((a["identifier"], a) for m, a in calls
                 if m == "workflow_job_template_node" and a["workflow_job_template"] == "CobaltCore tenant remove")
    assert nodes["approve"]["approval_node"]["name"] and nodes["approve"]["success_nodes"] == ["remove"]
    assert nodes["remove"]["unified_job_template"] == "CobaltCore tenant remove"
    remove = next(a for m, a in calls if m == "job_template" and a["name"] == "CobaltCore tenant remove")
    assert remove["playbook"] == "playbooks/tenant_remove.yml"
    # The playbook reads exactly the survey's variables.
    text = open(os.path.join(REPO, "playbooks", "tenant_remove.yml")).read()
    assert set(re.findall(r"\{\{ (\w+) \| default", text)) == {"tenant", "confirm", "allow_data_loss"}


def _credential_types():
    return dict((args["name"], args) for _n, module, args in CALLS if module == "credential_type")


def test_credential_types_inject_every_field_as_a_file_named_by_the_environment():
    """A secret field becomes a file whose path an environment variable names (its value never lands in the
    environment itself); a plain field goes into the environment as it is."""
    types = _credential_types()
    assert sorted(types) == ["CobaltCore Keystone clouds.yaml", "CobaltCore region kubeconfigs",
                             "CobaltCore vault password"]
    for args in types.values():
        secret = [f["id"] for f in args["inputs"]["fields"] if f.get("secret")]
        plain = [f["id"] for f in args["inputs"]["fields"] if not f.get("secret")]
        assert sorted(args["inputs"]["required"]) == sorted(secret + plain), args["name"]
        assert sorted(args["injectors"]["file"]) == sorted("template.%s" % f for f in secret)
        assert all(args["injectors"]["file"]["template.%s" % f] == "{{ %s }}" % f for f in secret)
        env = list(args["injectors"]["env"].values())
        named = sorted(re.match(r"\{\{ tower\.filename\.(\w+) \}\}$", v).group(1) for v in env if "tower." in v)
        assert named == sorted(secret)
        assert sorted(re.match(r"\{\{ (\w+) \}\}$", v).group(1) for v in env if "tower." not in v) == sorted(plain)
    keystone = types["CobaltCore Keystone clouds.yaml"]["inputs"]["fields"]
    assert [(f["id"], bool(f.get("secret")), bool(f.get("multiline"))) for f in keystone] == [
        ("clouds_yaml", True, True), ("cloud", False, False)]


def _injected_env(type_name):
    """The environment a credential of the type injects: a distinct value per variable, by the field it carries."""
    env, by_field = {}, {}
    for var, template in _credential_types()[type_name]["injectors"]["env"].items():
        field = re.search(r"(\w+) \}\}$", template).group(1)
        env[var] = by_field[field] = "/injected/%s" % var if "tower.filename." in template else "injected-%s" % field
    return env, by_field


def _inventory_vars(region, env, names):
    """The variables `names` of every host of inventories/<region>, rendered by Ansible with the environment."""
    environ = dict((k, v) for k, v in os.environ.items()
                   if not k.startswith(("COBALTCORE_KUBECONFIG_", "COBALTCORE_KEYSTONE_", "ANSIBLE_")))
    environ.update(env, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
                   ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_DEPRECATION_WARNINGS="0")
    msg = "{{ {%s} }}" % ", ".join("'%s': %s" % (name, name) for name in names)
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible"), "all", "-i",
                           os.path.join(REPO, "inventories", region), "-m", "ansible.builtin.debug", "-a",
                           json.dumps({"msg": msg})], env=environ, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    hosts = json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]
    return dict((host, dict((k, os.path.normpath(v) if v.startswith("/") else v) for k, v in result["msg"].items()))
                for host, result in hosts.items())


REGIONS = ("lab", "eu-de-1", "us-east-1")
KEYSTONE_VARS = {"clouds_yaml": "cobaltcore_keystone_clouds_yaml", "cloud": "cobaltcore_keystone_cloud"}


@pytest.mark.parametrize("region", REGIONS)
def test_inventories_read_what_the_credentials_inject(region):
    """Every host of every region reads the Keystone credential's clouds.yaml and cloud, and each service
    cluster its injected kubeconfig: names that diverge leave the inventory on its fallback, and this fails."""
    keystone, keystone_fields = _injected_env("CobaltCore Keystone clouds.yaml")
    kube, kube_fields = _injected_env("CobaltCore region kubeconfigs")
    assert sorted(keystone_fields) == sorted(KEYSTONE_VARS)
    found = _inventory_vars(region, dict(keystone, **kube), ["cobaltcore_kubeconfig"] + sorted(KEYSTONE_VARS.values()))
    assert found
    for host, values in found.items():
        for field, name in KEYSTONE_VARS.items():
            assert values[name] == keystone_fields[field], (host, name, values)
    for field, path in kube_fields.items():
        host = field.replace("_", "-")
        assert found[host]["cobaltcore_kubeconfig"] == path, (host, found[host])


@pytest.mark.parametrize("region", REGIONS)
def test_inventories_take_an_empty_injected_variable_as_unset(region, tmp_path):
    """An empty variable (a credential left out, an empty export) falls back to the inventory's own files."""
    keystone = _injected_env("CobaltCore Keystone clouds.yaml")[0]
    kube, kube_fields = _injected_env("CobaltCore region kubeconfigs")
    empty = dict((var, "") for var in list(keystone) + list(kube))
    found = _inventory_vars(region, dict(empty, COBALTCORE_LAB_DIR=str(tmp_path)),
                            ["cobaltcore_kubeconfig"] + sorted(KEYSTONE_VARS.values()))
    if region == "lab":
        own = {"clouds": str(tmp_path / "clouds.yaml"), "cloud": "lab-admin", "kubeconfigs": str(tmp_path / "kubeconfig")}
    else:
        private = os.path.join(REPO, "inventories", region, ".private")
        # No cloud named: preflight's Keystone check stays off (roles/preflight/defaults/main.yml).
        own = {"clouds": os.path.join(private, "clouds.yaml"), "cloud": "", "kubeconfigs": os.path.join(private, "kubeconfig")}
    for host, values in found.items():
        assert (values["cobaltcore_keystone_clouds_yaml"], values["cobaltcore_keystone_cloud"]) == (
            own["clouds"], own["cloud"]), (host, values)
    # The service clusters' (the Shoots' kubeconfigs are the ones phase 2 fetches).
    for host in (field.replace("_", "-") for field in kube_fields):
        assert found[host]["cobaltcore_kubeconfig"] == os.path.join(own["kubeconfigs"], host + ".yaml"), host


def test_kubeconfig_variables_are_the_inventories_names():
    """COBALTCORE_KUBECONFIG_<HOST> of the credential type names hosts of every region's inventory."""
    kube = next(a for _n, m, a in CALLS if m == "credential_type" and a["name"] == "CobaltCore region kubeconfigs")
    for region in ("lab", "eu-de-1", "us-east-1"):
        text = open(os.path.join(REPO, "inventories", region, "hosts.yml")).read()
        for var in kube["injectors"]["env"]:
            host = var[len("COBALTCORE_KUBECONFIG_"):].lower().replace("_", "-")
            assert re.search(r"\b%s: \{\}" % re.escape(host), text), (region, host)
        clusters = open(os.path.join(REPO, "inventories", region, "group_vars", "all", "clusters.yml")).read()
        assert "'COBALTCORE_KUBECONFIG_' ~ (inventory_hostname | upper | replace('-', '_'))" in clusters


def test_drift_runs_as_a_check_job_only():
    """drift.yml refuses to start without --check: its job template is of job type check, every other one runs."""
    templates = dict((a["playbook"], a) for _n, m, a in CALLS if m == "job_template")
    assert templates["playbooks/drift.yml"]["job_type"] == "check"
    assert set(t["job_type"] for p, t in templates.items() if p != "playbooks/drift.yml") == {"run"}
    with open(os.path.join(REPO, "playbooks", "drift.yml")) as handle:
        first = yaml.safe_load(handle)[0]["tasks"][0]
    assert first["ansible.builtin.assert"]["that"] == "ansible_check_mode | bool"
