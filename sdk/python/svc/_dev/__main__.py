import sys

from ._helper import main

if __name__ == "__main__":
    sys.exit(main())
