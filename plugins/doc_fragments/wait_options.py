# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  wait:
    description:
      - Wait until every object is ready by its kind's readiness rule (or gone, with C(state=absent)).
      - Ready always requires C(status.observedGeneration) to match C(metadata.generation) where the kind
        reports it. Terminal failures end the wait at once; a timeout fails naming, per object, what is
        still missing. See C(docs/readiness.md) for the rule of every kind.
    type: bool
    default: false
  wait_timeout:
    description:
      - Seconds to wait before failing.
    type: int
    default: 300
  wait_sleep:
    description:
      - Longest pause in seconds between two rounds of checks; rounds start fast and back off to this.
    type: int
    default: 2
  wait_condition:
    description:
      - A condition that replaces the kinds' own readiness rules.
    type: dict
    suboptions:
      type:
        description: The condition type, for example C(Ready).
        type: str
        required: true
      status:
        description: The status the condition must have.
        type: str
        choices: ["True", "False", "Unknown"]
        default: "True"
      reason:
        description: The reason the condition must have, if given.
        type: str
"""
