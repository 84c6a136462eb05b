"""``python -m distillrank compare --setup setup.json --scheduler ADDRESS``: a setup's comparison on
a Dask cluster (:mod:`distillrank.dask`)."""

import sys

from .dask import main

if __name__ == "__main__":
    sys.exit(main())
