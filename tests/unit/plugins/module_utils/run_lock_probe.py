# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run as region_lock sees itself, for test_run_lock_pid_namespaces.py (which starts it under unshare).

Prints one JSON line, this run's Holder (region_lock.this_run, the collection's real /proc readers)
and the Lease it would create; then, for each Lease read from stdin (one JSON line each), what it
decides about it (run_lock.decide with the real run_lock.proc_alive) and whether the holder looks
alive from here. It keeps running, as a holder does, until stdin ends.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import json
import sys

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import run_lock
from ansible_collections.c5c3.cobaltcore.plugins.modules import region_lock


def main():
    me, unused = region_lock.this_run(None)
    lease = run_lock.acquired(None, run_lock.Decision(run_lock.CREATE, ""), me, region_lock.utcnow(),
                              "cobaltcore-run-lab", "kube-system", 300)
    print(json.dumps({"holder": me._asdict(), "lease": lease}), flush=True)
    for line in sys.stdin:
        other = json.loads(line)
        decision = run_lock.decide(other, me, datetime.datetime.now(datetime.timezone.utc), run_lock.proc_alive)
        print(json.dumps({"alive": run_lock.proc_alive(run_lock.holder_of(other)), "action": decision.action,
                          "reason": decision.reason}), flush=True)


if __name__ == "__main__":
    main()
