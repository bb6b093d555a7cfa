# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible-doc renders every plugin and role of the collection."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import json
import os
import subprocess
import sys

from conftest import REPO, _ROOT

BIN = os.path.dirname(sys.executable)


def _names(pattern):
    return sorted(os.path.splitext(os.path.basename(p))[0]
                  for p in glob.glob(os.path.join(REPO, pattern)) if not p.endswith("__init__.py"))


def _ansible_doc(plugin_type, names):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=_ROOT, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"))
    out = subprocess.run([os.path.join(BIN, "ansible-doc"), "-t", plugin_type, "--json"]
                         + ["c5c3.cobaltcore.%s" % n for n in names],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_every_filter_is_documented():
    names = _names("plugins/filter/*.yml")
    assert names, "no documented filters"
    docs = _ansible_doc("filter", names)
    for name in names:
        doc = docs["c5c3.cobaltcore.%s" % name]["doc"]
        assert doc["short_description"], name
        assert docs["c5c3.cobaltcore.%s" % name]["examples"], name


def test_every_filter_in_code_has_a_doc_file():
    import importlib
    names = []
    for module in _names("plugins/filter/*.py"):
        plugin = importlib.import_module("ansible_collections.c5c3.cobaltcore.plugins.filter." + module)
        names.extend(plugin.FilterModule().filters())
    assert len(names) == len(set(names)), "a filter name is defined twice"
    assert sorted(names) == _names("plugins/filter/*.yml")


def test_every_module_is_documented():
    names = _names("plugins/modules/*.py")
    assert names, "no modules found"
    docs = _ansible_doc("module", names)
    for name in names:
        entry = docs["c5c3.cobaltcore.%s" % name]
        assert entry["doc"]["short_description"] and entry["examples"] and entry["return"], name


def test_every_role_has_an_argument_spec():
    roles = sorted(os.path.basename(p) for p in glob.glob(os.path.join(REPO, "roles", "*")))
    assert roles
    docs = _ansible_doc("role", roles)
    for role in roles:
        assert docs["c5c3.cobaltcore.%s" % role]["entry_points"]["main"]["short_description"], role


def test_every_module_is_in_exactly_one_connection_group():
    """module_defaults of `group/c5c3.cobaltcore.cobaltcore` (Kubernetes) or `group/c5c3.cobaltcore.keystone`
    (the Keystone modules) set a module's connection; a module missing from its group would silently miss it,
    and a Keystone module in the Kubernetes group would take Kubernetes' TLS options for Keystone's."""
    import yaml
    with open(os.path.join(REPO, "meta", "runtime.yml")) as handle:
        groups = yaml.safe_load(handle)["action_groups"]
    kube = sorted(m for m in groups["cobaltcore"] if isinstance(m, str))
    keystone = sorted(m for m in groups["keystone"] if isinstance(m, str))
    keystone_modules = sorted(name for name in _names("plugins/modules/*.py")
                              if "KeystoneModule" in open(os.path.join(REPO, "plugins", "modules", name + ".py")).read())
    assert keystone == keystone_modules
    assert sorted(kube + keystone) == _names("plugins/modules/*.py") and not set(kube) & set(keystone)
