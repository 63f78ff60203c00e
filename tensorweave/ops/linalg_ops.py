"""linalg_ops."""
__all__: list[str] = []
