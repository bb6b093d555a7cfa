"""python -m regionlab.standins <stand-in>: one stand-in in the foreground."""

import signal
import sys

CHOICES = ("boot-operator", "gardenlet", "garden-front", "c5c3-operator", "keystone-operator")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] not in CHOICES:
        print("usage: python -m regionlab.standins %s" % "|".join(CHOICES), file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if argv[0] == "boot-operator":
        from .boot import main as run
    elif argv[0] == "gardenlet":
        from .gardenlet import main as run
    elif argv[0] == "c5c3-operator":
        from .c5c3 import main as run
    elif argv[0] == "keystone-operator":
        from .keystone_operator import main as run
    else:
        from .front import main as run
    run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
