import sys

from mortar.cli import main

sys.exit(main())
