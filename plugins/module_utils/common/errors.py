# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one error of the pure layers: invalid input, with a message per offending field.

KubeModule turns it into a single failure that lists every problem, before anything is written.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class InputError(ValueError):
    """Invalid input; problems lists one message per offending field."""

    def __init__(self, problems):
        self.problems = list(problems)
        super(InputError, self).__init__("; ".join(self.problems))
