"""The kind schema: every kind of the resource model, its attributes and their types."""
