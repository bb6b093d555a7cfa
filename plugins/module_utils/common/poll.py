# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One back-off loop for every wait of the collection: objects, a Shoot's deletion, BMC discovery."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import time

# Seconds this process spent in polls whose first round found the objects not ready: the operators' time, not the
# collection's (a module reports it as waited_seconds).
_WAITED = {"seconds": 0.0}


def waited_seconds():
    """Seconds this process waited in poll() for what was not ready at its first round."""
    return _WAITED["seconds"]


def poll(attempt, timeout, sleep=1.0):
    """attempt() -> (done, value), repeated until done or timeout seconds passed; (done, last value).

    Rounds start 0.2 s apart and back off to sleep seconds; exceptions of attempt() end the poll.
    """
    started = time.time()
    interval = min(0.2, sleep)
    rounds = 0
    try:
        while True:
            rounds += 1
            done, value = attempt()
            if done or time.time() - started >= timeout:
                return done, value
            time.sleep(interval)
            interval = min(interval * 2, sleep)
    finally:
        if rounds > 1:
            _WAITED["seconds"] += time.time() - started
