# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    # The modules that wait for an operator's long work (a backup, a restore, an eviction): k8s/module.py
    # OPERATOR_WAIT_SPEC is their argument spec.
    DOCUMENTATION = r"""
options:
  wait_timeout:
    description: Seconds to wait for the operator's work the module waits for (see its description).
    type: int
    default: 1800
  wait_sleep:
    description: Seconds between reads while waiting.
    type: int
    default: 5
"""
