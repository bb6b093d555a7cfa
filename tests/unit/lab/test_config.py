# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's clusters by inventory host (regionlab.config.cluster): the one place tests and benches find one."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(str(REPO), "lab"))

from regionlab import config  # noqa: E402  pylint: disable=wrong-import-position


def test_a_cluster_is_found_by_its_inventory_host_with_its_groups_and_port():
    every = config.clusters()
    found = config.cluster("lab-control-plane")
    assert found == next(c for c in every if c.name == "lab-control-plane")
    assert config.CONTROL_PLANE_GROUP in found.groups
    assert found.port == config.PORT_BASE + 10 + every.index(found)


def test_an_unknown_host_is_a_key_error_naming_it():
    with pytest.raises(KeyError, match="the lab has no cluster 'no-such-cluster'"):
        config.cluster("no-such-cluster")
