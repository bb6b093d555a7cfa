# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How site.yml orders the preflight and the region's run lock (docs/run-lock.md).

The preflight runs before the lock (the Lease is a write; bad input fails before it), so a run that waited
for the lock passed its preflight before the other run ended. That is safe only while no later phase reads
the preflight's facts.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re
from pathlib import Path

import yaml

from conftest import REPO as _REPO

REPO = Path(_REPO)
PREFLIGHT_FACT = re.compile(r"\bpreflight_[a-z_]+")


def _phase_files():
    for path in sorted(REPO.glob("roles/*/**/*.yml")) + sorted(REPO.glob("playbooks/**/*.yml")):
        relative = path.relative_to(REPO).as_posix()
        if relative.startswith("roles/preflight/") or relative == "playbooks/preflight.yml":
            continue
        yield relative, path.read_text()


def test_no_phase_reads_the_preflights_facts():
    readers = dict((relative, sorted(set(PREFLIGHT_FACT.findall(text)))) for relative, text in _phase_files())
    assert len(readers) > 20 and "playbooks/site.yml" in readers
    assert dict((k, v) for k, v in readers.items() if v) == {}


def test_site_runs_the_preflight_first_and_takes_the_lock_only_in_the_phases_after_it():
    site = yaml.safe_load((REPO / "playbooks" / "site.yml").read_text())
    imports = [play["ansible.builtin.import_playbook"] for play in site if "ansible.builtin.import_playbook" in play]
    assert imports[0] == "preflight.yml"
    assert "region_lock" not in (REPO / "playbooks" / "preflight.yml").read_text()
    for name in imports[1:]:
        assert "tasks/region_lock.yml" in (REPO / "playbooks" / name).read_text(), name
