"""`python -m scanner`: the gpuaudit command, for a checkout without the console script."""

from scanner.cli.main import main

main()
