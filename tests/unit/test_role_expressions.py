# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every JMESPath expression the roles hand to c5c3.cobaltcore.wait works on any state of its object.

A wait may see an object before its operator wrote any status: an expression that errors there
(length(null)) fails the run instead of waiting.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os

import pytest
import yaml

from conftest import REPO
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate

OPTIONS = ("expression", "failed_expression")


def _waits(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("c5c3.cobaltcore.wait", "wait") and isinstance(value, dict):
                yield value
            else:
                yield from _waits(value)
    elif isinstance(node, list):
        for item in node:
            yield from _waits(item)


def _expressions():
    found = []
    for path in sorted(glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml"))):
        with open(path) as handle:
            for wait in _waits(yaml.safe_load(handle)):
                for option in OPTIONS:
                    if wait.get(option):
                        found.append((os.path.relpath(path, REPO), option, wait[option].strip()))
    return found


EXPRESSIONS = _expressions()

OBJECT = {"apiVersion": "example.c5c3.io/v1", "kind": "Thing", "metadata": {"name": "t", "namespace": "n", "generation": 1}}
STATES = {
    "no status": {},
    "empty status": {"status": {}},
    "no conditions yet": {"status": {"observedGeneration": 1}},
    "conditions False": {"status": {"observedGeneration": 1, "conditions": [
        {"type": "Ready", "status": "False", "reason": "Progressing"}]}},
}


def test_the_roles_hand_expressions_to_wait():
    assert len([e for e in EXPRESSIONS if e[1] == "expression"]) >= 2, EXPRESSIONS


@pytest.mark.parametrize("state", sorted(STATES))
@pytest.mark.parametrize("where", EXPRESSIONS, ids=lambda e: "%s:%s:%s" % e)
def test_an_expression_waits_on_an_object_its_operator_has_not_reported_yet(where, state):
    dummy, option, expression = where
    obj = dict(OBJECT, **STATES[state])
    # No InputError from the expression, and nothing terminal about a status not yet written.
    assert not evaluate(obj, **{option: expression}).terminal


def test_the_keystone_bootstrap_waits_for_both_conditions():
    expression = [e for path, option, e in EXPRESSIONS if "BootstrapReady" in e and option == "expression"][0]
    both = dict(OBJECT, status={"observedGeneration": 1, "conditions": [
        {"type": "BootstrapReady", "status": "True"}, {"type": "Ready", "status": "True"}]})
    assert evaluate(both, expression=expression).ready
    for state in STATES.values():
        assert not evaluate(dict(OBJECT, **state), expression=expression).ready
