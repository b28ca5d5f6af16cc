from .agent import app

__all__ = ["app"]
