"""`python -m emergent_memory` runs the `emergent-memory` command."""

from emergent_memory.cli import main

main()
