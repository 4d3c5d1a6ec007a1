"""`python -m scanner`: the gpuaudit command, for a checkout without the console script."""

from scanner.cli import main

main()
