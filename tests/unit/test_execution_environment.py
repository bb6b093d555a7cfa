# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""meta/execution-environment.yml: `ansible-builder create` makes its build context (as `make ee` does, in a
scratch copy), and the context names this repository's pins. Building the image needs a container engine,
which is not here (docs/awx.md)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import re
import shutil
import subprocess
import sys

import yaml
from packaging.specifiers import SpecifierSet

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)


def _pins(name):
    pins = {}
    for line in open(os.path.join(REPO, name)):
        match = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
        if match:
            pins[match.group(1).lower()] = match.group(2)
    return pins


def _bundled(collection):
    """The version of a collection the pinned ansible package bundles."""
    import ansible_collections
    for root in ansible_collections.__path__:
        manifest = os.path.join(root, *collection.split(".") + ["MANIFEST.json"])
        if os.path.exists(manifest):
            return json.load(open(manifest))["collection_info"]["version"]
    raise AssertionError("%s is not installed" % collection)


def test_ansible_builder_creates_the_context_with_the_pins(tmp_path):
    copy = tmp_path / "repo"
    (copy / "meta").mkdir(parents=True)
    shutil.copy(os.path.join(REPO, "meta", "execution-environment.yml"), str(copy / "meta"))
    shutil.copy(os.path.join(REPO, "requirements.txt"), str(copy))
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path",
                    str(copy / ".cache" / "ee" / "dist"), REPO], check=True, capture_output=True, timeout=120)
    proc = subprocess.run([os.path.join(BIN, "ansible-builder"), "create", "-f", "meta/execution-environment.yml",
                           "--context", str(tmp_path / "context"), "--output-filename", "Containerfile"],
                          cwd=str(copy), capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    context = tmp_path / "context"
    containerfile = (context / "Containerfile").read_text()
    dev, runtime = _pins("requirements-dev.txt"), _pins("requirements.txt")

    # The base image by version, never latest.
    base = re.search(r'ARG EE_BASE_IMAGE="([^"]+)"', containerfile).group(1)
    assert re.match(r"^quay\.io/ansible/awx-ee:\d+\.\d+\.\d+$", base), base
    # ansible-core and ansible-runner as pinned for the tests.
    refs = re.search(r'ARG ANSIBLE_INSTALL_REFS="([^"]+)"', containerfile).group(1).split()
    assert sorted(refs) == sorted(["ansible-core==%s" % dev["ansible-core"], "ansible-runner==%s" % dev["ansible-runner"]])
    # The runtime Python packages: requirements.txt as it is, every line pinned.
    python = (context / "_build" / "requirements.txt").read_text()
    assert python == open(os.path.join(REPO, "requirements.txt")).read()
    assert runtime and all("==" in line for line in python.splitlines() if line and not line.startswith("#"))
    assert {"kubernetes", "openstacksdk"} <= set(runtime)
    # The collections at the versions the pinned ansible bundles, within galaxy.yml's ranges.
    collections = yaml.safe_load((context / "_build" / "requirements.yml").read_text())["collections"]
    versions = dict((c["name"], c["version"]) for c in collections)
    assert versions == {"kubernetes.core": _bundled("kubernetes.core"), "openstack.cloud": _bundled("openstack.cloud")}
    galaxy = yaml.safe_load(open(os.path.join(REPO, "galaxy.yml")))
    assert sorted(galaxy["dependencies"]) == sorted(versions)
    # ansible-galaxy reads a range as comma-separated comparisons, as a version specifier set does.
    outside = [(name, versions[name], wanted) for name, wanted in galaxy["dependencies"].items()
               if versions[name] not in SpecifierSet(wanted)]
    assert outside == [], outside
    # This collection, installed where the execution environment's ansible finds it.
    tarball = "c5c3-cobaltcore-%s.tar.gz" % galaxy["version"]
    assert (context / "_build" / "collection" / tarball).exists()
    assert "ansible-galaxy collection install --no-deps --offline -p /usr/share/ansible/collections" in containerfile
    assert containerfile.index("COPY _build/collection/") < containerfile.rindex("USER 1000")
