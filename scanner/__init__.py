"""gpuaudit: policy-as-code compliance and cost audit for AWS GPU infrastructure."""

__version__ = "0.1.0"
