import sys

from mortar.cli import main

if __name__ == "__main__":  # judging's worker processes import this module again (multiprocessing's spawn)
    sys.exit(main())
