# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's module_utils as the filter files use them: imported when a filter first calls into them.

Whenever a task uses one of the collection's filters, Ansible loads every filter file of the collection in that task's
worker process, and compiles collection code there from source, without a bytecode cache. Filter files that imported
their module_utils up front made each such task cost ~0.1 s more per host; with lazy_module a task imports only what
the filters it calls need.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import importlib

PACKAGE = "ansible_collections.c5c3.cobaltcore.plugins.module_utils."


class LazyModule(object):
    """Stands for a module_utils module; the first attribute read imports it."""

    def __init__(self, name):
        self._name = PACKAGE + name
        self._module = None

    def __getattr__(self, attribute):  # only for what the instance itself does not have
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attribute)

    def __repr__(self):
        return "<lazy module %s%s>" % (self._name, "" if self._module is None else " (imported)")


def lazy_module(name):
    """module_utils.<name> (as region.model), imported when one of its attributes is first read."""
    return LazyModule(name)
