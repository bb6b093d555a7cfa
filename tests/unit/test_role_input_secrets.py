# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase 1's secret inputs given wrong, through ansible-playbook -vvv on the lab inventory (no lab running):
the run fails before anything is written, with a message naming the option, and the secret is nowhere in
the output. The role's checks come before its first module call, so no API server is needed."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, _ROOT

MARKER = "marker-secret-5f1d3c"
PLAYBOOK = """
- name: Phase 1's role alone
  hosts: ironcore
  gather_facts: false
  roles:
    - role: c5c3.cobaltcore.baremetal_bootstrap
"""
CASES = {
    "ignition as a string": (
        {"baremetal_bootstrap_ignition": '{"ignition": {"version": "3.4.0"}, "passwd": "%s"' % MARKER},
        "argument 'baremetal_bootstrap_ignition' is of type str"),
    "ignition of a pool as a mapping": (
        {"baremetal_bootstrap_ignition": {"hv-pool-a": {"passwd": {"users": [{"passwordHash": MARKER}]}}}},
        "ignition.hv-pool-a: must be Ignition text (a string), got mapping"),
    "ignition for a pool the region lacks": (
        {"baremetal_bootstrap_ignition": {"hv-pool-z": '{"passwd": "%s"}' % MARKER}},
        "ignition.hv-pool-z: names no bare-metal pool of region lab"),
    "BMC credentials as a list": (
        {"baremetal_bootstrap_bmc_credentials": [{"username": "admin", "password": MARKER}]},
        "argument 'baremetal_bootstrap_bmc_credentials' is of type list"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_secret_input_fails_before_any_write_naming_the_option_never_the_value(case, tmp_path):
    extra, expected = CASES[case]
    playbook = tmp_path / "phase1.yml"
    playbook.write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=_ROOT, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_STDOUT_CALLBACK="default", COBALTCORE_LAB_DIR=str(tmp_path / "lab"))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-vvv",
                           "-i", os.path.join(REPO, "inventories", "lab"), str(playbook), "-e", json.dumps(extra)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output[-3000:]
    assert expected in output, output[-3000:]
    # No module ran: the first one, ironcore_bmc, would register the BMCs.
    assert "Register the BMCs" not in output and "c5c3.cobaltcore.ironcore_bmc" not in output, output[-3000:]
    assert MARKER not in output
