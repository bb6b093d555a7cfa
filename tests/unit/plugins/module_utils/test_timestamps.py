# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps


def test_format_datetime_writes_utc_to_the_second_as_the_api_server_does():
    moment = datetime.datetime(2026, 12, 7, 13, 4, 5, 678901, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    assert timestamps.format_datetime(moment) == "2026-12-07T11:04:05Z"
    assert timestamps.parse_datetime(timestamps.format_datetime(moment)) == moment.replace(microsecond=0)


def test_format_datetime_without_a_moment_is_now():
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    now = timestamps.parse_datetime(timestamps.format_datetime())
    assert before <= now <= datetime.datetime.now(datetime.timezone.utc)


def test_last_write_and_seconds_since_read_one_managers_latest_write():
    live = {"metadata": {"managedFields": [
        {"manager": "c5c3-cobaltcore", "time": "2026-12-07T10:00:00Z"},
        {"manager": "c5c3-cobaltcore", "time": "2026-12-07T10:01:00Z"},
        {"manager": "kubectl", "time": "2026-12-07T10:05:00Z"}]}}
    written = timestamps.last_write(live, manager="c5c3-cobaltcore")
    assert written == "2026-12-07T10:01:00Z"
    assert timestamps.seconds_since(written, timestamps.parse_timestamp("2026-12-07T10:02:30Z")) == 90
    assert timestamps.seconds_since(None, 0) is None
