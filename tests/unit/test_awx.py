# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX side as code (awx/), without an AWX: every awx.awx task's arguments, templated as Ansible
templates them, validated against the argument spec of the installed awx.awx module; the workflow in
site.yml's order; a job template for every playbook; the credential types' injectors."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import importlib
import os
import re

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


def test_credential_types_inject_every_field_as_a_file_named_by_the_environment():
    for _n, module, args in CALLS:
        if module != "credential_type":
            continue
        fields = [f["id"] for f in args["inputs"]["fields"]]
        assert all(f.get("secret") for f in args["inputs"]["fields"]), args["name"]
        assert sorted(args["injectors"]["file"]) == sorted("template.%s" % f for f in fields)
        assert all(args["injectors"]["file"]["template.%s" % f] == "{{ %s }}" % f for f in fields)
        named = sorted(re.match(r"\{\{ tower\.filename\.(\w+) \}\}$", v).group(1) for v in args["injectors"]["env"].values())
        assert named == sorted(fields)


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
