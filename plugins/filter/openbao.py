# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of K-ORC's credentials through OpenBao (phase 5): thin wrappers over module_utils.openbao.

Each filter's documentation is the YAML file of its name beside this one.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.filter_errors import fails_on_input_error
from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.lazy_import import lazy_module

openbao = lazy_module("providers.openbao")


@fails_on_input_error("invalid OpenBao settings of the K-ORC credentials, nothing was changed")
def korc_openbao_secrets_filter(settings):
    return openbao.korc_credential_sync(settings)


class FilterModule(object):
    """c5c3.cobaltcore OpenBao filters."""

    def filters(self):
        return {
            "korc_openbao_secrets": korc_openbao_secrets_filter,
        }
