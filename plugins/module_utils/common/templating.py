# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""${key} templates of Secret values: a string, or a mapping rendered as YAML text.

No Kubernetes, no Ansible: generated_secret renders a Secret's templates with it.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import string

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem

try:
    import yaml
    HAS_YAML = True
except ImportError:  # pragma: no cover - PyYAML comes with Ansible
    HAS_YAML = False


def render_template(template, values, field="template"):
    """A template with ${key} references: a string, or a mapping/list rendered as YAML text.

    Only string leaves are substituted; the result of a mapping is its YAML dump, so a
    value is never parsed as YAML itself. field names the template in problems (InputError).
    """
    def substitute(node, where):
        if isinstance(node, dict):
            return dict((k, substitute(v, "%s.%s" % (where, k))) for k, v in node.items())
        if isinstance(node, list):
            return [substitute(v, "%s[%d]" % (where, i)) for i, v in enumerate(node)]
        if isinstance(node, str):
            try:
                return string.Template(node).substitute(values)
            except KeyError as error:
                raise InputError([problem(where, "refers to %s, which the Secret does not hold" % error)])
            except ValueError as error:
                raise InputError([problem(where, "is not a valid template: %s" % error)])
        return copy.deepcopy(node)
    if isinstance(template, (dict, list)):
        if not HAS_YAML:
            raise InputError([problem(field, "rendering a mapping template needs the Python package PyYAML")])
        return yaml.safe_dump(substitute(template, field), default_flow_style=False, sort_keys=False)
    if isinstance(template, str):
        return substitute(template, field)
    raise InputError([problem(field, "must be a string or a mapping, got %s" % type(template).__name__)])
