# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One back-off loop for every wait of the collection: objects, a Shoot's deletion, BMC discovery."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import time


def poll(attempt, timeout, sleep=1.0):
    """attempt() -> (done, value), repeated until done or timeout seconds passed; (done, last value).

    Rounds start 0.2 s apart and back off to sleep seconds; exceptions of attempt() end the poll.
    """
    started = time.time()
    interval = min(0.2, sleep)
    while True:
        done, value = attempt()
        if done or time.time() - started >= timeout:
            return done, value
        time.sleep(interval)
        interval = min(interval * 2, sleep)
