# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Progress of a long wait: at most one line every interval seconds, sent to a callable.

A module cannot print while it runs. The collection's action plugins (plugin_utils/progress.py)
give the module a file in PROGRESS_FILE_ENV when the operator wants progress; the module appends
its lines there and the action plugin relays them. Without that variable there is no reporter and
the waits run exactly as before.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import time

# Set by the action plugins for the module process only: where to append lines, and how often.
PROGRESS_FILE_ENV = "_COBALTCORE_PROGRESS_FILE"
PROGRESS_INTERVAL_ENV = "_COBALTCORE_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 10
LINE_LIMIT = 300


def one_line(text, limit=LINE_LIMIT):
    """text on one line, whitespace collapsed, cut to limit characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


class Reporter(object):
    """Calls write('<elapsed>s: <line>') at most once every interval seconds.

    A wait offers a line each round as a function (make_line), so nothing is composed between two
    lines; the first line comes interval seconds after the reporter was made (a quick wait stays
    quiet). make_line() returning None (nothing to wait for) sends nothing.
    """

    def __init__(self, write, interval=DEFAULT_INTERVAL, clock=time.time):
        self.write = write
        self.interval = interval
        self.clock = clock
        self.started = self.last = clock()

    def __call__(self, make_line):
        now = self.clock()
        if now - self.last < self.interval:
            return False
        line = make_line()
        if not line:
            return False
        self.last = now
        self.write("%ds: %s" % (int(now - self.started), one_line(line)))
        return True


def offer(progress, make_line):
    """progress(make_line) when there is a reporter: the waits' one-liner for an optional callback."""
    if progress is not None:
        progress(make_line)


def file_writer(path, mask=None):
    """write(line): appends the line (masked by mask(line) first) to path; never fails the wait."""
    def write(line):
        if mask is not None:
            line = mask(line)
        try:
            with open(path, "a") as handle:
                handle.write(one_line(line) + "\n")
        except (IOError, OSError):
            pass  # progress is a courtesy: a lost line must not end the wait
    return write


def reporter_from_env(environ=None, mask=None, clock=time.time):
    """The Reporter the action plugin asked for through the environment, or None."""
    environ = os.environ if environ is None else environ
    path = environ.get(PROGRESS_FILE_ENV)
    if not path:
        return None
    try:
        interval = max(1, int(environ.get(PROGRESS_INTERVAL_ENV) or DEFAULT_INTERVAL))
    except ValueError:
        interval = DEFAULT_INTERVAL
    return Reporter(file_writer(path, mask), interval, clock)
