# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes' own rules for names, label keys and label values (the API server's validation).

The collection's naming conventions are region/naming.py; these are the rules every name must pass.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
# The label the Job controller puts on a Job's pods (Kubernetes 1.27 and later).
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
# The operators of a LabelSelector's matchExpressions.
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def is_dns1123_label(value, max_length=DNS1123_LABEL_MAX):
    """RFC 1123 label as Kubernetes checks it (namespaces, most names).

    max_length None checks the characters only.
    """
    return (isinstance(value, str) and (max_length is None or len(value) <= max_length)
            and _DNS1123_LABEL.match(value) is not None)


def is_dns1123_subdomain(value):
    """RFC 1123 subdomain as Kubernetes checks it (Secret names, label prefixes)."""
    if not isinstance(value, str) or not 0 < len(value) <= DNS1123_SUBDOMAIN_MAX:
        return False
    return all(_DNS1123_LABEL.match(part) for part in value.split("."))


def is_label_key(value):
    """Kubernetes label key: optional DNS subdomain prefix, '/', and a name."""
    if not isinstance(value, str):
        return False
    prefix, slash, name = value.rpartition("/")
    if slash and not is_dns1123_subdomain(prefix):
        return False
    return len(name) <= 63 and _LABEL_NAME.match(name) is not None


def is_label_value(value):
    """Kubernetes label value: empty, or a name of at most 63 characters."""
    if not isinstance(value, str):
        return False
    return value == "" or (len(value) <= 63 and _LABEL_NAME.match(value) is not None)


def _expression_matches(expression, labels):
    key, operator = expression.get("key"), expression.get("operator")
    values = expression.get("values") or []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    raise InputError([problem("selector.matchExpressions.operator",
                              "%r is not one of %s" % (operator, ", ".join(SELECTOR_OPERATORS)))])


def selector_matches(selector, labels):
    """Whether a Kubernetes LabelSelector ({matchLabels, matchExpressions}) selects labels."""
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    return all(_expression_matches(e, labels) for e in selector.get("matchExpressions") or [])
