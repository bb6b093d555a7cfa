# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the collection's filters share: module_utils' InputError as one AnsibleFilterError."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import functools

from ansible.errors import AnsibleFilterError

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError


def problem_lines(problems):
    """One '- <field>: <message>' line per problem."""
    return "\n".join("- " + item for item in problems)


def fails_on_input_error(what):
    """Decorator: the filter's InputError becomes AnsibleFilterError('<what>:' and a line per problem).

    Only InputError: any other exception is a bug and keeps its traceback.
    """
    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            try:
                return function(*args, **kwargs)
            except InputError as error:
                # The problems are the whole story; the chained InputError would repeat them.
                raise AnsibleFilterError("%s:\n%s" % (what, problem_lines(error.problems))) from None
        return wrapper
    return decorate
