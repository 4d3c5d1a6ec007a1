"""One module per compute (or storage) kind: a function that builds the kind's
:class:`~scanner.compute.view.ComputeView`, registered with ``@extractor(kind, provides=...)``.
Every module of this package is imported by discovery (``scanner.compute.registry``): adding a
kind adds a module here and touches no list."""
