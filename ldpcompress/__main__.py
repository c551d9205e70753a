"""``python -m ldpcompress``: the same command line as the ``ldpcompress`` script."""
import sys

from .cli import main

sys.exit(main())
