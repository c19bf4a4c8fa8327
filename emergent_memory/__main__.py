"""`python -m emergent_memory` runs the `emergent-memory` command."""

from emergent_memory.entry import main

main()
