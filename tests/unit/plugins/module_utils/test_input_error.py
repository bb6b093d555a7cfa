# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One error type for bad input (InputError) and one problem shape ('<field>: <message>'), in every layer."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ast
import builtins
import glob
import os

import pytest

from conftest import REPO
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import generated_secret, templating
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem, within
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import apply, readiness
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import settings as keystone_settings
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener, ironcore, openbao
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import (
    ceph, claims, composition, dependency_graph, model, size_presets)

MODULE_UTILS = os.path.join(REPO, "plugins", "module_utils")
FILTERS = os.path.join(REPO, "plugins", "filter")

# The exceptions module_utils may define besides InputError: failures of a service, not of the input.
NOT_INPUT_ERRORS = {
    "VaultFormatError": "a damaged vault text, or a passphrase that does not open it; key_backup reports it as an "
                        "InputError naming its settings (common/vault_format.py)",
    "KubeError": "the Kubernetes API refused or could not be reached (k8s/client.py)",
    "TransportError": "a request got no answer; the client retries it, then raises a KubeError (k8s/client.py)",
    "WaitError": "objects not ready in time or failed for good (k8s/wait.py)",
    "KeystoneError": "Keystone refused or could not be reached (keystone/module.py)",
    "RedfishError": "a BMC refused a request or could not be reached (providers/redfish.py)",
}
BUILTIN_EXCEPTIONS = set(name for name, value in vars(builtins).items()
                         if isinstance(value, type) and issubclass(value, BaseException))
INPUT_BASES = ("ValueError", "TypeError", "KeyError", "LookupError", "InputError")


def _sources(directory):
    for path in sorted(glob.glob(os.path.join(directory, "**", "*.py"), recursive=True)):
        with open(path) as handle:
            yield os.path.relpath(path, REPO), ast.parse(handle.read(), path)


def _base_name(node):
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)


def _exception_classes():
    """{class name: (path, [base names])} of every class in module_utils that derives from an exception."""
    classes = {}
    for path, tree in _sources(MODULE_UTILS):
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes[node.name] = (path, [_base_name(base) for base in node.bases])

    def is_exception(name, seen=()):
        if name in BUILTIN_EXCEPTIONS:
            return True
        if name not in classes or name in seen:
            return False
        return any(is_exception(base, seen + (name,)) for base in classes[name][1])
    return dict((name, entry) for name, entry in classes.items() if any(is_exception(b) for b in entry[1]))


def test_input_error_is_the_only_error_for_bad_input():
    errors = _exception_classes()
    assert errors["InputError"] == ("plugins/module_utils/common/errors.py", ["ValueError"])
    for name, (path, bases) in sorted(errors.items()):
        if name == "InputError":
            continue
        assert not set(bases) & set(INPUT_BASES), (
            "%s (%s) derives from %s: bad input is InputError(problems), nothing else" % (name, path, bases))
        assert name in NOT_INPUT_ERRORS, (
            "%s (%s) is a new exception: if it is about bad input, raise InputError instead; if not, "
            "add it to NOT_INPUT_ERRORS with what it reports" % (name, path))


def test_module_utils_raise_no_builtin_error_for_bad_input():
    raised = set()
    for path, tree in _sources(MODULE_UTILS):
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                    name = _base_name(node.exc.func)
                    if name in ("ValueError", "KeyError", "LookupError"):
                        raised.add((path, function.name, name))
    # phase_of looks a component up by name (a mapping's KeyError), it validates nothing.
    assert raised == {("plugins/module_utils/region/dependency_graph.py", "phase_of", "KeyError")}


def test_filters_catch_input_error_only():
    caught = []
    for path, tree in _sources(FILTERS):
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler):
                names = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
                caught.extend("%s:%d catches %s" % (path, node.lineno, _base_name(n)) for n in names)
    assert caught == [], "filters wrap themselves in plugin_utils.filter_errors.fails_on_input_error"


# --- the error and its problems ---------------------------------------------------------------

def test_problem_names_the_field_first():
    assert problem("spec.size", "must be one of small, medium") == "spec.size: must be one of small, medium"
    assert problem("spec.size", "unknown", "tenant-a/a") == "tenant-a/a spec.size: unknown"
    assert problem("", "must be a mapping", "region") == "region: must be a mapping"
    assert within("Secret ns/s", ["templates.x: refers to 'y'"]) == ["Secret ns/s templates.x: refers to 'y'"]
    with pytest.raises(TypeError):
        problem("", "a problem about nothing")


def test_input_error_takes_problem_strings_only():
    error = InputError(iter(["a: x", "b: y"]))
    assert error.problems == ["a: x", "b: y"] and str(error) == "a: x; b: y"
    assert isinstance(error, ValueError)
    for bad in ([], [{"field": "a", "message": "x"}], [("a", "x")], "a: x"):
        with pytest.raises(TypeError):
            raise InputError(bad)


# --- every layer: bad input raises InputError naming the field -------------------------------

CLAIM = {"apiVersion": "c5c3.io/v1alpha1", "kind": "OpenStackCluster",
         "metadata": {"name": "a", "namespace": "tenant-a"},
         "spec": {"region": "r", "size": "huge", "hypervisorClusters": ["hv"], "storageClusters": ["st"]}}
REGION = {"name": "r", "hypervisor_pools": ["hv"], "storage_pools": ["st"]}

LAYERS = [
    ("region", lambda: model.build_region({"name": "r", "hypervisor_pools": [{"name": "hv", "workers": 0}]}),
     ["region hypervisor_pools[hv].workers"]),
    ("region inventory", lambda: model.region_from_inventory(
        {"name": "r", "groups": {"gardener": ["g1", "g2"]}, "hostvars": {}}), ["inventory groups.gardener"]),
    ("composition", lambda: composition.compose_openstack_cluster(CLAIM, REGION), ["tenant-a/a spec.size"]),
    ("composition of a bad region", lambda: composition.compose_openstack_cluster(CLAIM, {"name": "R"}),
     ["region name", "region control_planes[R-control-plane].name"]),
    ("region control plane", lambda: composition.region_control_plane({"name": "r"}, ["glance"]), ["services"]),
    ("size presets", lambda: size_presets.size_preset("huge"), ["size"]),
    ("ceph quota", lambda: ceph.quota_bytes(-1), ["quotaGB"]),
    ("ceph caps", lambda: ceph.client_caps([]), ["pools"]),
    ("dependency graph", lambda: dependency_graph.topological_order({"a": ("b",)}), ["depends.a"]),
    ("gardener shoots", lambda: gardener.shoots(model.build_region(REGION).to_dict(), {"project": "p"}),
     ["gardener.cloud_profile", "gardener.credentials_binding", "gardener.provider_type", "gardener.machine_image",
      "hv.zone", "r-control-plane.ironcore.machine_class", "hv.ironcore.machine_class", "st.ironcore.machine_class"]),
    ("gardener kubeconfig paths", lambda: gardener.kubeconfig_paths([{"name": "s", "cluster": "hv"}], {}),
     ["hostvars.hv.cobaltcore_kubeconfig"]),
    ("gardener kubeconfig", lambda: gardener.kubeconfig_facts("kind: Secret"), ["kubeconfig kind"]),
    ("ironcore claim pools", lambda: ironcore.claim_pools({"name": "r", "hypervisor_pools": [
        {"name": "hv", "ironcore": {"machine_class": "kvm"}}]}, {}), ["hv.ironcore.image"]),
    ("ironcore selector", lambda: ironcore.selector_matches({"matchExpressions": [{"operator": "Gt"}]}, {}),
     ["selector.matchExpressions.operator"]),
    ("openbao settings", lambda: openbao.korc_credential_sync({"namespace": "x", "refresh_interval": "daily"}),
     ["refresh_interval"]),
    ("keystone settings", lambda: keystone_settings.normalize_settings(
        {"namespace": "x", "region": "r", "keystone_public_url": "http://k/v3", "services": {"glance": {"port": 0}}}),
     ["services.glance.port"]),
    ("generated secret", lambda: generated_secret.validate([{"name": "s", "namespace": "n", "generate": [5]}]),
     ["secrets[0].generate[0]", "secrets[0]"]),
    ("generated secret values_from", lambda: generated_secret.desired_secret(generated_secret.validate([
        {"name": "s", "namespace": "n", "values_from": [{"key": "id", "api_version": "v1", "kind": "ConfigMap",
                                                         "name": "c", "field": "data.id"}]}])[0], None, {}),
     ["Secret n/s values_from[0]"]),
    ("templating", lambda: templating.render_template({"auth": {"password": "${nope}"}}, {}, "templates.clouds"),
     ["templates.clouds.auth.password"]),
    ("readiness options", lambda: readiness.evaluate({"kind": "ConfigMap"}, condition={"status": "True"}),
     ["condition"]),
    ("readiness expression", lambda: readiness.evaluate({"kind": "ConfigMap"}, expression="a.["), ["expression"]),
    ("apply manifests", lambda: apply.normalize([{"apiVersion": "v1", "metadata": {"name": "x"}}]),
     ["manifest 0 kind"]),
]


@pytest.mark.parametrize("call, fields", [layer[1:] for layer in LAYERS], ids=[layer[0] for layer in LAYERS])
def test_bad_input_of_every_layer_is_an_input_error_naming_the_field(call, fields):
    with pytest.raises(InputError) as error:
        call()
    assert error.type is InputError  # not a subclass of it
    assert all(isinstance(item, str) for item in error.value.problems), error.value.problems
    assert [item.split(": ", 1)[0] for item in error.value.problems] == fields, error.value.problems
    assert all(item.split(": ", 1)[1].strip() for item in error.value.problems), error.value.problems


def test_claims_are_reported_not_raised_in_the_same_shape():
    assert claims.validate_claims([CLAIM], REGION) == [
        "tenant-a/a spec.size: must be one of small, medium, large, xlarge, got 'huge'"]
    assert claims.validate_claims([CLAIM], {"name": "R"}) == [
        "region name: 'R' is not a DNS-1123 label",
        "region control_planes[R-control-plane].name: 'R-control-plane' is not a DNS-1123 label"]
    assert claims.claim_name_problems("A") == [
        "metadata.name: 'A' is not a DNS-1123 label (lowercase letters, digits, '-'; starting and ending with "
        "a letter or digit)"]
