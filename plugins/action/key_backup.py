# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""c5c3.cobaltcore.key_backup, with its progress shown while it waits (plugin_utils/progress.py)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.progress import ProgressAction
from ansible_collections.c5c3.cobaltcore.plugins.modules import key_backup as key_backup_module


class ActionModule(ProgressAction):
    module = key_backup_module
