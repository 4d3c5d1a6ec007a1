"""The command line: one module per command group (``main`` holds the ``gpuaudit`` group and
``scan``/``demo``/``report``; ``audit``, ``catalog``, ``compliance``, ``policies`` the others;
``options`` the options they share). Nothing below this package imports it."""
