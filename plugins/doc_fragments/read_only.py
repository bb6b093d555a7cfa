# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    # The attributes of a module that never writes.
    DOCUMENTATION = r"""
attributes:
  check_mode:
    description: The module never writes, so check mode reads (and waits, where it waits) the same way.
    support: full
  diff_mode:
    description: Nothing changes, so there is no diff.
    support: none
"""
