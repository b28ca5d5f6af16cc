"""The app's screens and modals: the workbench screen that owns the keys, the accept preview, the
prompt, help. A screen may import widgets, never the app or the command line.
"""
