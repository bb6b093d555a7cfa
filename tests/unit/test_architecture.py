# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The import rule of docs/architecture.md, read from the code itself.

Every import between the collection's Python files is parsed (also imports inside
functions). Packages of plugins/module_utils only import packages below them, files
never import each other in a cycle, and the pure files (everything but the client
side listed in CLIENT_FILES) reach no API client, not even through another file.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ast
import os

import pytest

from conftest import REPO

PREFIX = "ansible_collections.c5c3.cobaltcore.plugins."
MODULE_UTILS = os.path.join(REPO, "plugins", "module_utils")

# Each package and the packages it may import (besides itself). docs/architecture.md draws it.
ALLOWED = {
    "common": set(),
    "region": {"common"},
    "k8s": {"common"},
    "providers": {"common", "region", "k8s"},
    "keystone": {"common", "region", "k8s", "providers"},
    "report": {"common", "region"},
}
# The files that talk to an API (Kubernetes, Keystone) or to Ansible's module runtime.
CLIENT_FILES = {
    "k8s.kubeconfig", "k8s.client", "k8s.connection", "k8s.read", "k8s.apply", "k8s.wait", "k8s.module",
    "keystone.module",
    "providers.gardener_api", "providers.flux_api", "providers.c5c3_api", "providers.hypervisor_api",
    "providers.ovn_api",
}
# Libraries that open connections or need Ansible's module runtime: pure files import none.
CLIENT_LIBRARIES = ("kubernetes", "urllib3", "http.client", "requests", "openstack", "keystoneauth1",
                    "ansible.module_utils.basic", "ansible_collections.openstack", "ansible_collections.kubernetes")


def _python_files(folder):
    for root, dummy, files in os.walk(folder):
        for name in files:
            if name.endswith(".py"):
                yield os.path.join(root, name)


def _dotted(path, base, prefix):
    rel = os.path.relpath(path, base)[:-3]
    return prefix + rel.replace(os.sep, ".")


UTILS = dict((_dotted(p, MODULE_UTILS, ""), p) for p in _python_files(MODULE_UTILS))


def _imports(path):
    """(collection files, external modules) a file imports, anywhere in it."""
    tree = ast.parse(open(path).read(), path)
    internal, external = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [(node.module, alias.name) for alias in node.names]
        else:
            continue
        for module, name in names:
            if module.startswith(PREFIX + "module_utils"):
                target = module[len(PREFIX + "module_utils."):] if module != PREFIX + "module_utils" else ""
                candidate = "%s.%s" % (target, name) if target and name else (name or target)
                internal.add(candidate if candidate in UTILS else target)
            elif module != "__future__":
                external.add(module if name is None else "%s.%s" % (module, name))
    return internal, external


GRAPH = dict((name, _imports(path)) for name, path in UTILS.items())


def _package(name):
    return name.split(".", 1)[0]


def test_every_file_lives_in_a_package_of_the_rule():
    loose = sorted(name for name in UTILS if "." not in name or _package(name) not in ALLOWED)
    assert loose == [], "files outside the packages of docs/architecture.md: %s" % loose


def test_imports_resolve_to_files():
    unknown = sorted("%s -> %s" % (name, target) for name, (internal, dummy) in GRAPH.items()
                     for target in internal if target not in UTILS)
    assert unknown == []


def test_packages_import_only_downwards():
    upward = sorted("%s imports %s" % (name, target) for name, (internal, dummy) in GRAPH.items()
                    for target in internal
                    if _package(target) != _package(name) and _package(target) not in ALLOWED[_package(name)])
    assert upward == [], "imports against docs/architecture.md: %s" % upward


def _cycle(graph):
    """One import cycle as a list of files, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return path[path.index(target):] + [target] if target in path else [node, target]
            if target not in state:
                found = visit(target, path + [target])
                if found:
                    return found
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_no_import_cycles():
    assert _cycle(dict((name, internal) for name, (internal, dummy) in GRAPH.items())) is None


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _reach(name, seen=None):
    seen = set() if seen is None else seen
    for target in GRAPH[name][0]:
        if target not in seen:
            seen.add(target)
            _reach(target, seen)
    return seen


def _client_libraries(name):
    return sorted(module for module in GRAPH[name][1]
                  if any(module == lib or module.startswith(lib + ".") for lib in CLIENT_LIBRARIES))


@pytest.mark.parametrize("name", sorted(n for n in UTILS if n not in CLIENT_FILES))
def test_pure_files_reach_no_client(name):
    reached = [name] + sorted(_reach(name))
    clients = sorted(CLIENT_FILES.intersection(reached))
    libraries = dict((n, _client_libraries(n)) for n in reached if _client_libraries(n))
    assert clients == [] and libraries == {}, "%s is pure but reaches %s %s" % (name, clients, libraries)


def test_filters_use_only_pure_files():
    for path in _python_files(os.path.join(REPO, "plugins", "filter")):
        internal, dummy = _imports(path)
        clients = sorted(CLIENT_FILES.intersection(set(internal).union(*[_reach(t) for t in internal])))
        assert clients == [], "%s reaches %s" % (os.path.basename(path), clients)


def test_the_rule_matches_the_document():
    text = open(os.path.join(REPO, "docs", "architecture.md")).read()
    for package in ALLOWED:
        assert "`%s/`" % package in text, package
    for name in CLIENT_FILES:
        assert "`%s.py`" % name.replace(".", "/") in text, name
