"""math_ops."""
__all__: list[str] = []
