"""The app's widgets: the case tree and the case detail. They take core values as attributes and
post messages up; they import no screen, no app, and nothing of each other's internals.
"""
