"""gpuaudit: policy-as-code compliance and cost audit for AWS GPU infrastructure."""

__version__ = "0.1.0"
# where gpuaudit is published: every install snippet, CI recipe and documentation link names it
__url__ = "https://github.com/gpuaudit/gpuaudit"
