"""Reading untrusted input safely, shared by every source: bounded file reads and their budgets
(``safe_read``), numbers a policy can trust (``numbers``), the written size of a value
(``sizes``), YAML composed under budgets (``yaml_compose``), the credential detector
(``credentials``) and the repository root report paths are placed under (``repo_root``).
It imports only ``scanner.model``."""
