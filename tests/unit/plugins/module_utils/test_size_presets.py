# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.size_presets import SIZES, size_preset


@pytest.mark.parametrize("size, mariadb, keystone, nova_api", [
    ("small", 1, 1, 1),
    ("medium", 3, 3, 3),
    ("large", 3, 3, 5),
    ("xlarge", 5, 5, 7),
])
def test_presets_are_the_composition_size_maps_as_integers(size, mariadb, keystone, nova_api):
    assert size_preset(size) == {"mariadb": mariadb, "keystone": keystone, "nova_api": nova_api}


def test_sizes_in_xrd_order():
    assert SIZES == ("small", "medium", "large", "xlarge")


@pytest.mark.parametrize("size", ["huge", "", None, 3, ["small"]])
def test_unknown_size_is_refused(size):
    with pytest.raises(InputError, match="^size: unknown size "):
        size_preset(size)


def test_presets_are_copies():
    size_preset("small")["mariadb"] = 99
    assert size_preset("small")["mariadb"] == 1
