# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""K-ORC's clouds.yaml through OpenBao (seed 003): the PushSecret/ExternalSecret pair.

When the region runs OpenBao, korc_credentials writes the minted clouds.yaml into the Secret
k-orc-app-credential of the OpenStack cluster's namespace instead of k-orc-clouds-yaml. The
PushSecret below copies that Secret's key into OpenBao (through an External Secrets Operator
store), the ExternalSecret reads it back and creates k-orc-clouds-yaml, which every K-ORC
object's cloudCredentialsRef names. Both live in the OpenStack cluster's namespace, next to
the Secrets they read and write.

Field names as external-secrets v0.16.2 defines them (apis/externalsecrets/v1alpha1
pushsecret_types.go, v1beta1 externalsecret_types.go). Pure Python, no Ansible.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re
import string

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem

# The settings and their defaults (namespace is required; None otherwise: left out).
DEFAULTS = {
    "namespace": None,
    "store_name": naming.OPENBAO_STORE,
    "store_kind": naming.CLUSTER_SECRET_STORE_KIND,
    "remote_key": naming.OPENBAO_KORC_REMOTE_KEY,
    "source_secret": naming.KORC_APP_CREDENTIAL_SECRET,
    "target_secret": naming.KORC_CLOUDS_SECRET,
    "secret_key": naming.KORC_CLOUDS_KEY,
    "refresh_interval": "1h",
    # The PushSecret's refreshInterval; unset leaves it out (seed 003), so ESO's default of 1h holds.
    "push_refresh_interval": None,
    "labels": None,
    # E.g. force-sync: <time>: ESO pushes and reads at once when an object's labels or annotations change.
    "annotations": None,
}
REMOTE_KEY_FIELDS = ("namespace",)

# A Go duration (metav1.Duration) without a sign: 1h, 30m, 1h30m, 15s, 1.5h, 500ms, or 0.
_DURATION = re.compile(r"^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$")
# A key of a Secret's data (Kubernetes IsConfigMapKey).
_SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


def _name_problem(key, value):
    if not kube_names.is_dns1123_subdomain(value):
        return problem(key, "%r is not a DNS-1123 subdomain (a Kubernetes object name)" % (value,))
    return None


def _duration_problem(key, value):
    if not isinstance(value, str) or not _DURATION.match(value):
        return problem(key, "%r is not a duration like 1h, 30m, 1h30m or 15s" % (value,))
    return None


def _remote_key(template, namespace, problems):
    """The remote key with {namespace} filled in; None (and a problem) when it is not usable."""
    if not isinstance(template, str) or not template.strip():
        problems.append(problem("remote_key", "must be a non-empty string (an OpenBao path)"))
        return None
    try:
        fields = [field for _text, field, _spec, _conv in string.Formatter().parse(template) if field is not None]
    except ValueError as error:
        problems.append(problem("remote_key", "%r is not a valid template: %s" % (template, error)))
        return None
    unknown = sorted(set(f for f in fields if f not in REMOTE_KEY_FIELDS))
    if unknown:
        problems.append(problem("remote_key", "%r uses unknown placeholders %s (known: %s)"
                                % (template, ", ".join(unknown), ", ".join(REMOTE_KEY_FIELDS))))
        return None
    # An invalid namespace is reported once, by its own check; the path's shape is checked all the same.
    valid = kube_names.is_dns1123_label(namespace)
    key = naming.openbao_korc_remote_key(namespace if valid else "namespace", template)
    if key.startswith("/") or key.endswith("/") or "//" in key or re.search(r"\s", key):
        problems.append(problem("remote_key", "%r is not an OpenBao path (no leading, trailing or double slash, "
                                "no blanks)" % (key,)))
        return None
    return key if valid else None


def _labels(labels, problems):
    if labels is None:
        return {}
    if not isinstance(labels, dict):
        problems.append(problem("labels", "must be a mapping of label keys to values, got %s" % type(labels).__name__))
        return {}
    result = {}
    for key, value in sorted(labels.items(), key=lambda item: str(item[0])):
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            problems.append(problem("labels.%s" % key, "%r is not a label value (a string)" % (value,)))
        elif not kube_names.is_label_key(key) or not kube_names.is_label_value(str(value)):
            problems.append(problem("labels.%s" % key, "%r is not a valid Kubernetes label" % (value,)))
        else:
            result[key] = str(value)
    return result


def _annotations(annotations, problems):
    if annotations is None:
        return {}
    if not isinstance(annotations, dict):
        problems.append(problem("annotations", "must be a mapping of annotation keys to strings, got %s"
                                % type(annotations).__name__))
        return {}
    result = {}
    for key, value in sorted(annotations.items(), key=lambda item: str(item[0])):
        if not kube_names.is_label_key(key):
            problems.append(problem("annotations.%s" % key, "%r is not a valid annotation key" % (key,)))
        elif not isinstance(value, str):
            problems.append(problem("annotations.%s" % key, "%r is not a string" % (value,)))
        else:
            result[key] = value
    return result


def normalize_settings(settings):
    """The settings with their defaults; raises InputError listing every problem at once."""
    if not isinstance(settings, dict):
        raise InputError([problem("settings", "must be a mapping, got %s" % type(settings).__name__)])
    problems = []
    for key in sorted(str(key) for key in settings if key not in DEFAULTS):
        problems.append(problem(key, "unknown setting (known: %s)" % ", ".join(sorted(DEFAULTS))))
    # None and "" mean "the default", as for the other settings of the Keystone bootstrap.
    s = dict((key, settings.get(key) if settings.get(key) not in (None, "") else default)
             for key, default in DEFAULTS.items())
    if not kube_names.is_dns1123_label(s["namespace"]):
        problems.append(problem("namespace", "%r must be a DNS-1123 label (the OpenStack cluster's namespace)"
                                % (s["namespace"],)))
    problems.extend(filter(None, (_name_problem(key, s[key]) for key in ("store_name", "source_secret", "target_secret"))))
    if s["store_kind"] not in naming.SECRET_STORE_KINDS:
        problems.append(problem("store_kind", "must be one of %s, got %r"
                                % (", ".join(naming.SECRET_STORE_KINDS), s["store_kind"])))
    if kube_names.is_dns1123_subdomain(s["source_secret"]) and s["source_secret"] == s["target_secret"]:
        problems.append(problem("target_secret", "%r is also the source_secret, so the ExternalSecret would own the "
                                "Secret the PushSecret reads" % (s["source_secret"],)))
    key = s["secret_key"]
    if not isinstance(key, str) or len(key) > kube_names.DNS1123_SUBDOMAIN_MAX or not _SECRET_KEY.match(key) \
            or key in (".", ".."):
        problems.append(problem("secret_key", "%r is not a Secret data key (letters, digits, '-', '_', '.')" % (key,)))
    problems.extend(filter(None, (_duration_problem(name, s[name]) for name in ("refresh_interval", "push_refresh_interval")
                                  if s[name] is not None)))
    s["remote_key"] = _remote_key(s["remote_key"], s["namespace"], problems)
    s["labels"] = _labels(s["labels"], problems)
    s["annotations"] = _annotations(s["annotations"], problems)
    if problems:
        raise InputError(problems)
    return s


def _metadata(name, s):
    metadata = {"name": name, "namespace": s["namespace"]}
    if s["labels"]:
        metadata["labels"] = dict(s["labels"])
    if s["annotations"]:
        metadata["annotations"] = dict(s["annotations"])
    return metadata


def push_secret(s):
    """PushSecret: the source Secret's key -> OpenBao (s: normalized settings)."""
    spec = {
        "secretStoreRefs": [{"name": s["store_name"], "kind": s["store_kind"]}],
        "selector": {"secret": {"name": s["source_secret"]}},
        "data": [{"match": {"secretKey": s["secret_key"],
                            "remoteRef": {"remoteKey": s["remote_key"], "property": s["secret_key"]}}}],
    }
    if s["push_refresh_interval"] is not None:
        spec["refreshInterval"] = s["push_refresh_interval"]
    return {"apiVersion": naming.PUSH_SECRET_API_VERSION, "kind": naming.PUSH_SECRET_KIND,
            "metadata": _metadata(s["source_secret"], s), "spec": spec}


def external_secret(s):
    """ExternalSecret: OpenBao -> the target Secret, owned by the ExternalSecret (s: normalized settings)."""
    return {
        "apiVersion": naming.EXTERNAL_SECRET_API_VERSION, "kind": naming.EXTERNAL_SECRET_KIND,
        "metadata": _metadata(s["target_secret"], s),
        "spec": {
            "refreshInterval": s["refresh_interval"],
            "secretStoreRef": {"name": s["store_name"], "kind": s["store_kind"]},
            "target": {"name": s["target_secret"], "creationPolicy": "Owner"},
            "data": [{"secretKey": s["secret_key"],
                      "remoteRef": {"key": s["remote_key"], "property": s["secret_key"]}}],
        },
    }


def korc_credential_sync(settings):
    """[PushSecret, ExternalSecret] of one OpenStack cluster; raises InputError with every problem."""
    s = normalize_settings(settings)
    return [push_secret(s), external_secret(s)]
