import sys

from tools.load.cli import main

sys.exit(main())
