# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's name where the API servers see it: the value of its managed-by label on the objects it makes,
and its field manager (each of its field managers begins with it)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

NAME = "c5c3.cobaltcore"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
