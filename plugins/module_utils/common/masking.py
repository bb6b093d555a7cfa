# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What of a module's input and data must be masked: credentials, never names.

Ansible replaces every masked string wherever it occurs in a module's output, as a
substring too. Masking a public word (``v1``, a cluster named ``c``, a count ``3``)
therefore stars it out of every message and result; these functions return the
secret strings only, and the public ones a no_log option made Ansible mask.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import binascii
import os
import re

# Kinds whose data and stringData hold secrets (IronCore's BMCSecret is Secret-shaped).
SECRET_KINDS = ("Secret", "BMCSecret")

# Kubeconfig keys whose values are credentials; exec and auth-provider sections count as a whole.
KUBECONFIG_CREDENTIAL_KEYS = ("client-key-data", "token", "password", "exec", "auth-provider",
                              "id-token", "refresh-token", "access-token", "client-secret")

# Keys of an openstack.cloud auth dict whose values are credentials (password, token, application_credential_secret).
AUTH_CREDENTIAL_KEY = re.compile(r"password|secret|token|passcode|key")

# In a YAML text a multi-line value (a PEM key) appears indented, line by line: its lines
# are masked too, down to this length (shorter lines are PEM's own, public, framing).
MIN_LINE = 8


def _scalars(value):
    """Every scalar at any depth of value (dicts' values, list items)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, (list, tuple, set)):
            stack.extend(node)
        else:
            yield node


def _is_number(node):
    return isinstance(node, (int, float)) and not isinstance(node, bool)


def leaves(value):
    """The strings Ansible masks for a no_log option: every non-empty string and number, at any depth."""
    return set(str(node) for node in _scalars(value) if _is_number(node) or (isinstance(node, str) and node))


def numbers(value):
    """The numbers at any depth of value, as the strings Ansible masks for them."""
    return set(str(node) for node in _scalars(value) if _is_number(node))


def _forms(value, encoded):
    """A Secret value as it may appear: itself, its lines, and its other encoding."""
    if isinstance(value, bool) or value is None:
        return set()
    value = str(value)
    forms = set([value]) if value else set()
    forms.update(line.strip() for line in value.splitlines() if len(line.strip()) >= MIN_LINE)
    if encoded:
        try:
            forms.add(base64.b64decode("".join(value.split()), validate=True).decode("utf-8"))
        except (ValueError, binascii.Error, UnicodeDecodeError):
            pass
    elif value:
        forms.add(base64.b64encode(value.encode("utf-8")).decode("ascii"))
    return set(f for f in forms if f)


def secret_values(objects):
    """Every value of the Secret-kind objects among objects, plain and base64, whole and by line."""
    found = set()
    for obj in objects or []:
        if not isinstance(obj, dict) or obj.get("kind") not in SECRET_KINDS:
            continue
        for key, encoded in (("stringData", False), ("data", True)):
            if isinstance(obj.get(key), dict):
                for value in obj[key].values():
                    found.update(_forms(value, encoded))
    return found


def _credential_strings(node, inside, credentials, public):
    if isinstance(node, dict):
        for key, value in node.items():
            _credential_strings(value, inside or key in KUBECONFIG_CREDENTIAL_KEYS, credentials, public)
    elif isinstance(node, (list, tuple)):
        for value in node:
            _credential_strings(value, inside, credentials, public)
    else:
        (credentials if inside else public).update(leaves(node))


def kubeconfig_is_path(kubeconfig):
    """Whether a kubeconfig option's string names a file (of several joined by os.pathsep, one).

    Only then is it a path, public; any other string is a kubeconfig's text, which may hold credentials.
    """
    if not isinstance(kubeconfig, str) or not kubeconfig or "\n" in kubeconfig:
        return False
    return any(os.path.isfile(os.path.expanduser(part)) for part in kubeconfig.split(os.pathsep) if part)


def kubeconfig_text(text):
    """A kubeconfig's YAML or JSON text as a dict; None when it is no mapping or cannot be parsed."""
    try:
        import yaml  # here: the client's common case reads no YAML and imports none
        parsed = yaml.safe_load(text)
    except Exception:  # no PyYAML or no YAML: text that cannot be read is secret as a whole
        return None
    return parsed if isinstance(parsed, dict) else None


def kubeconfig_strings(kubeconfig):
    """(credentials, public strings) of a kubeconfig option; a string that is both counts as a credential.

    Of an in-memory kubeconfig (a dict, or its text), credentials are tokens, passwords, client keys
    and the whole exec and auth-provider sections; names, servers, certificates and apiVersion are
    public. A text is a credential as a whole too. Only a string that names a file is a path, public.
    """
    credentials, public = set(), set()
    if isinstance(kubeconfig, str) and kubeconfig:
        if kubeconfig_is_path(kubeconfig):
            return credentials, set([kubeconfig])
        credentials.add(kubeconfig)
        kubeconfig = kubeconfig_text(kubeconfig)
    if isinstance(kubeconfig, dict):
        _credential_strings(kubeconfig, False, credentials, public)
    return credentials, public - credentials


def kubeconfig_credentials(kubeconfig):
    """The credential strings in a kubeconfig, a dict or a YAML text (a text that is no mapping: all of it).

    Unlike kubeconfig_strings, a text that parses is not a credential as a whole: a module may return it.
    """
    if isinstance(kubeconfig, str) and kubeconfig:
        parsed = kubeconfig_text(kubeconfig)
        return kubeconfig_strings(parsed)[0] if parsed is not None else set([kubeconfig])
    return kubeconfig_strings(kubeconfig)[0]


def auth_strings(auth):
    """(credentials, public strings) of an openstack.cloud auth dict, or of a cloud's (its auth at any depth):
    passwords, tokens, secrets and keys are credentials; the URL, user, project, domain and region names are public."""
    credentials, public = set(), set()
    for key, value in (auth.items() if isinstance(auth, dict) else []):
        if AUTH_CREDENTIAL_KEY.search(str(key)):
            credentials.update(leaves(value))
        elif isinstance(value, dict):
            inner_credentials, inner_public = auth_strings(value)
            credentials.update(inner_credentials)
            public.update(inner_public)
        else:
            public.update(leaves(value))
    return credentials, public - credentials


def cloud_strings(cloud):
    """(credentials, public strings) of an openstack.cloud cloud option: a cloud's name (public), or a cloud's
    settings as a dict (its auth's credentials secret, the rest public)."""
    if isinstance(cloud, dict):
        return auth_strings(cloud)
    return set(), leaves(cloud)


def public_within(candidates, identifiers):
    """The candidates that occur inside one of identifiers (names, keys): masking them hides nothing."""
    identifiers = [i for i in identifiers if isinstance(i, str) and i]
    return set(c for c in candidates if any(c in i for i in identifiers))


def no_log_strings(spec, params, skip=()):
    """The strings the no_log options of an argument spec hold (suboptions too), except the options in skip."""
    found = set()
    for name, option in (spec or {}).items():
        value = params.get(name) if isinstance(params, dict) else None
        if value is None:
            continue
        if option.get("no_log") and name not in skip:
            found.update(leaves(value))
        elif option.get("options"):
            for item in value if isinstance(value, list) else [value]:
                found.update(no_log_strings(option["options"], item, skip))
    return found
