"""A run from what the sources read to report files and an exit code, shared by ``scan`` and
``audit`` (``pipeline``), and the telemetry the right-sizing policies need first
(``rightsizing_inputs``)."""
