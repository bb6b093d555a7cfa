# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one error for bad input, and the one shape of its problems.

Every layer of module_utils reports invalid input as InputError, listing every
problem at once; KubeModule and KeystoneModule turn it into one failure before
anything is written, the filters into one AnsibleFilterError.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class InputError(ValueError):
    """Invalid input: problems holds one string per problem, all found at once.

    A problem reads ``"<field>: <message>"``, the offending input first:

    - ``<field>`` is the dotted path of the value as the caller wrote it: an
      option or setting (``secrets[0].name``, ``services.glance.port``,
      ``gardener.project``, ``expression``);
    - when the input holds several named things, the thing comes first, then
      a blank, then the path inside it: a claim ``"<namespace>/<name> spec.size"``,
      the region ``"region hypervisor_pools[0].name"``, an object
      ``"Shoot hv-pool-a spec.kubernetes.version"``, ``"manifest 2 metadata.name"``;
    - ``<message>`` says what is wrong, quoting the bad value where it helps.

    Build problems with problem() (and within() to put them under a thing),
    never by hand.
    """

    def __init__(self, problems):
        # A bare string would pass as a list of one-character problems.
        listed = [] if isinstance(problems, str) else list(problems)
        if not listed or not all(isinstance(item, str) for item in listed):
            raise TypeError("InputError takes a non-empty list of problem strings, got %r" % (problems,))
        self.problems = listed
        super(InputError, self).__init__("; ".join(listed))


def problem(field, message, subject=None):
    """One problem: '[<subject> ]<field>: <message>'; subject names the thing field belongs to."""
    where = " ".join(str(part) for part in (subject, field) if part not in (None, ""))
    if not where:
        raise TypeError("a problem names the field it is about")
    return "%s: %s" % (where, message)


def within(subject, problems):
    """problems of one thing (a Secret, a Shoot, a claim) with that thing named first."""
    return ["%s %s" % (subject, item) for item in problems]
