# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every option that can carry a secret is no_log, in every role's argument spec and every module's, judged
against one list of secret-bearing names; and no task that prints what it computes reads a secret.

An option is secret-bearing when its name, or its name's last part after an underscore, is a word of
SECRET_BEARING and its type can hold the secret itself: a ``path`` names a file (the file is the secret,
never its name), a bool or a number holds none, and some words carry a secret only in a mapping (a
``cloud`` given as a string names a cloud of clouds.yaml; given as a mapping it holds the cloud's auth).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import importlib
import os

import jinja2
import jinja2.nodes
import pytest
import yaml
from ansible.module_utils import basic

from conftest import REPO

ANY = ("str", "raw", "dict", "list")
MAPPING = ("raw", "dict")
# The one list: word -> the option types that can hold the secret itself.
SECRET_BEARING = {
    "password": ANY, "passphrase": ANY, "token": ANY, "api_key": ANY, "basic_auth": ANY,
    "client_key": ("str", "raw"),  # openstack.cloud's client_key (a key file's text or name; path-typed in Kubernetes')
    "kubeconfig": ANY,  # a mapping, or a kubeconfig's text (a string that names no file)
    "ignition": ANY,  # user data: password hashes, SSH keys, join tokens
    "credentials": MAPPING + ("list",),  # by name, {username, password}
    "auth": MAPPING,  # openstack.cloud's auth dict
    "cloud": MAPPING,  # a cloud's settings with their auth; a string names a cloud
    "values": MAPPING, "templates": MAPPING,  # a Secret's literal values and templates (generated_secret)
}
# Names that match a word of SECRET_BEARING but hold no secret; each must say no_log: false itself.
NOT_SECRETS = {
    "secret_auth": "names the Secret that holds the admin's password, its key, the user and the URL",
}
NUMBERS_AND_FLAGS = ("bool", "int", "float", "path")


def _word(name):
    """The word of SECRET_BEARING this option's name ends with, or None."""
    for word in sorted(SECRET_BEARING, key=len, reverse=True):
        if name == word or name.endswith("_" + word):
            return word
    return None


def carries_a_secret(name, option):
    word = _word(name)
    kind = option.get("type", "str")
    return word is not None and name not in NOT_SECRETS and kind not in NUMBERS_AND_FLAGS \
        and kind in SECRET_BEARING[word]


def _walk(spec, prefix=""):
    for name, option in sorted((spec or {}).items()):
        yield prefix + name, name, option
        yield from _walk(option.get("options"), prefix + name + ".")


def role_options():
    """(where, name, option) of every role option, suboptions too, of every entry point."""
    found = []
    for path in sorted(glob.glob(os.path.join(REPO, "roles", "*", "meta", "argument_specs.yml"))):
        role = path.split(os.sep)[-3]
        with open(path) as handle:
            specs = yaml.safe_load(handle)["argument_specs"]
        for entry, spec in sorted(specs.items()):
            found.extend(("role %s (%s): %s" % (role, entry, where), name, option)
                         for where, name, option in _walk(spec.get("options")))
    return found


class _Captured(Exception):
    pass


def module_options():
    """(where, name, option) of every module option as the module builds its spec (connection options too)."""
    found = []
    names = sorted(f[:-3] for f in os.listdir(os.path.join(REPO, "plugins", "modules"))
                   if f.endswith(".py") and f != "__init__.py")
    for name in names:
        module = importlib.import_module("ansible_collections.c5c3.cobaltcore.plugins.modules." + name)
        specs = []

        def capture(self, argument_spec, *args, **kwargs):
            specs.append(argument_spec)
            raise _Captured()

        original = basic.AnsibleModule.__init__
        basic.AnsibleModule.__init__ = capture
        try:
            module.main()
        except _Captured:
            pass
        finally:
            basic.AnsibleModule.__init__ = original
        assert len(specs) == 1, "module %s built %d argument specs" % (name, len(specs))
        found.extend(("module %s: %s" % (name, where), option_name, option)
                     for where, option_name, option in _walk(specs[0]))
    return found


ROLE_OPTIONS = role_options()
MODULE_OPTIONS = module_options()
ALL_OPTIONS = ROLE_OPTIONS + MODULE_OPTIONS


def test_the_walk_reaches_every_role_and_module_and_their_suboptions():
    wheres = set(where for where, unused, unused_option in ALL_OPTIONS)
    for expected in ("role baremetal_bootstrap (main): baremetal_bootstrap_ignition",
                     "role keystone_bootstrap (main): keystone_bootstrap_auth",
                     "role tenants (remove): tenants_management_kubeconfig",
                     "module ironcore_bmc: secrets.password", "module ironcore_server_claim: pools.ignition",
                     "module wait: kubeconfig", "module korc_credentials: cloud",
                     "module generated_secret: secrets.values"):
        assert expected in wheres
    assert len(set(w.split(":")[0] for w in wheres if w.startswith("module "))) == len(
        glob.glob(os.path.join(REPO, "plugins", "modules", "[a-z]*.py")))


@pytest.mark.parametrize("name, option, expected", [
    ("baremetal_bootstrap_ignition", {"type": "dict"}, True),
    ("ignition_secret", {"type": "str"}, False),
    ("cobaltcore_kubeconfig", {"type": "path"}, False),
    ("tenants_kubeconfig", {"type": "raw"}, True),
    ("keystone_bootstrap_cloud", {"type": "str"}, False),
    ("cloud", {"type": "raw"}, True),
    ("secret_auth", {"type": "dict"}, False),
    ("keystone_bootstrap_korc_auth_url", {"type": "str"}, False),
    ("admin_password", {}, True),
    ("admin_password_length", {"type": "int"}, False),
])
def test_what_counts_as_secret_bearing(name, option, expected):
    assert carries_a_secret(name, option) is expected


def test_every_option_that_can_carry_a_secret_is_no_log():
    missing = [where for where, name, option in ALL_OPTIONS
               if carries_a_secret(name, option) and option.get("no_log") is not True]
    assert not missing, "options that can carry a secret without no_log: true:\n" + "\n".join(missing)


def test_every_no_log_option_is_named_in_the_list():
    """A no_log option outside the list would star its public values (names, counts) out of every message."""
    strays = [where for where, name, option in ALL_OPTIONS
              if option.get("no_log") is True and not carries_a_secret(name, option)]
    assert not strays, "no_log options that SECRET_BEARING does not name:\n" + "\n".join(strays)


def test_names_that_look_secret_but_are_not_say_so():
    found = [(where, option) for where, name, option in ALL_OPTIONS if name in NOT_SECRETS]
    assert found
    for where, option in found:
        assert option.get("no_log") is False, where


# -- tasks that print what they compute -----------------------------------------------------------------

# set_fact and set_stats print their facts, debug its message, fail and assert theirs: at -v, and into AWX's events.
PRINTING = ("set_fact", "set_stats", "debug", "fail", "assert")
TASK_FILES = sorted(glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml"))
                    + glob.glob(os.path.join(REPO, "playbooks", "*.yml"))
                    + glob.glob(os.path.join(REPO, "playbooks", "tasks", "*.yml")))
INVENTORY_FILES = sorted(glob.glob(os.path.join(REPO, "inventories", "*", "group_vars", "**", "*.yml"), recursive=True)
                         + glob.glob(os.path.join(REPO, "inventories", "*", "host_vars", "**", "*.yml"), recursive=True)
                         + glob.glob(os.path.join(REPO, "roles", "*", "defaults", "main.yml")))


def secret_variables():
    """Role options that are no_log, and the variables of the inventories and role defaults whose names are
    secret-bearing (cobaltcore_bmc_credentials), typed as a role's option of that name is (a path is none)."""
    names = set(name for unused, name, option in ROLE_OPTIONS if option.get("no_log") is True)
    types = dict((name, option.get("type", "str")) for unused, name, option in ROLE_OPTIONS)
    for path in INVENTORY_FILES:
        with open(path) as handle:
            data = yaml.safe_load(handle) or {}
        names.update(name for name, value in data.items() if carries_a_secret(
            name, {"type": types.get(name, "dict" if isinstance(value, dict) else "str")}))
    return names


SECRET_VARIABLES = secret_variables()
_ENV = jinja2.Environment()


def _identifiers(template):
    """Every variable name, attribute and constant key a template's expressions use."""
    try:
        tree = _ENV.parse(template)
    except jinja2.TemplateSyntaxError:
        return set(template.replace(".", " ").replace("[", " ").replace("'", " ").split())
    found = set(node.name for node in tree.find_all(jinja2.nodes.Name))
    found.update(node.attr for node in tree.find_all(jinja2.nodes.Getattr))
    found.update(node.arg.value for node in tree.find_all(jinja2.nodes.Getitem)
                 if isinstance(node.arg, jinja2.nodes.Const) and isinstance(node.arg.value, str))
    return found


def _strings(node):
    if isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)
    elif isinstance(node, str):
        yield node


def _tasks(node):
    if isinstance(node, list):
        for item in node:
            yield from _tasks(item)
    elif isinstance(node, dict):
        if any(key in node for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers")):
            for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
                yield from _tasks(node.get(key))
        else:
            yield node


def _action(task):
    for key in task:
        if key.rsplit(".", 1)[-1] in PRINTING:
            return key
    return None


def printing_tasks():
    found = []
    for path in TASK_FILES:
        with open(path) as handle:
            for task in _tasks(yaml.safe_load(handle)):
                action = _action(task)
                if action:
                    found.append((os.path.relpath(path, REPO), task, action))
    return found


PRINTING_TASKS = printing_tasks()


def test_the_printing_tasks_and_the_secret_variables_are_found():
    assert len(PRINTING_TASKS) > 20
    assert {"baremetal_bootstrap_ignition", "baremetal_bootstrap_bmc_credentials", "keystone_bootstrap_auth",
            "cobaltcore_bmc_credentials"} <= SECRET_VARIABLES


def test_no_task_that_prints_what_it_computes_reads_a_secret():
    found = []
    for path, task, action in PRINTING_TASKS:
        if task.get("no_log") is True:
            continue
        values = dict((key, task[key]) for key in (action, "vars") if key in task)
        used = set()
        for text in _strings(values):
            used.update(_identifiers(text))
        for name in sorted(used & SECRET_VARIABLES):
            found.append("%s: %r reads %s" % (path, task.get("name"), name))
    assert not found, "printing tasks that read a secret:\n" + "\n".join(found)


def test_the_check_finds_a_printed_secret():
    task = {"name": "Keep the pools", "ansible.builtin.set_fact": {
        "pools": "{{ baremetal_bootstrap_ignition | dict2items }}"}}
    used = set()
    for text in _strings(task):
        used.update(_identifiers(text))
    assert "baremetal_bootstrap_ignition" in used & SECRET_VARIABLES
