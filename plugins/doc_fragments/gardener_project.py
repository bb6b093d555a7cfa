# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  project:
    description:
      - The Gardener project of the Shoots; its namespace is read from the Project (C(spec.namespace)).
      - Mutually exclusive with O(namespace).
    type: str
  namespace:
    description: The project namespace of the Shoots. Mutually exclusive with O(project).
    type: str
"""
