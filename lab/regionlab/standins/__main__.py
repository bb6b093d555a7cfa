"""python -m regionlab.standins metal-operator|gardenlet|garden-front: one stand-in in the foreground."""

import signal
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] not in ("metal-operator", "gardenlet", "garden-front"):
        print("usage: python -m regionlab.standins metal-operator|gardenlet|garden-front", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if argv[0] == "metal-operator":
        from .metal import main as run
    elif argv[0] == "gardenlet":
        from .gardenlet import main as run
    else:
        from .front import main as run
    run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
