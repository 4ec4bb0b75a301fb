"""`python -m stencilchain` is the `stencilchain` command."""

import sys

from stencilchain.app.cli import main

sys.exit(main())
