"""``python -m ldpcompress``: the same command line as the ``ldpcompress`` script."""
import sys

from .cli import main

if __name__ == "__main__":  # importing the module (a documentation build) runs nothing
    sys.exit(main())
