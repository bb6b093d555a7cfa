# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""c5c3.cobaltcore.keystone_token_check, run on the controller without a new interpreter when the task runs there (plugin_utils/in_process.py)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.in_process import InProcessAction
from ansible_collections.c5c3.cobaltcore.plugins.modules import keystone_token_check as keystone_token_check_module


class ActionModule(InProcessAction):
    module = keystone_token_check_module
