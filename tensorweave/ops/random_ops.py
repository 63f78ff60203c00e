"""random_ops."""
__all__: list[str] = []
