# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ansible runs as released: nothing of this project is loaded into the interpreter at start-up (no .pth), so the
suite, make region and make bench measure what an operator's controller and the execution environment run."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os
import site
import subprocess
import sys

from conftest import REPO


def _site_dirs():
    return [d for d in site.getsitepackages() + [site.getusersitepackages()] if os.path.isdir(d)]


def test_no_pth_file_loads_anything_of_this_project():
    found = []
    for directory in _site_dirs():
        for path in glob.glob(os.path.join(directory, "*.pth")):
            with open(path) as handle:
                text = handle.read()
            if "cobaltcore" in text or REPO in text:
                found.append(path)
        found.extend(glob.glob(os.path.join(directory, "cobaltcore_*")))
    assert not found, found


def test_a_fresh_interpreter_imports_no_module_of_this_project():
    # The venv lives in the checkout: its own packages are not the project's.
    code = ("import sys, json; print(json.dumps(sorted(n for n, m in sys.modules.items() if 'cobaltcore' in n or "
            "((getattr(m, '__file__', None) or '').startswith(%r) and not m.__file__.startswith(sys.prefix)))))" % REPO)
    env = dict((k, v) for k, v in os.environ.items() if k != "PYTHONPATH")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd="/")
    assert out.stdout.strip() == "[]"
