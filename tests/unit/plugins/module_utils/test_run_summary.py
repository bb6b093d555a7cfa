# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""changed_objects: the phases' changed counts in their set_stats summary."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.run_summary import changed_objects


def _apply(*results):
    return {"changed": any(r not in ("unchanged", "absent") for r in results),
            "results": [{"kind": "ConfigMap", "name": "o%d" % i, "result": r} for i, r in enumerate(results)]}


def test_counts_the_objects_an_apply_changed():
    assert changed_objects([_apply("created", "unchanged", "configured", "deleted", "absent")]) == 3


def test_a_converged_run_counts_nothing():
    assert changed_objects([_apply("unchanged", "unchanged"), {"changed": False}, None, {"skipped": True}]) == 0


def test_a_changed_task_without_object_results_counts_one():
    assert changed_objects([{"changed": True, "secrets": [{"name": "a"}]}, {"changed": True, "results": []}]) == 2


def test_a_looped_task_counts_its_items():
    looped = {"changed": True, "results": [
        dict(_apply("created", "created"), ansible_loop_var="item", item={"key": "a"}),
        {"changed": True, "ansible_loop_var": "item", "item": {"key": "b"}},
        {"changed": False, "skipped": True, "ansible_loop_var": "item", "item": {"key": "c"}}]}
    assert changed_objects([looped]) == 3


def test_bad_input_is_one_input_error():
    with pytest.raises(InputError):
        changed_objects({"changed": True})
    with pytest.raises(InputError):
        changed_objects(["changed"])
