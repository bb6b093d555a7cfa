# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Loading the collection's filter files imports none of their module_utils: Ansible loads every filter file of the
collection in a task's worker process whenever the task uses one of them (plugin_utils/lazy_import.py)."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.lazy_import import lazy_module

FILTER_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins", "filter")
FILTER_FILES = sorted(os.path.basename(path)[:-3] for path in glob.glob(os.path.join(FILTER_DIR, "*.py")))
PREFIX = "ansible_collections.c5c3.cobaltcore.plugins.module_utils."


def imported_after(code):
    """The modules a fresh interpreter has imported after running code (with this test's sys.path)."""
    program = "import json, sys\n%s\nprint(json.dumps(sorted(sys.modules)))" % code
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.splitlines()[-1])


def test_every_filter_file_is_found():
    assert {"cobaltcore", "keystone", "openbao", "preflight", "report"} <= set(FILTER_FILES)


@pytest.mark.parametrize("name", FILTER_FILES)
def test_loading_a_filter_file_imports_only_the_errors_module(name):
    modules = imported_after("from ansible_collections.c5c3.cobaltcore.plugins.filter import %s as f\n"
                             "f.FilterModule().filters()" % name)
    # Packages (module_utils.common) aside: they are empty.
    assert [m for m in modules if m.startswith(PREFIX) and "." in m[len(PREFIX):]] == [PREFIX + "common.errors"]


def test_a_filter_imports_what_it_calls_when_it_is_called():
    modules = imported_after("from ansible_collections.c5c3.cobaltcore.plugins.filter import cobaltcore as f\n"
                             "f.FilterModule().filters()['changed_objects']([])")
    assert PREFIX + "common.run_summary" in modules
    assert PREFIX + "region.model" not in modules


def test_building_a_bmc_url_does_not_import_the_http_client():
    modules = imported_after("from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ironcore\n"
                             "ironcore.bmc_url({'ip': '10.0.0.1', 'port': 8000})")
    assert "ansible.module_utils.urls" not in modules


def test_a_lazy_module_reads_through_to_the_module():
    naming = lazy_module("region.naming")
    assert "(imported)" not in repr(naming)
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming as real
    assert naming.tenant_names is real.tenant_names
    assert "(imported)" in repr(naming)
    with pytest.raises(AttributeError):
        naming.no_such_name  # pylint: disable=pointless-statement


def test_the_preflight_reads_of_a_cluster_import_only_its_vendors_modules():
    reads = "from ansible_collections.c5c3.cobaltcore.plugins.filter import preflight as f\n" \
            "f.FilterModule().filters()['preflight_reads'](%r, {})"
    plain = imported_after(reads % (["hypervisor_pools", "shoots"],))
    assert PREFIX + "providers.ironcore" not in plain and PREFIX + "providers.gardener" not in plain
    assert PREFIX + "providers.ironcore" in imported_after(reads % (["ironcore"],))
