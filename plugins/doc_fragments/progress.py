# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    # The modules that wait: their action plugin shows progress while they wait (docs/engine.md).
    DOCUMENTATION = r"""
attributes:
  action:
    description:
      - Runs through the collection's action plugin of the same name, which shows the module's progress while
        it waits; arguments and results are the module's own.
    support: full
notes:
  - While the module waits, one line at most every V(cobaltcore_progress_interval) seconds (default 10) says how
    many awaited objects are ready and what the slowest one reports (a Shoot's C(lastOperation) with its progress,
    Rook's phase and message, a HelmRelease's C(Ready) reason), on stderr, prefixed with the host.
    The variable V(cobaltcore_progress) turns it on (V(true)) or off (V(false)); unset, progress shows when
    C(ansible-playbook)'s stdout is a terminal or with C(-v). Lines carry object names and status text only; none
    for C(no_log) tasks, or when the module does not run on the controller (connection not C(local), C(become),
    C(async)). See C(docs/engine.md).
"""
