import sys

from boilerstrip.cli import main

sys.exit(main())
