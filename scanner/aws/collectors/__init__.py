"""Live collectors, one module per service family. The list of them is scanner.aws.registry."""
